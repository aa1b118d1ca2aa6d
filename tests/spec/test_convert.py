"""Output conversion (spec/convert.py, SEMANTICS.md section 2.7) against the oracle's encoder."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tcspec.ref import oracle
from tcspec.spec.convert import encode_float, shift_round_nearest_even
from tcspec.spec.formats import EXP_WIDTH, FORMATS
from tcspec.spec.scalar import SCALAR

UNITS_WIDTH = 48


def spec_encode(units: int, q: int, d_type: str, rounding: str) -> int:
    word = encode_float(SCALAR, SCALAR.const(units, UNITS_WIDTH), SCALAR.const(q, EXP_WIDTH),
                        FORMATS[d_type], rounding)  # type: ignore[arg-type]
    return SCALAR.value(word)


units = st.integers(-(1 << (UNITS_WIDTH - 1)) + 1, (1 << (UNITS_WIDTH - 1)) - 1)


@settings(max_examples=400, deadline=None)
@given(units=units, q=st.integers(-220, 120))
def test_f32_truncation(units, q):
    want = oracle.encode(Fraction(units) * Fraction(2) ** q, "f32", "rz")
    assert spec_encode(units, q, "f32", "rz") == want


@settings(max_examples=400, deadline=None)
@given(units=units, q=st.integers(-90, 10))
def test_f16_round_to_nearest_even(units, q):
    want = oracle.encode(Fraction(units) * Fraction(2) ** q, "f16", "rne")
    assert spec_encode(units, q, "f16", "rne") == want


def test_edges():
    assert spec_encode(0, 0, "f32", "rz") == 0
    assert spec_encode(-1, -200, "f32", "rz") == 0, "negative underflow is +0"
    assert spec_encode(1, -149, "f32", "rz") == 1
    assert spec_encode(-1, -149, "f32", "rz") == 0x80000001
    assert spec_encode((1 << 24) - 1, 104, "f32", "rz") == 0x7F7FFFFF
    assert spec_encode(1 << 24, 104, "f32", "rz") == 0x7F800000, "overflow is Inf, not max"
    assert spec_encode(-(1 << 24), 104, "f32", "rz") == 0xFF800000
    assert spec_encode(0xFFF, 4, "f16", "rne") == 0x7C00, "65520 rounds to Inf"
    assert spec_encode(0xFFE, 4, "f16", "rne") == 0x7BFF
    assert spec_encode(0xFFD, 4, "f16", "rne") == 0x7BFE, "65488 ties to even"
    assert spec_encode(-1, -25, "f16", "rne") == 0, "-2^-25 ties to +0"
    assert spec_encode(3, -25, "f16", "rne") == 0x0002


@settings(max_examples=300, deadline=None)
@given(x=st.integers(0, (1 << 20) - 1), k=st.integers(-30, 8))
def test_shift_round_nearest_even(x, k):
    got = shift_round_nearest_even(SCALAR, SCALAR.const(x, 32), SCALAR.const(k, EXP_WIDTH))
    exact = Fraction(x) * Fraction(2) ** k
    floor = exact.numerator // exact.denominator
    rest = exact - floor
    want = floor + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1))
    assert SCALAR.value(got) == want
