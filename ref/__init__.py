"""Executable lowerings and the public reference API (``mma_dot``, ``mma``, ``evaluate``)."""

from ref.api import evaluate, mma, mma_dot

__all__ = ["evaluate", "mma", "mma_dot"]
