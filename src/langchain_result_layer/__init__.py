"""langchain-result-layer: bounded, evidence-preserving views of huge tool results.

Example:
    ```python
    from langchain_result_layer import ResultLayer

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([search, run_sql]) + [layer.fetch_tool]
    ```
"""

from __future__ import annotations

from langchain_result_layer.config import GuardSettings, ToolPolicy
from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.tokens import (
    ApproximateTokenCounter,
    ChatModelTokenCounter,
    TiktokenCounter,
    TokenCounter,
)
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.errors import (
    ContextBudgetExceeded,
    InvalidReferenceError,
    RecordNotAccessibleError,
    ResultLayerError,
    StoreQuotaExceededError,
    StoreUnavailableError,
)
from langchain_result_layer.layer import ResultLayer
from langchain_result_layer.principal import PrincipalResolver
from langchain_result_layer.stores import InMemoryResultStore, Principal, ResultStore
from langchain_result_layer.views import ResultViewBuilder, register_view

__all__ = [
    "ApproximateTokenCounter",
    "Budget",
    "ChatModelTokenCounter",
    "ContextBudgetExceeded",
    "GuardSettings",
    "InMemoryResultStore",
    "InvalidReferenceError",
    "OmittedRange",
    "Principal",
    "PrincipalResolver",
    "RecordNotAccessibleError",
    "Reference",
    "ResultLayer",
    "ResultLayerError",
    "ResultStore",
    "ResultView",
    "ResultViewBuilder",
    "StoreQuotaExceededError",
    "StoreUnavailableError",
    "TiktokenCounter",
    "TokenCounter",
    "ToolPolicy",
    "__version__",
    "register_view",
]

__version__ = "0.1.0"
