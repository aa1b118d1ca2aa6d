"""Executable lowerings and the public reference API (``mma_dot``, ``mma``, ``gemm``, ``evaluate``).

The API is loaded on first use, so the backends in this package (which the
solver lowerings import) stay free of import cycles.
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate", "gemm", "mma", "mma_dot"]


def __getattr__(name: str) -> Any:
    if name == "gemm":
        from ref.chaining import gemm

        return gemm
    if name in __all__:
        from ref import api

        return getattr(api, name)
    raise AttributeError(f"module 'ref' has no attribute {name!r}")
