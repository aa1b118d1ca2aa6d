"""Exact rounding of binary values to the format rows, on the integer bits (SEMANTICS.md 9).

Every float that enters or leaves tcspec at the user-facing edge goes through
this module as integers: a value is ``(-1)^sign * (sig + t) * 2^exp`` with
``sig`` a ``uint64`` significand, ``exp`` an ``int64`` exponent and ``t`` in
``[0, 1)`` (``sticky``: ``t > 0``, allowed only where ``sig`` has at least
two bits below the rounding position). :func:`round_to` rounds it once to a
row of :data:`spec.formats.FORMATS` (or F32/F16) with round-to-nearest-even
or toward zero, with IEEE subnormals, and overflow either saturating or
going to Inf (NaN for E4M3, an error for the formats without either).
:func:`decode_bits` reads IEEE binary words of any width. No host float
arithmetic runs: bits are ints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcspec.spec.formats import FORMATS, FloatFormat

ROUNDINGS = ("rne", "rz")
"""Round to nearest, ties to even; round toward zero (truncation)."""

F32 = FORMATS["f32"]
F16 = FORMATS["f16"]
assert isinstance(F32, FloatFormat) and isinstance(F16, FloatFormat)

_U64 = np.uint64


@dataclass(frozen=True)
class Decoded:
    """Integer fields of a batch of values: sign (0/1), significand, exponent (value =
    ``sig * 2^exp``), the NaN / infinity masks, and the exponent of the leading bit."""

    sign: np.ndarray
    sig: np.ndarray
    exp: np.ndarray
    nan: np.ndarray
    inf: np.ndarray
    top: np.ndarray

    @property
    def finite(self) -> np.ndarray:
        return ~(self.nan | self.inf)


def decode_bits(bits: np.ndarray, exp_bits: int, frac_bits: int, bias: int,
                specials: str = "ieee") -> Decoded:
    """The fields of IEEE-style binary words (``bits`` unsigned, sign at bit
    ``exp_bits + frac_bits``): normals get the hidden bit, subnormals share the smallest
    binade; ``specials`` as :class:`spec.formats.FloatFormat`."""
    bits = np.asarray(bits).astype(_U64)
    frac_mask = _U64((1 << frac_bits) - 1)
    field = (bits >> _U64(frac_bits)) & _U64((1 << exp_bits) - 1)
    frac = bits & frac_mask
    sign = ((bits >> _U64(exp_bits + frac_bits)) & _U64(1)).astype(np.int64)
    top = _U64((1 << exp_bits) - 1)
    if specials == "ieee":
        nan, inf = (field == top) & (frac != 0), (field == top) & (frac == 0)
    elif specials == "max_nan":
        nan, inf = (field == top) & (frac == frac_mask), np.zeros(bits.shape, bool)
    else:
        nan = inf = np.zeros(bits.shape, bool)
    normal = field != 0
    sig = np.where(normal, frac | _U64(1 << frac_bits), frac)
    sig = np.where(nan | inf, _U64(0), sig)
    exp = np.maximum(field.astype(np.int64), 1) - bias - frac_bits
    top = exp + frac_bits
    small = np.flatnonzero(~normal)
    if small.size:
        top.reshape(-1)[small] = bit_length(frac.reshape(-1)[small]) - 1 + exp.reshape(-1)[small]
    return Decoded(sign, sig, exp, nan, inf, top)


def decode_format(words: np.ndarray, fmt: FloatFormat) -> Decoded:
    """The fields of words of a format row (tf32/bf16 read from their F32 container)."""
    bits = np.asarray(words).astype(_U64) >> _U64(fmt.cleared_bits)
    width = fmt.exp_bits + fmt.frac_bits
    if not fmt.signed:
        bits = bits & _U64((1 << width) - 1)
    return decode_bits(bits, fmt.exp_bits, fmt.frac_bits, fmt.bias, fmt.specials)


def bit_length(x: np.ndarray) -> np.ndarray:
    """Bits of each ``uint64`` value (0 for 0), by integer halving."""
    x = np.asarray(x, dtype=_U64).copy()
    n = np.zeros(x.shape, dtype=np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        big = x >= _U64(1 << step)
        n += np.where(big, step, 0)
        x = np.where(big, x >> _U64(step), x)
    return n + (x > 0)


def max_code(fmt: FloatFormat) -> int:
    """Magnitude code of the largest finite value of ``fmt``."""
    field, frac = fmt.exp_max_field, (1 << fmt.frac_bits) - 1
    if fmt.specials == "ieee":
        return ((field - 1) << fmt.frac_bits) | frac
    if fmt.specials == "max_nan":
        return (field << fmt.frac_bits) | (frac - 1) if fmt.frac_bits else field - 1
    return (field << fmt.frac_bits) | frac


def nan_code(fmt: FloatFormat) -> int | None:
    """Magnitude code of the (quiet) NaN, or None when ``fmt`` has none."""
    if fmt.specials == "ieee":
        return (fmt.exp_max_field << fmt.frac_bits) | (1 << max(fmt.frac_bits - 1, 0))
    if fmt.specials == "max_nan":
        return (fmt.exp_max_field << fmt.frac_bits) | ((1 << fmt.frac_bits) - 1)
    return None


def inf_code(fmt: FloatFormat) -> int | None:
    return fmt.exp_max_field << fmt.frac_bits if fmt.specials == "ieee" else None


def container(codes: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Format codes (sign at bit ``exp_bits + frac_bits``) as container words (tf32 and
    bf16 in the high bits of an F32 word)."""
    return np.asarray(codes, dtype=_U64) << _U64(fmt.cleared_bits)


