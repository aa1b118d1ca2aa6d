"""tcspec: a formal, executable specification of NVIDIA tcgen05.mma arithmetic.

The public API (SEMANTICS.md section 6 names every datapath and descriptor field):

- :func:`mma_dot`, :func:`mma`, :func:`gemm`, :func:`evaluate`: run the
  specification on raw words (one dot product, a matrix, a chain of
  instructions over a long K, a NumPy batch);
- :func:`formula`: a datapath as Z3 terms and SMT-LIB2 text;
- :mod:`tcspec.strategies`: hypothesis strategies of raw words for every
  format and datapath (``pip install 'tcspec[test]'``), to property-test an
  emulator or a kernel against the specification.

The implementation lives in the subpackages ``tcspec.spec`` (the single
source), ``tcspec.smt`` (solver lowerings), ``tcspec.ref`` (executable
lowerings, input checks, vectors) and ``tcspec.proofs`` (theorems and probe
queries); the workflows and the command line are modules of this package.
"""

from __future__ import annotations

from typing import Any

from tcspec.api import evaluate, mma, mma_dot
from tcspec.chaining import gemm

__all__ = ["evaluate", "formula", "gemm", "mma", "mma_dot"]


def __getattr__(name: str) -> Any:
    """``formula`` is imported on first use, so ``import tcspec`` loads no solver (the GPU
    machine of `tcspec hw` has none)."""
    if name == "formula":
        from tcspec.smt.formula import formula

        return formula
    raise AttributeError(f"module 'tcspec' has no attribute {name!r}")
