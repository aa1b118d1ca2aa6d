"""Whole-GEMM accumulation patterns over any datapath's instruction chain (SEMANTICS.md 8).

A GEMM kernel does not always run one accumulator through the whole K loop.
Three patterns, each a value of ``gemm(..., accumulation=...)``:

- :class:`Chain` (``"chain"``): one accumulator chained over every K step,
  the D of one instruction the C of the next (a plain CUTLASS/cuBLAS
  mainloop);
- :class:`SplitK` (``"split-k:S"``): the visited K steps cut into ``S``
  contiguous slices (sizes differing by at most one, the larger first);
  slice 0 chains from C, the others from +0; the slices' D are then added
  left to right by F32 round-to-nearest-even adds,
  ``((D0 + D1) + D2) + ...`` (CUTLASS serial split-K, whose epilogue adds
  each slice's partial to the previous slice's output; and the parallel
  split-K reduction over its workspace, summed in slice order);
- :class:`Promote` (``"promote:N"``): the chain restarts from +0 every ``N``
  steps and each partial D is added into an F32 accumulator (starting at C,
  or +0) with an RNE add: the two-level FP8 accumulation of DeepGEMM and
  CUTLASS's FP8 "fast accumulation off" promotion, where the tensor core's
  accumulator is promoted to CUDA-core F32 registers every few instructions.

The F32 adds are integer code (:func:`tcspec.rounding.f32_add`); F16-D
partials are widened exactly to F32 first, so both split patterns return F32
words. Integer (S32) datapaths take only :class:`Chain`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tcspec.rounding import f16_to_f32, f32_add


@dataclass(frozen=True)
class Chain:
    """One accumulator chained over every K step."""

    def __str__(self) -> str:
        return "chain"


@dataclass(frozen=True)
class SplitK:
    """``slices`` K slices, each chained apart, combined by F32 RNE adds in slice order."""

    slices: int

    def __str__(self) -> str:
        return f"split-k:{self.slices}"


@dataclass(frozen=True)
class Promote:
    """The chain restarts from +0 every ``every`` steps; each partial D is added into an F32
    accumulator (RNE)."""

    every: int

    def __str__(self) -> str:
        return f"promote:{self.every}"


Accumulation = Chain | SplitK | Promote


def accumulation_of(value: str | Accumulation | None) -> Accumulation:
    """A pattern from its object or its spelling ``chain``, ``split-k:S``, ``promote:N``."""
    if value is None:
        return Chain()
    if isinstance(value, (Chain, SplitK, Promote)):
        pattern = value
    elif isinstance(value, str):
        name, _, count = value.strip().lower().partition(":")
        try:
            number = int(count) if count else None
        except ValueError:
            number = None
        if name == "chain" and not count:
            pattern = Chain()
        elif name == "split-k" and number is not None:
            pattern = SplitK(number)
        elif name == "promote" and number is not None:
            pattern = Promote(number)
        else:
            raise ValueError(f"accumulation must be 'chain', 'split-k:S' or 'promote:N', "
                             f"got {value!r}")
    else:
        raise ValueError(f"accumulation must be a pattern or its name, got {value!r}")
    count = getattr(pattern, "slices", getattr(pattern, "every", 1))
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"{pattern}: the count must be a positive int")
    return pattern


def segments(pattern: Accumulation, order: Sequence[int]) -> list[list[int]]:
    """The K-step runs each partial chain covers, in visit order."""
    steps = list(order)
    if isinstance(pattern, Chain):
        return [steps]
    if isinstance(pattern, SplitK):
        if pattern.slices > len(steps):
            raise ValueError(f"split-k:{pattern.slices} needs at least {pattern.slices} K "
                             f"steps, got {len(steps)}")
        base, extra = divmod(len(steps), pattern.slices)
        sizes = [base + 1] * extra + [base] * (pattern.slices - extra)
        out, first = [], 0
        for size in sizes:
            out.append(steps[first:first + size])
            first += size
        return out
    return [steps[i:i + pattern.every] for i in range(0, len(steps), pattern.every)]


def accumulate(pattern: Accumulation, order: Sequence[int], c: np.ndarray | None,
               chain: Callable[[Sequence[int], np.ndarray | None], np.ndarray],
               d_type: str) -> np.ndarray:
    """D of ``pattern`` over the K steps ``order``, given ``chain(steps, c)`` (the D words
    of one instruction chain from C, None meaning +0)."""
    if isinstance(pattern, Chain):
        return chain(order, c)
    if d_type == "s32":
        raise ValueError(f"{pattern} adds partial D in F32; integer (S32) datapaths take "
                         f"only 'chain'")
    widen = f16_to_f32 if d_type == "f16" else (lambda words: words)
    runs = segments(pattern, order)
    if isinstance(pattern, SplitK):
        total = widen(chain(runs[0], c))
        for run in runs[1:]:
            total = f32_add(total, widen(chain(run, None)))
        return total
    total = None if c is None else widen(c)
    for run in runs:
        part = widen(chain(run, None))
        total = part if total is None else f32_add(total, part)
    assert total is not None
    return total
