"""Conversion of an exact value ``units * 2^q`` to a destination word (SEMANTICS.md 2.7, 10.3,
11.1, 11.2, 11.4).

The input is an exact signed value: ``units`` a signed two's-complement
bit-vector of any width, ``q`` a signed exponent bit-vector (any width up to
the caller; :data:`~tcspec.proofs.rulebook.fields.EXP_BITS` is enough). Every
destination is one :class:`Destination` row, and one function,
:func:`convert`, does the conversion section 2.7 spells out for F32:

- ``E = bitlen(|units|) - 1 + q`` is the value's leading-bit exponent;
- the result's lowest kept bit has exponent ``max(E, emin) - (p - 1)``
  (``p`` significant bits, ``emin = 1 - bias``: below the normal range the
  unit is the subnormal one, ``2^(emin - p + 1)``);
- the magnitude is shifted to that unit: ``rz`` drops the lost bits
  (truncation toward zero), ``rne`` rounds to nearest with ties to even;
- ``E > emax`` before rounding, or a rounding carry past ``emax``, gives the
  signed infinity (no saturation, under truncation too: B200 word ``tf32-0``).

Zero results (either ``units == 0`` or a nonzero value whose magnitude drops
to 0) follow the row's ``zero`` policy:

- ``"positive"``: always ``+0``. This is section 2.7's rule for F32 RZ
  ("0 -> +0"; a subnormal that truncates to 0 is ``+0``), for F16 RNE ("any
  result that is zero after conversion, whatever its sign, is 0x0000") and,
  read the same way, 10.3's ``f32_e8m13-rz`` ("an exact zero is +0").
- ``"signed"``: ``+0`` when ``units == 0``, otherwise the sign of ``units`` (a
  nonzero value that rounds to zero keeps its sign, IEEE 754). This is the
  IEEE RNE rows' policy (11.1, 11.2, 11.4). Rules about the sign of an
  *exact* zero sum (IEEE's ``-0 + -0 = -0``; CDNA3's ``-0``) are the callers':
  :func:`with_zero_sign` sets the sign of a zero result word.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import EXP_BITS, DFormat, dfmt

RZ = "rz"
RNE = "rne"
POSITIVE_ZERO = "positive"
SIGNED_ZERO = "signed"


@dataclass(frozen=True)
class Destination:
    """A destination row: the stored word's format and the rounding into it.

    ``exp_bits`` exponent bits, ``precision`` significant bits ``p`` (the
    stored fraction is ``p - 1`` bits), ``bias``; ``pad`` zero bits below the
    fraction in the stored word (``f32_e8m13``: an F32 word whose low 10
    fraction bits are zero); ``mode`` :data:`RZ` or :data:`RNE`; ``zero`` the
    zero policy (module docstring).
    """

    name: str
    dformat: DFormat
    exp_bits: int
    precision: int
    bias: int
    pad: int
    mode: str
    zero: str

    @property
    def width(self) -> int:
        """Width of the stored word."""
        return self.dformat.width

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal binade, ``1 - bias``."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite binade, ``bias``."""
        return self.bias

    def __post_init__(self) -> None:
        if 1 + self.exp_bits + self.precision - 1 + self.pad != self.dformat.width:
            raise ValueError(f"destination {self.name}: fields do not fill the word")


F32_RZ = Destination("f32-rz", dfmt("f32"), 8, 24, 127, 0, RZ, POSITIVE_ZERO)
"""Section 2.7 / 10.3 ``f32-rz``: F32, truncation, subnormal unit ``2^-149``, zero ``+0``."""

F16_RNE = Destination("f16-rne", dfmt("f16"), 5, 11, 15, 0, RNE, POSITIVE_ZERO)
"""Section 2.7 / 10.3 ``f16-rne``: F16, ties to even, subnormal unit ``2^-24``, zero ``0x0000``."""

F32_E8M13_RZ = Destination("f32_e8m13-rz", dfmt("f32_e8m13"), 8, 14, 127, 10, RZ,
                           POSITIVE_ZERO)
"""Section 10.3 ``f32_e8m13-rz``: 13 fraction bits in F32's exponent range, truncation,
subnormal unit ``2^-139``, stored in an F32 word with the low 10 fraction bits zero."""

F32_RNE = Destination("f32-rne", dfmt("f32"), 8, 24, 127, 0, RNE, SIGNED_ZERO)
"""IEEE binary32, round to nearest even, subnormals kept (11.1, 11.2, 11.4)."""

F64_RNE = Destination("f64-rne", dfmt("f64"), 11, 53, 1023, 0, RNE, SIGNED_ZERO)
"""IEEE binary64, round to nearest even, subnormals kept (11.1)."""

DESTINATIONS: dict[str, Destination] = {
    d.name: d for d in (F32_RZ, F16_RNE, F32_E8M13_RZ, F32_RNE, F64_RNE)
}


def _exp_width(q: BV) -> int:
    """Width of the exponent arithmetic: ``q``'s width plus two guard bits (at least 18)."""
    return max(EXP_BITS, q.width) + 2


