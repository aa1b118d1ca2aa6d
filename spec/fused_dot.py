"""NVIDIA fused dot-add on every architecture: MMA-Sim's window stage with parameters
(SEMANTICS.md section 10).

One window stage (:func:`spec.mmasim.mma_sim_window_dot`, the ``mma-sim`` candidate of
section 7) serves Volta to RTX Blackwell; an architecture is a :class:`FusedDotParams`
value: window fraction bits ``F``, how many chained steps split K (the D-format rounding
between them), whether zero terms enter the window maximum, an optional clamp of ``R``,
and the output rounding (F32 RZ, ``f32_e8m13`` RZ, F16 RNE). C is first converted to the
D format (a widening: exact). ``fused-dot-block`` is the block-scale variant: K=32 with
one UE8M0 scale per 32 (the window over scaled products), K=64 with one term per
16-element chunk (:func:`spec.mmasim.mma_sim_chunk_dot`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.convert import E8M13, Output, convert_word
from tcspec.spec.formats import FORMATS, FloatFormat
from tcspec.spec.inputs import DotInputs
from tcspec.spec.mmasim import mma_sim_chunk_dot, mma_sim_window_dot

OUTPUTS = {"f32-rz": ("f32", "rz"), "f32_e8m13-rz": ("e8m13", "rz"), "f16-rne": ("f16", "rne"),
           "f32-rne": ("f32", "rne")}
"""Output roundings by name: the D format (or the 13-bit accumulator) and the rounding."""

WINDOW_CLAMP = -133
"""B200's lower clamp of ``R`` for tf32/bf16 operands (section 2.4), a candidate here."""


@dataclass(frozen=True)
class FusedDotParams:
    """One architecture's fused dot-add (section 10).

    - ``window``: fraction bits ``F`` below ``R`` (23, 24, 25, 13; 35 on K=64 chunks);
    - ``steps``: chained steps over consecutive K slices (2: split-K); the D of one step,
      rounded by ``between``, is the C of the next;
    - ``zeros_in_max``: zero products and a zero C enter ``R`` with exponent -126 (MMA-Sim);
      B200 leaves them out;
    - ``clamp``: ``R`` raised to at least this (B200's -133 on tf32/bf16), or None;
    - ``output``: the final rounding, a key of :data:`OUTPUTS`; ``between`` the rounding
      between steps (None: the same);
    - ``chunk``: block-scale K=64: elements per chunk term (None: one term per product).
    """

    window: int
    steps: int = 1
    zeros_in_max: bool = True
    clamp: int | None = None
    output: str = "f32-rz"
    between: str | None = None
    chunk: int | None = None

    def __post_init__(self) -> None:
        for rounding in (self.output, self.between or self.output):
            if rounding not in OUTPUTS:
                raise ValueError(f"unknown output rounding {rounding!r} "
                                 f"(known: {', '.join(OUTPUTS)})")
        if self.steps < 1:
            raise ValueError(f"steps must be at least 1, got {self.steps}")


def output_named(name: str) -> Output:
    fmt, rounding = OUTPUTS[name]
    return Output(E8M13 if fmt == "e8m13" else FORMATS[fmt], rounding)  # type: ignore[arg-type]


def _formats(desc: Any) -> tuple[FloatFormat, FloatFormat, FloatFormat, FloatFormat]:
    out = tuple(FORMATS[f] for f in (desc.a_format, desc.b_format, desc.c_format, desc.d_type))
    assert all(isinstance(f, FloatFormat) for f in out)
    return out  # type: ignore[return-value]


def c_in_d_format(ops: Ops, desc: Any, c: BV) -> BV:
    """The C word converted to the D format first (Volta's F16 C with an F32 D)."""
    _, _, fc, fd = _formats(desc)
    return c if fc == fd else convert_word(ops, c, fc, fd)


def steps_of(desc: Any, k: int) -> list[slice]:
    """The K slices of the chained steps: ``desc.k / steps`` lanes each (any logical K that
    is a multiple of it chains more steps)."""
    per = desc.k // desc.params.steps
    return [slice(start, start + per) for start in range(0, k, per)]


def fused_dot(ops: Ops, desc: Any, inputs: DotInputs) -> BV:
    """``fused-dot``: ``D = C + sum(A[k] * B[k])`` through the parametrised window, in
    chained steps (section 10)."""
    fa, fb, _, fd = _formats(desc)
    p: FusedDotParams = desc.params
    acc = c_in_d_format(ops, desc, inputs.c)
    slices = steps_of(desc, len(inputs.a))
    for index, lanes in enumerate(slices):
        rounding = p.output if index == len(slices) - 1 else (p.between or p.output)
        acc = mma_sim_window_dot(ops, fa, fb, fd, inputs.a[lanes], inputs.b[lanes], acc,
                                 window=p.window, zeros_in_max=p.zeros_in_max, clamp=p.clamp,
                                 output=output_named(rounding))
    return acc


def fused_dot_block(ops: Ops, desc: Any, inputs: DotInputs) -> BV:
    """``fused-dot-block``: the block-scale fused dot-add to F32 RZ (section 10)."""
    fa, fb, _, fd = _formats(desc)
    fs = FORMATS[desc.scale_format]
    assert isinstance(fs, FloatFormat)
    p: FusedDotParams = desc.params
    c = c_in_d_format(ops, desc, inputs.c)
    scale_a: Sequence[BV] = inputs.scale_a
    scale_b: Sequence[BV] = inputs.scale_b
    if p.chunk is None:
        return mma_sim_window_dot(ops, fa, fb, fd, inputs.a, inputs.b, c, scale_a, scale_b,
                                  fs, desc.scale_block, window=p.window,
                                  zeros_in_max=p.zeros_in_max, clamp=p.clamp,
                                  output=output_named(p.output))
    return mma_sim_chunk_dot(ops, fa, fb, fs, inputs.a, inputs.b, c, scale_a, scale_b,
                             block=desc.scale_block, window=p.window,
                             zeros_in_max=p.zeros_in_max)
