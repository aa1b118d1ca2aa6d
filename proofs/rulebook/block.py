"""Section 4: block-scaled (MX with UE8M0, NVFP4 with UE4M3) -> F32.

``D = C + sum_k A[k] * B[k] * SA[k // block] * SB[k // block]`` for one output
element, on the physical (dense) K; the sparse names compact their lanes first
(section 5, ``sparse``) and come here through the registry.

Shared rules (section 4, first paragraphs):

- scales decode by section 1 (UE8M0 ``2^(s - 127)``, UE4M3 an unsigned e4m3,
  bit 7 ignored); one byte per scale block of the physical K, the bytes of the
  layout being exactly the ones that cover K ("extra trailing bytes are
  ignored" happens before the interface; "missing scale vectors mean unit
  scales" is the caller's, with :data:`UNIT_SCALE`);
- a product is exact: ``m = mA*mB*mSA*mSB``, ``e = eA+eB+eSA+eSB``,
  ``r = rA+rB+rSA+rSB``, scale raw ``rSA+rSB`` (:func:`scaled_product`);
- specials: a NaN in any scale byte covering K, or section 2's element specials
  (NaN A, B or C; Inf x 0; infinities of both signs) give the canonical NaN; one
  infinity sign gives that infinity (:func:`block_specials`);
- every product zero: D is C's word unchanged, a zero C (either sign) ``+0``;
- ``P`` = max raw over nonzero products, ``S`` = max scale raw over nonzero
  products, ``rC`` C's raw exponent.

Families (:func:`block_word` picks by the record's kind and scaling):

- MXF8F6F4 (:func:`mxf8f6f4_units`): section 2's window, 25 fraction bits over
  the products and C, no floor, no clamp, products truncated one by one;
- NVFP4 and MXF4NVF4 with UE4M3 (:func:`nvfp4_units`; section 6: "same
  arithmetic"): C-dominant path with K=16 block sums at ``q = rC - 35``,
  otherwise K=4 group sums at ``q = max(P - 39, S - 35)``;
- MXF4 and MXF4NVF4 with UE8M0 (:func:`mxf4_word`, :func:`subnormal_group_floor`):
  the same C-dominant path; otherwise K=16 group sums with the per-group C merge,
  then the subnormal group floor.

Representation. Significands ``m`` unsigned at their product widths, raws and
value exponents signed :data:`~tcspec.proofs.rulebook.fields.EXP_BITS` wide, a
group's exact sum a signed integer in units of ``2^eg`` (``eg`` the group's
lowest possible product exponent, :func:`group_sum`), every truncated term (C,
a product, a group) a signed count of units of ``2^q``, their sum a signed
integer. Sums run C first, then products or groups in ascending k (exact, so
the order is presentation only).

Widths. A factor's value is below ``2^(r + 1)``, a UE8M0 scale's is exactly
``2^r`` (:func:`lead_bits` 1 and 0), so a product is
below ``2^(r + L)`` with ``L`` the sum of its factors' lead bits (MXF8F6F4: 2;
E2M1 with UE8M0: 2; with UE4M3: 4). Against ``q`` every term's magnitude bound
follows (see :func:`e2m1_term_bits`); sums add ``bitlen(terms)`` bits and a
sign.

Readings of the text (where it leaves a choice):

- "Inf x 0" is read on the elements (A x B), as section 2 states it; a zero
  scale exists only as UE4M3 ``0x00``, which pairs only with E2M1 (no
  infinities), so no input tells this reading apart from one over all four
  factors;
- the subnormal group floor is applied to the "otherwise" result it follows;
  in the C-dominant case ``q = rC - 35 >= -161``, so the floor's threshold is
  1 unit and it could only leave out zero groups (no effect either way);
- a group's "unit count" in the floor is the count it contributes to the sum
  (after its truncation, and after the C merge where that applies). The two
  never meet: the floor's threshold exceeds 1 unit only when ``q < -174``, and
  with ``C != 0`` the otherwise case has ``P > rC >= -126``, so ``q >= P - 39 >=
  -164``; a merge needs ``C != 0``;
- "that result is a nonzero F32 subnormal" is read on the converted F32 word
  (exponent field 0, fraction not 0): a sum that truncates to ``+0`` is not
  floored. With ``q < -174`` every sum is below ``2^-126`` anyway;
- ``rC >= P``, ``rC >= g``, "below ``S``" and "smaller in magnitude than" are
  taken exactly as written (``>=``, ``>=``, ``<``, ``<``); the reference
  vectors match the other choices too (none of their lines tells them apart);
- a UE4M3 scale's raw is at least ``1 - 7 = -6``, so NVFP4's ``q >= S - 35 >= -47``
  (C-dominant: ``q = rC - 35 >= -161``): a subnormal group floor could never act
  there (the text gives none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import EXP_BITS, IEEE, Decoded, Format, decode, fmt, special_word
from .names import BLOCK, Datapath
from .result import Result
from .rounding import F32_RZ, convert
from .window import align

# ------------------------------------------------------------------ constants of section 4

MX_WINDOW_FRACTION_BITS = 25
"""4, MXF8F6F4: section 2's window, ``q = R - 25``."""

