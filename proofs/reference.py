"""The reference side of the proofs, written from SEMANTICS.md alone (sections 1, 2, 4 and 11).

Nothing here calls ``spec.*`` arithmetic: the words are decoded from the
format table of section 1 (:data:`LAYOUTS`), significands are multiplied
here, and the window quantum is computed here from section 2.4's rule (the
25-bit window, the -133 clamp for tf32 and bf16). A breaker of a spec stage
therefore moves the datapath's side of a property and never this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops


@dataclass(frozen=True)
class Layout:
    """A float container (section 1): field widths, bias, the bits cleared first, specials."""

    exp_bits: int
    frac_bits: int
    bias: int
    cleared: int = 0
    specials: str = "ieee"

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.frac_bits + self.cleared

    @property
    def sign_bit(self) -> int:
        return self.bits - 1


LAYOUTS = {
    "tf32": Layout(8, 10, 127, cleared=13),
    "xf32": Layout(8, 10, 127, cleared=13),
    "bf16": Layout(8, 7, 127, cleared=16),
    "f16": Layout(5, 10, 15),
    "e4m3": Layout(4, 3, 7, specials="e4m3"),
    "e5m2": Layout(5, 2, 15),
    "e2m3": Layout(2, 3, 1, specials="none"),
    "e3m2": Layout(3, 2, 3, specials="none"),
    "e2m1": Layout(2, 1, 1, specials="none"),
    "f32": Layout(8, 23, 127),
    "f64": Layout(11, 52, 1023),
    "e8m13": Layout(8, 13, 127, cleared=10),
    "e4m3fnuz": Layout(4, 3, 8, specials="fnuz"),
    "e5m2fnuz": Layout(5, 2, 16, specials="fnuz"),
}
"""Section 1's table: sign/exp/frac, bias, the low fraction bits tf32 and bf16 clear; the
other architectures' operands of section 11 (xf32 reads tf32's words, 11.2; f64, 11.1; the
fnuz FP8 formats, 11.3: 0x80 the only NaN, no Inf, no -0, the all-ones exponent an
ordinary binade)."""


def sign_bit(fmt: str) -> int:
    """The bit of a raw word that holds ``fmt``'s sign (section 1: the container's top bit)."""
    return LAYOUTS[fmt].sign_bit


def word_bits(fmt: str) -> int:
    """The bits of ``fmt``'s container (a D word's width: 32 for F32, 16 for F16)."""
    return LAYOUTS[fmt].bits


SCALE_LAYOUTS = {"ue8m0": (8, 0, 127, 0xFF), "ue4m3": (4, 3, 7, 0x7F)}
"""Section 1's scale formats: ``(exp bits, frac bits, bias, NaN pattern)``, unsigned, in the
low ``exp + frac`` bits (ue4m3 ignores bit 7). UE8M0 has no subnormals (0x00 is 2^-127);
UE4M3 decodes like an unsigned e4m3 (0x00 is a zero scale)."""

WINDOW_FRACTION_BITS = 25
"""Section 2.4: the quantum is 25 below the window exponent R."""

WINDOW_CLAMP = -133
"""Section 2.4: R is clamped below at -133 when an operand is tf32 or bf16."""

CLAMPED = ("tf32", "bf16")
NEAREST = ("f16",)
"""Section 2.7: an F16 D rounds to nearest even; an F32 D truncates."""

EXP = 16
"""Signed width of every exponent computed here (|exponent| < 2^15 by far)."""


@dataclass(frozen=True)
class Value:
    """A decoded word: ``(-1)^negative * mag * 2^(raw - frac_bits)`` unless ``nan``/``inf``."""

    negative: Bool
    mag: BV
    raw: BV
    frac_bits: int
    nan: Bool
    inf: Bool

    @property
    def nonzero(self) -> Bool:
        return self.mag.ops.ne(self.mag, 0)


def decode(ops: Ops, fmt: str, word: BV) -> Value:
    """Section 1: clear, split, classify and decode one word of format ``fmt``."""
    lay = LAYOUTS[fmt]
    word = ops.extract(word, lay.bits - 1, 0)
    sign = ops.eq(ops.extract(word, lay.sign_bit, lay.sign_bit), 1)
    exp = ops.extract(word, lay.sign_bit - 1, lay.sign_bit - lay.exp_bits)
    frac = ops.extract(word, lay.sign_bit - lay.exp_bits - 1, lay.cleared)
    top = (1 << lay.exp_bits) - 1
    if lay.specials == "ieee":
        nan = ops.and_(ops.eq(exp, top), ops.ne(frac, 0))
        inf = ops.and_(ops.eq(exp, top), ops.eq(frac, 0))
    elif lay.specials == "e4m3":
        nan = ops.and_(ops.eq(exp, top), ops.eq(frac, (1 << lay.frac_bits) - 1))
        inf = ops.false()
    elif lay.specials == "fnuz":
        nan, inf = ops.eq(word, 1 << lay.sign_bit), ops.false()
    else:
        nan = inf = ops.false()
    subnormal = ops.eq(exp, 0)
    hidden = ops.ite(subnormal, ops.const(0, 1), ops.const(1, 1))
    mag = ops.concat(hidden, frac)
    exp_wide = ops.zext(exp, EXP)
    raw = ops.ite(subnormal, ops.const(1 - lay.bias, EXP), ops.sub(exp_wide, lay.bias))
    return Value(sign, mag, raw, lay.frac_bits, nan, inf)


def decode_scale(ops: Ops, fmt: str, word: BV) -> Value:
    """Section 1: a UE8M0 or UE4M3 scale byte (never negative, never infinite)."""
    exp_bits, frac_bits, bias, nan_word = SCALE_LAYOUTS[fmt]
    bits = ops.extract(word, exp_bits + frac_bits - 1, 0)
    exp = ops.extract(bits, exp_bits + frac_bits - 1, frac_bits)
    nan = ops.eq(bits, nan_word)
    if not frac_bits:
        return Value(ops.false(), ops.const(1, 1), ops.sub(ops.zext(exp, EXP), bias), 0, nan,
                     ops.false())
    frac = ops.extract(bits, frac_bits - 1, 0)
    subnormal = ops.eq(exp, 0)
    hidden = ops.ite(subnormal, ops.const(0, 1), ops.const(1, 1))
    raw = ops.ite(subnormal, ops.const(1 - bias, EXP), ops.sub(ops.zext(exp, EXP), bias))
    return Value(ops.false(), ops.concat(hidden, frac), raw, frac_bits, nan, ops.false())


@dataclass(frozen=True)
class Product:
    """An exact product or C: signed value ``mag * 2^(raw - frac_bits)``, nonzero flag."""

    negative: Bool
    mag: BV
    raw: BV
    frac_bits: int
    nonzero: Bool


def product(ops: Ops, x: Value, y: Value) -> Product:
    """Section 2.3: significands multiplied exactly, raw exponents added."""
    width = x.mag.width + y.mag.width
    mag = ops.mul(ops.zext(x.mag, width), ops.zext(y.mag, width))
    return Product(ops.xor_(x.negative, y.negative), mag, ops.add(x.raw, y.raw),
                   x.frac_bits + y.frac_bits, ops.and_(x.nonzero, y.nonzero))


def as_term(x: Value) -> Product:
    return Product(x.negative, x.mag, x.raw, x.frac_bits, x.nonzero)


@dataclass(frozen=True)
class Window:
    """A one-window dot's rules: ``fraction_bits`` F below the window exponent ``R``; how
    ``R`` is found (section 2.4: the nonzero terms, clamped at -133 when ``clamped``; the
    other architectures' fused dot, ARCHITECTURES.md 1.3: every term, a zero factor or C
    counting ``zero_exponent``); the C and D formats (``e8m13``: Ada and Hopper fp8, 1.4)."""

    fraction_bits: int = WINDOW_FRACTION_BITS
    clamped: bool = False
    zero_exponent: int | None = None
    c_format: str = "f32"
    d_format: str = "f32"
    c_widened: bool = False
    """C converted to a wider D format first (ARCHITECTURES.md 1.5, exact: an f16 C with an
    F32 D), so a subnormal C counts its leading bit's exponent."""


