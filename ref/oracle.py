"""An independent exact oracle over rationals (DESIGN.md, TestFloat's rule).

Written straight from SEMANTICS.md with Python ints and ``Fraction``s, sharing
no code with the bit-vector specification: its own decoder, its own window,
its own rounding. It provides the candidate models ``exact-rne`` and
``exact-rz`` of section 7, a second formulation of the section-2 window
rule (with the ``window-W``, ``window-no-clamp`` and ``window-rne-align``
variants) and ``two-stage``, which the tests hold the specification and its
candidates to.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

NAN = "nan"
POS_INF = "+inf"
NEG_INF = "-inf"

# name: (exponent bits, fraction bits, bias, container bits, cleared low bits, specials)
_LAYOUTS = {
    "tf32": (8, 10, 127, 32, 13, "ieee"),
    "bf16": (8, 7, 127, 32, 16, "ieee"),
    "f16": (5, 10, 15, 16, 0, "ieee"),
    "f32": (8, 23, 127, 32, 0, "ieee"),
    "e4m3": (4, 3, 7, 8, 0, "nan-only"),
    "e5m2": (5, 2, 15, 8, 0, "ieee"),
    "e2m3": (2, 3, 1, 6, 0, "none"),
    "e3m2": (3, 2, 3, 6, 0, "none"),
    "e2m1": (2, 1, 1, 4, 0, "none"),
}

Value = Fraction | str


def decode(fmt: str, word: int) -> tuple[Value, int]:
    """``(value, raw exponent)`` of a raw word; value is a Fraction or nan/+inf/-inf.

    Signed zeros decode to ``Fraction(0)``: no datapath distinguishes them.
    """
    exp_bits, frac_bits, bias, container, cleared, specials = _LAYOUTS[fmt]
    bits = word & ((1 << container) - 1)
    bits &= ~((1 << cleared) - 1)
    frac = (bits >> cleared) & ((1 << frac_bits) - 1)
    exp = (bits >> (cleared + frac_bits)) & ((1 << exp_bits) - 1)
    negative = (bits >> (container - 1)) & 1
    all_ones = (1 << exp_bits) - 1
    if specials == "ieee" and exp == all_ones:
        if frac:
            return NAN, 0
        return (NEG_INF if negative else POS_INF), 0
    if specials == "nan-only" and exp == all_ones and frac == (1 << frac_bits) - 1:
        return NAN, 0
    if exp == 0:
        significand, raw = frac, 1 - bias
    else:
        significand, raw = (1 << frac_bits) | frac, exp - bias
    value = Fraction(significand) * Fraction(2) ** (raw - frac_bits)
    return (-value if negative else value), raw


def _specials(products: Sequence[tuple[Value, Value]], c: Value) -> Value | None:
    seen_pos = seen_neg = False
    values = [x for pair in products for x in pair] + [c]
    if any(v == NAN for v in values):
        return NAN
    for x, y in products:
        infinite = [v for v in (x, y) if isinstance(v, str)]
        if not infinite:
            continue
        if any(v == 0 for v in (x, y) if not isinstance(v, str)):
            return NAN
        negative = sum(1 for v in (x, y) if v in (NEG_INF,) or (not isinstance(v, str) and v < 0))
        seen_neg |= negative % 2 == 1
        seen_pos |= negative % 2 == 0
    seen_pos |= c == POS_INF
    seen_neg |= c == NEG_INF
    if seen_pos and seen_neg:
        return NAN
    if seen_pos:
        return POS_INF
    if seen_neg:
        return NEG_INF
    return None


def _floor_log2(x: Fraction) -> int:
    """``floor(log2(x))`` for ``x > 0``, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def _truncate(x: Fraction) -> int:
    """Round toward zero to an integer."""
    return x.numerator // x.denominator if x >= 0 else -((-x.numerator) // x.denominator)


def _round_even(x: Fraction) -> int:
    floor = x.numerator // x.denominator
    rest = x - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2):
        return floor + 1
    return floor


