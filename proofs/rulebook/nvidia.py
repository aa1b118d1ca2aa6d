"""Section 10: the NVIDIA tensor-core instructions other than tcgen05 (Volta to RTX Blackwell).

Two families, as MMA-Sim (c785138) models them; **no hardware word backs them** (10, 10.8).

``fused-dot`` (10.2-10.5): ``D = C + sum_k A[k] * B[k]`` in ``steps`` chained fused steps.
One fused step over lanes ``k`` and an accumulator word ``C`` (10.3):

1. specials as 2.2 (canonical NaN F32 ``0x7FFFFFFF``, F16 ``0x7FFF``; otherwise an
   infinite product or C gives that signed infinity);
2. C is read in the D format; a narrower C (Volta/Turing F16 C with F32 D) is first
   converted to the D format, exactly (:func:`c_in_d_format`);
3. every factor has its exponent ``r`` (10.2: unbiased for normals, the format's minimum
   normal exponent for subnormals, **-126 for a zero in every format**); a product is
   exact, ``m = mA * mB`` at the two significands' widths, window exponent ``r = rA + rB``
   (not renormalised), value exponent ``e = r - FA - FB``; ``R`` is the largest ``r``
   over C and **all** products, zero terms included; no clamp;
4. every term is truncated toward zero to units of ``2^q``, ``q = R - F``, and the units
   are summed exactly;
5. the sum is rounded once to the output (F32 RZ, ``f32_e8m13`` RZ, or F16 RNE).

Split K (10.4): the step's D word, rounded and with its specials, is the next step's C.

``fused-dot-block`` (10.6, RTX Blackwell ``mma_block_scale``): K=32 is one fused step
whose products also carry the two UE8M0 scale exponents (``r = rA + rB + rSA + rSB``); K=64
(e2m1, scales every 16 or 32 lanes) has one term per 16-lane chunk, valued (exact sum of
the chunk's products) x (the chunk's two scale significands), whose window exponent is
the two scale exponents alone; ``F = 35``, F32 RZ.

Representation. A factor is :class:`~tcspec.proofs.rulebook.fields.Decoded` with ``r``
replaced by 10.2's exponent (the zero rule); its value stays ``m * 2^(r - F)`` since a
zero has ``m = 0``. A window term (:class:`Term`) is ``(-1)^sign * m * 2^e`` with its
window exponent ``r``; ``R`` and ``q`` are signed :data:`~fields.EXP_BITS`-bit values;
each aligned term is a signed two's-complement count of units of ``2^q``; their sum is an
exact signed integer. Widths: a term's value is below ``2^(r + b)`` with ``b`` = 1 for C,
2 for a product (significand below 4), 12 for a chunk (module :data:`CHUNK_HEADROOM`), and
``r <= R``, so its aligned magnitude is below ``2^(F + b)`` (at most 47 bits); the sum of
``n`` terms is ``F + b_max + 1 + bitlen(n)`` bits signed (at most 51). Every exponent and
shift amount (sums of at most four exponents, each at most 127 in magnitude, and their
differences) stays below 1200 in magnitude, far inside the 16-bit signed values.

Sum order: C's units first, then the products (or chunks) in ascending k; a chunk's
element sum in ascending k. The sums are exact, so the order only fixes the presentation.

Readings where the text leaves room (checked against ``ref/vectors/arch/``):

- The parameter row is chosen by what the name says: architecture, instruction, shape
  (so K), the operand pair, and for block scale the scale format and block (:data:`TABLE`).
- The intermediate D word between split steps is an ordinary D-format word: a zero there
  is ``+0`` (10.3.5), and the next step decodes it with 10.2's rules like any C (a zero
  intermediate has exponent -126).
- 10.6 K=64: an element's exponent plays no part in the window, so elements are decoded
  plainly (section 1); only scales (and C) take 10.2's zero rule. C = +-Inf there gives
  the signed infinity of 2.2 (the model fails on it: unvalidated, 10.6).
- 10.6 K=32: a NaN scale byte gives the canonical NaN (the first ``mma-sim`` bullet of 7
  and ARCHITECTURES.md 1.6); UE8M0 has no zero, so no product is Inf x 0 through a scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import EXP_BITS, Decoded, decode, fmt, special_word
from .names import FUSED_DOT, FUSED_DOT_BLOCK, Datapath
from .result import Result
from .rounding import F16_RNE, F32_E8M13_RZ, F32_RNE, F32_RZ, Destination, convert, with_zero_sign

ZERO_EXPONENT = -126
"""10.2: a zero factor, or a zero C, has exponent -126 in every format (also a zero UE4M3
scale, 10.6)."""

CHUNK = 16
"""10.6: one term per 16-element chunk on the K=64 block-scale datapaths."""

CHUNK_HEADROOM = 12
"""10.6 chunk term bound: ``|sum of 16 e2m1 products| <= 16 * 36 = 576`` and each scale
significand is below 2, so a chunk's value is below ``2^12 * 2^(rSA + rSB)``."""

