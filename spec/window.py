"""The unscaled window datapath: kind::tf32, kind::f16, kind::f8f6f4 (SEMANTICS.md section 2).

One definition serves every unscaled float format and every mixed A/B pair:
each operand has its own decoder, the arithmetic is shared. Stages:
decode -> specials -> exact products -> window -> alignment (truncation
toward zero) -> exact sum -> conversion to F32 (RZ) or F16 (RNE).
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.accumulate import align_to_window, exact_product, exact_sum, window_exponent
from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import FORMATS, FloatFormat, check_exponent_headroom
from tcspec.spec.specials import apply_specials, decode_operands

WINDOW_BITS = 25
"""Fraction bits of the shared window below the largest raw exponent (section 2.4)."""

WINDOW_CLAMP = -133
"""Lower clamp of the window exponent ``R`` for tf32 and bf16 only (section 2.4, model)."""

CLAMPED_FORMATS = ("tf32", "bf16")

DESTINATIONS = {"f32": "rz", "f16": "rne"}
"""Destination format -> final rounding (section 2.7); C is read in the same format."""


def default_clamp(a_format: FloatFormat, b_format: FloatFormat) -> int | None:
    """The -133 clamp applies when the operands are tf32 or bf16."""
    if a_format.name in CLAMPED_FORMATS or b_format.name in CLAMPED_FORMATS:
        return WINDOW_CLAMP
    return None


def window_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat, d_format: FloatFormat,
               a: Sequence[BV], b: Sequence[BV], c: BV, *, window: int = WINDOW_BITS,
               clamp: int | None = None, align_rounding: str = "rz") -> BV:
    """``D = C + sum(A[k] * B[k])`` through one shared ``window``-bit fixed-point window.

    ``a``/``b`` are 32-bit operand words, ``c`` the 32-bit C word (read as
    ``d_format``); the result is a ``d_format`` word. ``clamp`` bounds the
    window exponent from below (``default_clamp`` gives the hardware rule).
    ``align_rounding="rne"`` rounds each term to nearest even when aligned
    (candidate ``window-rne-align``); the hardware truncates (``"rz"``).
    """
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} lanes but B has {len(b)}")
    rounding = DESTINATIONS[d_format.name]
    check_exponent_headroom([a_format, b_format, d_format], 2, window)
    operands = decode_operands(ops, a_format, b_format, d_format, a, b, c)

    terms = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    terms.append(operands.c.term)
    ops.observe("products", terms=terms)
    top = window_exponent(ops, terms, clamp)
    quantum = ops.sub(top, window)
    units = [align_to_window(ops, term, quantum, window, align_rounding) for term in terms]
    ops.observe("align", quantum=quantum, window=window, terms=terms, units=units,
                rounding=align_rounding)
    finite = encode_float(ops, exact_sum(ops, units), quantum, d_format, rounding)
    return apply_specials(ops, operands.specials, finite, d_format)


def dense_window_dot(ops: Ops, a_format: str, b_format: str, d_type: str,
                     a: Sequence[BV], b: Sequence[BV], c: BV) -> BV:
    """The hardware datapath for format names: the 25-bit window and its clamp rule."""
    fa, fb, fd = FORMATS[a_format], FORMATS[b_format], FORMATS[d_type]
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fd, FloatFormat)
    return window_dot(ops, fa, fb, fd, a, b, c, clamp=default_clamp(fa, fb))
