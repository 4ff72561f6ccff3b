"""langchain-result-layer: bounded, evidence-preserving views of huge tool results.

Example:
    ```python
    from langchain_result_layer import ResultLayer

    def search(query: str) -> str:
        "Search the docs."
        return " ".join(f"hit {i}" for i in range(50_000))

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([search]) + [layer.fetch_tool]
    result = tools[0].invoke({"name": "search", "args": {"query": "x"}, "id": "c1",
                              "type": "tool_call"})
    assert "fetch_tool_result(" in result.text  # a bounded view and the way back
    ```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_result_layer.adapters.budget_guard import (
        BudgetGuard,
        ContextBudgetWarning,
        GuardResult,
    )
    from langchain_result_layer.adapters.middleware import ResultLayerMiddleware
    from langchain_result_layer.adapters.tool_wrapper import RAW_TOOL_TAG
    from langchain_result_layer.adapters.truncation_node import TruncationNode
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
        MiddlewareOrderWarning,
        RecordNotAccessibleError,
        ResultLayerError,
        ResultStoreWarning,
        StoreQuotaExceededError,
        StoreUnavailableError,
    )
    from langchain_result_layer.layer import ResultLayer
    from langchain_result_layer.principal import PrincipalResolver
    from langchain_result_layer.scripted import ScriptedChatModel
    from langchain_result_layer.stores import (
        AccessPolicy,
        AuditEntry,
        InMemoryResultStore,
        LangGraphResultStore,
        Principal,
        ReadResult,
        RecordMeta,
        ResultStore,
        SQLResultStore,
    )
    from langchain_result_layer.summarize import SummarySettings
    from langchain_result_layer.views import ResultViewBuilder, register_view

__all__ = [
    "RAW_TOOL_TAG",
    "AccessPolicy",
    "ApproximateTokenCounter",
    "AuditEntry",
    "Budget",
    "BudgetGuard",
    "ChatModelTokenCounter",
    "ContextBudgetExceeded",
    "ContextBudgetWarning",
    "GuardResult",
    "GuardSettings",
    "InMemoryResultStore",
    "InvalidReferenceError",
    "LangGraphResultStore",
    "MiddlewareOrderWarning",
    "ModelSpec",
    "OmittedRange",
    "Principal",
    "PrincipalResolver",
    "ReadResult",
    "RecordMeta",
    "RecordNotAccessibleError",
    "Reference",
    "ResultLayer",
    "ResultLayerError",
    "ResultLayerMiddleware",
    "ResultStore",
    "ResultStoreWarning",
    "ResultView",
    "ResultViewBuilder",
    "SQLResultStore",
    "ScriptedChatModel",
    "StoreQuotaExceededError",
    "StoreSpec",
    "StoreUnavailableError",
    "SummarizerSpec",
    "SummarySettings",
    "TiktokenCounter",
    "TokenCounter",
    "TokenCounterSpec",
    "ToolPolicy",
    "TruncationNode",
    "__version__",
    "register_view",
]

__version__ = "0.1.0"


# Every public name is imported on first use (PEP 562), so `import langchain_result_layer` is
# cheap and loads no LangChain, LangGraph or SQLAlchemy module until something needs it.
_LAZY: dict[str, str] = {
    "AccessPolicy": "stores",
    "ApproximateTokenCounter": "core.tokens",
    "AuditEntry": "stores",
    "Budget": "core.budget",
    "BudgetGuard": "adapters.budget_guard",
    "ChatModelTokenCounter": "core.tokens",
    "ContextBudgetExceeded": "errors",
    "ContextBudgetWarning": "adapters.budget_guard",
    "GuardResult": "adapters.budget_guard",
    "GuardSettings": "config",
    "InMemoryResultStore": "stores",
    "InvalidReferenceError": "errors",
    "LangGraphResultStore": "stores",  # loads LangGraph on first use
    "MiddlewareOrderWarning": "errors",
    "OmittedRange": "core.view",
    "Principal": "stores",
    "PrincipalResolver": "principal",
    "RAW_TOOL_TAG": "adapters.tool_wrapper",
    "ReadResult": "stores",
    "RecordMeta": "stores",
    "RecordNotAccessibleError": "errors",
    "Reference": "core.reference",
    "ResultLayer": "layer",
    "ResultLayerError": "errors",
    "ResultLayerMiddleware": "adapters.middleware",  # needs the `langchain` package ([agents])
    "ResultStore": "stores",
    "ResultStoreWarning": "errors",
    "ResultView": "core.view",
    "ModelSpec": "specs",
    "StoreSpec": "specs",
    "SummarizerSpec": "specs",
    "TokenCounterSpec": "specs",
    "ResultViewBuilder": "views",
    "SQLResultStore": "stores",  # loads SQLAlchemy on first use
    "ScriptedChatModel": "scripted",  # a chat model that follows a script: offline tests, demos
    "StoreQuotaExceededError": "errors",
    "StoreUnavailableError": "errors",
    "SummarySettings": "summarize",
    "TiktokenCounter": "core.tokens",
    "TokenCounter": "core.tokens",
    "ToolPolicy": "config",
    "TruncationNode": "adapters.truncation_node",
    "register_view": "views",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it as a module attribute."""
    module = _LAZY.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return sorted(set(globals()) | set(__all__))