def tcgen05_window(a_format: str, b_format: str, d_format: str) -> Window:
    """Section 2.4's window for the formats (the clamp for tf32 and bf16; C is D's format)."""
    return Window(clamped=a_format in CLAMPED or b_format in CLAMPED, c_format=d_format,
                  d_format=d_format)


def quantum(ops: Ops, terms: Sequence[Product], clamped: bool) -> BV:
    """Section 2.4: ``q = max(r of every nonzero term, clamped at -133 if so) - 25``."""
    lowest = ops.const(-(1 << (EXP - 2)), EXP)
    top = ops.smax_all([ops.ite(t.nonzero, t.raw, lowest) for t in terms])
    if clamped:
        top = ops.smax(top, ops.const(WINDOW_CLAMP, EXP))
    return ops.sub(top, WINDOW_FRACTION_BITS)


def leading_exponent(ops: Ops, x: Value | Product) -> BV:
    """The exponent of ``x``'s leading bit (its raw exponent when normal; a subnormal's is
    lower: the exponent it has in a wider format)."""
    return ops.add(x.raw, ops.sub(ops.bitlen(x.mag, EXP), x.frac_bits + 1))


def window_quantum(ops: Ops, terms: Sequence[Product], decoded: Sequence[Value],
                   window: Window) -> BV:
    """``q = R - F`` under ``window``'s rule for ``R`` (``decoded``: A lanes, B lanes, C)."""
    if window.zero_exponent is None:
        q = quantum(ops, terms, window.clamped)
        shift = WINDOW_FRACTION_BITS - window.fraction_bits
        return ops.add(q, shift) if shift else q
    zero = ops.const(window.zero_exponent, EXP)

    def exponent(v: Value) -> BV:
        return ops.ite(v.nonzero, v.raw, zero)

    k = (len(decoded) - 1) // 2
    xs, ys, c = decoded[:k], decoded[k:2 * k], decoded[-1]
    c_exponent = exponent(c)
    if window.c_widened:
        c_exponent = ops.ite(c.nonzero, leading_exponent(ops, c), zero)
    top = ops.smax_all([*(ops.add(exponent(x), exponent(y)) for x, y in zip(xs, ys)),
                        c_exponent])
    return ops.sub(top, window.fraction_bits)


