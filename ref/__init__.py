"""Executable lowerings and the public API: ``mma_dot``, ``mma``, ``gemm``, ``evaluate``."""

from __future__ import annotations

from tcspec.ref.api import evaluate, mma, mma_dot
from tcspec.ref.chaining import gemm

__all__ = ["evaluate", "gemm", "mma", "mma_dot"]