C_DOMINANT_FRACTION_BITS = 35
"""4, NVFP4 / MXF4: C-dominant ``q = rC - 35``; also the per-group C merge ``rC - 35``."""

PRODUCT_FRACTION_BITS = 39
"""4, NVFP4 / MXF4 otherwise: ``q = max(P - 39, S - 35)``, the first term."""

SCALE_FLOOR_FRACTION_BITS = 35
"""4, NVFP4 / MXF4 otherwise: the scale-anchored floor ``S - 35``."""

C_DOMINANT_GROUP = 16
"""4: in the C-dominant case each K=16 block's products are summed exactly first."""

NVFP4_GROUP = 4
"""4, NVFP4 otherwise: products summed exactly in aligned K=4 groups (**(model)**)."""

MXF4_GROUP = 16
"""4, MXF4 / MXF4NVF4 otherwise: products summed exactly in aligned K=16 groups."""

SUBNORMAL_FLOOR_EXP = -174
"""4, MXF4 subnormal group floor: groups below ``2^(-174 - q)`` units may be left out."""

UNIT_SCALE = {"ue8m0": 0x7F, "ue4m3": 0x38}
"""4: missing scale vectors mean unit scales (UE8M0 ``0x7F``, UE4M3 ``0x38``)."""

NO_TERM_R = -(1 << 14)
"""Stand-in raw exponent of a zero product in a maximum (below every real raw)."""

F32_EXP_LO, F32_EXP_HI, F32_FRAC_HI = 23, 30, 22
"""Field positions of the F32 D word (section 1's f32 row), for the subnormal test."""


# ------------------------------------------------------------------ products


@dataclass(frozen=True)
class ScaledProduct:
    """One exact scaled product (4): ``sign``, unsigned ``m = mA*mB*mSA*mSB`` (the four
    significands' widths added), signed raw ``r = rA+rB+rSA+rSB``, value exponent
    ``e = eA+eB+eSA+eSB``, the **scale raw** ``rSA+rSB``, and the element flags
    (``nonzero``: ``m != 0``; ``inf``: an infinite element product; ``nan``: a NaN
    element or Inf x 0)."""

    sign: Bool
    m: BV
    r: BV
    e: BV
    scale_raw: BV
    nonzero: Bool
    inf: Bool
    nan: Bool


def scaled_product(ops: Ops, a: Decoded, b: Decoded, sa: Decoded, sb: Decoded) -> ScaledProduct:
    """Section 4: the scales multiply in exactly; section 2.2's element specials.

    Non-finite elements decode with ``m = 0`` (fields), so an infinite or NaN product
    never counts as a nonzero finite term; its flags carry it to the specials.
    """
    m = ops.mul_wide(ops.mul_wide(a.m, b.m), ops.mul_wide(sa.m, sb.m))
    scale_raw = ops.add(sa.r, sb.r)
    r = ops.add(ops.add(a.r, b.r), scale_raw)
    frac_bits = a.fmt.F + b.fmt.F + sa.fmt.F + sb.fmt.F
    e = ops.sub(r, frac_bits)
    inf_times_zero = (a.inf & b.zero) | (a.zero & b.inf)
    nan = a.nan | b.nan | inf_times_zero
    inf = (a.inf | b.inf) & ~nan
    return ScaledProduct(a.sign ^ b.sign, m, r, e, scale_raw, ops.ne(m, 0), inf, nan)