def round_to(sign: np.ndarray, sig: np.ndarray, exp: np.ndarray, fmt: FloatFormat, *,
             rounding: str = "rne", saturate: bool = False,
             sticky: np.ndarray | None = None, what: str = "value",
             top: np.ndarray | None = None) -> np.ndarray:
    """Codes of ``(-1)^sign * (sig + t) * 2^exp`` rounded once to ``fmt`` (SEMANTICS.md 9.1).

    The result's lowest bit has exponent ``max(E, emin) - F`` (``E`` the
    value's own exponent; subnormals below ``emin``); RNE rounds up when the
    dropped part exceeds half a unit, or equals it and the kept part is odd
    (``t > 0`` counts as more); RZ drops it. A value above the largest finite
    one saturates to it under ``saturate`` or RZ, else becomes Inf (IEEE
    rows), NaN (E4M3), or a ``ValueError`` (rows with neither). Zero keeps
    its sign. ``sig`` must be below ``2^62``; ``top`` (the exponent of its
    leading bit, where known) saves finding it.
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    sign = np.asarray(sign, dtype=np.int64)
    sig = np.asarray(sig, dtype=_U64)
    exp = np.asarray(exp, dtype=np.int64)
    frac = fmt.frac_bits
    emin = fmt.emin
    top = bit_length(sig) - 1 + exp if top is None else np.asarray(top, dtype=np.int64)
    lsb = np.maximum(top, emin) - frac
    shift = lsb - exp
    left = np.clip(-shift, 0, 63).astype(_U64)
    right = np.clip(shift, 0, 63).astype(_U64)
    kept = np.where(shift <= 0, sig << left, sig >> right)
    if rounding == "rne":
        low = sig & ((_U64(1) << right) - _U64(1))
        half = _U64(1) << (np.maximum(right, _U64(1)) - _U64(1))
        tail = np.zeros(sig.shape, bool) if sticky is None else np.asarray(sticky, bool)
        up = (shift > 0) & ((low > half) | ((low == half) & (tail | ((kept & _U64(1)) == 1))))
        kept = kept + up.astype(_U64)
    code = kept + (np.maximum(lsb + frac - emin, 0).astype(_U64) << _U64(frac))
    code = np.where(sig == 0, _U64(0), code)
    over = code > _U64(max_code(fmt))
    if over.any():
        if saturate or rounding == "rz":
            code = np.where(over, _U64(max_code(fmt)), code)
        else:
            special = inf_code(fmt)
            special = nan_code(fmt) if special is None else special
            if special is None:
                raise ValueError(f"{what} overflows {fmt.name}, which has no infinity or NaN "
                                 f"(largest finite magnitude code 0x{max_code(fmt):X}); pass "
                                 f"saturate=True to clamp")
            code = np.where(over, _U64(special), code)
    if fmt.signed:
        code = code | (sign.astype(_U64) << _U64(fmt.exp_bits + frac))
    return code


def with_specials(codes: np.ndarray, value: Decoded, fmt: FloatFormat, *, saturate: bool,
                  what: str = "value") -> np.ndarray:
    """``codes`` with NaN and infinite inputs mapped into ``fmt``: NaN to its NaN (a
    ``ValueError`` where it has none); infinity to the largest finite magnitude under
    ``saturate`` (CUDA's SATFINITE), else to Inf, NaN (E4M3) or a ``ValueError``. Signs are
    kept."""
    sign_bit = _U64(1 << (fmt.exp_bits + fmt.frac_bits)) if fmt.signed else _U64(0)
    sign = np.where(value.sign == 1, sign_bit, _U64(0))
    if value.nan.any():
        code = nan_code(fmt)
        if code is None:
            raise ValueError(f"{what} holds NaN, which {fmt.name} cannot represent "
                             f"(it has no NaN)")
        codes = np.where(value.nan, sign | _U64(code), codes)
    if value.inf.any():
        code = max_code(fmt) if saturate else inf_code(fmt)
        if code is None:
            code = nan_code(fmt)
        if code is None:
            raise ValueError(f"{what} holds an infinity, which {fmt.name} cannot represent; "
                             f"pass saturate=True to clamp it to the largest finite value")
        codes = np.where(value.inf, sign | _U64(code), codes)
    return codes


def divide(sig_x: np.ndarray, exp_x: np.ndarray, sig_d: np.ndarray, exp_d: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x / d`` exactly as ``(q, exp, sticky)``: the quotient ``(q + t) * 2^exp`` with
    ``q`` of at least 33 bits for ``sig_x < 2^61`` and ``0 < sig_d < 2^28`` (integer
    division of ``sig_x`` normalised to bit 61; ``t > 0`` exactly when a remainder is
    left)."""
    sig_x = np.asarray(sig_x, dtype=_U64)
    sig_d = np.asarray(sig_d, dtype=_U64)
    up = np.where(sig_x == 0, 0, 62 - bit_length(sig_x)).astype(np.int64)
    wide = sig_x << up.astype(_U64)
    safe = np.where(sig_d == 0, _U64(1), sig_d)
    q, r = wide // safe, wide % safe
    return q, np.asarray(exp_x, dtype=np.int64) - up - np.asarray(exp_d, dtype=np.int64), r != 0


def _f32_fields(words: np.ndarray) -> Decoded:
    return decode_format(np.asarray(words, dtype=np.uint32), F32)


F32_NAN = 0x7FFFFFFF
"""The canonical F32 NaN of SEMANTICS.md 2.2, given by every F32 operation here."""


def f32_add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754 binary32 ``x + y`` with round-to-nearest-even on F32 words (SEMANTICS.md 9.3).

    The exact sum is formed in an ``int64`` (the smaller term aligned to the
    larger; past 31 bits of difference it only sets a bit far below the
    rounding position) and rounded once. NaN in, or Inf + (-Inf): the
    canonical NaN; an infinity wins over finite terms; an exact zero sum is
    +0 unless both terms are -0.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.uint32), np.asarray(y, dtype=np.uint32))
    fx, fy = _f32_fields(x), _f32_fields(y)
    big = (fx.exp > fy.exp) | ((fx.exp == fy.exp) & (fx.sig >= fy.sig))
    s_big, s_small = np.where(big, fx.sign, fy.sign), np.where(big, fy.sign, fx.sign)
    m_big, m_small = np.where(big, fx.sig, fy.sig), np.where(big, fy.sig, fx.sig)
    e_big, e_small = np.where(big, fx.exp, fy.exp), np.where(big, fy.exp, fx.exp)
    gap = e_big - e_small
    near = gap <= 31
    shift = np.where(near, gap, 31).astype(_U64)
    small = np.where(near, m_small, (m_small != 0).astype(_U64)).astype(np.int64)
    total = (m_big << shift).astype(np.int64) * (1 - 2 * s_big)
    total = total + small * (1 - 2 * s_small)
    exp = np.where(near, e_small, e_big - 31)
    sign = np.where(total == 0, fx.sign & fy.sign, (total < 0).astype(np.int64))
    codes = round_to(sign, np.abs(total).astype(_U64), exp, F32)
    inf_sign = np.where(fx.inf, fx.sign, fy.sign)
    codes = np.where(fx.inf | fy.inf, (inf_sign.astype(_U64) << _U64(31)) | _U64(0x7F800000),
                     codes)
    nan = fx.nan | fy.nan | (fx.inf & fy.inf & (fx.sign != fy.sign))
    return np.where(nan, _U64(F32_NAN), codes).astype(np.uint32)