PRODUCT_HEADROOM = 2
"""10.3.4: a product's significand is below 4, so its value is below ``2^(r + 2)``."""

C_HEADROOM = 1
"""A C value (one significand, below 2) is below ``2^(r + 1)``."""


# ------------------------------------------------------------------ the parameter table


@dataclass(frozen=True)
class Params:
    """One row's parameters: window fraction bits ``F``, ``steps`` chained fused steps
    (10.4; 1 when not split), the F32-D output rounding (``F32_RZ`` or ``F32_E8M13_RZ``;
    F16 D is always F16 RNE, 10.5), ``chunk`` (10.6 K=64: lanes per chunk term, else
    None) and the rule text the row comes from."""

    F: int  # the rule text's name
    steps: int
    f32_output: Destination
    chunk: int | None
    cite: str

    def output(self, d_format: str) -> Destination:
        """The output rounding of a D format (10.3.5, 10.5: F16 D is F16 RNE everywhere)."""
        if d_format == "f16":
            return F16_RNE
        if d_format == "f32":
            return self.f32_output
        raise ValueError(f"no fused-dot output for D format {d_format!r}")


def _p(F: int, steps: int = 1, f32: Destination = F32_RZ, *, cite: str,  # noqa: N803
       chunk: int | None = None) -> Params:
    return Params(F, steps, f32, chunk, cite)


Key = tuple[str, str, str, str, tuple[str, int] | None]
"""(arch, instruction, shape, operand pair, (scale format, block) or None)."""


def _ampere_qualifiers(arch: str, F: int, split: bool, cite: str) -> dict[Key, Params]:  # noqa: N803
    """Ampere's `mma` qualifiers (10.5): tf32 k4/k8, f16 and bf16 k8/k16; ``split``: the
    K=8 tf32 and K=16 f16/bf16 forms are two steps of half K (10.4)."""
    two = 2 if split else 1
    return {
        (arch, "mma", "m16n8k4", "tf32", None): _p(F, cite=cite),
        (arch, "mma", "m16n8k8", "tf32", None): _p(F, two, cite=cite),
        (arch, "mma", "m16n8k8", "f16", None): _p(F, cite=cite),
        (arch, "mma", "m16n8k8", "bf16", None): _p(F, cite=cite),
        (arch, "mma", "m16n8k16", "f16", None): _p(F, two, cite=cite),
        (arch, "mma", "m16n8k16", "bf16", None): _p(F, two, cite=cite),
    }


_VOLTA = "10.5 sm_70 Volta; ARCHITECTURES.md 2 Volta"
_TURING = "10.5 sm_75 Turing; ARCHITECTURES.md 2 Turing"
_AMPERE = "10.4, 10.5 sm_80 Ampere; ARCHITECTURES.md 1.5, 2 Ampere"
_ADA = "10.4, 10.5 sm_89 Ada; ARCHITECTURES.md 1.5, 2 Ada, 3.4"
_HOPPER = "10.5 sm_90 Hopper mma; ARCHITECTURES.md 2 Hopper mma.sync"
_WGMMA = "10.5 sm_90 Hopper wgmma; ARCHITECTURES.md 2 Hopper wgmma, 3.4"
_BLACKWELL = "10.5 sm_100 Blackwell mma; ARCHITECTURES.md 2 Blackwell mma.sync"
_RTX = "10.5 sm_120 RTX Blackwell mma; ARCHITECTURES.md 2 RTX Blackwell mma.sync, 5.6"
_RTX_BLOCK = "10.5, 10.6 sm_120 mma_block_scale; ARCHITECTURES.md 1.6, 2 block_scale"

