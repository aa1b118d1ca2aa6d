"""Field tables of the number formats and one decoder (SEMANTICS.md sections 1, 2.2, 10.3, 11).

Every format is one :class:`Format` row: where its sign, exponent and fraction
fields sit in the raw word, its bias, and which patterns are special. One
function, :func:`decode`, turns a raw word into the quantities section 1 names:

- ``sign``: the sign bit (a Bool; False for unsigned scale formats);
- ``m``: the unsigned significand, ``(1 << F) | frac`` for normals, ``frac`` for
  subnormals and zero (``F`` = fraction bits), ``F + 1`` bits wide;
- ``r``: the signed raw exponent, ``exp - bias`` for normals, ``1 - bias`` for
  subnormals and zero, :data:`EXP_BITS` bits wide; the value exponent is
  ``e = r - F`` and the value is ``(-1)^sign * m * 2^e``;
- class flags ``zero``, ``inf``, ``nan``.

Fields are read at their positions in the word, so tf32's and bf16's cleared
fraction bits (``w & 0xFFFFE000``, ``w & 0xFFFF0000``) are never looked at:
classification happens after the clearing, as section 1 requires. Bits above a
narrow format's container are ignored the same way.

Non-finite words (``inf`` or ``nan``) decode with ``m = 0`` (so they never count
as a nonzero finite term); callers decide specials from the flags first.

The canonical special words of each D format (2.2, 10.3, 11.1, 11.2) are in
:data:`D_FORMATS`, with :func:`special_word` choosing among them by section
2.2's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

EXP_BITS = 16
"""Width of every signed exponent value (``r``, ``e``, ``R``, ``q``).

