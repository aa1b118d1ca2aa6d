"""The format table and its decoders (SEMANTICS.md section 1).

Every operand, accumulator and scale format is one row of :data:`FORMATS`;
one decoder, written over ``ops``, reads any float row. A word is first
truncated to its container (low bits, cleared fraction bits for tf32/bf16),
then classified, then decoded into ``(m, r)`` with ``e = r - F``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

EXP_WIDTH = 12
"""Width of every signed exponent quantity in a datapath (raw exponents,
quanta, shift amounts). :func:`check_exponent_headroom` proves at build time
that the formats in use stay far inside it."""

MIN_EXP = -(1 << (EXP_WIDTH - 1))
"""Below every raw exponent: the neutral element of a raw-exponent maximum."""


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point container format.

    ``specials``: ``"ieee"`` (all-ones exponent is Inf or NaN), ``"max_nan"``
    (only the all-ones pattern is NaN, no Inf), ``"fnuz"`` (only the
    negative-zero pattern is NaN: no Inf, no negative zero) or ``"none"``.
    ``cleared_bits`` low fraction bits of the container are zeroed before
    classifying (tf32: 13, bf16: 16). ``subnormals=False`` means a zero
    exponent field is an ordinary binade (UE8M0: 0x00 is 2^-127).
    """

    name: str
    exp_bits: int
    frac_bits: int
    bias: int
    container_bits: int
    cleared_bits: int = 0
    signed: bool = True
    specials: str = "ieee"
    subnormals: bool = True

    @property
    def exp_max_field(self) -> int:
        return (1 << self.exp_bits) - 1

    @property
    def min_raw(self) -> int:
        """Raw exponent of the smallest binade (subnormals share it)."""
        return (1 if self.subnormals else 0) - self.bias

    @property
    def max_raw(self) -> int:
        """Raw exponent of the largest finite binade."""
        top = self.exp_max_field - (1 if self.specials == "ieee" else 0)
        return top - self.bias

    @property
    def sig_bits(self) -> int:
        """Width of the decoded significand ``m`` (hidden bit included)."""
        return self.frac_bits + 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal binade (``1 - bias``)."""
        return 1 - self.bias


@dataclass(frozen=True)
class IntFormat:
    """An integer container format (kind::i8 operands)."""

    name: str
    bits: int
    signed: bool


FORMATS: dict[str, FloatFormat | IntFormat] = {
    fmt.name: fmt
    for fmt in (
        FloatFormat("tf32", 8, 10, 127, 32, cleared_bits=13),
        FloatFormat("bf16", 8, 7, 127, 32, cleared_bits=16),
        FloatFormat("f16", 5, 10, 15, 16),
        FloatFormat("e4m3", 4, 3, 7, 8, specials="max_nan"),
        FloatFormat("e5m2", 5, 2, 15, 8),
        FloatFormat("e2m3", 2, 3, 1, 6, specials="none"),
        FloatFormat("e3m2", 3, 2, 3, 6, specials="none"),
        FloatFormat("e2m1", 2, 1, 1, 4, specials="none"),
        FloatFormat("f32", 8, 23, 127, 32),
        FloatFormat("xf32", 8, 10, 127, 32, cleared_bits=13),
        FloatFormat("f64", 11, 52, 1023, 64),
        FloatFormat("e4m3fnuz", 4, 3, 8, 8, specials="fnuz"),
        FloatFormat("e5m2fnuz", 5, 2, 16, 8, specials="fnuz"),
        FloatFormat("ue8m0", 8, 0, 127, 8, signed=False, specials="max_nan", subnormals=False),
        FloatFormat("ue4m3", 4, 3, 7, 7, signed=False, specials="max_nan"),
        IntFormat("u8", 8, signed=False),
        IntFormat("s8", 8, signed=True),
    )
}

ALIASES = {"fp8": "e4m3", "fp4": "e2m1"}
"""Spellings of SEMANTICS.md section 6 that name a row under another name."""

ARCH_ONLY_FORMATS = ("xf32", "f64", "e4m3fnuz", "e5m2fnuz")
"""Rows no tcgen05 datapath reads (SEMANTICS.md section 11): CDNA3's xf32 (tf32's layout:
the low 13 bits of the F32 word cleared) and fnuz FP8, and the FP64 FMA chains."""


def format_named(name: str) -> FloatFormat | IntFormat:
    """The table row for ``name`` (aliases allowed); ``ValueError`` naming it otherwise."""
    key = ALIASES.get(name, name) if isinstance(name, str) else name
    if key not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"unknown format {name!r} (known: {known})")
    return FORMATS[key]


def float_format(name: str) -> FloatFormat:
    fmt = format_named(name)
    if not isinstance(fmt, FloatFormat):
        raise ValueError(f"format {name!r} is an integer format, not a float format")
    return fmt


@dataclass(frozen=True)
class Term:
    """A finite signed quantity ``(-1)^negative * mag * 2^(raw - frac_offset)``.

    ``raw`` is the raw exponent the accumulator aligns by (SEMANTICS.md
    section 1), ``frac_offset`` the static distance to the value exponent
    ``e``. ``nonzero`` is whether ``mag != 0``, kept apart so that solvers
    need not rediscover it through a multiplier.
    """

    negative: Bool
    mag: BV
    raw: BV
    frac_offset: int
    nonzero: Bool

    @property
    def headroom(self) -> int:
        """Static bound: the value is below ``2^(raw + headroom)``."""
        return self.mag.width - self.frac_offset


@dataclass(frozen=True)
class Decoded:
    """A classified, decoded float word (SEMANTICS.md section 1)."""

    fmt: FloatFormat
    negative: Bool
    mag: BV
    raw: BV
    is_zero: Bool
    is_inf: Bool
    is_nan: Bool

    @property
    def term(self) -> Term:
        """The finite value as a :class:`Term` (meaningless when Inf or NaN)."""
        nonzero = self.is_zero.ops.not_(self.is_zero)
        return Term(self.negative, self.mag, self.raw, self.fmt.frac_bits, nonzero)


def to_container(ops: Ops, fmt: FloatFormat, word: BV) -> BV:
    """The container bits of ``word``: its low bits, cleared fraction bits zeroed."""
    bits = ops.extract(word, fmt.container_bits - 1, 0)
    if fmt.cleared_bits:
        bits = ops.bvand(bits, ((1 << fmt.container_bits) - 1) ^ ((1 << fmt.cleared_bits) - 1))
    return bits


def decode_float(ops: Ops, fmt: FloatFormat, word: BV) -> Decoded:
    """Truncate ``word`` to ``fmt``'s container, classify, decode ``(m, r)``."""
    bits = to_container(ops, fmt, word)
    frac_lo = fmt.cleared_bits
    exp_lo = frac_lo + fmt.frac_bits
    exp = ops.extract(bits, exp_lo + fmt.exp_bits - 1, exp_lo)
    frac = ops.extract(bits, exp_lo - 1, frac_lo) if fmt.frac_bits else None
    negative = ops.bit(bits, fmt.container_bits - 1) if fmt.signed else ops.false()

    exp_is_max = ops.eq(exp, fmt.exp_max_field)
    frac_is_zero = ops.eq(frac, 0) if frac is not None else ops.true()
    frac_is_max = ops.eq(frac, (1 << fmt.frac_bits) - 1) if frac is not None else ops.true()
    if fmt.specials == "ieee":
        is_inf = ops.and_(exp_is_max, frac_is_zero)
        is_nan = ops.and_(exp_is_max, ops.not_(frac_is_zero))
    elif fmt.specials == "max_nan":
        is_inf = ops.false()
        is_nan = ops.and_(exp_is_max, frac_is_max)
    elif fmt.specials == "fnuz":
        is_inf = ops.false()
        is_nan = ops.eq(bits, 1 << (fmt.container_bits - 1))
    else:
        is_inf = is_nan = ops.false()

    exp_wide = ops.zext(exp, EXP_WIDTH)
    if fmt.subnormals:
        exp_is_zero = ops.eq(exp, 0)
        hidden = ops.bool_to_bv(ops.not_(exp_is_zero))
        mag = ops.concat(hidden, frac) if frac is not None else hidden
        raw = ops.ite(exp_is_zero, ops.const(fmt.min_raw, EXP_WIDTH), exp_wide - fmt.bias)
        is_zero = ops.and_(exp_is_zero, frac_is_zero)
        if fmt.specials == "fnuz":
            is_zero = ops.and_(is_zero, ops.not_(negative))
    else:
        mag = ops.concat(ops.const(1, 1), frac) if frac is not None else ops.const(1, 1)
        raw = exp_wide - fmt.bias
        is_zero = ops.false()
    return Decoded(fmt, negative, mag, raw, is_zero, is_inf, is_nan)


def check_exponent_headroom(formats: list[FloatFormat], factors: int, window: int) -> None:
    """Static proof that exponent arithmetic cannot wrap in ``EXP_WIDTH`` bits.

    A term's raw exponent is a sum of ``factors`` raw exponents; quanta,
    alignment shifts and result exponents differ from raw exponents by at
    most ``window`` plus a few significand widths. Raises if four times the
    worst case does not fit.
    """
    worst_raw = factors * max(max(abs(f.min_raw), abs(f.max_raw)) for f in formats)
    worst_bits = factors * max(f.sig_bits for f in formats) + 64
    bound = 2 * (worst_raw + window + worst_bits)
    if bound >= (1 << (EXP_WIDTH - 1)):
        raise ValueError(f"exponent range {bound} exceeds {EXP_WIDTH}-bit exponent arithmetic")


def decode_int(ops: Ops, fmt: IntFormat, word: BV) -> BV:
    """The low ``fmt.bits`` of ``word`` as a signed value one bit wider (u8 or s8)."""
    bits = ops.extract(word, fmt.bits - 1, 0)
    return ops.sext(bits, fmt.bits + 1) if fmt.signed else ops.zext(bits, fmt.bits + 1)
