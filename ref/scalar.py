"""The scalar backend lives beside the ops protocol in :mod:`spec.scalar`; re-exported here."""

from spec.scalar import SCALAR, ScalarOps

__all__ = ["SCALAR", "ScalarOps"]
