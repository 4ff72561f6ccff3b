"""Who is asking: principals taken from a `RunnableConfig`.

By default the tenant, user and thread come from `config["configurable"]` keys `tenant_id`,
`user_id` and `thread_id` (the thread id LangGraph checkpointers already use). Key names are
configurable, or a callback can compute the principal from the config.

Principal values are compared as the strings they were given: nothing is stripped, folded
or normalised, and a tenant or user must be a `str` (`tenant_id=1` is refused with a
`TypeError`, so that `1` and `"1"` can never silently be one tenant). The thread is taken
the way LangGraph's checkpointers take it: a `str`, or an `int` or `uuid.UUID` as its text
(`str(thread_id)`), so the layer's thread is the checkpointer's thread.

Example:
    ```python
    from langchain_result_layer.principal import PrincipalResolver

    resolve = PrincipalResolver(tenant_key="org")
    p = resolve({"configurable": {"org": "acme", "user_id": "ada", "thread_id": "t1"}})
    assert (p.tenant, p.user, p.thread) == ("acme", "ada", "t1")
    ```
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_result_layer.stores.base import Principal

__all__ = ["Principal", "PrincipalResolver", "resolve_principal_spec"]


def _get(configurable: Mapping[str, Any], key: str | None, *, thread: bool = False) -> str | None:
    if key is None:
        return None
    value = configurable.get(key)
    if value is None or isinstance(value, str):
        return value
    if thread and isinstance(value, (int, uuid.UUID)) and not isinstance(value, bool):
        return str(value)  # as LangGraph's checkpointers take a thread id
    if thread:
        msg = (
            f"configurable[{key!r}] must be a str, an int or a UUID (a LangGraph thread id), "
            f"got {type(value).__name__}"
        )
    else:
        msg = (
            f"configurable[{key!r}] must be a str (principals are compared as the strings they "
            f"were given, so 1 and '1' are never one principal), got {type(value).__name__}"
        )
    raise TypeError(msg)


@dataclass(frozen=True, slots=True)
class PrincipalResolver:
    """Reads a `Principal` from a `RunnableConfig`.

    Attributes:
        tenant_key: `configurable` key of the tenant (`None`: no tenant).
        user_key: `configurable` key of the user (`None`: no user).
        thread_key: `configurable` key of the thread (`None`: records are not thread-bound).
        callback: When set, computes the principal from the whole config instead.

    Example:
        ```python
        PrincipalResolver(callback=lambda cfg: Principal(user=cfg["metadata"]["user"]))
        ```
    """

    tenant_key: str | None = "tenant_id"
    """`configurable` key of the tenant."""

    user_key: str | None = "user_id"
    """`configurable` key of the user."""

    thread_key: str | None = "thread_id"
    """`configurable` key of the thread."""

    callback: Callable[[Mapping[str, Any]], Principal] | None = None
    """Computes the principal from the config instead of the keys."""

    def __call__(self, config: Mapping[str, Any] | None) -> Principal:
        """Resolve the principal of `config` (the anonymous principal for `None`)."""
        config = config or {}
        if self.callback is not None:
            principal: object = self.callback(config)
            if not isinstance(principal, Principal):
                msg = f"principal callback must return a Principal, got {type(principal).__name__}"
                raise TypeError(msg)
            return principal
        configurable = config.get("configurable") or {}
        return Principal(
            tenant=_get(configurable, self.tenant_key),
            user=_get(configurable, self.user_key),
            thread=_get(configurable, self.thread_key, thread=True),
        )


def resolve_principal_spec(spec: object) -> PrincipalResolver:
    """Accept a resolver, a callback, or `None` (the default keys).

    Args:
        spec: What the user passed as `principal=`.

    Returns:
        A resolver.

    Example:
        ```python
        resolve_principal_spec(None)({"configurable": {"user_id": "u"}}).user  # 'u'
        ```
    """
    if spec is None:
        return PrincipalResolver()
    if isinstance(spec, PrincipalResolver):
        return spec
    if callable(spec):
        return PrincipalResolver(callback=spec)
    msg = f"principal must be a PrincipalResolver or a callable, got {spec!r}"
    raise TypeError(msg)