def convert(ops: Ops, units: BV, q: BV, dest: Destination) -> BV:
    """The word of ``dest`` nearest (per its mode) to the exact value ``units * 2^q``.

    ``units`` is signed two's complement (its minimum value is read as
    ``-2^(width-1)``), ``q`` signed. Overflow gives the signed infinity; zero
    results follow ``dest.zero`` (module docstring). The result is
    ``dest.width`` bits.

    Widths: the magnitude register is ``max(width(units), p + 1)`` bits (the
    kept significand is at most ``2^p`` after a rounding carry); exponents are
    ``max(16, width(q)) + 2`` bits, enough for ``q +- width(units)``.
    """
    p = dest.precision
    width_u = units.width
    neg = ops.sign(units)
    mag = ops.abs_signed(units)  # unsigned reading: |min| = 2^(width-1) is right
    wk = max(width_u, p + 1)
    mag = ops.zext(mag, wk)
    ew = _exp_width(q)
    qw = ops.sext(q, ew)

    # E = bitlen(|units|) - 1 + q; lowest kept bit at max(E, emin) - (p - 1).
    n = ops.zext(ops.bitlen(mag, max(1, wk.bit_length())), ew)
    big_e = ops.add(ops.sub(n, 1), qw)
    e_eff = ops.smax(big_e, ops.const(dest.emin, ew))
    lsb = ops.sub(e_eff, p - 1)
    shift = ops.sub(lsb, qw)  # > 0: drop `shift` low bits; <= 0: exact left shift

    # Right shift: truncate, then (RNE) round on the guard bit and the sticky rest.
    k_trunc = ops.lshr(mag, shift)
    if dest.mode == RNE:
        shift_1 = ops.sub(shift, 1)
        above_guard = ops.lshr(mag, shift_1)
        guard = ops.bit(above_guard, 0)
        rest = ops.sub(mag, ops.shl(above_guard, shift_1))
        sticky = ops.ne(rest, 0)
        odd = ops.bit(k_trunc, 0)
        round_up = guard & (sticky | odd)
        k_right = ops.add(k_trunc, ops.bool_to_bv(round_up, wk))
    elif dest.mode == RZ:
        k_right = k_trunc
    else:  # pragma: no cover - static rows
        raise ValueError(f"destination {dest.name}: unknown mode {dest.mode!r}")
    k_left = ops.shl(mag, ops.neg(shift))
    k = ops.ite(ops.sgt(shift, 0), k_right, k_left)
    k = ops.extract(k, p, 0)  # k <= 2^p

    # code = ((max(E, emin) - emin) << (p - 1)) + k: subnormals (k < 2^(p-1)) get exponent
    # field 0, a carry to 2^p moves into the exponent field, including into infinity's.
    cw = dest.exp_bits + p + 1
    binade = ops.resize_unsigned(ops.sub(e_eff, dest.emin), cw)
    code = ops.add(ops.shl(binade, p - 1), ops.zext(k, cw))
    inf_code = ((1 << dest.exp_bits) - 1) << (p - 1)
    overflow = ops.sgt(big_e, dest.emax) | ops.uge(code, inf_code)

    units_zero = ops.eq(mag, 0)
    mag_bits = dest.exp_bits + p - 1
    code = ops.ite(units_zero, ops.const(0, cw), code)
    code_bits = ops.extract(code, mag_bits - 1, 0)
    result_zero = ops.eq(code_bits, 0)
    if dest.zero == POSITIVE_ZERO:
        sign = neg & ~result_zero
    elif dest.zero == SIGNED_ZERO:
        sign = neg
    else:  # pragma: no cover - static rows
        raise ValueError(f"destination {dest.name}: unknown zero policy {dest.zero!r}")
    parts = [ops.bool_to_bv(sign), code_bits]
    if dest.pad:
        parts.append(ops.const(0, dest.pad))
    finite = ops.concat(*parts)
    d = dest.dformat
    infinity = ops.ite(neg, ops.const(d.neg_inf, d.width), ops.const(d.pos_inf, d.width))
    return ops.ite(overflow & ~units_zero, infinity, finite)


def f32_rz(ops: Ops, units: BV, q: BV) -> BV:
    """Section 2.7 F32 truncation (RZ): 32-bit word, zero results ``+0``."""
    return convert(ops, units, q, F32_RZ)


def f16_rne(ops: Ops, units: BV, q: BV) -> BV:
    """Section 2.7 F16 round-to-nearest-even: 16-bit word, zero results ``0x0000``."""
    return convert(ops, units, q, F16_RNE)


def f32_e8m13_rz(ops: Ops, units: BV, q: BV) -> BV:
    """Section 10.3 ``f32_e8m13`` truncation, stored in an F32 word; zero results ``+0``."""
    return convert(ops, units, q, F32_E8M13_RZ)


def f32_rne(ops: Ops, units: BV, q: BV) -> BV:
    """IEEE binary32 RNE; a nonzero value that rounds to zero keeps its sign, ``units == 0``
    gives ``+0`` (callers adjust exact zeros with :func:`with_zero_sign`)."""
    return convert(ops, units, q, F32_RNE)


def f64_rne(ops: Ops, units: BV, q: BV) -> BV:
    """IEEE binary64 RNE; zeros as :func:`f32_rne`."""
    return convert(ops, units, q, F64_RNE)


def is_zero_word(ops: Ops, word: BV, d: DFormat | Destination) -> Bool:
    """The word is ``+0`` or ``-0`` of its format (every bit but the sign clear)."""
    width = d.width
    if word.width != width:
        raise ValueError(f"a {width}-bit word is needed, got {word.width} bits")
    return ops.eq(ops.extract(word, width - 2, 0), 0)


def with_zero_sign(ops: Ops, word: BV, d: DFormat | Destination, negative: Bool) -> BV:
    """``word`` unchanged unless it is a zero; a zero gets the sign ``negative``.

    For the callers' own sign-of-zero rules (IEEE FMA's exact zero: ``-0`` only
    when both addends are ``-0``; CDNA3's ``-0`` for a negative sum).
    """
    width = d.width
    body = ops.extract(word, width - 2, 0)
    signed_zero = ops.concat(ops.bool_to_bv(negative), body)
    return ops.ite(is_zero_word(ops, word, d), signed_zero, word)
