"""tcspec: a formal, executable specification of NVIDIA tcgen05.mma arithmetic.

The public API (SEMANTICS.md section 6 names every datapath and descriptor field):

- :func:`mma_dot`, :func:`mma`, :func:`gemm`, :func:`evaluate`: run the
  specification on raw words (one dot product, a matrix, a chain of
  instructions over a long K, a NumPy batch);
- :func:`matmul`, :func:`quantize`: the same on float arrays (NumPy,
  ml_dtypes, torch), converted to operand words exactly (OCP MX and NVFP4
  block scales included); :class:`Chain`, :class:`SplitK`, :class:`Promote`
  the accumulation patterns ``gemm`` and ``matmul`` take;
- :func:`formula`: a datapath as Z3 terms and SMT-LIB2 text;
- :func:`equiv`: prove a user's implementation (SMT-LIB, Python over the ops protocol)
  equal to a datapath for all inputs, or get replayed input words where it differs;
  :func:`datapath_word` and :func:`convert_word` are its building blocks;
  :func:`prove`: a property you state over the inputs and D (one run or two);
- :mod:`tcspec.strategies`: hypothesis strategies of raw words for every
  format and datapath (``pip install 'tcspec[test]'``), to property-test an
  emulator or a kernel against the specification.

The implementation lives in the subpackages ``tcspec.spec`` (the single
source), ``tcspec.smt`` (solver lowerings), ``tcspec.ref`` (executable
lowerings, input checks, vectors) and ``tcspec.proofs`` (theorems and probe
queries); the workflows and the command line are modules of this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {"evaluate": "tcspec.api", "mma": "tcspec.api", "mma_dot": "tcspec.api",
           "gemm": "tcspec.chaining", "matmul": "tcspec.floats", "quantize": "tcspec.quantization",
           "Quantized": "tcspec.quantization", "Chain": "tcspec.accumulation",
           "Promote": "tcspec.accumulation", "SplitK": "tcspec.accumulation",
           "formula": "tcspec.smt.formula", "equiv": "tcspec.equivalence",
           "datapath_word": "tcspec.equivalence", "convert_word": "tcspec.equivalence",
           "prove": "tcspec.equivalence"}
"""Each public name and its module, imported on first use: ``import tcspec`` (a solver child,
the GPU machine of ``tcspec hw``, which has no solver) loads neither NumPy nor z3."""

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tcspec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
