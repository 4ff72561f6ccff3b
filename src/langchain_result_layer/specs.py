"""What the façade accepts for its pluggable parts: the public spec types.

`ResultLayer(store=..., token_counter=..., model=..., summarizer=...)` (and
`ResultLayerMiddleware(...)` with the same options) each take one of several forms; these
aliases name them, so a type checker tells a caller what fits. The frameworks they mention
are imported only for type checking: naming a spec loads nothing.

Example:
    ```python
    from langchain_result_layer import ResultLayer
    from langchain_result_layer.specs import StoreSpec, TokenCounterSpec

    store: StoreSpec = "sqlite:///tool_results.db"
    counter: TokenCounterSpec = "approximate"
    layer = ResultLayer(context_window=16_000, store=False, token_counter=counter)
    assert layer.store is None and not layer.token_counter.exact
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from langchain_core.language_models import BaseChatModel, BaseLanguageModel
    from langchain_core.runnables import Runnable
    from langgraph.store.base import BaseStore
    from sqlalchemy.engine import Engine

    from langchain_result_layer.core.tokens import TokenCounter
    from langchain_result_layer.stores.base import ResultStore

__all__ = ["ModelSpec", "StoreSpec", "SummarizerSpec", "TokenCounterSpec"]

StoreSpec: TypeAlias = "ResultStore | BaseStore | Engine | str | Literal[False] | None"
"""Where raw results go: a `ResultStore`, a LangGraph `BaseStore`, a SQLAlchemy `Engine` or URL
(`"sqlite:///tool_results.db"`, `"postgresql+psycopg://..."`), `"memory"`, `False` (no storage)
or `None` (the graph's store when the run has one, else in memory)."""

TokenCounterSpec: TypeAlias = (
    "TokenCounter | BaseLanguageModel[Any] | Callable[[str], int] | str | None"
)
"""How bounds are counted: a `TokenCounter`, a chat model (its own `get_num_tokens`), a
`str -> int` callable, `"auto"` / `None`, `"tiktoken"`, `"approximate"`, `"model"` (the
layer's `model=`) or a tiktoken encoding name."""

ModelSpec: TypeAlias = "BaseChatModel | Runnable[Any, Any] | str | None"
"""The chat model whose window and tokenizer the layer reads: the model, a wrapper of it
(`.with_retry()`, `.bind_tools()`, `.with_fallbacks()`) or a `"provider:model"` string."""

SummarizerSpec: TypeAlias = "BaseChatModel | Runnable[Any, Any] | None"
"""The chat model that writes summaries of large results (`None`: no summaries)."""
