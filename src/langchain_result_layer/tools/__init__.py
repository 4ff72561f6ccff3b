"""Ready-made tools whose results flow through the layer (for example a read-only SQL tool).

Example:
    ```python
    from langchain_result_layer.tools import create_sql_query_tool

    run_sql = create_sql_query_tool("sqlite:///chinook.sqlite", name="run_sql")
    ```
"""

from __future__ import annotations

from langchain_result_layer.tools import sql
from langchain_result_layer.tools.sql import *  # noqa: F403 - the names of sql.__all__, kept there

__all__ = sql.__all__