TABLE: dict[Key, Params] = {
    ("sm_70", "mma", "m8n8k4", "f16", None): _p(23, cite=_VOLTA),
    ("sm_75", "mma", "m16n8k8", "f16", None): _p(24, cite=_TURING),
    ("sm_75", "mma", "m8n8k4", "f16", None): _p(24, cite=_TURING),
    **_ampere_qualifiers("sm_80", 24, True, _AMPERE),
    **_ampere_qualifiers("sm_89", 24, True, _ADA),
    ("sm_89", "mma", "m16n8k16", "fp8", None): _p(13, 1, F32_E8M13_RZ, cite=_ADA),
    ("sm_89", "mma", "m16n8k32", "fp8", None): _p(13, 2, F32_E8M13_RZ, cite=_ADA),
    **_ampere_qualifiers("sm_90", 25, False, _HOPPER),
    ("sm_90", "wgmma", "m64n8k8", "tf32", None): _p(25, cite=_WGMMA),
    ("sm_90", "wgmma", "m64n8k16", "f16", None): _p(25, cite=_WGMMA),
    ("sm_90", "wgmma", "m64n8k16", "bf16", None): _p(25, cite=_WGMMA),
    ("sm_90", "wgmma", "m64n8k32", "fp8", None): _p(13, 1, F32_E8M13_RZ, cite=_WGMMA),
    **_ampere_qualifiers("sm_100", 25, False, _BLACKWELL),
    **_ampere_qualifiers("sm_120", 25, False, _RTX),
    ("sm_120", "mma", "m16n8k16", "fp8", None): _p(25, cite=_RTX),
    ("sm_120", "mma", "m16n8k32", "fp8", None): _p(25, cite=_RTX),
    ("sm_120", "mma_block_scale", "m16n8k32", "fp8", ("ue8m0", 32)): _p(25, cite=_RTX_BLOCK),
    ("sm_120", "mma_block_scale", "m16n8k64", "e2m1", ("ue8m0", 16)):
        _p(35, cite=_RTX_BLOCK, chunk=CHUNK),
    ("sm_120", "mma_block_scale", "m16n8k64", "e2m1", ("ue8m0", 32)):
        _p(35, cite=_RTX_BLOCK, chunk=CHUNK),
    ("sm_120", "mma_block_scale", "m16n8k64", "e2m1", ("ue4m3", 16)):
        _p(35, cite=_RTX_BLOCK, chunk=CHUNK),
    ("sm_120", "mma_block_scale", "m16n8k64", "e2m1", ("ue4m3", 32)):
        _p(35, cite=_RTX_BLOCK, chunk=CHUNK),
}
"""Section 10.5's table, one row per (arch, instruction, shape, operand pair, scales).

``fp8`` is any of the four ordered e4m3/e5m2 pairs; the other pairs have equal A and B
formats. The C and D formats are the name's (F16 D: F16 RNE on every row)."""

FP8 = ("e4m3", "e5m2")


def operand_pair(a_format: str, b_format: str) -> str:
    """The table's operand key: ``fp8`` for an e4m3/e5m2 pair, else the common format."""
    if a_format in FP8 and b_format in FP8:
        return "fp8"
    if a_format == b_format:
        return a_format
    raise ValueError(f"no NVIDIA fused-dot row takes A {a_format} with B {b_format}")


def key_of(rec: Datapath) -> Key:
    """The table key of a datapath record (what its name says)."""
    scales = (rec.scaling, rec.block) if rec.scaling is not None else None
    return (rec.arch, rec.instruction, rec.shape or "", operand_pair(rec.a_format,
                                                                      rec.b_format), scales)