def f32_mul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754 binary32 ``x * y`` with round-to-nearest-even on F32 words (SEMANTICS.md
    9.3): the exact 48-bit product rounded once. NaN in, or Inf x 0: the canonical NaN."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.uint32), np.asarray(y, dtype=np.uint32))
    fx, fy = _f32_fields(x), _f32_fields(y)
    sign = fx.sign ^ fy.sign
    codes = round_to(sign, fx.sig * fy.sig, fx.exp + fy.exp, F32)
    zero = ((fx.sig == 0) & fx.finite) | ((fy.sig == 0) & fy.finite)
    inf = fx.inf | fy.inf
    codes = np.where(inf, (sign.astype(_U64) << _U64(31)) | _U64(0x7F800000), codes)
    nan = fx.nan | fy.nan | (inf & zero)
    return np.where(nan, _U64(F32_NAN), codes).astype(np.uint32)


def f16_to_f32(words: np.ndarray) -> np.ndarray:
    """F16 words (low 16 bits) widened exactly to F32 words (NaN: the canonical NaN)."""
    value = decode_format(np.asarray(words) & 0xFFFF, F16)
    codes = with_specials(round_to(value.sign, value.sig, value.exp, F32), value, F32,
                          saturate=False)
    return np.where(value.nan, _U64(F32_NAN), codes).astype(np.uint32)