def encode(value: Value, d_type: str, rounding: str) -> int:
    """The F32 or F16 word for an exact value (canonical specials, zero is +0)."""
    exp_bits, frac_bits, bias, container, _, _ = _LAYOUTS[d_type]
    inf_bits = ((1 << exp_bits) - 1) << frac_bits
    sign_bit = 1 << (container - 1)
    if value == NAN:
        return (1 << (exp_bits + frac_bits)) - 1
    if value == POS_INF:
        return inf_bits
    if value == NEG_INF:
        return sign_bit | inf_bits
    assert isinstance(value, Fraction)
    if value == 0:
        return 0
    sign = sign_bit if value < 0 else 0
    magnitude = abs(value)
    lsb = max(_floor_log2(magnitude) - frac_bits, 1 - bias - frac_bits)
    scaled = magnitude / Fraction(2) ** lsb
    n = _truncate(scaled) if rounding == "rz" else _round_even(scaled)
    if n == 0:
        return 0
    if n >= 1 << (frac_bits + 1):
        n >>= 1
        lsb += 1
    if n < 1 << frac_bits:
        return sign | n
    biased = lsb + frac_bits + bias
    if biased >= (1 << exp_bits) - 1:
        return sign | inf_bits
    return sign | (biased << frac_bits) | (n - (1 << frac_bits))


def _operands(a: Sequence[int], b: Sequence[int], c: int, a_format: str, b_format: str,
              d_type: str) -> tuple[list[tuple[tuple[Value, int], tuple[Value, int]]],
                                    tuple[Value, int]]:
    pairs = [(decode(a_format, x), decode(b_format, y)) for x, y in zip(a, b, strict=True)]
    return pairs, decode(d_type, c)


def exact_model(a: Sequence[int], b: Sequence[int], c: int, *, a_format: str,
                b_format: str | None = None, d_type: str = "f32", rounding: str = "rne") -> int:
    """Candidate models ``exact-rne`` / ``exact-rz`` (SEMANTICS.md section 7)."""
    pairs, (c_value, _) = _operands(a, b, c, a_format, b_format or a_format, d_type)
    special = _specials([(x[0], y[0]) for x, y in pairs], c_value)
    if special is not None:
        return encode(special, d_type, rounding)
    total = sum((x[0] * y[0] for x, y in pairs), Fraction(0)) + c_value
    return encode(total, d_type, rounding)


def _align(value: Fraction, quantum: Fraction, align: str) -> int:
    """``value`` in units of ``quantum``: truncated (``rz``) or rounded to nearest even
    (``rne``), symmetrically in sign."""
    magnitude = abs(value) / quantum
    units = _truncate(magnitude) if align == "rz" else _round_even(magnitude)
    return -units if value < 0 else units


def window_model(a: Sequence[int], b: Sequence[int], c: int, *, a_format: str,
                 b_format: str | None = None, d_type: str = "f32", window: int = 25,
                 clamp: int | None = None, align: str = "rz") -> int:
    """The section-2 window rule, over rationals: align each term to ``2^(R - window)``.

    ``clamp`` is the -133 floor of ``R`` (tf32/bf16); D rounding is RZ for
    F32 and RNE for F16. ``align="rne"`` rounds each term to nearest even
    instead of truncating it (candidate ``window-rne-align``, section 7).
    """
    pairs, (c_value, c_raw) = _operands(a, b, c, a_format, b_format or a_format, d_type)
    special = _specials([(x[0], y[0]) for x, y in pairs], c_value)
    rounding = "rz" if d_type == "f32" else "rne"
    if special is not None:
        return encode(special, d_type, rounding)
    terms = [(x[0] * y[0], x[1] + y[1]) for x, y in pairs] + [(c_value, c_raw)]
    raws = [raw for value, raw in terms if value != 0]
    if not raws:
        return 0
    top = max(raws) if clamp is None else max(max(raws), clamp)
    quantum = Fraction(2) ** (top - window)
    units = sum(_align(value, quantum, align) for value, _ in terms)
    return encode(units * quantum, d_type, rounding)