def lead_bits(f: Format) -> int:
    """Bits a factor's value can reach above ``2^r``: a UE8M0 scale is exactly ``2^r``
    (0), any other finite value is below ``2^(r + 1)`` (1)."""
    return 0 if f.no_subnormal and f.frac_bits == 0 else 1


def r_max(f: Format) -> int:
    """The largest raw exponent of a finite value of ``f`` (the all-ones exponent is a
    special pattern only in IEEE rows)."""
    top = (1 << f.exp_bits) - 1
    return (top - 1 if f.specials == IEEE else top) - f.bias


def max_raw(ops: Ops, items: Sequence[tuple[Bool, BV]]) -> tuple[BV, Bool]:
    """Signed maximum of the raws whose term is nonzero, and "some term is nonzero"
    (``P``, ``S``, a group's ``g``; with no nonzero term the value is unused)."""
    candidates = [ops.ite(nz, r, ops.const(NO_TERM_R, EXP_BITS)) for nz, r in items]
    return ops.smax_all(candidates), ops.any_(nz for nz, _ in items)


# ------------------------------------------------------------------ specials


def block_specials(ops: Ops, products: Sequence[ScaledProduct], c: Decoded,
                   scales: Sequence[Decoded]) -> tuple[Bool, Bool, Bool]:
    """Section 4 specials: ``(nan, pos_inf, neg_inf)``. A NaN scale byte covering K, a NaN
    element or C, or Inf x 0 is NaN; infinite products (sign of the product) and C are
    the infinities (2.2; ``special_word`` turns both signs into NaN)."""
    nan = ops.any_([c.nan] + [s.nan for s in scales] + [p.nan for p in products])
    pos_inf = ops.any_([c.inf & ~c.sign] + [p.inf & ~p.sign for p in products])
    neg_inf = ops.any_([c.inf & c.sign] + [p.inf & p.sign for p in products])
    return nan, pos_inf, neg_inf


# ------------------------------------------------------------------ MXF8F6F4


def mxf8f6f4_units(ops: Ops, products: Sequence[ScaledProduct], c: Decoded,
                   mag_bits: int) -> tuple[BV, BV]:
    """Section 4 MXF8F6F4 = section 2's window: ``R = max(r of nonzero products, rC if
    C != 0)`` (no floor, no clamp), ``q = R - 25``; C and each product truncated to units
    of ``2^q`` one by one, summed C first. Returns ``(units, q)``.

    ``mag_bits`` = 25 + the products' lead bits: every term is below ``2^(R + lead)``.
    """
    big_r, any_term = max_raw(ops, [(p.nonzero, p.r) for p in products] + [(c.nonzero, c.r)])
    p_max, any_product = max_raw(ops, [(p.nonzero, p.r) for p in products])
    c_sets_r = c.nonzero & (~any_product | ops.sge(c.r, p_max))
    ops.observe("hint", split=any_term, c_sets_r=c_sets_r)
    q = ops.sub(big_r, MX_WINDOW_FRACTION_BITS)
    terms = [align(ops, c.sign, c.m, c.e(ops), q, mag_bits)]
    terms += [align(ops, p.sign, p.m, p.e, q, mag_bits) for p in products]
    return sum_units(ops, terms), q


# ------------------------------------------------------------------ E2M1 K=64 groups


@dataclass(frozen=True)
class Group:
    """An aligned group of products (4): its exact sum ``total`` as a signed count of
    units of ``2^eg``, ``g`` its max product raw, ``scale_raw`` its max scale raw
    (both over its nonzero products), ``nonzero`` "has a nonzero product"."""

    total: BV
    eg: BV
    g: BV
    scale_raw: BV
    nonzero: Bool


