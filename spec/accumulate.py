"""Accumulator stages shared by every float datapath (SEMANTICS.md sections 2.3-2.6, 4).

Exact products, the shared fixed-point window, alignment with truncation
toward zero, and the exact integer sum. Each stage is its own function so
proofs can state lemmas at stage boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.convert import shift_round_nearest_even
from tcspec.spec.formats import EXP_WIDTH, MIN_EXP, Term

ALIGN_ROUNDINGS = ("rz", "rne")
"""Alignment: truncation toward zero (the hardware rule) or round-to-nearest-even
(candidate ``window-rne-align``, SEMANTICS.md section 7)."""


def exact_product(ops: Ops, x: Term, y: Term) -> Term:
    """``m = mx*my``, ``r = rx+ry``, ``e = ex+ey``: no rounding (section 2.3).

    Only the significands are multiplied, at their own widths.
    """
    return Term(
        negative=ops.xor_(x.negative, y.negative),
        mag=ops.mul_wide(x.mag, y.mag),
        raw=ops.add(x.raw, y.raw),
        frac_offset=x.frac_offset + y.frac_offset,
        nonzero=ops.and_(x.nonzero, y.nonzero),
    )


def masked_max(ops: Ops, values: Sequence[BV], present: Sequence[Bool]) -> tuple[BV, Bool]:
    """``(max of the present exponents, whether any is present)``; :data:`MIN_EXP` if none."""
    candidates = [ops.ite(p, v, ops.const(MIN_EXP, EXP_WIDTH)) for v, p in zip(values, present)]
    return ops.smax_all(candidates), ops.any_(present)


def max_raw(ops: Ops, terms: Sequence[Term]) -> tuple[BV, Bool]:
    """``(max raw over nonzero terms, whether any term is nonzero)``."""
    return masked_max(ops, [t.raw for t in terms], [t.nonzero for t in terms])


def window_exponent(ops: Ops, terms: Sequence[Term], clamp: int | None = None) -> BV:
    """``R = max(raw of every nonzero term)``, clamped below at ``clamp`` (section 2.4).

    When no term is nonzero ``R`` is irrelevant (every aligned term is 0).
    """
    top, present = max_raw(ops, terms)
    window = top if clamp is None else ops.smax(top, clamp)
    ops.observe("window", max_raw=top, present=present, clamp=clamp, exponent=window)
    return window


def align_to_quantum(ops: Ops, negative: Bool, mag: BV, exponent: BV, q: BV,
                     width: int, rounding: str = "rz") -> BV:
    """``(-1)^negative * mag * 2^exponent`` in signed units of ``2^q``, truncated toward zero.

    ``width`` (static, at least ``mag.width + 1``) must hold the aligned
    magnitude plus a sign bit. Right shifts drop magnitude bits before the
    sign is applied, so both signs truncate toward zero (section 2.5). With
    ``rounding="rne"`` the magnitude is rounded to nearest even instead
    (``width`` then needs one more bit for the carry).
    """
    if rounding not in ALIGN_ROUNDINGS:
        raise ValueError(f"unknown alignment rounding {rounding!r}")
    shift = ops.sub(exponent, q)
    if rounding == "rne":
        magnitude = shift_round_nearest_even(ops, ops.zext(mag, width), shift)
    else:
        magnitude = ops.shift_signed(ops.zext(mag, width), shift)
    return ops.ite(negative, ops.neg(magnitude), magnitude)


def align_to_window(ops: Ops, term: Term, q: BV, headroom: int, rounding: str = "rz") -> BV:
    """``term`` in signed units of ``2^q``, truncated toward zero (section 2.5).

    ``headroom`` is a static bound with ``term.raw <= q + headroom``; it
    sizes the register so that left shifts are exact. Terms far below the
    window become 0.
    """
    width = max(headroom + term.headroom, term.mag.width) + (2 if rounding == "rne" else 1)
    exponent = ops.sub(term.raw, term.frac_offset)
    return align_to_quantum(ops, term.negative, term.mag, exponent, q, width, rounding)


def exact_sum(ops: Ops, units: Sequence[BV]) -> BV:
    """The exact sum of signed unit counts, widened so it cannot wrap (section 2.6)."""
    width = max(u.width for u in units) + max(1, (len(units) - 1).bit_length())
    return ops.sum([ops.sext(u, width) for u in units])
