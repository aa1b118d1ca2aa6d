"""CDNA1/CDNA2 f16 and bf16 ``v_mfma``: pairwise F32 trees (SEMANTICS.md 11.4; unvalidated).

Read from MMA-Sim's code, which fails on its own assertion for these instructions, so no
vector backs any rule here. Per group of ``group`` products (f16 4, bf16 2, bf16_1k 4):
every leaf is ``fmaf(a, b, +0)`` (the product rounded to F32, to nearest even), every node
``fmaf(l, 1, r)`` (an F32 RNE add) over a recursive halving tree, ``((p0+p1)+(p2+p3))``;
the group sum is added to the running F32 value with an F32 RNE add (C first). CDNA2
flushes subnormal A, B and C to +0 before anything else, and every leaf, node and running
value below ``2^-126`` to a zero of its sign.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.convert import convert_word
from tcspec.spec.fma_chain import fma_word
from tcspec.spec.formats import FORMATS, FloatFormat, to_container
from tcspec.spec.inputs import DotInputs

F32 = FORMATS["f32"]
ONE = 0x3F800000
SIGN = 1 << 31


@dataclass(frozen=True)
class PairwiseParams:
    """``group`` products per tree, ``steps`` trees, ``ftz``: CDNA2's flushes (11.4)."""

    group: int
    steps: int
    ftz: bool = False


def pairwise_params(arch: str, a_format: str, k: int, one_k: bool) -> PairwiseParams:
    """f16 groups of 4, bf16 groups of 2 (4 for ``_1k``); FTZ on CDNA2."""
    group = 4 if a_format == "f16" or one_k else 2
    group = min(group, k)
    if k % group:
        raise ValueError(f"K={k} does not split into groups of {group}")
    return PairwiseParams(group=group, steps=k // group, ftz=arch == "cdna2")


def _as_f32(ops: Ops, fmt: FloatFormat, word: BV, ftz: bool) -> BV:
    """The F32 word of an f16/bf16/f32 operand (exact); with ``ftz`` zero and subnormal
    inputs become +0."""
    if fmt.name == "f16":
        value = convert_word(ops, ops.extract(word, 15, 0), fmt, F32)
    else:
        value = to_container(ops, fmt, ops.extract(word, 31, 0))
    if not ftz:
        return value
    exp_lo = fmt.cleared_bits + fmt.frac_bits
    field = ops.extract(to_container(ops, fmt, ops.extract(word, fmt.container_bits - 1, 0)),
                        exp_lo + fmt.exp_bits - 1, exp_lo)
    return ops.ite(ops.eq(field, 0), ops.const(0, 32), value)


def _flush(ops: Ops, word: BV, ftz: bool) -> BV:
    """Below ``2^-126`` (exponent field 0): a zero of the same sign, under ``ftz``."""
    if not ftz:
        return word
    tiny = ops.eq(ops.extract(word, 30, 23), 0)
    return ops.ite(tiny, ops.bvand(word, SIGN), word)


def _tree(ops: Ops, a: Sequence[BV], b: Sequence[BV], ftz: bool) -> BV:
    if len(a) == 1:
        return _flush(ops, fma_word(ops, F32, a[0], b[0], ops.const(0, 32)), ftz)
    half = len(a) // 2
    left, right = _tree(ops, a[:half], b[:half], ftz), _tree(ops, a[half:], b[half:], ftz)
    return _flush(ops, fma_word(ops, F32, left, ops.const(ONE, 32), right), ftz)


def pairwise_dot(ops: Ops, a_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV,
                 params: PairwiseParams) -> BV:
    """``D`` of a CDNA1/CDNA2 f16/bf16 ``v_mfma`` (section 11.4)."""
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} lanes but B has {len(b)}")
    wa = [_as_f32(ops, a_format, w, params.ftz) for w in a]
    wb = [_as_f32(ops, a_format, w, params.ftz) for w in b]
    acc = _as_f32(ops, F32, c, params.ftz)
    for start in range(0, len(a), params.group):
        group = _tree(ops, wa[start:start + params.group], wb[start:start + params.group],
                      params.ftz)
        acc = _flush(ops, fma_word(ops, F32, acc, ops.const(ONE, 32), group), params.ftz)
        ops.observe("pairwise-group", start=start, acc=acc)
    return acc


def pairwise_tree_dot(ops: Ops, desc: Any, inputs: DotInputs) -> BV:
    """Family ``pairwise-tree``: ``desc.params`` is the instruction's :class:`PairwiseParams`."""
    fmt = FORMATS[desc.a_format]
    assert isinstance(fmt, FloatFormat)
    return pairwise_dot(ops, fmt, inputs.a, inputs.b, inputs.c, desc.params)