Raw exponents lie within ``[-1074, 1023]`` (F64 at the extremes) and every
exponent the rule text forms (sums of four raws, window bounds, shift amounts
between them) stays within ``+-5000``, far inside a signed 16-bit range."""


# Special-pattern kinds of the table's "specials" column (section 1, 11.3).
IEEE = "ieee"  # exponent all ones: fraction 0 is an infinity, else NaN
E4M3_NAN = "e4m3"  # only exp all ones and frac all ones is NaN; no infinity
NONE = "none"  # every pattern is finite
FNUZ = "fnuz"  # the pattern sign=1, exp=0, frac=0 (0x80) is the only NaN; no Inf, no -0
ALL_ONES_NAN = "all-ones-nan"  # (scales) every read bit set is NaN: ue8m0 0xFF, ue4m3 0x7F


@dataclass(frozen=True)
class Format:
    """One row of the format table (section 1, 11.3, and the IEEE C/D formats).

    ``sign_bit`` is the bit position of the sign (None: unsigned). The exponent
    field is ``exp_bits`` wide with its lowest bit at ``exp_lo``; the fraction
    field ``frac_bits`` wide at ``frac_lo``. ``container`` is the number of low
    bits of the raw word the format occupies (bits above are ignored);
    ``cleared`` is the number of low bits of an F32 word that are cleared before
    classification (tf32 13, bf16 16; the fields simply sit above them).
    ``no_subnormal``: an exponent field of 0 is still a normal binade with its
    implicit one (UE8M0: ``0x00`` is ``2^-127``).
    """

    name: str
    container: int
    sign_bit: int | None
    exp_lo: int
    exp_bits: int
    frac_lo: int
    frac_bits: int
    bias: int
    specials: str
    cleared: int = 0
    no_subnormal: bool = False

    @property
    def F(self) -> int:  # noqa: N802 (the rule text's name)
        """Fraction bits ``F``: the value exponent is ``e = r - F``."""
        return self.frac_bits

    @property
    def m_bits(self) -> int:
        """Width of the decoded significand ``m`` (``F + 1``)."""
        return self.frac_bits + 1

    @property
    def r_min(self) -> int:
        """Raw exponent of subnormals and zero, ``1 - bias`` (the format's minimum normal)."""
        return 1 - self.bias

    @property
    def word_bits(self) -> int:
        """Width of an input word carrying this format (32, or 64 for F64)."""
        return 64 if self.container > 32 else 32


def _row(name: str, container: int, e: int, f: int, bias: int, specials: str, *,
         signed: bool = True, cleared: int = 0, no_subnormal: bool = False) -> Format:
    """A row whose fields are packed at the top of ``container`` (sign, exp, frac, cleared)."""
    frac_lo = cleared
    exp_lo = frac_lo + f
    sign_bit = exp_lo + e if signed else None
    top = exp_lo + e + (1 if signed else 0)
    if top > container:
        raise ValueError(f"format {name}: fields need {top} bits, container has {container}")
    return Format(name, container, sign_bit, exp_lo, e, frac_lo, f, bias, specials,
                  cleared, no_subnormal)


FORMATS: dict[str, Format] = {
    row.name: row
    for row in (
        # section 1: operands
        _row("tf32", 32, 8, 10, 127, IEEE, cleared=13),
        _row("bf16", 32, 8, 7, 127, IEEE, cleared=16),
        _row("f16", 16, 5, 10, 15, IEEE),
        _row("e4m3", 8, 4, 3, 7, E4M3_NAN),
        _row("e5m2", 8, 5, 2, 15, IEEE),
        _row("e2m3", 6, 2, 3, 1, NONE),
        _row("e3m2", 6, 3, 2, 3, NONE),
        _row("e2m1", 4, 2, 1, 1, NONE),
        # section 1: C/D formats (f16 above serves as C and D when D is F16)
        _row("f32", 32, 8, 23, 127, IEEE),
        # section 1: scales. ue4m3 occupies the low 7 bits (bit 7 ignored).
        _row("ue8m0", 8, 8, 0, 127, ALL_ONES_NAN, signed=False, no_subnormal=True),
        _row("ue4m3", 7, 4, 3, 7, ALL_ONES_NAN, signed=False),
        # section 11.1: F64 (A, B, C and D of the FP64 chains)
        _row("f64", 64, 11, 52, 1023, IEEE),
        # section 11.2: xf32 is tf32's layout (low 13 bits cleared first)
        _row("xf32", 32, 8, 10, 127, IEEE, cleared=13),
        # section 11.3: fnuz FP8 (the all-ones exponent is an ordinary binade)
        _row("e4m3fnuz", 8, 4, 3, 8, FNUZ),
        _row("e5m2fnuz", 8, 5, 2, 16, FNUZ),
    )
}
"""The format table, by lower-case name (``fp8`` and ``fp4`` are not aliases here)."""


def fmt(name: str) -> Format:
    """The table row of format ``name`` (ValueError naming an unknown format)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}") from None


@dataclass(frozen=True)
class Decoded:
    """The decoded quantities of one raw word (section 1).

    ``m`` is unsigned, ``fmt.m_bits`` wide; ``r`` is signed, :data:`EXP_BITS`
    wide. For ``inf``/``nan`` words ``m`` is 0 and ``r`` is the field value.
    ``subnormal`` is set for a nonzero finite word whose exponent field is 0
    (never for UE8M0).
    """

    fmt: Format
    sign: Bool
    m: BV
    r: BV
    zero: Bool
    inf: Bool
    nan: Bool
    subnormal: Bool

    @property
    def finite(self) -> Bool:
        """Neither infinite nor NaN."""
        return ~(self.inf | self.nan)

    @property
    def nonzero(self) -> Bool:
        """A finite value other than zero (``m != 0``)."""
        return ~(self.zero | self.inf | self.nan)

    def e(self, ops: Ops) -> BV:
        """The value exponent ``e = r - F`` (signed, :data:`EXP_BITS` wide)."""
        return ops.sub(self.r, self.fmt.frac_bits)


def fields_of(ops: Ops, word: BV, f: Format) -> tuple[Bool, BV, BV]:
    """``(sign, exp, frac)`` fields of ``word`` read at ``f``'s positions.

    A zero-width fraction is returned as a 1-bit 0.
    """
    if word.width < f.container:
        raise ValueError(f"a {f.name} word needs at least {f.container} bits, got {word.width}")
    sign = ops.bit(word, f.sign_bit) if f.sign_bit is not None else ops.false()
    exp = ops.extract(word, f.exp_lo + f.exp_bits - 1, f.exp_lo)
    if f.frac_bits:
        frac = ops.extract(word, f.frac_lo + f.frac_bits - 1, f.frac_lo)
    else:
        frac = ops.const(0, 1)
    return sign, exp, frac


def decode(ops: Ops, word: BV, f: Format | str) -> Decoded:
    """Decode the raw word ``word`` in format ``f`` (section 1; 11.3 for fnuz).

    Only the format's field bits are read: cleared bits and bits above the
    container are ignored. Specials per the table row's kind.
    """
    if isinstance(f, str):
        f = fmt(f)
    sign, exp, frac = fields_of(ops, word, f)
    exp_all_ones = ops.eq(exp, (1 << f.exp_bits) - 1)
    exp_zero = ops.eq(exp, 0)
    frac_zero = ops.eq(frac, 0)
    if f.specials == IEEE:
        inf = exp_all_ones & frac_zero
        nan = exp_all_ones & ~frac_zero
    elif f.specials == E4M3_NAN:
        inf = ops.false()
        nan = exp_all_ones & ops.eq(frac, (1 << f.frac_bits) - 1)
    elif f.specials == FNUZ:
        inf = ops.false()
        nan = sign & exp_zero & frac_zero
    elif f.specials == ALL_ONES_NAN:
        inf = ops.false()
        nan = exp_all_ones & ops.eq(frac, (1 << f.frac_bits) - 1 if f.frac_bits else 0)
    elif f.specials == NONE:
        inf = ops.false()
        nan = ops.false()
    else:  # pragma: no cover - table rows are static
        raise ValueError(f"format {f.name}: unknown specials kind {f.specials!r}")
    if f.no_subnormal:
        zero = ops.false()
        subnormal = ops.false()
        hidden = ops.true()
    else:
        zero = exp_zero & frac_zero & ~nan
        subnormal = exp_zero & ~frac_zero
        hidden = ~exp_zero
    special = inf | nan
    frac_m = ops.zext(frac, f.m_bits) if f.frac_bits else ops.const(0, f.m_bits)
    m = ops.ite(hidden, ops.bvor(frac_m, 1 << f.frac_bits), frac_m)
    m = ops.ite(special, ops.const(0, f.m_bits), m)
    exp_wide = ops.zext(exp, EXP_BITS)
    if f.no_subnormal:
        r = ops.sub(exp_wide, f.bias)
    else:
        r = ops.ite(exp_zero, ops.const(1 - f.bias, EXP_BITS), ops.sub(exp_wide, f.bias))
    return Decoded(f, sign, m, r, zero, inf, nan, subnormal)


# ---------------------------------------------------------------- D formats


@dataclass(frozen=True)
class DFormat:
    """A destination word format and its canonical special words.

    ``nan`` is the canonical NaN (2.2: F32 ``0x7FFFFFFF``, F16 ``0x7FFF``;
    11.1: F64 ``0x7FFFFFFFFFFFFFFF``); ``pos_inf``/``neg_inf`` the infinities.
    ``f32_e8m13`` (10.3) is stored in an F32 word and shares F32's specials.
    """

    name: str
    width: int
    nan: int
    pos_inf: int
    neg_inf: int

    @property
    def sign_mask(self) -> int:
        return 1 << (self.width - 1)


D_FORMATS: dict[str, DFormat] = {
    d.name: d
    for d in (
        DFormat("f32", 32, 0x7FFFFFFF, 0x7F800000, 0xFF800000),
        DFormat("f16", 16, 0x7FFF, 0x7C00, 0xFC00),
        DFormat("f32_e8m13", 32, 0x7FFFFFFF, 0x7F800000, 0xFF800000),
        DFormat("f64", 64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000),
    )
}


def dfmt(name: str) -> DFormat:
    """The D format row ``name`` (ValueError naming an unknown one)."""
    try:
        return D_FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown D format {name!r}") from None


def special_word(ops: Ops, d: DFormat | str, nan: Bool, pos_inf: Bool, neg_inf: Bool,
                 finite: BV) -> BV:
    """Section 2.2's choice: NaN, or both infinities, give the canonical NaN; one
    infinity gives that infinity; otherwise ``finite`` (a word of ``d``'s width)."""
    if isinstance(d, str):
        d = dfmt(d)
    word = ops.ite(neg_inf, ops.const(d.neg_inf, d.width), finite)
    word = ops.ite(pos_inf, ops.const(d.pos_inf, d.width), word)
    return ops.ite(nan | (pos_inf & neg_inf), ops.const(d.nan, d.width), word)