def two_stage_model(a: Sequence[int], b: Sequence[int], c: int, *, a_format: str,
                    b_format: str | None = None, d_type: str = "f32", product_window: int = 25,
                    c_window: int = 25) -> int:
    """Candidate ``two-stage`` (section 7): products truncated to ``2^(P - product_window)``
    and summed, the sum (raw ``floor(log2 |sum|)``) and C truncated to ``2^(R - c_window)``,
    ``R`` the larger raw of the nonzero two; no clamp. D rounding as section 2."""
    pairs, (c_value, c_raw) = _operands(a, b, c, a_format, b_format or a_format, d_type)
    special = _specials([(x[0], y[0]) for x, y in pairs], c_value)
    rounding = "rz" if d_type == "f32" else "rne"
    if special is not None:
        return encode(special, d_type, rounding)
    products = [(x[0] * y[0], x[1] + y[1]) for x, y in pairs]
    raws = [raw for value, raw in products if value != 0]
    partial = (Fraction(0), 0)
    if raws:
        quantum = Fraction(2) ** (max(raws) - product_window)
        total = sum(_truncate(v / quantum) for v, _ in products) * quantum
        partial = (total, _floor_log2(abs(total)) if total else 0)
    terms = [t for t in (partial, (c_value, c_raw)) if t[0] != 0]
    if not terms:
        return 0
    quantum = Fraction(2) ** (max(raw for _, raw in terms) - c_window)
    return encode(sum(_truncate(v / quantum) for v, _ in terms) * quantum, d_type, rounding)


# name: (product window, scale window, C window, product group, C-dominant block,
#        per-group C merge, subnormal floor) -- SEMANTICS.md section 4, restated here,
#        and the NVFP4 candidates of section 7.
BLOCK_FAMILIES = {
    "mxf8f6f4": (25, None, 25, 1, 1, False, None),
    "nvfp4": (39, 35, 35, 4, 16, False, None),
    "mxf4": (39, 35, 35, 16, 16, True, -174),
    "nvfp4-per-product": (39, 35, 35, 1, 16, False, None),
    "nvfp4-k16": (39, 35, 35, 16, 16, False, None),
}


def block_family(kind: str, scaling: str) -> str:
    """The :data:`BLOCK_FAMILIES` row of an instruction kind and scale format."""
    if scaling == "ue4m3":
        return "nvfp4"
    return "mxf8f6f4" if kind == "mxf8f6f4" else "mxf4"


def decode_scale(scaling: str, byte: int) -> tuple[Value, int]:
    """``(value, raw)`` of a UE8M0 or UE4M3 scale byte."""
    if scaling == "ue8m0":
        if byte == 0xFF:
            return NAN, 0
        return Fraction(2) ** (byte - 127), byte - 127
    byte &= 0x7F
    if byte == 0x7F:
        return NAN, 0
    exp, frac = byte >> 3, byte & 7
    if exp == 0:
        return Fraction(frac, 2 ** 9), -6
    return Fraction(8 + frac) * Fraction(2) ** (exp - 10), exp - 7