def parameters(rec: Datapath) -> Params:
    """The parameter row of ``rec`` (ValueError naming a datapath with no row)."""
    try:
        return TABLE[key_of(rec)]
    except (KeyError, ValueError):
        raise ValueError(f"{rec.name}: no section-10.5 parameter row") from None


# ------------------------------------------------------------------ factors and terms


def factor(ops: Ops, word: BV, f: str) -> Decoded:
    """A factor (or C, or a scale) decoded by section 1, its ``r`` the 10.2 exponent:
    ``exp - bias`` for normals, the minimum normal exponent ``1 - bias`` for subnormals,
    and :data:`ZERO_EXPONENT` for a zero. The value ``m * 2^(r - F)`` is unchanged (a zero
    has ``m = 0``)."""
    d = decode(ops, word, f)
    return replace(d, r=ops.ite(d.zero, ops.const(ZERO_EXPONENT, EXP_BITS), d.r))


def c_in_d_format(ops: Ops, c_word: BV, c_format: str, d_format: str) -> BV:
    """10.3.2: the C word as a word of the D format.

    Equal formats: C's own bits (an F16 C is the low 16 bits of its word). F16 C with F32
    D (Volta/Turing ``m8n8k4.f32.f16.f16.f16``): the F32 word of the same value, which is
    exact (every F16 value is an F32 normal or zero; a subnormal F16 becomes an F32
    normal with its own exponent); zeros keep their sign, infinities are F32 infinities,
    any NaN is F32's canonical NaN (a NaN C gives the canonical NaN whatever its payload).
    """
    if c_format == d_format:
        return ops.extract(c_word, fmt(d_format).container - 1, 0)
    if (c_format, d_format) != ("f16", "f32"):
        raise ValueError(f"no conversion of a {c_format} C to a {d_format} D (10.3.2)")
    c = decode(ops, c_word, c_format)
    units = ops.zext(c.m, c.m.width + 1)
    units = ops.ite(c.sign, ops.neg(units), units)
    exact = convert(ops, units, c.e(ops), F32_RNE)  # exact: no bit is lost
    exact = with_zero_sign(ops, exact, F32_RNE, c.sign)
    d = F32_RNE.dformat
    word = ops.ite(c.inf, ops.ite(c.sign, ops.const(d.neg_inf, 32), ops.const(d.pos_inf, 32)),
                   exact)
    return ops.ite(c.nan, ops.const(d.nan, 32), word)


@dataclass(frozen=True)
class Term:
    """One window term (10.3.3-4): value ``(-1)^sign * m * 2^e`` (``m`` unsigned), window
    exponent ``r`` (signed), and ``headroom``: the value is below ``2^(r + headroom)``."""

    sign: Bool
    m: BV
    e: BV
    r: BV
    headroom: int


@dataclass(frozen=True)
class Specials:
    """Section 2.2's flags over one step: a NaN arises, an infinity of each sign arises."""

    nan: Bool
    pos_inf: Bool
    neg_inf: Bool

    def word(self, ops: Ops, dest: Destination, finite: BV) -> BV:
        """The step's D word: canonical NaN, the signed infinity, or ``finite``."""
        return special_word(ops, dest.dformat, self.nan, self.pos_inf, self.neg_inf, finite)


def c_term(ops: Ops, c: Decoded) -> Term:
    """C as a term: its own significand, value exponent ``r - F``, window exponent ``r``."""
    return Term(c.sign, c.m, ops.sub(c.r, c.fmt.F), c.r, C_HEADROOM)


def product_term(ops: Ops, a: Decoded, b: Decoded, scale_r: BV | None = None) -> Term:
    """The exact product of two factors (10.2): ``m = mA * mB``, window exponent
    ``r = rA + rB`` (plus the two scale exponents ``scale_r = rSA + rSB`` on the K=32
    block-scale datapath, 10.6; UE8M0 significands are 1), value exponent
    ``e = r - FA - FB``."""
    r = ops.add(a.r, b.r)
    if scale_r is not None:
        r = ops.add(r, scale_r)
    return Term(a.sign ^ b.sign, ops.mul_wide(a.m, b.m), ops.sub(r, a.fmt.F + b.fmt.F), r,
                PRODUCT_HEADROOM)