@dataclass(frozen=True)
class Fixed:
    """Signed integers in units of ``2^lsb``, ``width`` bits, none of which can wrap."""

    lsb: int
    width: int

    def place(self, ops: Ops, negative: Bool | None, mag: BV, exponent: BV) -> BV:
        """``(-1)^negative * mag * 2^exponent`` (``exponent >= lsb`` by the caller's ranges)."""
        shift = ops.sub(exponent, self.lsb)
        wide = ops.shl(ops.zext(mag, self.width), ops.resize_signed(shift, self.width))
        return wide if negative is None else ops.ite(negative, ops.neg(wide), wide)

    def value(self, ops: Ops, t: Product) -> BV:
        """The term's value; 0 unless it is nonzero (section 2.4 counts only those)."""
        placed = self.place(ops, t.negative, t.mag, ops.sub(t.raw, t.frac_bits))
        return ops.ite(t.nonzero, placed, ops.const(0, self.width))

    def power(self, ops: Ops, exponent: BV) -> BV:
        return self.place(ops, None, ops.const(1, 1), exponent)


def dot_terms(ops: Ops, a_format: str, b_format: str, c_format: str, a: Sequence[BV],
              b: Sequence[BV], c: BV) -> tuple[list[Product], list[Value]]:
    """The K exact products and C (section 2.3), and every decoded word (for specials)."""
    xs = [decode(ops, a_format, w) for w in a]
    ys = [decode(ops, b_format, w) for w in b]
    cv = decode(ops, c_format, c)
    terms = [product(ops, x, y) for x, y in zip(xs, ys)] + [as_term(cv)]
    return terms, [*xs, *ys, cv]


def exponent_range(fmt: str) -> tuple[int, int]:
    """Section 1: the lowest and highest raw exponent of a finite value of ``fmt``."""
    lay = LAYOUTS[fmt]
    top = (1 << lay.exp_bits) - 1 - lay.bias - (1 if lay.specials == "ieee" else 0)
    return 1 - lay.bias, top


def fixed_for(a_format: str, b_format: str, c_format: str, k: int,
              window: Window | None = None) -> Fixed:
    """A register holding every product, C, quantum and ulp of D exactly, and their sum."""
    (alo, ahi), (blo, bhi), (clo, chi) = (exponent_range(f) for f in
                                          (a_format, b_format, c_format))
    fa, fb, fc = (LAYOUTS[f].frac_bits for f in (a_format, b_format, c_format))
    lowest_q = min(alo + blo, clo) - WINDOW_FRACTION_BITS
    if window is not None:
        lowest_q = min(lowest_q, quantum_range(a_format, b_format, c_format, window)[0])
    lsb = min(alo + blo - fa - fb, clo - fc, lowest_q, -149) - 2
    top = max(ahi + bhi + 2, chi + 1, 129)
    width = top - lsb + (k + 1).bit_length() + 4
    return Fixed(lsb, width)


