"""Block-scaled datapaths: MX (UE8M0) and NVFP4 (UE4M3) -> F32 (SEMANTICS.md section 4).

One definition, :func:`block_scaled_dot`, serves MXF8F6F4, MXF4, MXF4NVF4 and
NVFP4; what tells them apart is a :class:`BlockRules` value (window widths,
exact-sum group sizes, the per-group C merge, the subnormal group floor),
so candidate models are other rule values, not copies.

Stages: decode elements, scales and C -> specials (a NaN scale is a NaN)
-> exact products carrying their scales -> choose the C-dominant or the
product path and its quantum -> exact group sums truncated to the quantum
-> exact sum -> F32 (RZ) -> the subnormal group floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tcspec.spec.accumulate import (
    align_to_quantum,
    align_to_window,
    exact_product,
    exact_sum,
    masked_max,
    max_raw,
)
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import (
    EXP_WIDTH,
    FORMATS,
    FloatFormat,
    Term,
    check_exponent_headroom,
)
from tcspec.spec.specials import apply_specials, decode_operands

F32 = FORMATS["f32"]


@dataclass(frozen=True)
class BlockRules:
    """The parameters that distinguish the block-scaled families (section 4).

    - ``product_window``: product path quantum ``q = P - product_window``;
    - ``scale_window``: and at least ``S - scale_window`` (``None``: no floor);
    - ``c_window``: C-dominant quantum ``q = rC - c_window``;
    - ``product_group`` / ``c_dominant_group``: aligned K groups summed exactly
      before truncation in each path (1 = products truncated one by one);
    - ``group_c_merge``: groups whose max raw is at most ``rC`` truncate first
      to ``2^max(q, rC - c_window)`` (MXF4 family);
    - ``subnormal_floor``: exponent of the subnormal group floor (``None``: off).
    """

    product_window: int
    scale_window: int | None
    c_window: int
    product_group: int
    c_dominant_group: int
    group_c_merge: bool = False
    subnormal_floor: int | None = None


MXF8F6F4_RULES = BlockRules(product_window=25, scale_window=None, c_window=25,
                            product_group=1, c_dominant_group=1)
"""MXF8F6F4 is exactly the section-2 window over scaled products: ``q = max(P, rC) - 25``."""

NVFP4_RULES = BlockRules(product_window=39, scale_window=35, c_window=35,
                         product_group=4, c_dominant_group=16)
"""NVFP4 / MXF4NVF4 with UE4M3: K=4 product groups, K=16 C-dominant blocks."""

MXF4_RULES = BlockRules(product_window=39, scale_window=35, c_window=35,
                        product_group=16, c_dominant_group=16, group_c_merge=True,
                        subnormal_floor=-174)
"""MXF4 and MXF4NVF4 with UE8M0: K=16 groups, per-group C merge, the 2^-174 floor."""


def rules_for(kind: str, scaling: str) -> BlockRules:
    """The hardware rules of a block-scaled instruction kind."""
    if kind == "mxf8f6f4":
        return MXF8F6F4_RULES
    if scaling == "ue4m3":
        return NVFP4_RULES
    return MXF4_RULES


@dataclass(frozen=True)
class GroupSum:
    """The exact sum of an aligned group of products that share one scale pair.

    ``value = (-1)^negative * mag * 2^exponent``; ``top_raw`` is the largest
    raw over the group's nonzero products (:data:`MIN_EXP` if none), and the
    static ``excess`` bounds the value: ``|value| < 2^(top_raw + excess)``.
    ``placed`` and ``total`` are the signed element products at the group's
    lowest exponent and their sum before the scales (none for a group of one).
    """

    negative: Bool
    mag: BV
    exponent: BV
    top_raw: BV
    scale_raw: BV
    nonzero: Bool
    excess: int
    placed: tuple[BV, ...] = ()
    total: BV | None = None


def _ceil_log2(n: int) -> int:
    return (n - 1).bit_length()


def exact_group_sum(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                    elements: Sequence[Term], scale_pair: Term, products: Sequence[Term]
                    ) -> GroupSum:
    """Sum the element products of one group exactly, then apply the shared scales.

    Element products are placed at the smallest exponent their formats can
    reach, so the integer sum is exact with a static width; the scale
    significands multiply the sum, the scale exponents shift it. A group of
    one is its scaled product.
    """
    top_raw, nonzero = max_raw(ops, products)
    if len(products) == 1:
        (only,) = products
        return GroupSum(negative=only.negative, mag=only.mag,
                        exponent=ops.sub(only.raw, only.frac_offset), top_raw=top_raw,
                        scale_raw=scale_pair.raw, nonzero=nonzero, excess=only.headroom)
    raw_floor = a_format.min_raw + b_format.min_raw
    raw_ceiling = a_format.exp_max_field + b_format.exp_max_field - a_format.bias - b_format.bias
    spread = raw_ceiling - raw_floor
    width = elements[0].mag.width + spread + _ceil_log2(len(elements)) + 1
    signed = []
    for term in elements:
        placed = ops.shl(ops.zext(term.mag, width), ops.sub(term.raw, raw_floor))
        signed.append(ops.ite(term.negative, ops.neg(placed), placed))
    total = ops.sum(signed)
    magnitude = ops.abs_signed(total)
    frac_offset = elements[0].frac_offset + scale_pair.frac_offset
    exponent = ops.add(scale_pair.raw, raw_floor - frac_offset)
    headroom = products[0].headroom
    return GroupSum(negative=ops.sign(total), mag=ops.mul_wide(magnitude, scale_pair.mag),
                    exponent=exponent, top_raw=top_raw, scale_raw=scale_pair.raw,
                    nonzero=nonzero, excess=headroom + _ceil_log2(len(elements)),
                    placed=tuple(signed), total=total)


def align_group(ops: Ops, group: GroupSum, q: BV, window_bound: int) -> BV:
    """The group sum in units of ``2^q``, truncated toward zero (``top_raw <= q + bound``)."""
    width = max(window_bound + group.excess, group.mag.width) + 1
    return align_to_quantum(ops, group.negative, group.mag, group.exponent, q, width)


def _is_nonzero_subnormal(ops: Ops, word: BV) -> Bool:
    exponent_field = ops.extract(word, 30, 23)
    fraction = ops.extract(word, 22, 0)
    return ops.and_(ops.eq(exponent_field, 0), ops.ne(fraction, 0))


def block_scaled_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                     scale_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV,
                     scale_a: Sequence[BV], scale_b: Sequence[BV], *, block: int,
                     rules: BlockRules) -> BV:
    """``D = C + sum(A[k] * SA[k / block] * B[k] * SB[k / block])`` to F32 (section 4).

    ``a``/``b`` are the K (compacted) element words, ``scale_a``/``scale_b``
    one scale byte per ``block`` of K, ``c`` the F32 C word.
    """
    k = len(a)
    if len(b) != k:
        raise ValueError(f"A has {k} lanes but B has {len(b)}")
    if k % block or len(scale_a) != k // block or len(scale_b) != k // block:
        raise ValueError(f"K={k} with blocks of {block} needs {k // block} scales per operand")
    for size in (rules.product_group, rules.c_dominant_group):
        if block % size:
            raise ValueError(f"exact-sum groups of {size} must not straddle blocks of {block}")
    window_bound = max(rules.product_window, rules.c_window)
    check_exponent_headroom([a_format, b_format, scale_format, F32], 4, window_bound)

    operands = decode_operands(ops, a_format, b_format, F32, a, b, c, scale_format, scale_a,
                               scale_b)
    specials, acc = operands.specials, operands.c

    scale_pairs = [exact_product(ops, x.term, y.term)
                   for x, y in zip(operands.scale_a, operands.scale_b)]
    elements = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    products = [exact_product(ops, e, scale_pairs[i // block]) for i, e in enumerate(elements)]
    ops.observe("products", scale_pairs=scale_pairs, elements=elements, products=products,
                block=block)

    top, any_product = max_raw(ops, products)
    scale_top, _ = masked_max(ops, [scale_pairs[i // block].raw for i in range(k)],
                              [p.nonzero for p in products])
    c_term = acc.term
    c_raw = acc.raw
    c_dominant = ops.and_(c_term.nonzero, ops.or_(ops.not_(any_product), ops.sge(c_raw, top)))
    q_c = ops.sub(c_raw, rules.c_window)
    q_p = ops.sub(top, rules.product_window)
    if rules.scale_window is not None:
        q_p = ops.smax(q_p, ops.sub(scale_top, rules.scale_window))
    ops.observe("block_choice", rules=rules, max_raw=top, any_product=any_product,
                scale_max=scale_top, c_raw=c_raw, c_nonzero=c_term.nonzero,
                c_dominant=c_dominant, c_quantum=q_c, product_quantum=q_p)

    groups: dict[int, list[GroupSum]] = {}
    for size in {rules.product_group, rules.c_dominant_group}:
        groups[size] = [
            exact_group_sum(ops, a_format, b_format, elements[start:start + size],
                            scale_pairs[start // block], products[start:start + size])
            for start in range(0, k, size)]

    def merged_units(group: GroupSum, q: BV) -> BV:
        units = align_group(ops, group, q, window_bound)
        if not rules.group_c_merge:
            return units
        coarse_q = ops.smax(q, q_c)
        coarse = ops.shl(align_group(ops, group, coarse_q, window_bound), ops.sub(coarse_q, q))
        near_c = ops.and_(group.nonzero, c_term.nonzero, ops.sge(c_raw, group.top_raw))
        ops.observe("group_merge", group=group, near_c=near_c, coarse_quantum=coarse_q)
        return ops.ite(near_c, coarse, units)

    units_c = [align_group(ops, g, q_c, window_bound) for g in groups[rules.c_dominant_group]]
    units_p = [merged_units(g, q_p) for g in groups[rules.product_group]]
    c_units_c = align_to_window(ops, c_term, q_c, window_bound)
    c_units_p = align_to_window(ops, c_term, q_p, window_bound)
    total_c = exact_sum(ops, [*units_c, c_units_c])
    total_p = exact_sum(ops, [*units_p, c_units_p])
    width = max(total_c.width, total_p.width)
    total = ops.ite(c_dominant, ops.sext(total_c, width), ops.sext(total_p, width))
    quantum = ops.ite(c_dominant, q_c, q_p)
    ops.observe("groups", rules=rules, c_dominant=c_dominant, quantum=quantum, c_term=c_term,
                c_groups=groups[rules.c_dominant_group], c_units=[*units_c, c_units_c],
                product_groups=groups[rules.product_group], product_units=[*units_p, c_units_p],
                c_quantum=q_c, product_quantum=q_p, c_total=total_c, product_total=total_p)
    finite = encode_float(ops, total, quantum, F32, "rz")

    if rules.subnormal_floor is not None:
        finite = _apply_subnormal_floor(ops, rules.subnormal_floor, finite, c_dominant,
                                        groups[rules.product_group], units_p, c_units_p,
                                        scale_top, q_p)
    return apply_specials(ops, specials, finite, F32)


def _apply_subnormal_floor(ops: Ops, floor: int, finite: BV, c_dominant: Bool,
                           groups: Sequence[GroupSum], units: Sequence[BV], c_units: BV,
                           scale_top: BV, q: BV) -> BV:
    """Section 4 (model): a nonzero subnormal product-path result is recomputed without
    the groups whose scale raw is below ``S`` and whose unit count is below
    ``2^(floor - q)`` in magnitude (below 1 when ``q >= floor``)."""
    threshold_shift = ops.smax(ops.sub(ops.const(floor, EXP_WIDTH), q), 0)
    kept = []
    for group, group_units in zip(groups, units):
        small = ops.eq(ops.lshr(ops.abs_signed(group_units), threshold_shift), 0)
        drop = ops.and_(ops.slt(group.scale_raw, scale_top), small)
        kept.append(ops.ite(drop, ops.const(0, group_units.width), group_units))
    floored = encode_float(ops, exact_sum(ops, [*kept, c_units]), q, F32, "rz")
    use_floor = ops.and_(ops.not_(c_dominant), _is_nonzero_subnormal(ops, finite))
    ops.observe("floor", floor=floor, groups=groups, units=units, kept=kept,
                scale_max=scale_top, use_floor=use_floor)
    return ops.ite(use_floor, floored, finite)
