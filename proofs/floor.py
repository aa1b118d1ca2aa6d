"""Independent statements of truncation, shared by the lemma rows (carry, error bound).

A lemma that says "the spec's units are the truncation of the exact value"
needs that truncation stated without the spec's own shifts: here with left
shifts only, in a register wide enough that neither side can wrap (value
width + result width + 2 bits; a narrower register lets a wrapped, wrong
result pass).
"""

from __future__ import annotations

from tcspec.spec.bitvec import BV, Bool, Ops


def floor_shift_holds(ops: Ops, value: BV, shift: BV, result: BV) -> Bool:
    """``result = floor(value * 2^shift)`` (``value``, ``result`` unsigned, ``shift`` signed),
    stated with left shifts only, in a register where neither side can wrap."""
    width = value.width + result.width + 2
    v, r = ops.zext(value, width), ops.zext(result, width)
    k = ops.resize_signed(shift, max(shift.width, width.bit_length() + 1))
    down = ops.neg(k)
    exact = ops.and_(ops.ult(k, width), ops.eq(ops.shl(v, k), r), ops.eq(ops.lshr(r, k), v))
    below = ops.ite(ops.uge(down, value.width), ops.eq(result, 0),
                    ops.and_(ops.ule(ops.shl(r, down), v),
                             ops.ult(v, ops.shl(ops.add(r, 1), down))))
    return ops.ite(ops.eq(value, 0), ops.eq(result, 0), ops.ite(ops.sge(k, 0), exact, below))


def nearest_shift_holds(ops: Ops, value: BV, shift: BV, result: BV) -> Bool:
    """``|result - value * 2^shift| <= 1/2`` (a rounding to nearest, ties either way; both
    unsigned, ``shift`` signed), stated with left shifts only where nothing can wrap."""
    width = value.width + result.width + 3
    v, r = ops.zext(value, width), ops.zext(result, width)
    k = ops.resize_signed(shift, max(shift.width, width.bit_length() + 1))
    down = ops.neg(k)
    exact = ops.and_(ops.ult(k, width), ops.eq(ops.shl(v, k), r), ops.eq(ops.lshr(r, k), v))
    scaled, half = ops.shl(ops.shl(r, down), 1), ops.shl(ops.const(1, width), down)
    twice = ops.shl(v, 1)
    near = ops.and_(ops.ule(scaled, ops.add(twice, half)), ops.ule(twice, ops.add(scaled, half)),
                    ops.eq(ops.lshr(ops.shl(r, down), down), r))
    below = ops.ite(ops.ugt(down, value.width), ops.eq(result, 0), near)
    return ops.ite(ops.eq(value, 0), ops.eq(result, 0), ops.ite(ops.sge(k, 0), exact, below))


def truncates(ops: Ops, x: BV, shift: BV, units: BV) -> Bool:
    """``units = trunc(x * 2^shift)`` toward zero (``x`` and ``units`` signed)."""
    signed = ops.ite(ops.sign(x), ops.sle(units, 0), ops.sge(units, 0))
    return ops.and_(signed, floor_shift_holds(ops, ops.abs_signed(x), shift,
                                              ops.abs_signed(units)))
