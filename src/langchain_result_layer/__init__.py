"""langchain-result-layer: bounded, evidence-preserving views of huge tool results.

Example:
    ```python
    from langchain_result_layer import ResultLayer

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([search, run_sql]) + [layer.fetch_tool]
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_result_layer.adapters.budget_guard import (
    BudgetGuard,
    ContextBudgetWarning,
    GuardResult,
)
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
from langchain_result_layer.summarize import SummarySettings
from langchain_result_layer.views import ResultViewBuilder, register_view

if TYPE_CHECKING:
    from langchain_result_layer.adapters.middleware import ResultLayerMiddleware

__all__ = [
    "ApproximateTokenCounter",
    "Budget",
    "BudgetGuard",
    "ChatModelTokenCounter",
    "ContextBudgetExceeded",
    "ContextBudgetWarning",
    "GuardResult",
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
    "ResultLayerMiddleware",
    "ResultStore",
    "ResultView",
    "ResultViewBuilder",
    "StoreQuotaExceededError",
    "StoreUnavailableError",
    "SummarySettings",
    "TiktokenCounter",
    "TokenCounter",
    "ToolPolicy",
    "__version__",
    "register_view",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Import `ResultLayerMiddleware` lazily: it needs the `langchain` package (`[agents]`)."""
    if name == "ResultLayerMiddleware":
        from langchain_result_layer.adapters.middleware import ResultLayerMiddleware  # noqa: PLC0415

        return ResultLayerMiddleware
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