def group_sum(ops: Ops, products: Sequence[ScaledProduct], a_fmt: Format, b_fmt: Format,
              eg: BV) -> Group:
    """The exact sum of a group's products (4) in units of ``2^eg``.

    ``eg`` is the group's lowest possible product exponent: its scales' value exponents
    plus the elements' smallest value exponents ``(1 - bias) - F``; every product sits
    ``e - eg`` in ``[0, D]`` binades above it, ``D`` the elements' raw ranges added.
    Width: a product's ``m`` is below ``2^width(m)``, shifted at most ``D``, ``n`` of them:
    ``width(m) + D + ceil(log2 n)`` magnitude bits and a sign.
    """
    span = (r_max(a_fmt) - a_fmt.r_min) + (r_max(b_fmt) - b_fmt.r_min)
    n = len(products)
    width = products[0].m.width + span + (n - 1).bit_length() + 1
    terms = []
    for p in products:
        shifted = ops.shl(ops.zext(p.m, width), ops.sub(p.e, eg))
        terms.append(ops.ite(p.sign, ops.neg(shifted), shifted))
    g, nonzero = max_raw(ops, [(p.nonzero, p.r) for p in products])
    scale_raw, _ = max_raw(ops, [(p.nonzero, p.scale_raw) for p in products])
    return Group(sum_units(ops, terms, width), eg, g, scale_raw, nonzero)


def truncate_group(ops: Ops, group: Group, q: BV, mag_bits: int) -> BV:
    """A group's exact sum truncated toward zero to signed units of ``2^q`` (4)."""
    negative = ops.sign(group.total)
    return align(ops, negative, ops.abs_signed(group.total), group.eg, q, mag_bits)


def e2m1_term_bits(lead: int, group: int) -> int:
    """Magnitude bits of every term of the E2M1 K=64 paths (4).

    Otherwise case: ``q >= P - 39`` and a group of ``n`` products is below
    ``n * 2^(P + lead)``: ``39 + lead + ceil(log2 n)`` bits; C (``rC < P`` or 0) is below
    ``2^P``: 39 bits. C-dominant case: ``q = rC - 35 >= P - 35``, a K=16 block is below
    ``2^(35 + lead + 4)`` units, C below ``2^36``. A merged group (MXF4) is no larger in
    units of ``2^q`` than its exact value.
    """
    otherwise = PRODUCT_FRACTION_BITS + lead + (group - 1).bit_length()
    dominant = C_DOMINANT_FRACTION_BITS + lead + (C_DOMINANT_GROUP - 1).bit_length()
    return max(otherwise, dominant, PRODUCT_FRACTION_BITS, C_DOMINANT_FRACTION_BITS + 1)


def sum_units(ops: Ops, terms: Sequence[BV], width: int | None = None) -> BV:
    """The exact sum of signed unit counts, left to right: ``width`` bits (default: the
    widest term plus ``bitlen(len(terms))``, enough for any ``len(terms)`` of them)."""
    if width is None:
        width = max(t.width for t in terms) + len(terms).bit_length()
    total = ops.const(0, width)
    for t in terms:
        total = ops.add(total, ops.sext(t, width))
    return total


@dataclass(frozen=True)
class E2M1Context:
    """What both E2M1 K=64 paths share: ``P``, ``S``, ``rC``, C, and the groupings."""

    products: Sequence[ScaledProduct]
    c: Decoded
    p: BV
    s: BV
    bases: Sequence[BV]  # per lane: its group base exponent eg (its scales' e + element mins)
    a_fmt: Format
    b_fmt: Format
    mag_bits: int

    def groups(self, ops: Ops, size: int) -> list[Group]:
        """The aligned groups of ``size`` lanes, each summed exactly."""
        n = len(self.products)
        return [group_sum(ops, self.products[i:i + size], self.a_fmt, self.b_fmt, self.bases[i])
                for i in range(0, n, size)]

    def c_units(self, ops: Ops, q: BV) -> BV:
        """C truncated to signed units of ``2^q``."""
        return align(ops, self.c.sign, self.c.m, self.c.e(ops), q, self.mag_bits)


def c_dominant(ops: Ops, ctx: E2M1Context) -> tuple[Bool, BV, BV]:
    """Section 4 C-dominant case (NVFP4, MXF4, MXF4NVF4): ``C != 0`` and ``rC >= P``;
    ``q = rC - 35``; each K=16 block summed exactly, then truncated to units of ``2^q``;
    summed with C's units. Returns ``(applies, units, q)``."""
    applies = ctx.c.nonzero & ops.sge(ctx.c.r, ctx.p)
    q = ops.sub(ctx.c.r, C_DOMINANT_FRACTION_BITS)
    terms = [ctx.c_units(ops, q)]
    terms += [truncate_group(ops, g, q, ctx.mag_bits) for g in ctx.groups(ops, C_DOMINANT_GROUP)]
    return applies, sum_units(ops, terms), q


