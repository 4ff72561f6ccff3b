"""Conservative token estimate used when no tokenizer data is available.

Placeholder calibration: to be replaced by the measured, content-aware estimator.
"""

from __future__ import annotations

import math

__all__ = ["estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """Estimate the tokens `text` costs, erring high.

    Example:
        ```python
        assert estimate_tokens("") == 0
        ```
    """
    if not text:
        return 0
    n = len(text.encode("utf-8", "surrogatepass"))
    return math.ceil(n / 1.3)
