"""FP64 and F32 FMA chains: ``acc = C``, then ``acc = fma(A[k], B[k], acc)`` (SEMANTICS.md 11.1).

Each step is one IEEE 754 fused multiply-add in the D format: the exact
``a*b + acc`` rounded once to nearest even, subnormals kept, overflow to the
signed infinity, the IEEE sign of zero. The exact sum is formed in a register
anchored at the larger term's top bit, :func:`fma_register_bits` bits wide: a
term whose bits fall below it keeps them as a sticky half unit, which cannot
change a round-to-nearest-even result (the proof is in section 11.1). FP64
values are wider than 64 bits inside (a 106-bit product, a 112-bit register),
and exponent arithmetic uses :data:`FMA_EXP_WIDTH` bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import FORMATS, Decoded, FloatFormat, decode_float
from tcspec.spec.inputs import DotInputs
from tcspec.spec.specials import apply_specials, classify_specials

FMA_EXP_WIDTH = 14
"""Signed exponent width of one FMA: FP64 product LSBs reach 2^-2148 and tops 2^2050."""

FMA_FORMATS = ("f32", "f64")


@dataclass(frozen=True)
class FmaChainParams:
    """An FMA chain of ``steps`` products, each one IEEE FMA in the D format (section 11.1)."""

    steps: int


def fma_register_bits(fmt: FloatFormat) -> int:
    """Units below the anchoring top bit: the product's ``2p`` bits plus three (section 11.1)."""
    return 2 * fmt.sig_bits + 3


def _aligned(ops: Ops, mag: BV, exponent: BV, lsb: BV, width: int) -> tuple[BV, Bool]:
    """``|value|`` truncated to units of ``2^lsb`` and whether nonzero bits were dropped."""
    shift = ops.sub(exponent, lsb)
    register = ops.zext(mag, width)
    kept = ops.shift_signed(register, shift)
    dropped = ops.and_(ops.slt(shift, 0), ops.ne(ops.shl(kept, ops.neg(shift)), register))
    return kept, dropped


def fma_finite(ops: Ops, fmt: FloatFormat, x: Decoded, y: Decoded, z: Decoded
               ) -> tuple[BV, BV]:
    """``(word, total)``: the RNE word of the finite ``x*y + z`` (a zero result is +0) and
    the register's signed sum in half units of ``2^L`` (section 11.1)."""

    def wide(raw: BV) -> BV:
        return ops.sext(raw, FMA_EXP_WIDTH)

    sig = fmt.sig_bits
    p_nonzero = ops.not_(ops.or_(x.is_zero, y.is_zero))
    c_nonzero = ops.not_(z.is_zero)
    p_lsb = ops.sub(ops.add(wide(x.raw), wide(y.raw)), 2 * fmt.frac_bits)
    c_lsb = ops.sub(wide(z.raw), fmt.frac_bits)
    p_top, c_top = ops.add(p_lsb, 2 * sig), ops.add(c_lsb, sig)
    top = ops.ite(p_nonzero, ops.ite(c_nonzero, ops.smax(p_top, c_top), p_top), c_top)
    register_bits = fma_register_bits(fmt)
    lsb = ops.sub(top, register_bits)
    width = register_bits + 3
    ops.observe("fma-align", top=top, lsb=lsb)

    signed = []
    for mag, exponent, negative in ((ops.mul_wide(x.mag, y.mag), p_lsb,
                                     ops.xor_(x.negative, y.negative)),
                                    (z.mag, c_lsb, z.negative)):
        kept, sticky = _aligned(ops, mag, exponent, lsb, width)
        halves = ops.add(ops.shl(kept, 1), ops.bool_to_bv(sticky, width))
        signed.append(ops.ite(negative, ops.neg(halves), halves))
    total = ops.add(signed[0], signed[1])
    return encode_float(ops, total, ops.sub(lsb, 1), fmt, "rne"), total


def fma_word(ops: Ops, fmt: FloatFormat, a: BV, b: BV, c: BV) -> BV:
    """``fma(a, b, c)`` on ``fmt`` words (IEEE 754, RNE; NaN: the canonical word, section 11.1)."""
    if fmt.name not in FMA_FORMATS:
        raise ValueError(f"an FMA chain runs on f32 or f64 words, not {fmt.name}")
    x, y, z = (decode_float(ops, fmt, w) for w in (a, b, c))
    specials = classify_specials(ops, [(x, y)], z)
    word, total = fma_finite(ops, fmt, x, y, z)
    both_negative_zeros = ops.and_(ops.or_(x.is_zero, y.is_zero), z.is_zero,
                                   ops.xor_(x.negative, y.negative), z.negative)
    negative_zero = ops.ite(ops.eq(total, 0), both_negative_zeros, ops.sign(total))
    sign_bit = ops.const(1 << (fmt.container_bits - 1), fmt.container_bits)
    word = ops.ite(ops.and_(ops.eq(word, 0), negative_zero), sign_bit, word)
    return apply_specials(ops, specials, word, fmt)


def fma_chain(ops: Ops, fmt: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV) -> BV:
    """``D`` of the chain ``acc = C; acc = fma(A[k], B[k], acc)`` for k in order (11.1)."""
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} lanes but B has {len(b)}")
    acc = ops.extract(c, fmt.container_bits - 1, 0)
    for k, (x, y) in enumerate(zip(a, b)):
        acc = fma_word(ops, fmt, x, y, acc)
        ops.observe("fma-step", step=k, acc=acc)
    return acc


def fma_chain_dot(ops: Ops, desc: Any, inputs: DotInputs) -> BV:
    """Family ``fma-chain``: ``desc``'s D format (f32 or f64) is every word's format."""
    fmt = FORMATS[desc.d_type]
    assert isinstance(fmt, FloatFormat)
    return fma_chain(ops, fmt, inputs.a, inputs.b, inputs.c)