def otherwise_q(ops: Ops, ctx: E2M1Context) -> BV:
    """Section 4, not C-dominant: ``q = max(P - 39, S - 35)`` (the scale-anchored floor)."""
    return ops.smax(ops.sub(ctx.p, PRODUCT_FRACTION_BITS),
                    ops.sub(ctx.s, SCALE_FLOOR_FRACTION_BITS))


def nvfp4_units(ops: Ops, ctx: E2M1Context) -> tuple[BV, BV]:
    """Section 4 NVFP4 (and MXF4NVF4 with UE4M3): C-dominant, else K=4 groups summed
    exactly (**(model)**), each truncated to units of ``2^q``, summed with C's units.
    Returns ``(units, q)``."""
    dominant, dom_units, dom_q = c_dominant(ops, ctx)
    q = otherwise_q(ops, ctx)
    terms = [ctx.c_units(ops, q)]
    terms += [truncate_group(ops, g, q, ctx.mag_bits) for g in ctx.groups(ops, NVFP4_GROUP)]
    units = sum_units(ops, terms)
    width = max(units.width, dom_units.width)
    units = ops.ite(dominant, ops.sext(dom_units, width), ops.sext(units, width))
    return units, ops.ite(dominant, dom_q, q)


def merged_group_units(ops: Ops, group: Group, c: Decoded, q: BV, mag_bits: int) -> BV:
    """Section 4 MXF4 per-group C merge (**(model)**): a group with a nonzero product whose
    max product raw ``g`` has ``C != 0`` and ``rC >= g`` is truncated to units of
    ``2^max(q, rC - 35)`` and then expressed in units of ``2^q``; any other group is
    truncated to ``2^q`` directly."""
    direct = truncate_group(ops, group, q, mag_bits)
    q_merge = ops.smax(q, ops.sub(c.r, C_DOMINANT_FRACTION_BITS))
    coarse = truncate_group(ops, group, q_merge, mag_bits)
    merged = ops.shl(coarse, ops.sub(q_merge, q))
    applies = group.nonzero & c.nonzero & ops.sge(c.r, group.g)
    return ops.ite(applies, merged, direct)


def subnormal_group_floor(ops: Ops, c_units: BV, group_units: Sequence[BV],
                          groups: Sequence[Group], s: BV, q: BV) -> BV:
    """Section 4 MXF4 subnormal group floor (**(model)**): the F32 RZ word of the sum, or,
    when that word is a nonzero F32 subnormal, the word of the sum recomputed without
    every group whose scale raw is below ``S`` and whose unit count is smaller in
    magnitude than ``2^(-174 - q)`` units (1 unit when ``q >= -174``).

    ``|n| < 2^t`` is tested as ``|n| >> t == 0``, ``t = max(0, -174 - q)``.
    """
    total = sum_units(ops, [c_units, *group_units])
    word = convert(ops, total, q, F32_RZ)
    exp_field = ops.extract(word, F32_EXP_HI, F32_EXP_LO)
    frac_field = ops.extract(word, F32_FRAC_HI, 0)
    subnormal = ops.eq(exp_field, 0) & ops.ne(frac_field, 0)
    t = ops.smax(ops.sub(ops.const(SUBNORMAL_FLOOR_EXP, EXP_BITS), q), ops.const(0, EXP_BITS))
    kept = [c_units]
    for units, group in zip(group_units, groups):
        small = ops.eq(ops.lshr(ops.abs_signed(units), t), 0)
        leave_out = group.nonzero & ops.slt(group.scale_raw, s) & small
        kept.append(ops.ite(leave_out, ops.const(0, units.width), units))
    floored = convert(ops, sum_units(ops, kept), q, F32_RZ)
    return ops.ite(subnormal, floored, word)


def mxf4_word(ops: Ops, ctx: E2M1Context) -> BV:
    """Section 4 MXF4 and MXF4NVF4 with UE8M0: C-dominant, else K=16 groups summed exactly,
    each truncated with the per-group C merge, summed with C's units, converted F32 RZ
    under the subnormal group floor. Returns the finite F32 word."""
    dominant, dom_units, dom_q = c_dominant(ops, ctx)
    dom_word = convert(ops, dom_units, dom_q, F32_RZ)
    q = otherwise_q(ops, ctx)
    groups = ctx.groups(ops, MXF4_GROUP)
    group_units = [merged_group_units(ops, g, ctx.c, q, ctx.mag_bits) for g in groups]
    word = subnormal_group_floor(ops, ctx.c_units(ops, q), group_units, groups, ctx.s, q)
    return ops.ite(dominant, dom_word, word)