def product_specials(ops: Ops, pairs: Sequence[tuple[Decoded, Decoded]], c: Decoded,
                     extra_nan: Sequence[Bool] = ()) -> Specials:
    """2.2 over products and C: a NaN operand, Inf x 0, or a NaN C (or ``extra_nan``: a NaN
    scale) is NaN; an infinite product that is not NaN, or an infinite C, is an infinity
    with its sign (both signs together: NaN, in :func:`special_word`)."""
    nan = [c.nan, *extra_nan]
    pos = [c.inf & ~c.sign]
    neg = [c.inf & c.sign]
    for a, b in pairs:
        p_nan = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf)
        p_inf = (a.inf | b.inf) & ~p_nan
        sign = a.sign ^ b.sign
        nan.append(p_nan)
        pos.append(p_inf & ~sign)
        neg.append(p_inf & sign)
    return Specials(ops.any_(nan), ops.any_(pos), ops.any_(neg))


# ------------------------------------------------------------------ one fused window


def units_of(ops: Ops, t: Term, q: BV, F: int) -> BV:  # noqa: N803
    """10.3.4: ``t`` in signed units of ``2^q``, the magnitude truncated (toward zero).

    ``t``'s value is below ``2^(r + headroom) <= 2^(q + F + headroom)``, so the
    magnitude has ``F + headroom`` bits; the result is one bit wider, two's complement.
    """
    mag_bits = F + t.headroom
    width = max(t.m.width, mag_bits)
    mag = ops.shift_signed(ops.zext(t.m, width), ops.sub(t.e, q))
    mag = ops.zext(ops.resize_unsigned(mag, mag_bits), mag_bits + 1)
    return ops.ite(t.sign, ops.neg(mag), mag)


def window_sum(ops: Ops, terms: Sequence[Term], F: int) -> tuple[BV, BV]:  # noqa: N803
    """10.3.3-4: ``R`` = the largest window exponent of all terms (zeros included, no
    clamp), ``q = R - F``; each term truncated to units of ``2^q`` and summed exactly.
    Returns ``(units, q)``: the exact sum, signed, and the quantum."""
    big_r = ops.smax_all([t.r for t in terms])
    q = ops.sub(big_r, F)
    top = max(t.headroom for t in terms)
    sum_bits = F + top + 1 + len(terms).bit_length()
    total = ops.const(0, sum_bits)
    for t in terms:
        total = ops.add(total, ops.sext(units_of(ops, t, q, F), sum_bits))
    return total, q


def fused_step(ops: Ops, F: int, dest: Destination, a_format: str, b_format: str,  # noqa: N803
               d_format: str, a_words: Sequence[BV], b_words: Sequence[BV], c_word: BV,
               scales: tuple[BV, BV] | None = None) -> BV:
    """One fused step (10.3) on raw words; ``c_word`` is a word of ``d_format`` (``f32``,
    which also carries ``f32_e8m13`` results, or ``f16``), rounded to ``dest``.

    ``scales``: the K=32 block-scale datapath's UE8M0 bytes (A, B), whose exponents every
    product carries and whose NaN (0xFF) gives the canonical NaN (10.6).
    """
    c = factor(ops, c_word, d_format)
    pairs = [(factor(ops, a, a_format), factor(ops, b, b_format))
             for a, b in zip(a_words, b_words)]
    scale_r = None
    extra_nan: list[Bool] = []
    if scales is not None:
        sa, sb = (factor(ops, s, "ue8m0") for s in scales)
        scale_r = ops.add(sa.r, sb.r)
        extra_nan = [sa.nan, sb.nan]
    specials = product_specials(ops, pairs, c, extra_nan)
    terms = [c_term(ops, c)] + [product_term(ops, a, b, scale_r) for a, b in pairs]
    units, q = window_sum(ops, terms, F)
    return specials.word(ops, dest, convert(ops, units, q, dest))