def block_model(a: Sequence[int], b: Sequence[int], c: int, scale_a: Sequence[int],
                scale_b: Sequence[int], *, a_format: str, b_format: str | None = None,
                scaling: str, family: str, block: int) -> int:
    """Section 4 over rationals: ``family`` is ``mxf8f6f4``, ``nvfp4`` or ``mxf4``
    (MXF4 and MXF4NVF4 with UE8M0); ``block`` is the K covered by one scale byte."""
    window_p, window_s, window_c, group_p, group_c, merge, floor = BLOCK_FAMILIES[family]
    b_format = b_format or a_format
    k = len(a)
    scales = [(decode_scale(scaling, sa), decode_scale(scaling, sb))
              for sa, sb in zip(scale_a[:k // block], scale_b[:k // block])]
    if any(x[0] == NAN for pair in scales for x in pair):
        return encode(NAN, "f32", "rz")
    elements = [(decode(a_format, x), decode(b_format, y)) for x, y in zip(a, b)]
    c_value, c_raw = decode("f32", c)
    special = _specials([(x[0], y[0]) for x, y in elements], c_value)
    if special is not None:
        return encode(special, "f32", "rz")
    products = []
    for i, ((va, ra), (vb, rb)) in enumerate(elements):
        (vsa, rsa), (vsb, rsb) = scales[i // block]
        products.append((va * vb * vsa * vsb, ra + rb + rsa + rsb, rsa + rsb))
    nonzero = [p for p in products if p[0] != 0]
    if not nonzero:
        return encode(c_value, "f32", "rz")
    top = max(p[1] for p in nonzero)
    scale_top = max(p[2] for p in nonzero)

    def units_of(value: Fraction, q: int) -> int:
        return _truncate(value / Fraction(2) ** q)

    def groups(size: int) -> list[list[tuple[Fraction, int, int]]]:
        return [products[i:i + size] for i in range(0, k, size)]

    if c_value != 0 and c_raw >= top:
        q = c_raw - window_c
        units = units_of(c_value, q) + sum(units_of(sum(p[0] for p in g), q)
                                           for g in groups(group_c))
        return encode(units * Fraction(2) ** q, "f32", "rz")
    q = top - window_p if window_s is None else max(top - window_p, scale_top - window_s)
    group_units = []
    for group in groups(group_p):
        value = sum(p[0] for p in group)
        live = [p for p in group if p[0] != 0]
        if merge and live and c_value != 0 and c_raw >= max(p[1] for p in live):
            coarse = max(q, c_raw - window_c)
            units = units_of(value, coarse) * 2 ** (coarse - q)
        else:
            units = units_of(value, q)
        group_scale = max((p[2] for p in live), default=None)
        group_units.append((units, group_scale))
    c_units = units_of(c_value, q)
    word = encode((c_units + sum(u for u, _ in group_units)) * Fraction(2) ** q, "f32", "rz")
    if floor is not None and word & 0x7F800000 == 0 and word & 0x7FFFFF:
        limit = 2 ** (floor - q) if q < floor else 1
        kept = [u for u, s in group_units if not (s is not None and s < scale_top
                                                  and abs(u) < limit)]
        word = encode((c_units + sum(kept)) * Fraction(2) ** q, "f32", "rz")
    return word


MMA_SIM_ZERO_EXPONENT = -126


def _mma_sim_exponent(value: Value, raw: int) -> int:
    return MMA_SIM_ZERO_EXPONENT if value == 0 else raw


def mma_sim_model(a: Sequence[int], b: Sequence[int], c: int, scale_a: Sequence[int] = (),
                  scale_b: Sequence[int] = (), *, a_format: str, b_format: str | None = None,
                  d_type: str = "f32", scaling: str | None = None, family: str | None = None,
                  block: int = 1) -> int:
    """Candidate ``mma-sim`` (section 7), restated over rationals. ``family`` is ``None``
    (unscaled) or a :data:`BLOCK_FAMILIES` row: ``mxf8f6f4`` keeps the 25-bit window over
    products; ``nvfp4`` and ``mxf4`` use 16-element chunk terms anchored at their scales."""
    b_format = b_format or a_format
    scales = [(decode_scale(scaling, sa), decode_scale(scaling, sb))
              for sa, sb in zip(scale_a[:len(a) // block], scale_b[:len(a) // block])
              ] if scaling else []
    rounding = "rz" if d_type == "f32" else "rne"
    if any(x[0] == NAN for pair in scales for x in pair):
        return encode(NAN, d_type, rounding)
    pairs, (c_value, c_raw) = _operands(a, b, c, a_format, b_format, d_type)
    special = _specials([(x[0], y[0]) for x, y in pairs], c_value)
    if special is not None:
        return encode(special, d_type, rounding)
    terms = [(c_value, _mma_sim_exponent(c_value, c_raw))]
    if family in ("nvfp4", "mxf4"):
        window = 35
        for start in range(0, len(a), 16):
            (vsa, rsa), (vsb, rsb) = scales[start // block]
            chunk = sum((x[0] * y[0] for x, y in pairs[start:start + 16]), Fraction(0))
            terms.append((chunk * vsa * vsb,
                          _mma_sim_exponent(vsa, rsa) + _mma_sim_exponent(vsb, rsb)))
    else:
        window = 25
        for i, ((va, ra), (vb, rb)) in enumerate(pairs):
            value, exponent = va * vb, _mma_sim_exponent(va, ra) + _mma_sim_exponent(vb, rb)
            if scales:
                (vsa, rsa), (vsb, rsb) = scales[i // block]
                value, exponent = value * vsa * vsb, exponent + rsa + rsb
            terms.append((value, exponent))
    quantum = Fraction(2) ** (max(e for _, e in terms) - window)
    return encode(sum(_truncate(v / quantum) for v, _ in terms) * quantum, d_type, rounding)