def quantum_range(a_format: str, b_format: str, c_format: str,
                  window: Window | None = None) -> tuple[int, int]:
    """The quanta :func:`window_quantum` gives when some finite term is nonzero (default:
    section 2.4's window; with every term counting, C's exponent is at least -126)."""
    window = window or tcgen05_window(a_format, b_format, c_format)
    (alo, ahi), (blo, bhi), (clo, chi) = (exponent_range(f) for f in
                                          (a_format, b_format, c_format))
    low, high = min(alo + blo, clo), max(ahi + bhi, chi)
    if window.clamped:
        low, high = max(low, WINDOW_CLAMP), max(high, WINDOW_CLAMP)
    if window.zero_exponent is not None:
        low = max(low, min(clo, window.zero_exponent))
    return low - window.fraction_bits, high - window.fraction_bits


@dataclass(frozen=True)
class BoundParts:
    """The nodes of :func:`error_bound_violation`: each term's value, their exact sum, the
    quantum, D's value and ulp, and where the bound applies (``inputs_ok``: finite inputs and
    some term nonzero; ``applies``: that and a finite D)."""

    fixed: Fixed
    terms: list[Product]
    values: list[BV]
    exact: BV
    quantum: BV
    d_value: BV
    ulp: BV
    error: BV
    bound: BV
    inputs_ok: Bool
    applies: Bool
    violation: Bool


def error_bound_parts(ops: Ops, a_format: str, b_format: str, a: Sequence[BV],
                      b: Sequence[BV], c: BV, d: BV, fixed: Fixed | None = None,
                      d_format: str = "f32", window: Window | None = None) -> BoundParts:
    """Sections 2.4-2.7 as a bound: for finite inputs and a finite ``d`` with some term
    nonzero, ``|d - exact| < n 2^q + ulp(d)`` for a truncated D (F32, e8m13), ``n 2^q +
    ulp(d) / 2`` for an F16 D (rounded to nearest even). ``window``: the rules of the quantum
    and the C and D formats (default section 2's, C in D's format); ``fixed``: a wider
    register, default :func:`fixed_for`."""
    window = window or tcgen05_window(a_format, b_format, d_format)
    terms, decoded = dot_terms(ops, a_format, b_format, window.c_format, a, b, c)
    fixed = fixed or fixed_for(a_format, b_format, window.c_format, len(a), window)
    q = window_quantum(ops, terms, decoded, window)
    dv = decode(ops, window.d_format, d)
    values = [fixed.value(ops, t) for t in terms]
    exact = ops.sum(values)
    d_value = fixed.value(ops, as_term(dv))
    ulp_bits = LAYOUTS[window.d_format].frac_bits + (1 if window.d_format in NEAREST else 0)
    ulp = fixed.power(ops, ops.sub(dv.raw, ulp_bits))
    error = ops.abs_signed(ops.sub(d_value, exact))
    bound = ops.add(ops.mul(fixed.power(ops, q), ops.const(len(terms), fixed.width)), ulp)
    finite = ops.not_(ops.any_([ops.or_(v.nan, v.inf) for v in decoded]))
    inputs_ok = ops.and_(finite, ops.any_(t.nonzero for t in terms))
    applies = ops.and_(inputs_ok, ops.not_(ops.or_(dv.nan, dv.inf)))
    return BoundParts(fixed, terms, values, exact, q, d_value, ulp, error, bound, inputs_ok,
                      applies, ops.and_(applies, ops.uge(error, bound)))


def error_bound_violation(ops: Ops, a_format: str, b_format: str, a: Sequence[BV],
                          b: Sequence[BV], c: BV, d: BV) -> tuple[Bool, dict[str, BV]]:
    """The violation of :func:`error_bound_parts`' bound and the words worth showing."""
    parts = error_bound_parts(ops, a_format, b_format, a, b, c, d)
    return parts.violation, {"d": d, "quantum": parts.quantum}