def fused_dot(ops: Ops, params: Params, a_format: str, b_format: str, c_format: str,
              d_format: str, a_words: Sequence[BV], b_words: Sequence[BV], c_word: BV,
              scales: tuple[BV, BV] | None = None, step: int | None = None) -> BV:
    """``fused-dot`` (10.3, 10.4): C converted to the D format, then fused steps over
    consecutive slices of ``step`` lanes, each step's D word (rounded, specials included)
    the next step's C. ``step`` defaults to ``K / params.steps`` for the lanes given (the
    instruction's own K); on a longer logical K the same step is chained more times (10.4,
    12.1). The D word (32 bits for F32 D, 16 for F16 D)."""
    k = len(a_words)
    step = step or k // params.steps
    if k != len(b_words) or k == 0 or step == 0 or k % step:
        raise ValueError(f"fused_dot: {k} A and {len(b_words)} B lanes do not cut into "
                         f"steps of {step}")
    dest = params.output(d_format)
    acc = c_in_d_format(ops, c_word, c_format, d_format)
    for lo in range(0, k, step):
        acc = fused_step(ops, params.F, dest, a_format, b_format, d_format,
                         a_words[lo:lo + step], b_words[lo:lo + step], acc, scales)
    return acc


# ------------------------------------------------------------------ 10.6 K=64 chunks


def chunk_sum(ops: Ops, a_format: str, b_format: str, a_words: Sequence[BV],
              b_words: Sequence[BV]) -> tuple[BV, int]:
    """The exact sum of one chunk's element products (10.6), as ``(S, e_lo)``: ``S`` a
    signed count of units of ``2^e_lo``, ``e_lo`` the smallest product value exponent
    (e2m1: ``2 * (0 - 1) = -2``). Elements decode by section 1 (their exponents do not
    enter the window). Every product is ``mA * mB << (e - e_lo)``, an exact left shift;
    the widths come from the format table (e2m1: products at most 144 units, 16 of them
    at most 2304 < 2^12 units, so 13 bits signed)."""
    fa, fb = fmt(a_format), fmt(b_format)
    e_lo = (fa.r_min - fa.F) + (fb.r_min - fb.F)
    r_max_a = (1 << fa.exp_bits) - 1 - fa.bias  # no e2m1 pattern is special (section 1)
    r_max_b = (1 << fb.exp_bits) - 1 - fb.bias
    max_shift = (r_max_a - fa.F) + (r_max_b - fb.F) - e_lo
    max_product = ((1 << fa.m_bits) - 1) * ((1 << fb.m_bits) - 1) << max_shift
    mag_bits = (len(a_words) * max_product).bit_length()
    width = mag_bits + 1
    total = ops.const(0, width)
    for a_word, b_word in zip(a_words, b_words):
        a, b = decode(ops, a_word, fa), decode(ops, b_word, fb)
        m = ops.zext(ops.mul_wide(a.m, b.m), width)
        shift = ops.sub(ops.add(a.r, b.r), (fa.F + fb.F) + e_lo)  # e - e_lo, in [0, max_shift]
        p = ops.shl(m, ops.resize_unsigned(shift, width))
        total = ops.add(total, ops.ite(a.sign ^ b.sign, ops.neg(p), p))
    return total, e_lo


def chunk_term(ops: Ops, s: BV, e_lo: int, sa: Decoded, sb: Decoded) -> Term:
    """A chunk's term (10.6): value ``S * 2^e_lo * sigA * sigB * 2^(rSA + rSB)``, i.e.
    ``m = |S| * mSA * mSB``, ``e = e_lo + (rSA - FSA) + (rSB - FSB)``; window exponent
    ``rSA + rSB`` alone (scales by 10.2: a zero UE4M3 scale -126, a subnormal one -6)."""
    neg = ops.sign(s)
    mag = ops.abs_signed(s)  # |S| < 2^(width - 1), so the unsigned reading is exact
    m = ops.mul_wide(ops.mul_wide(mag, sa.m), sb.m)
    r = ops.add(sa.r, sb.r)
    e = ops.add(ops.sub(r, sa.fmt.F + sb.fmt.F), e_lo)
    return Term(neg, m, e, r, CHUNK_HEADROOM)