# ------------------------------------------------------------------ the family function


def scale_words(rec: Datapath, words: Mapping[str, BV], side: str) -> list[BV]:
    """The scale bytes of one operand, one per scale block of the physical K."""
    return [words[f"scale_{side}{i}"] for i in range(rec.n_scales)]


def block_word(ops: Ops, rec: Datapath, a_words: Sequence[BV], b_words: Sequence[BV],
               c_word: BV, sa_words: Sequence[BV], sb_words: Sequence[BV]) -> BV:
    """Section 4 on raw words of the physical K: the F32 D word."""
    if rec.scaling is None or rec.block is None or rec.kind is None:
        raise ValueError(f"{rec.name} is not a block-scaled datapath")
    k = len(a_words)
    if len(b_words) != k or k != rec.dense_k or len(sa_words) != k // rec.block \
            or len(sb_words) != k // rec.block:
        raise ValueError(f"{rec.name}: {k} A, {len(b_words)} B, {len(sa_words)}/"
                         f"{len(sb_words)} scale words do not fit K={rec.dense_k}")
    a_fmt, b_fmt, s_fmt = fmt(rec.a_format), fmt(rec.b_format), fmt(rec.scaling)
    sa = [decode(ops, w, s_fmt) for w in sa_words]
    sb = [decode(ops, w, s_fmt) for w in sb_words]
    products = [scaled_product(ops, decode(ops, a, a_fmt), decode(ops, b, b_fmt),
                               sa[i // rec.block], sb[i // rec.block])
                for i, (a, b) in enumerate(zip(a_words, b_words))]
    c = decode(ops, c_word, "f32")
    nan, pos_inf, neg_inf = block_specials(ops, products, c, sa + sb)
    lead = lead_bits(a_fmt) + lead_bits(b_fmt) + 2 * lead_bits(s_fmt)

    if rec.kind == "mxf8f6f4":
        units, q = mxf8f6f4_units(ops, products, c, MX_WINDOW_FRACTION_BITS + lead)
        finite = convert(ops, units, q, F32_RZ)
    else:
        p, any_product = max_raw(ops, [(x.nonzero, x.r) for x in products])
        ops.observe("hint", split=any_product)
        s, _ = max_raw(ops, [(x.nonzero, x.scale_raw) for x in products])
        a_min = a_fmt.r_min - a_fmt.F
        b_min = b_fmt.r_min - b_fmt.F
        bases = [ops.add(ops.add(sa[i // rec.block].e(ops), sb[i // rec.block].e(ops)),
                         a_min + b_min) for i in range(k)]
        group = NVFP4_GROUP if rec.scaling == "ue4m3" else MXF4_GROUP
        ctx = E2M1Context(products, c, p, s, bases, a_fmt, b_fmt, e2m1_term_bits(lead, group))
        if rec.scaling == "ue4m3":
            units, q = nvfp4_units(ops, ctx)
            finite = convert(ops, units, q, F32_RZ)
        else:
            finite = mxf4_word(ops, ctx)

    # Every product zero: C unchanged, a zero C (either sign) +0.
    any_product = ops.any_(x.nonzero for x in products)
    c_word32 = ops.ite(c.zero, ops.const(0, 32), c_word)
    finite = ops.ite(any_product, finite, c_word32)
    return special_word(ops, F32_RZ.dformat, nan, pos_inf, neg_inf, finite)


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The section-4 family function: ``dense-mx-<f>``, ``dense-mx-<a>-<b>``, ``dense-mxf4``,
    ``dense-mxf4nvf4-2x``, ``dense-mxf4nvf4-4x``, ``dense-nvfp4``,
    ``dense-mxf4nvf4-4x-ue4m3`` (the sparse siblings arrive compacted, via ``sparse``)."""
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    word = block_word(ops, rec, a_words, b_words, words["c"], scale_words(rec, words, "a"),
                      scale_words(rec, words, "b"))
    return Result(word, ops.true())


FAMILIES = {BLOCK: dot}
