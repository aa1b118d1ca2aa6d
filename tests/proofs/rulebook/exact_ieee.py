"""An exact-rational reading of IEEE binary formats for the tests (never used by the rule
book): decoding words to ``Fraction``s, rounding a rational to nearest even, and a
fusedMultiplyAdd by that rounding (Python 3.11 has no ``math.fma``)."""

from __future__ import annotations

from fractions import Fraction

F32 = (8, 23)
F64 = (11, 52)
FORMATS = {"f32": F32, "f64": F64}


def nan_word(ef: tuple[int, int]) -> int:
    e, f = ef
    return (1 << (e + f)) - 1


def inf_word(ef: tuple[int, int], negative: bool) -> int:
    e, f = ef
    return (int(negative) << (e + f)) | (((1 << e) - 1) << f)


def decode(word: int, ef: tuple[int, int]) -> tuple[str, bool, Fraction]:
    """``(kind, negative, value)``, kind ``"nan"``, ``"inf"`` or ``"fin"``."""
    e, f = ef
    bias = (1 << (e - 1)) - 1
    negative = bool((word >> (e + f)) & 1)
    field = (word >> f) & ((1 << e) - 1)
    frac = word & ((1 << f) - 1)
    if field == (1 << e) - 1:
        return ("nan" if frac else "inf"), negative, Fraction(0)
    if field == 0:
        value = Fraction(frac) * Fraction(2) ** (1 - bias - f)
    else:
        value = Fraction(frac | (1 << f)) * Fraction(2) ** (field - bias - f)
    return "fin", negative, -value if negative else value


def round_half_even(n: int, d: int) -> int:
    q, r = divmod(n, d)
    if 2 * r > d or (2 * r == d and q & 1):
        q += 1
    return q


def encode(x: Fraction, negative: bool, ef: tuple[int, int]) -> int:
    """The word nearest ``x`` (ties to even), subnormals kept, overflow to infinity; a
    result of magnitude 0 takes the sign ``negative``."""
    e, f = ef
    bias = (1 << (e - 1)) - 1
    sign = int(negative) << (e + f)
    a = abs(x)
    if a == 0:
        return sign
    top = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** top > a:
        top -= 1
    ulp = max(top, 1 - bias) - f
    scaled = a / Fraction(2) ** ulp
    k = round_half_even(scaled.numerator, scaled.denominator)
    if k >> (f + 1):
        k >>= 1
        ulp += 1
    if ulp + f > bias:
        return inf_word(ef, negative)
    if k < (1 << f):
        return sign | k
    return sign | ((ulp + f + bias) << f) | (k - (1 << f))


def fma(a: int, b: int, c: int, ef: tuple[int, int]) -> int:
    """IEEE fusedMultiplyAdd with the canonical NaN of 11.1."""
    ka, sa, va = decode(a, ef)
    kb, sb, vb = decode(b, ef)
    kc, sc, vc = decode(c, ef)
    if "nan" in (ka, kb, kc):
        return nan_word(ef)
    ps = sa ^ sb
    if "inf" in (ka, kb):
        if (ka == "fin" and va == 0) or (kb == "fin" and vb == 0):
            return nan_word(ef)
        if kc == "inf" and sc != ps:
            return nan_word(ef)
        return inf_word(ef, ps)
    if kc == "inf":
        return inf_word(ef, sc)
    exact = va * vb + vc
    if exact == 0:
        return encode(exact, va * vb == 0 and ps and vc == 0 and sc, ef)
    return encode(exact, exact < 0, ef)


def fma_chain(a: list[int], b: list[int], c: int, ef: tuple[int, int]) -> int:
    acc = c
    for x, y in zip(a, b):
        acc = fma(x, y, acc, ef)
    return acc