def chunk_dot(ops: Ops, params: Params, scaling: str, block: int, a_format: str,
              b_format: str, a_words: Sequence[BV], b_words: Sequence[BV], c_word: BV,
              scale_a: Sequence[BV], scale_b: Sequence[BV]) -> BV:
    """``fused-dot-block`` with K=64 (10.6): C (F32) and one term per chunk of
    ``params.chunk`` lanes, chunk ``j`` scaled by the scales of its block (``j * chunk //
    block``); one window of ``F`` fraction bits over C and every chunk (an all-zero chunk
    counts through its scales); F32 RZ. A NaN scale or a NaN C gives the canonical NaN;
    an infinite C its infinity (unvalidated, 10.6)."""
    chunk = params.chunk or CHUNK
    k = len(a_words)
    if k != len(b_words) or k % block or block % chunk:
        raise ValueError(f"chunk_dot: {k} lanes do not cut into blocks of {block} and "
                         f"chunks of {chunk}")
    dest = params.output("f32")
    c = factor(ops, c_word, "f32")
    sa = [factor(ops, s, scaling) for s in scale_a]
    sb = [factor(ops, s, scaling) for s in scale_b]
    if len(sa) != k // block or len(sb) != k // block:
        raise ValueError(f"chunk_dot: {k // block} scales per operand needed")
    terms = [c_term(ops, c)]
    for j in range(k // chunk):
        lo, hi = j * chunk, (j + 1) * chunk
        s, e_lo = chunk_sum(ops, a_format, b_format, a_words[lo:hi], b_words[lo:hi])
        blk = lo // block
        terms.append(chunk_term(ops, s, e_lo, sa[blk], sb[blk]))
    units, q = window_sum(ops, terms, params.F)
    nan = ops.any_([c.nan] + [x.nan for x in sa + sb])
    specials = Specials(nan, c.inf & ~c.sign, c.inf & c.sign)
    return specials.word(ops, dest, convert(ops, units, q, dest))


# ------------------------------------------------------------------ family functions


def _lanes(rec: Datapath, words: Mapping[str, BV]) -> tuple[list[BV], list[BV]]:
    return ([words[f"a{i}"] for i in range(rec.k)], [words[f"b{i}"] for i in range(rec.k)])


def fused_dot_family(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The ``fused-dot`` family function (10.3-10.5): every ``sm_*`` ``mma``/``wgmma``
    datapath that is not an FP64 chain."""
    params = parameters(rec)
    a_words, b_words = _lanes(rec, words)
    word = fused_dot(ops, params, rec.a_format, rec.b_format, rec.c_format, rec.d_format,
                     a_words, b_words, words["c"], step=rec.k // params.steps)
    return Result(word, ops.true())


def fused_dot_block_family(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The ``fused-dot-block`` family function (10.6): RTX Blackwell ``mma_block_scale``."""
    params = parameters(rec)
    a_words, b_words = _lanes(rec, words)
    scale_a = [words[f"scale_a{i}"] for i in range(rec.n_scales)]
    scale_b = [words[f"scale_b{i}"] for i in range(rec.n_scales)]
    if params.chunk is None:
        if rec.n_scales != 1 or rec.scaling != "ue8m0":  # pragma: no cover - static table
            raise ValueError(f"{rec.name}: the K=32 block scale is one UE8M0 byte each")
        word = fused_dot(ops, params, rec.a_format, rec.b_format, rec.c_format, rec.d_format,
                         a_words, b_words, words["c"], (scale_a[0], scale_b[0]))
    else:
        word = chunk_dot(ops, params, rec.scaling or "", rec.block or 0, rec.a_format,
                         rec.b_format, a_words, b_words, words["c"], scale_a, scale_b)
    return Result(word, ops.true())


FAMILIES = {FUSED_DOT: fused_dot_family, FUSED_DOT_BLOCK: fused_dot_block_family}
