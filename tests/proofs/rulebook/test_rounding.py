"""rounding.py against an independent rational-arithmetic reading of sections 2.7, 10.3, 11."""

from __future__ import annotations

import random
import struct
from fractions import Fraction

import pytest

from tcspec.proofs.rulebook import rounding as rd
from tcspec.spec.scalar import SCALAR as S

# (destination, exponent bits, precision, bias, pad, rne?, signed zero?)
ROWS = [
    (rd.F32_RZ, 8, 24, 127, 0, False, False),
    (rd.F16_RNE, 5, 11, 15, 0, True, False),
    (rd.F32_E8M13_RZ, 8, 14, 127, 10, False, False),
    (rd.F32_RNE, 8, 24, 127, 0, True, True),
    (rd.F64_RNE, 11, 53, 1023, 0, True, True),
]


def reference(value: Fraction, ebits: int, p: int, bias: int, pad: int, rne: bool,
              signed_zero: bool) -> int:
    """The word by rationals: scale to the unit of the value's binade, round, encode."""
    width = 1 + ebits + p - 1 + pad
    neg = value < 0
    mag = abs(value)
    sign = (1 << (width - 1)) if neg else 0
    if mag == 0:
        return 0
    e = 0
    while mag >= Fraction(2) ** (e + 1):
        e += 1
    while mag < Fraction(2) ** e:
        e -= 1
    emin = 1 - bias
    unit = Fraction(2) ** (max(e, emin) - (p - 1))
    scaled = mag / unit
    k = scaled.numerator // scaled.denominator
    if rne:
        rest = scaled - k
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and k % 2):
            k += 1
    if k == 0:
        return sign if signed_zero else 0
    result = k * unit
    re = 0
    while result >= Fraction(2) ** (re + 1):
        re += 1
    while result < Fraction(2) ** re:
        re -= 1
    if re > bias:
        return sign | (((1 << ebits) - 1) << (p - 1 + pad))
    if re < emin:
        code = int(result / Fraction(2) ** (emin - (p - 1)))
    else:
        frac = int(result / Fraction(2) ** (re - (p - 1))) - (1 << (p - 1))
        code = ((re + bias) << (p - 1)) | frac
    return sign | (code << pad)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[0].name)
def test_convert_matches_rationals(row) -> None:
    dest, ebits, p, bias, pad, rne, signed_zero = row
    rng = random.Random(hash(dest.name) & 0xFFFF)
    qlo = -bias - p - 70
    qhi = bias + 10
    for _ in range(300 if dest.precision > 24 else 1500):
        width = rng.choice([4, 12, 30, 40, 70])
        mode = rng.random()
        if mode < 0.3:  # near ties and binade edges
            u = (rng.choice([1, 3, 5]) << rng.randrange(0, width - 3)) - rng.choice([0, 1])
            u = u if rng.random() < 0.5 else -u
        else:
            u = rng.randrange(-(1 << (width - 1)), 1 << (width - 1))
        u = max(-(1 << (width - 1)), min(u, (1 << (width - 1)) - 1))
        q = rng.randrange(qlo - width, qhi)
        got = rd.convert(S, S.const(u, width), S.const(q, 16), dest).node
        want = reference(Fraction(u) * Fraction(2) ** q, ebits, p, bias, pad, rne, signed_zero)
        assert got == want, (dest.name, u, q, hex(got), hex(want))


def test_f64_rne_matches_host_float() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        width = rng.choice([8, 60, 120])
        u = rng.randrange(-(1 << (width - 1)), 1 << (width - 1))
        q = rng.randrange(-1200, 1000)
        try:
            host = struct.unpack("<Q", struct.pack("<d", float(Fraction(u) * Fraction(2) ** q)))[0]
        except OverflowError:
            host = 0x7FF0000000000000 | ((1 << 63) if u < 0 else 0)
        if u == 0:
            host = 0
        assert rd.f64_rne(S, S.const(u, width), S.const(q, 16)).node == host


def test_named_cases() -> None:
    def f32(u: int, q: int, w: int = 40) -> int:
        return rd.f32_rz(S, S.const(u, w), S.const(q, 16)).node

    assert f32(0, 5) == 0
    assert f32(-1, -160) == 0  # truncates to zero: +0 (2.7)
    assert f32(-1, -149) == 0x80000001
    assert f32(1, 128) == 0x7F800000  # E > 127: infinity, no saturation
    assert f32(-((1 << 25) - 1), 103) == 0xFF7FFFFF  # just below 2^128: max finite
    assert rd.f16_rne(S, S.const(-1, 8), S.const(-26, 16)).node == 0x0000  # -2^-26 -> 0x0000
    assert rd.f16_rne(S, S.const(0xFFF, 16), S.const(4, 16)).node == 0x7C00  # carry past 15
    assert rd.f32_e8m13_rz(S, S.const(3, 8), S.const(-140, 16)).node == 1 << 10
    assert rd.f32_rne(S, S.const(-1, 8), S.const(-151, 16)).node == 0x80000000


def test_with_zero_sign() -> None:
    neg = S.true()
    assert rd.with_zero_sign(S, S.const(0, 32), rd.F32_RNE, neg).node == 0x80000000
    assert rd.with_zero_sign(S, S.const(0x80000000, 32), rd.F32_RNE, S.false()).node == 0
    assert rd.with_zero_sign(S, S.const(5, 32), rd.F32_RNE, neg).node == 5
