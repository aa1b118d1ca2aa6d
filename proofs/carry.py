"""K-group carry preservation (covers spec/blockscaled's exact_group_sum and align_group,
spec/accumulate's align_to_window, and the NVFP4 product path of block_scaled_dot).

SEMANTICS.md section 4: the FP4 families sum aligned groups of G products
exactly and truncate the group sum once to the quantum ``2^q`` (NVFP4 G=4,
MXF4 family G=16, from :mod:`proofs.constants`); truncating each product
alone loses the carries of the dropped fractions. ``k-group-carry`` is stated
on ``build_dot``'s own DAG at the row's K, for every product-path group (a
sparse path's groups of the lanes its metadata keeps), each group's units
checked to be read by the sum D encodes, at the quantum the datapath
chooses, with some product of the group nonzero, no NaN scale, legal
metadata and (MXF4 family) the group not merged with C:

- same-sign products: the group units ``g`` (the ``groups`` stage's node)
  exceed the per-product units (``align_to_window`` of each recorded product)
  in magnitude by 0 to G-1 quanta;
- mixed signs: the two differ by at most G-1 quanta.

It is a ``chain`` (:func:`dot_chain`): every step a solver query, each cut
justified by an earlier one. ``k-group-carry-ends`` shows both ends are
reached, for one group of G free products at any usable quantum (witnesses;
the MXF4 family reaches 12 and 11 of G-1 = 15, see :func:`reachable_excess`).
The two monolithic forall queries of :func:`bound_queries` (same statement
over free products) do not finish in 120 s.

On every FP4-group path: a solver-found input where group truncation
(``hardware``) and per-product truncation (``nvfp4-per-product``, section 7;
on the MXF4 family the path's rules with groups of 1) give different F32
words; on dense-nvfp4 the B200 word ``nvfp4-k4-product-carry`` is such an
input.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

from tcspec.proofs import reference as ref
from tcspec.proofs.constants import (
    GROUP_C_MERGE,
    SCALE_WINDOW,
    block_family,
    product_group,
    product_window,
    scale_block,
    window_bound,
)
from tcspec.proofs.core import (
    CHAIN,
    InternalError,
    Property,
    Query,
    QueryBody,
    Row,
    Settings,
    Variables,
    check_queries,
    cover_mismatches,
    dot_inputs,
    every_datapath,
    hypothesis_query,
    layout_variables,
    require_cover,
    run_dot,
    summed_lanes,
)
from tcspec.proofs.cutpoints import observed
from tcspec.proofs.floor import truncates
from tcspec.proofs.rulebook import sparse as rulebook_sparse
from tcspec.ref.vectorfiles import frozen_record
from tcspec.smt.solve import free_variables
from tcspec.smt.trace import Node, TraceOps, cut_nodes, walk
from tcspec.spec.accumulate import align_to_window, exact_product, max_raw
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import GroupSum, align_group, exact_group_sum, rules_for
from tcspec.spec.candidates import block_model, build_model
from tcspec.spec.catalog import DotInputs, compact_sparse, input_layout
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.exact import raw_ceiling
from tcspec.spec.formats import EXP_WIDTH, FORMATS, Decoded, FloatFormat, Term, decode_float

PER_PRODUCT = "nvfp4-per-product"
CARRY_WORD = "nvfp4-k4-product-carry"


def group_size(desc: Descriptor) -> int:
    """G: the product path's exact-sum group (NVFP4 4, MXF4 family 16; SEMANTICS.md section 4,
    :mod:`proofs.constants`)."""
    return product_group(desc)


def _window_bound(desc: Descriptor) -> int:
    """Section 4's larger window (:func:`proofs.constants.window_bound`): the headroom of
    the per-product units the statement compares with."""
    return window_bound(desc)


def group_variables(desc: Descriptor) -> tuple[tuple[str, int], ...]:
    g = group_size(desc)
    return (tuple((f"a{i}", 32) for i in range(g)) + tuple((f"b{i}", 32) for i in range(g))
            + (("scale_a", 8), ("scale_b", 8), ("q", EXP_WIDTH)))


def group_formats(desc: Descriptor) -> tuple[FloatFormat, FloatFormat, FloatFormat]:
    """``(A element, B element, scale)`` formats of a block-scaled datapath."""
    fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling or ""])
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fs, FloatFormat)
    return fa, fb, fs


@dataclass(frozen=True)
class GroupTerms:
    """One group's decoded scales and its element, scale-pair and scaled product terms."""

    scales: tuple[Decoded, Decoded]
    scale_pair: Term
    elements: list[Term]
    products: list[Term]


def group_terms(ops: Ops, desc: Descriptor, values: Variables, count: int | None = None
                ) -> GroupTerms:
    """The terms of ``count`` (default G) products ``a{i} * b{i} * scale_a * scale_b``."""
    g = group_size(desc) if count is None else count
    fa, fb, fs = group_formats(desc)
    lanes_a = [decode_float(ops, fa, values[f"a{i}"]) for i in range(g)]
    lanes_b = [decode_float(ops, fb, values[f"b{i}"]) for i in range(g)]
    scales = (decode_float(ops, fs, values["scale_a"]), decode_float(ops, fs, values["scale_b"]))
    scale_pair = exact_product(ops, scales[0].term, scales[1].term)
    elements = [exact_product(ops, x.term, y.term) for x, y in zip(lanes_a, lanes_b)]
    products = [exact_product(ops, e, scale_pair) for e in elements]
    return GroupTerms(scales, scale_pair, elements, products)


def highest_quantum(desc: Descriptor) -> int:
    """The largest product-path quantum: ``q <= max raw of A, B and both scales - scale window``."""
    fa, fb, fs = group_formats(desc)
    return fa.max_raw + fb.max_raw + 2 * fs.max_raw - (SCALE_WINDOW[block_family(desc)] or 0)


def group_sum(ops: Ops, desc: Descriptor, terms: GroupTerms) -> GroupSum:
    """The spec's exact sum of the group (``exact_group_sum``)."""
    fa, fb, _ = group_formats(desc)
    return exact_group_sum(ops, fa, fb, terms.elements, terms.scale_pair, terms.products)


def group_units(ops: Ops, desc: Descriptor, terms: GroupTerms, q: BV) -> tuple[BV, list[BV]]:
    """``(align_group of exact_group_sum, align_to_window of each product)`` at ``q``."""
    bound = _window_bound(desc)
    return (align_group(ops, group_sum(ops, desc, terms), q, bound),
            [align_to_window(ops, p, q, bound) for p in terms.products])


def compared(ops: Ops, grouped: BV, singles: list[BV]) -> tuple[BV, BV]:
    """``(group units, per-product unit sum)`` sign-extended to one width that holds both
    and their sum."""
    width = max(grouped.width, *(u.width for u in singles)) + len(singles).bit_length()
    return ops.sext(grouped, width), ops.sum([ops.sext(u, width) for u in singles])


def group_usable(ops: Ops, desc: Descriptor, terms: GroupTerms, q: BV) -> Bool:
    """``q`` is a quantum the product path can choose for this group: some product is
    nonzero, ``q >= top raw - product window``, ``q <= highest``, no scale is NaN."""
    top_raw, nonzero = max_raw(ops, terms.products)
    return ops.and_(nonzero, ops.sge(q, ops.sub(top_raw, product_window(desc))),
                    ops.sle(q, highest_quantum(desc)),
                    ops.not_(ops.any_(scale.is_nan for scale in terms.scales)))


def group_and_products(ops: Ops, desc: Descriptor, values: Variables
                       ) -> tuple[BV, BV, Bool, Bool, Bool]:
    """``(group units, per-product unit sum, q usable, same sign, mixed signs)`` of one group."""
    terms = group_terms(ops, desc, values)
    q = values["q"]
    grouped, per_product = compared(ops, *group_units(ops, desc, terms, q))
    positive = ops.all_(ops.implies(p.nonzero, ops.not_(p.negative)) for p in terms.products)
    negative = ops.all_(ops.implies(p.nonzero, p.negative) for p in terms.products)
    same_sign = ops.or_(positive, negative)
    return grouped, per_product, group_usable(ops, desc, terms, q), same_sign, ops.not_(same_sign)


def _excess(ops: Ops, grouped: BV, per_product: BV) -> BV:
    """How far the group result lies beyond the per-product sum, away from zero."""
    return ops.ite(ops.sign(ops.add(grouped, per_product)), ops.sub(per_product, grouped),
                   ops.sub(grouped, per_product))


def _in_range(ops: Ops, x: BV, low: int, high: int) -> Bool:
    return ops.and_(ops.sge(x, low), ops.sle(x, high))


Condition = Callable[[Ops, BV, BV, BV, Bool, Bool], Bool]


def _group_query(desc: Descriptor, name: str, kind: str, condition: Condition) -> Query:
    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        grouped, per_product, usable, same, mixed = group_and_products(ops, desc, values)
        held = condition(ops, grouped, per_product, _excess(ops, grouped, per_product),
                         same, mixed)
        return (ops.and_(usable, held),
                {"group_units": grouped, "per_product_units": per_product, "q": values["q"]})

    return Query(name, kind, group_variables(desc), body)


def carry_queries(desc: Descriptor) -> list[Query]:
    """The two bounds (for all inputs) and the three witnesses of their ends."""
    return bound_queries(desc) + end_queries(desc)


def bound_queries(desc: Descriptor) -> list[Query]:
    """Same sign: excess in 0..G-1; mixed signs: difference within G-1 (for all inputs)."""
    top = group_size(desc) - 1
    return [
        _group_query(desc, "same-sign: excess in 0..G-1", "forall",
                     lambda ops, g, p, e, same, mixed: ops.and_(
                         same, ops.not_(_in_range(ops, e, 0, top)))),
        _group_query(desc, "mixed signs: |difference| <= G-1", "forall",
                     lambda ops, g, p, e, same, mixed: ops.and_(
                         mixed, ops.not_(_in_range(ops, ops.sub(g, p), -top, top)))),
    ]


def reachable_excess(desc: Descriptor) -> tuple[int, int]:
    """The largest same-sign excess and mixed-sign difference a group can reach.

    With UE4M3 scales (NVFP4) the bounds G-1 are reached. UE8M0 scales are
    powers of two, so a product's significand is ``mA * mB``, one of 1, 1.5
    or 2.25 (bits ``1``, ``11``, ``1001``) times a power of two: the bits it
    loses below any quantum are worth less than 3/4 of a quantum. So the
    MXF4 family's same-sign excess is at most ``floor(3G/4)`` = 12 of G-1 = 15
    (and the mixed difference at most ``floor(3(G-1)/4)`` = 11).
    """
    g = group_size(desc)
    if desc.scaling == "ue4m3":
        return g - 1, g - 1
    return 3 * g // 4, 3 * (g - 1) // 4


def end_queries(desc: Descriptor) -> list[Query]:
    """Witnesses that the ends of the bounds are reached (see :func:`reachable_excess`)."""
    top, top_mixed = reachable_excess(desc)
    return [
        _group_query(desc, "same-sign excess 0 (nonzero sum)", "exists",
                     lambda ops, g, p, e, same, mixed: ops.and_(
                         same, ops.eq(e, 0), ops.ne(g, 0))),
        _group_query(desc, f"same-sign excess {top}", "exists",
                     lambda ops, g, p, e, same, mixed: ops.and_(same, ops.eq(e, top))),
        _group_query(desc, f"mixed signs difference {top_mixed}", "exists",
                     lambda ops, g, p, e, same, mixed: ops.and_(
                         mixed, ops.eq(ops.abs_signed(ops.sub(g, p)), top_mixed))),
    ]


def _group_detail(desc: Descriptor) -> str:
    return (f"one group of G={group_size(desc)} free products at any usable quantum (every "
            "group of every K is this function)")


def read_by_sum(total: Node, units: Node) -> bool:
    """Whether a node of ``total``'s cone takes ``units`` (or its extension) as an argument:
    the sum reads those units, not a node beside them."""
    for node in walk([total]):
        for arg in node.args:
            if arg is units or (arg.op in ("sext", "zext") and arg.args[0] is units):
                return True
    return False


def carry_cover(desc: Descriptor, k: int) -> list[str]:
    """The counts the chain covers against the traced DAG (issue 30): K/G product groups of
    G products (G from :mod:`proofs.constants`), each group's units read by the product
    path's sum, and that sum in D's cone (the chain's units are the ones D is computed from)."""
    ops = TraceOps()
    values = {n: ops.variable(n, w) for n, w in layout_variables(desc, k)}
    g = group_size(desc)
    out, every = observed(ops, lambda: run_dot(ops, desc, dot_inputs(desc, k, values)))
    stages = every["groups"][0]
    count = len(stages["product_groups"])
    groups = summed_lanes(desc, k) // g
    counts = [("product-path groups of G (section 4)", groups, count)]
    total = stages["product_total"].node
    in_d = {n.id for n in walk([out.node])}
    counts.append(("the product path's sum in D's cone", 1, int(total.id in in_d)))
    for index in range(min(count, groups)):
        group = dot_group(ops, desc, k, values, index)
        counts += [
            (f"products of product group {index}", g, len(group.total.placed) or 1),
            (f"products the chain reads of group {index}", g, len(group.products)),
            (f"group {index}'s units read by the sum", 1,
             int(read_by_sum(total, group.grouped.node)))]
    return cover_mismatches(counts)


def check_bounds(desc: Descriptor, k: int, settings: Settings) -> Row:
    """The bounds as a chain on ``build_dot``'s own DAG (:func:`dot_chain`) for every product
    group, each group's units linked to D (:func:`carry_cover`); a DAG that is not K/G groups
    of G products read by D's sum is never ``proved`` (the chain still runs: it may refute
    the statement with replayed words)."""
    groups = summed_lanes(desc, k) // group_size(desc)
    detail = (f"build_dot at K={k}, each of its {groups} product-path groups (lanes jG..jG+G-1,"
              f" G={group_size(desc)}) at the quantum it chooses, its units read by the sum D "
              f"encodes (checked on the DAG); {CHAIN_DETAIL} {static_widths(desc)}.")
    queries = [q for index in range(groups) for q in dot_chain(desc, k, index=index)]
    row = check_queries("k-group-carry", desc, k, queries, settings, CHAIN, detail)
    return require_cover(row, carry_cover(desc, k))


def check_ends(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("k-group-carry-ends", desc, k, end_queries(desc), settings,
                         detail=_group_detail(desc))


# ------------------------------------------------------------------ lemmas


@dataclass(frozen=True)
class GroupShape:
    """The static widths of one group's stage values (traced once on free words)."""

    scale_mag: int
    group_mag: int
    excess: int
    units: tuple[int, ...]


def group_shape(desc: Descriptor) -> GroupShape:
    """Widths of the scale significand, the group magnitude, the group units (first) and each
    product's units, and the group's static excess."""
    ops = TraceOps()
    values = {name: ops.variable(name, width) for name, width in group_variables(desc)}
    terms = group_terms(ops, desc, values)
    group = group_sum(ops, desc, terms)
    grouped, singles = group_units(ops, desc, terms, values["q"])
    return GroupShape(terms.scale_pair.mag.width, group.mag.width, group.excess,
                      (grouped.width, *(u.width for u in singles)))


def _placed(ops: Ops, term: Term, exponent: BV | int, width: int) -> BV:
    """``term``'s signed value in units of ``2^exponent`` (a whole number), ``width`` bits."""
    placed = ops.shl(ops.zext(term.mag, width),
                     ops.sub(ops.sub(term.raw, term.frac_offset), exponent))
    return ops.ite(term.negative, ops.neg(placed), placed)


def value_width(desc: Descriptor) -> int:
    """Bits of one product's exact value in units of ``2^e`` (:func:`product_values`)."""
    fa, fb, fs = group_formats(desc)
    spread = raw_ceiling(fa) + raw_ceiling(fb) - fa.min_raw - fb.min_raw
    return fa.sig_bits + fb.sig_bits + 2 * fs.sig_bits + spread + 1


def product_values(ops: Ops, desc: Descriptor, terms: GroupTerms) -> tuple[list[BV], BV]:
    """``([X_i], e)``: each product's exact value as a signed integer in units of ``2^e``,
    ``e`` the scale pair's value exponent plus the lowest element value exponent (so every
    product of the group is a whole number of units; section 4)."""
    fa, fb, _ = group_formats(desc)
    pair = terms.scale_pair
    lowest = fa.min_raw + fb.min_raw - fa.frac_bits - fb.frac_bits
    e = ops.add(ops.sub(pair.raw, pair.frac_offset), lowest)
    return [_placed(ops, p, e, value_width(desc)) for p in terms.products], e


def sum_width(desc: Descriptor) -> int:
    """Bits of the exact sum of G product values (and of every partial sum)."""
    return value_width(desc) + group_size(desc).bit_length()


def exponent_range(desc: Descriptor) -> tuple[int, int]:
    """Static range of ``e`` (:func:`product_values`) over every pair of scale words."""
    fa, fb, fs = group_formats(desc)
    lowest = fa.min_raw + fb.min_raw - fa.frac_bits - fb.frac_bits - 2 * fs.frac_bits
    return 2 * fs.min_raw + lowest, 2 * raw_ceiling(fs) + lowest


def _below_power(ops: Ops, mag: BV, amount: BV) -> Bool:
    """``mag < 2^amount`` (unsigned ``mag``, signed ``amount``; false when it is negative)."""
    width = mag.width + 1
    return ops.and_(ops.sge(amount, 0), ops.or_(
        ops.sge(amount, mag.width),
        ops.ult(ops.zext(mag, width), ops.shl(ops.const(1, width), amount))))


def _signed(ops: Ops, negative: Bool, mag: BV, width: int) -> BV:
    wide = ops.zext(mag, width)
    return ops.ite(negative, ops.neg(wide), wide)


def element_values(ops: Ops, desc: Descriptor, terms: GroupTerms, width: int) -> list[BV]:
    """Each element product ``a_i * b_i`` (no scales) as a signed integer in units of the
    lowest element value exponent, in ``width`` bits."""
    fa, fb, _ = group_formats(desc)
    lowest = fa.min_raw + fb.min_raw - fa.frac_bits - fb.frac_bits
    return [_placed(ops, term, lowest, width) for term in terms.elements]


def common_width(desc: Descriptor) -> int:
    """The register of the distributivity lemmas: holds every product value, their sum and
    the group's signed magnitude."""
    return max(group_shape(desc).group_mag, sum_width(desc)) + 2


def distributive_query(desc: Descriptor) -> Query:
    """Violation of ``(x + y) s = x s + y s`` (modulo ``2^width``) for free ``x``, ``y``, ``s``."""
    width = common_width(desc)
    scale_width = group_shape(desc).scale_mag

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x, y, s = values["x"], values["y"], ops.zext(values["s"], width)
        return ops.ne(ops.mul(ops.add(x, y), s), ops.add(ops.mul(x, s), ops.mul(y, s))), {}

    return Query("distributive", "forall", (("x", width), ("y", width), ("s", scale_width)),
                 body)


def units_width(desc: Descriptor) -> int:
    """Bits that hold T of any partial sum of a group (G product units plus G carries)."""
    return max(group_shape(desc).units) + group_size(desc).bit_length() + 1


def carry_step_query(desc: Descriptor, case: str) -> Query:
    """Violation of, for free integers ``X``, ``Y`` and a shift ``sh``, with
    ``c = T(X + Y) - T(X) - T(Y)``: ``sh >= 0`` gives ``c = 0`` (``case="exact"``); ``sh < 0``
    gives ``c`` in 0..1 when ``X, Y >= 0`` and in -1..0 when ``X, Y <= 0`` (``"same-sign"``),
    and in -1..1 for any signs (``"any-sign"``). The unit registers hold every ``T`` of a
    partial sum: below ``2^(sum width)`` for right shifts, the units width for left shifts."""
    wide = sum_width(desc)
    units = units_width(desc) if case == "exact" else wide + 2

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x, y, s = values["x"], values["y"], values["shift"]
        a, b, c = values["tx"], values["ty"], values["txy"]
        xy = ops.add(ops.sext(x, wide + 1), ops.sext(y, wide + 1))
        pre = ops.and_(truncates(ops, x, s, a), truncates(ops, y, s, b),
                       truncates(ops, xy, s, c))
        step = ops.sub(ops.sext(c, units + 2), ops.add(ops.sext(a, units + 2),
                                                       ops.sext(b, units + 2)))
        if case == "exact":
            side, ok = ops.sge(s, 0), ops.eq(step, 0)
        elif case == "same-sign":
            side = ops.slt(s, 0)
            ok = ops.and_(ops.implies(ops.and_(ops.sge(x, 0), ops.sge(y, 0)),
                                      _in_range(ops, step, 0, 1)),
                          ops.implies(ops.and_(ops.sle(x, 0), ops.sle(y, 0)),
                                      _in_range(ops, step, -1, 0)))
        else:
            side, ok = ops.slt(s, 0), _in_range(ops, step, -1, 1)
        return ops.and_(side, pre, ops.not_(ok)), {"step": step}

    variables = (("x", wide), ("y", wide), ("shift", EXP_WIDTH), ("tx", units), ("ty", units),
                 ("txy", units))
    return Query(f"carry-step ({case})", "forall", variables, body)


def static_widths(desc: Descriptor) -> str:
    """The no-wrap facts the chain needs (checked here): every subtree sum of the values fits
    the carry-step's value register, every ``T`` of one fits its unit registers and the carry
    tree's ``t_N``, and the distributivity register holds every product value and the
    group's signed magnitude."""
    g, value, wide, units = (group_size(desc), value_width(desc), sum_width(desc),
                             units_width(desc))
    tree = tree_width(desc)
    if g * (1 << (value - 1)) > 1 << (wide - 1) or common_width(desc) < wide + 2:
        raise ValueError(f"partial sums of {desc.name} could wrap")
    single = units - g.bit_length() - 1
    if g * (1 << (single - 1)) > 1 << (min(units, tree) - 1) or wide + 2 > tree:
        raise ValueError(f"truncated partial sums of {desc.name} could wrap")
    return (f"Static: G={g} values of {value} bits, every subtree sum S_N within {wide} "
            f"bits (G 2^{value - 1} <= 2^{wide - 1}); for e - q < 0, |T(S_N)| <= |S_N| fits "
            f"{wide + 2} bits; for e - q >= 0, |T(S_N)| <= sum |u_i| < G 2^{single - 1} fits "
            f"{units} bits; both fit the carry tree's {tree} bits; distributivity in "
            f"{common_width(desc)} bits (no wrap)")


# ---------------------------------------- the chain on build_dot's own DAG (issue 16)


@dataclass(frozen=True)
class DotGroup:
    """One product group of ``build_dot`` at K (lanes jG..jG+G-1), as its stage hooks report
    them: the products and their element products (``products`` stage), the scale pair of
    their block, the product path's quantum, the group's exact sum and units (``groups``
    stage), whether that group merges with C (MXF4 family, ``group_merge``), and whether
    the block's scale of A or B is a NaN."""

    products: list[Term]
    elements: list[Term]
    scale_pair: Term
    quantum: BV
    total: GroupSum
    grouped: BV
    near_c: Bool
    scale_nan: Bool


def group_lanes(desc: Descriptor, index: int) -> range:
    """The lanes of product group ``index`` (section 4: aligned groups of G)."""
    g = group_size(desc)
    return range(index * g, (index + 1) * g)


def dot_group(ops: Ops, desc: Descriptor, k: int, values: Variables, index: int = 0
              ) -> DotGroup:
    """Trace (or run) ``build_dot`` on the layout's words and read product group ``index``."""
    lanes = group_lanes(desc, index)
    block = scale_block(desc)
    inputs = dot_inputs(desc, k, values)
    _, every = observed(ops, lambda: run_dot(ops, desc, inputs))
    groups, products = every["groups"][0], every["products"][0]
    merges = every.get("group_merge", [])
    merge = merges[index] if merges else None
    if merge is not None and merge["group"] is not groups["product_groups"][index]:
        raise InternalError(f"{desc.name}: group_merge {index} is not product group {index}")
    _, _, fs = group_formats(desc)
    scale = lanes.start // block
    nan = ops.any_(decode_float(ops, fs, w).is_nan for w in (inputs.scale_a[scale],
                                                              inputs.scale_b[scale]))
    return DotGroup(list(products["products"][lanes.start:lanes.stop]),
                    list(products["elements"][lanes.start:lanes.stop]),
                    products["scale_pairs"][scale], groups["product_quantum"],
                    groups["product_groups"][index], groups["product_units"][index],
                    merge["near_c"] if merge else ops.false(), nan)


def _signs(ops: Ops, products: list[Term]) -> tuple[list[Bool], list[Bool]]:
    """Per product: positive or zero, negative or zero."""
    return ([ops.implies(p.nonzero, ops.not_(p.negative)) for p in products],
            [ops.implies(p.nonzero, p.negative) for p in products])


def dot_hypothesis(ops: Ops, group: DotGroup) -> Bool:
    """Where the bound is claimed: some product of the group nonzero, no NaN scale, and
    (MXF4 family) the group not merged with C."""
    return ops.and_(ops.any_(p.nonzero for p in group.products), ops.not_(group.scale_nan),
                    ops.not_(group.near_c))


@dataclass(frozen=True)
class StatedGroup:
    """What the statement says of one product group (its lanes, compacted by the rule book on
    a sparse path), by :mod:`proofs.reference` (SEMANTICS.md sections 1, 4 and 5, never
    ``spec/``): each product's nonzero flag and sign from the element and scale words, and
    where the bound is claimed (``hypothesis``: some product nonzero, no NaN in the block's
    scale bytes, legal metadata, and on the MXF4 family the group not merged with C, i.e.
    not ``C != 0`` with ``rC`` at least the group's largest product raw)."""

    nonzero: list[Bool]
    negative: list[Bool]
    hypothesis: Bool


def stated_group(ops: Ops, desc: Descriptor, k: int, values: Variables, index: int = 0
                 ) -> StatedGroup:
    lanes = group_lanes(desc, index)
    inputs = dot_inputs(desc, k, values)
    a_words, b_words, legal = inputs.a, inputs.b, ops.true()
    if desc.sparse:
        a_words, b_words, legal = rulebook_sparse.kept_lanes(ops, desc.name, k, values)
    scale, block = desc.scaling or "", lanes.start // scale_block(desc)
    sa, sb = (ref.decode_scale(ops, scale, w) for w in (inputs.scale_a[block],
                                                        inputs.scale_b[block]))
    xs = [ref.decode(ops, desc.a_format, w) for w in a_words[lanes.start:lanes.stop]]
    ys = [ref.decode(ops, desc.b_format, w) for w in b_words[lanes.start:lanes.stop]]
    scales_nonzero = ops.and_(sa.nonzero, sb.nonzero)
    nonzero = [ops.and_(x.nonzero, y.nonzero, scales_nonzero) for x, y in zip(xs, ys)]
    negative = [ops.xor_(x.negative, y.negative) for x, y in zip(xs, ys)]
    some = ops.any_(nonzero)
    hypothesis = ops.and_(some, ops.not_(ops.or_(sa.nan, sb.nan)), legal)
    if GROUP_C_MERGE[block_family(desc)]:
        lowest = ops.const(-(1 << (ref.EXP - 2)), ref.EXP)
        raws = [ops.add(ops.add(x.raw, y.raw), ops.add(sa.raw, sb.raw)) for x, y in zip(xs, ys)]
        top = ops.smax_all([ops.ite(z, r, lowest) for z, r in zip(nonzero, raws)])
        c = ref.decode(ops, "f32", inputs.c)
        hypothesis = ops.and_(hypothesis, ops.not_(ops.and_(c.nonzero, ops.sge(c.raw, top))))
    return StatedGroup(nonzero, negative, hypothesis)


def agrees_violation(ops: Ops, stated: StatedGroup, group: DotGroup) -> Bool:
    """The stated hypothesis holds, yet the DAG's does not, or a product's nonzero flag, or
    a nonzero product's sign, differs between the statement and the DAG."""
    agree = [ops.and_(ops.iff(z, p.nonzero), ops.implies(z, ops.iff(n, p.negative)))
             for z, n, p in zip(stated.nonzero, stated.negative, group.products)]
    return ops.and_(stated.hypothesis, ops.not_(ops.and_(dot_hypothesis(ops, group), *agree)))


def stated_violation(ops: Ops, desc: Descriptor, stated: StatedGroup, group: DotGroup,
                     singles: list[BV], case: str, top: int | None = None) -> Bool:
    """:func:`dot_violation` with the statement's hypothesis and signs (the property)."""
    positive = [ops.implies(z, ops.not_(n)) for z, n in zip(stated.nonzero, stated.negative)]
    negative = [ops.implies(z, n) for z, n in zip(stated.nonzero, stated.negative)]
    return dot_violation(ops, desc, group, singles, case, top, (positive, negative),
                         stated.hypothesis)


def dot_singles(ops: Ops, desc: Descriptor, group: DotGroup) -> list[BV]:
    """The per-product units: ``align_to_window`` of each recorded product at the product
    path's quantum (section 7's ``nvfp4-per-product``)."""
    return [align_to_window(ops, p, group.quantum, _window_bound(desc)) for p in group.products]


def dot_violation(ops: Ops, desc: Descriptor, group: DotGroup, singles: list[BV],
                  case: str, top: int | None = None,
                  signs: tuple[list[Bool], list[Bool]] | None = None,
                  hypothesis: Bool | None = None) -> Bool:
    """The property's violation on ``build_dot``'s group: same sign (``case="same"``; or
    ``"positive"``, ``"negative"``: every product positive or zero, negative or zero) with
    the excess outside 0..G-1, mixed signs (``"mixed"``) with the difference beyond G-1,
    or either (``"any"``); ``top`` (default G-1) replaces G-1 (a wrong bound, for tests)."""
    top = group_size(desc) - 1 if top is None else top
    grouped, per_product = compared(ops, group.grouped, singles)
    positive, negative = _signs(ops, group.products) if signs is None else signs
    same = ops.or_(ops.all_(positive), ops.all_(negative))
    bad_same = ops.and_(same, ops.not_(_in_range(ops, _excess(ops, grouped, per_product),
                                                 0, top)))
    bad_mixed = ops.and_(ops.not_(same), ops.not_(_in_range(
        ops, ops.sub(grouped, per_product), -top, top)))
    bad_excess = ops.not_(_in_range(ops, _excess(ops, grouped, per_product), 0, top))
    bad = {"same": bad_same, "mixed": bad_mixed, "any": ops.or_(bad_same, bad_mixed),
           "positive": ops.and_(ops.all_(positive), bad_excess),
           "negative": ops.and_(ops.all_(negative), bad_excess)}[case]
    return ops.and_(dot_hypothesis(ops, group) if hypothesis is None else hypothesis, bad)


def _dot_values(ops: Ops, desc: Descriptor, group: DotGroup) -> tuple[list[BV], BV]:
    """``([X_i], e)`` of :func:`product_values` on the recorded products."""
    return product_values(ops, desc, GroupTerms((), group.scale_pair, [],  # type: ignore[arg-type]
                                                group.products))


def _dot_elements(ops: Ops, desc: Descriptor, group: DotGroup) -> tuple[list[BV], BV]:
    """``([y_i], s)`` of :func:`element_values` on the recorded elements, and the scale
    pair's significand, in the distributivity register."""
    width = common_width(desc)
    terms = GroupTerms((), group.scale_pair, group.elements, [])  # type: ignore[arg-type]
    return element_values(ops, desc, terms, width), ops.zext(group.scale_pair.mag, width)


def sum_levels(ops: Ops, xs: list[BV]) -> list[list[BV]]:
    """The levels of ``ops.sum``'s balanced tree over ``xs`` (adjacent pairs, an odd last
    node carried up), leaves first; on :class:`TraceOps` the nodes are the DAG's own."""
    levels = [list(xs)]
    while len(levels[-1]) > 1:
        level = levels[-1]
        paired = [ops.add(x, y) for x, y in zip(level[0::2], level[1::2])]
        levels.append(paired + level[len(paired) * 2:])
    return levels


def quantum_facts(ops: Ops, desc: Descriptor, group: DotGroup, q: BV) -> Bool:
    """Every nonzero product of the group has ``raw <= q + product window``, and ``q`` is at
    most the highest quantum."""
    window = product_window(desc)
    return ops.and_(*(ops.implies(p.nonzero, ops.sle(p.raw, ops.add(q, window)))
                      for p in group.products), ops.sle(q, highest_quantum(desc)))


def unit_facts(ops: Ops, x: BV, positive: Bool, negative: Bool, units: BV) -> Bool:
    """The sign facts of one product's value ``X`` and units ``u``: ``X >= 0`` (``<= 0``)
    when the product is positive (negative) or zero, and ``u`` takes ``X``'s sign."""
    return ops.and_(ops.implies(positive, ops.sge(x, 0)), ops.implies(negative, ops.sle(x, 0)),
                    ops.implies(ops.sge(x, 0), ops.sge(units, 0)),
                    ops.implies(ops.sle(x, 0), ops.sle(units, 0)))


def values_sum(ops: Ops, desc: Descriptor, xs: list[BV]) -> BV:
    """``S_G = X_1 + ... + X_G`` at the carry-step's value width (:func:`sum_width`), as
    ``ops.sum``'s balanced tree (the tree :func:`carry_tree` walks)."""
    return ops.sum([ops.sext(x, sum_width(desc)) for x in xs])


def group_value_facts(ops: Ops, desc: Descriptor, total: GroupSum, wide: BV, e: BV) -> Bool:
    """The group sum's value is ``S_G 2^e``: exponent ``e``, signed magnitude ``S_G``."""
    width = common_width(desc)
    return ops.and_(ops.eq(total.exponent, e),
                    ops.eq(_signed(ops, total.negative, total.mag, width), ops.sext(wide, width)))


def group_bound_facts(ops: Ops, desc: Descriptor, total: GroupSum, q: BV, e: BV) -> Bool:
    """``e`` in its static range, ``q >= e - window bound`` and the group's magnitude below
    ``2^(q + window bound + excess - e)`` (so ``align_group`` cannot overflow)."""
    low, high = exponent_range(desc)
    bound = _window_bound(desc)
    room = ops.sub(ops.add(q, bound + total.excess), e)
    return ops.and_(_in_range(ops, e, low, high), ops.sge(q, ops.sub(e, bound)),
                    _below_power(ops, total.mag, room))


UNITS_PER_QUERY = 4
"""Products per ``units-truncate`` query."""


def dot_chain(desc: Descriptor, k: int, top: int | None = None, index: int = 0) -> list[Query]:
    """K-group carry as a chain of queries on ``build_dot``'s own DAG at ``k``, about its
    product-path group ``index`` (lanes ``index G .. index G + G - 1``, G from
    :mod:`proofs.constants`; DESIGN.md, "The proof method"); the lemmas over free variables
    only (``distributive``, ``carry-step``, the carry tree levels) come with group 0.
    ``X_i`` is product i's value in units of ``2^e``, ``S_G`` their sum and ``T`` truncation
    toward zero at shift ``e - q`` (:func:`proofs.floor.truncates`).

    - ``hypothesis-satisfiable`` (same sign, mixed signs): the statement's hypothesis
      (:func:`stated_group`, from :mod:`proofs.reference`) holds for some words, shown.
    - ``hypothesis-agrees``: where it holds, so does the DAG's own (:func:`dot_hypothesis`),
      and each product's nonzero flag and sign are the statement's; so the DAG's violation
      (which every later query is about) covers the statement's.
    - ``quantum``: the product path's quantum ``q`` meets :func:`quantum_facts`.
    - ``units-truncate`` (``q`` cut: free at every occurrence under :func:`quantum_facts`,
      sound by ``quantum``): ``u_i = T(X_i)`` with :func:`unit_facts`.
    - ``product-value``: ``X_i = y_i s``; ``group-sum-elements``, one query per level of
      the group's own adder tree (the level below cut): each node over the signed element
      products is the same tree's node over ``y_i``, within a static bound; the root is the
      group's signed element sum. ``group-sum-value`` (that sum cut): the group sum is
      ``(y_1 + ... + y_G) s`` at exponent ``e``; ``distributive`` for all ``x, y, s``;
      ``group-value``, with ``X_i``, the group sum and every multiplier cut, under those
      conclusions and ``distributive`` at each node ``L + R`` of that tree over ``y_i``: the
      group sum is ``S_G`` at exponent ``e``.
    - ``group-bound`` (``q`` cut), then ``group-truncates`` (``q``, ``X_i`` and the group sum
      cut, under the conclusions before): ``build_dot``'s group units are ``g = T(S_G)``.
    - ``carry-step`` (exact, same-sign, any-sign): for all integers and shifts.
    - ``carry tree level j`` and ``composition`` per sign case (:func:`carry_tree`, free
      variables only): the property's violation with ``g``, every ``u_i`` and the products'
      flags cut, and free ``X_i``, shift and ``d_N`` (``t_N = P_N + d_N``), under
      :func:`unit_facts`, the carry-step conclusions at each node of ``ops.sum``'s tree and
      the levels' conclusions, is unsat; the solver does the induction.

    Sound: each cut stands for a real node that meets what the earlier queries proved; the
    real values meet the tree's facts with ``t_N = T(S_N)`` (a truncation always exists;
    ``d_N = t_N - P_N`` modulo the tree's width, ``t_root = g`` by ``group-truncates``),
    the carry-step conclusions being that lemma at ``(S_L, S_R, t_L, t_R, t_N)``, whose
    premises are ``units-truncate``'s and ``group-truncates``' conclusions and the
    definition of ``t_N``; :func:`static_widths` checks that the real values fit the
    lemmas' registers and the free ones.
    """
    g_count = group_size(desc)
    variables = layout_variables(desc, k)
    lanes = group_lanes(desc, index)
    block = lanes.start // scale_block(desc)

    def traced(ops: Ops, values: Variables) -> tuple[DotGroup, list[BV]]:
        group = dot_group(ops, desc, k, values, index)
        return group, dot_singles(ops, desc, group)

    def shown(group: DotGroup, singles: list[BV]) -> dict[str, BV]:
        grouped, per_product = compared(group.grouped.ops, group.grouped, singles)
        return {"group_units": grouped, "per_product_units": per_product, "q": group.quantum}

    def violated(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        stated = stated_group(ops, desc, k, values, index)
        return (stated_violation(ops, desc, stated, group, singles, "any", top),
                shown(group, singles))

    def possible(case: str) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            group, singles = traced(ops, values)
            stated = stated_group(ops, desc, k, values, index)
            positive = [ops.implies(z, ops.not_(n))
                        for z, n in zip(stated.nonzero, stated.negative)]
            negative = [ops.implies(z, n) for z, n in zip(stated.nonzero, stated.negative)]
            same = ops.or_(ops.all_(positive), ops.all_(negative))
            logical = range(2 * lanes.start, 2 * lanes.stop) if desc.sparse else lanes
            words = {n: values[n] for n in (*(f"{x}{i}" for x in "ab" for i in logical),
                                            f"scale_a{block}", f"scale_b{block}", "c",
                                            *(f"meta{i}" for i in range(4)))
                     if n in values}
            return (ops.and_(stated.hypothesis, same if case == "same" else ops.not_(same)),
                    {**shown(group, singles), **words})
        return body

    def agrees(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        return agrees_violation(ops, stated_group(ops, desc, k, values, index), group), \
            shown(group, singles)

    def quantum(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        return (ops.and_(dot_hypothesis(ops, group),
                         ops.not_(quantum_facts(ops, desc, group, group.quantum))),
                shown(group, singles))

    def cut(ops: Ops, group: DotGroup, condition: Bool, chosen: dict[int, Node] | None = None
            ) -> Bool:
        """``condition`` with ``q`` free under :func:`quantum_facts` and the nodes ``chosen``
        names replaced (on the tracer; elsewhere the condition at the real nodes)."""
        premise = ops.and_(condition, quantum_facts(ops, desc, group, group.quantum))
        if not isinstance(ops, TraceOps):
            return premise
        chosen = {**(chosen or {}),
                  group.quantum.node.id: ops.variable("cut!q", group.quantum.width).node}
        (node,), _ = cut_nodes([premise.node], lambda n: chosen.get(n.id), ops=ops)
        reached = {v.params[0] for v in free_variables([node])}
        if "cut!q" not in reached:
            raise InternalError(f"{desc.name}: the query does not read the quantum")
        return ops.wrap_bool(node)

    def units_truncate(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            group, singles = traced(ops, values)
            xs, e = _dot_values(ops, desc, group)
            shift = ops.sub(e, group.quantum)
            positive, negative = _signs(ops, group.products)
            ok = ops.all_(ops.and_(truncates(ops, xs[i], shift, singles[i]),
                                   unit_facts(ops, xs[i], positive[i], negative[i], singles[i]))
                          for i in part)
            return (cut(ops, group, ops.and_(dot_hypothesis(ops, group), ops.not_(ok))),
                    shown(group, singles))
        return body

    def product_value(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        xs, _ = _dot_values(ops, desc, group)
        ys, scale = _dot_elements(ops, desc, group)
        ok = ops.all_(ops.eq(ops.sext(x, scale.width), ops.mul(y, scale))
                      for x, y in zip(xs, ys))
        return ops.and_(dot_hypothesis(ops, group), ops.not_(ok)), shown(group, singles)

    def signed_sum(group: DotGroup) -> BV:
        total = group.total.total
        if total is None:
            raise InternalError(f"{desc.name}: the group has no signed element sum")
        return total

    def element_levels(ops: Ops, group: DotGroup) -> tuple[list[list[BV]], list[list[BV]],
                                                           list[int]]:
        """The levels of the group's own adder tree over its signed element products
        (``GroupSum.placed``; the root checked to be its signed sum) and of the same tree
        over ``y_i``, with each level's static magnitude bound (a leaf's ``2^(w - 1 - d) - 1``
        at the sum's width ``w`` and depth ``d``; an inner node's, the sum of its children's)."""
        ys, _ = _dot_elements(ops, desc, group)
        placed = sum_levels(ops, list(group.total.placed))
        if isinstance(ops, TraceOps) and placed[-1][0].node is not signed_sum(group).node:
            raise InternalError(f"{desc.name}: the group sum is not ops.sum's tree")
        depth = len(placed) - 1
        leaf = ((1 << (signed_sum(group).width - 1)) >> depth) - 1
        bounds = [leaf << level for level in range(depth + 1)]
        return placed, sum_levels(ops, ys), bounds

    def element_facts(ops: Ops, xs: list[BV], ys: list[BV], bound: int) -> Bool:
        """Each node: ``y`` is ``x`` sign extended, and ``|x| <= bound``."""
        return ops.all_(ops.and_(ops.eq(ops.sext(x, y.width), y), ops.sle(-bound, x),
                                 ops.sle(x, bound)) for x, y in zip(xs, ys))

    def element_tree() -> bool:
        """Whether the traced group sum is ``ops.sum``'s tree over G signed element
        products (else ``group-sum-elements`` is asked whole, as a changed spec needs)."""
        ops = TraceOps()
        group, _ = traced(ops, {name: ops.variable(name, w) for name, w in variables})
        if group.total.total is None or len(group.total.placed) != g_count:
            return False
        return sum_levels(ops, list(group.total.placed))[-1][0].node is group.total.total.node

    def group_sum_whole(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        ys, scale = _dot_elements(ops, desc, group)
        ok = ops.eq(ops.sext(signed_sum(group), scale.width), ops.sum(ys))
        return ops.and_(dot_hypothesis(ops, group), ops.not_(ok)), shown(group, singles)

    def group_sum_elements(index: int) -> QueryBody:
        """Violation: level ``index`` of :func:`element_levels` breaks :func:`element_facts`
        (the leaves on the real DAG; above, with the level below cut: each ``x`` free under
        its bound, its ``y`` the sign extension)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            group, singles = traced(ops, values)
            placed, ys, bounds = element_levels(ops, group)
            bad = ops.and_(dot_hypothesis(ops, group), ops.not_(element_facts(
                ops, placed[index], ys[index], bounds[index])))
            if index == 0 or not isinstance(ops, TraceOps):
                return bad, shown(group, singles)
            chosen: dict[int, Node] = {}
            premises = []
            for i, (x, y) in enumerate(zip(placed[index - 1], ys[index - 1])):
                free = ops.variable(f"cut!element_level{index - 1}!{i}", x.width)
                if x.node.id in chosen or y.node.id in chosen:
                    raise InternalError(f"{desc.name}: two tree nodes share a node")
                chosen[x.node.id], chosen[y.node.id] = free.node, ops.sext(free, y.width).node
                premises += [ops.sle(-bounds[index - 1], free), ops.sle(free, bounds[index - 1])]
            (node,), _ = cut_nodes([ops.and_(bad, *premises).node], lambda n: chosen.get(n.id),
                                   ops=ops)
            return ops.wrap_bool(node), shown(group, singles)
        return body

    def group_sum_value(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """Violation: the group sum is not ``(y_1 + ... + y_G) s`` at exponent ``e``; on the
        tracer with the signed element sum ``t`` free and ``y_1 + ... + y_G`` replaced by
        ``t`` (sound by the root level of ``group-sum-elements``)."""
        group, singles = traced(ops, values)
        _, e = _dot_values(ops, desc, group)
        ys, scale = _dot_elements(ops, desc, group)
        total = group.total
        ys_sum = ops.sum(ys)
        ok = ops.and_(ops.eq(total.exponent, e),
                      ops.eq(_signed(ops, total.negative, total.mag, scale.width),
                             ops.mul(ys_sum, scale)))
        condition = ops.and_(dot_hypothesis(ops, group), ops.not_(ok))
        if not isinstance(ops, TraceOps):
            return condition, shown(group, singles)
        signed = signed_sum(group)
        free = ops.variable("cut!signed_sum", signed.width)
        chosen = {signed.node.id: free.node, ys_sum.node.id: ops.sext(free, ys_sum.width).node}
        if len(chosen) != 2:
            raise InternalError(f"{desc.name}: the group's sums share a node")
        (node,), _ = cut_nodes([condition.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.wrap_bool(node), shown(group, singles)

    def group_value(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        total = group.total
        xs, e = _dot_values(ops, desc, group)
        ys, scale = _dot_elements(ops, desc, group)
        levels = sum_levels(ops, ys)
        inner = [(level[2 * j], level[2 * j + 1], above[j])
                 for level, above in itertools.pairwise(levels)
                 for j in range(len(level) // 2)]
        signed = _signed(ops, total.negative, total.mag, scale.width)
        premises = ops.and_(
            dot_hypothesis(ops, group), ops.eq(total.exponent, e),
            ops.eq(signed, ops.mul(levels[-1][0], scale)),
            *(ops.eq(ops.sext(x, scale.width), ops.mul(y, scale)) for x, y in zip(xs, ys)),
            *(ops.eq(ops.mul(node, scale), ops.add(ops.mul(left, scale), ops.mul(right, scale)))
              for left, right, node in inner))
        condition = ops.and_(premises, ops.not_(group_value_facts(
            ops, desc, total, values_sum(ops, desc, xs), e)))
        if not isinstance(ops, TraceOps):
            return condition, shown(group, singles)
        products = [ops.mul(y, scale) for y in ys] + [ops.mul(node, scale)
                                                      for _, _, node in inner]
        chosen = {total.mag.node.id: ops.variable("cut!mag", total.mag.width).node,
                  total.negative.node.id: ops.bool_variable("cut!negative").node,
                  **{x.node.id: ops.variable(f"cut!x{i}", x.width).node
                     for i, x in enumerate(xs)},
                  **{m.node.id: ops.variable(f"cut!mul{i}", m.width).node
                     for i, m in enumerate(products)}}
        if len(chosen) != len(xs) + len(products) + 2:
            raise InternalError(f"{desc.name}: the group's values share a node")
        (node,), _ = cut_nodes([condition.node], lambda n: chosen.get(n.id), ops=ops)
        if any(n.op == "mul" for n in walk([node])):
            raise InternalError(f"{desc.name}: a multiplier is left in group-value")
        return ops.wrap_bool(node), {}

    def group_bound(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        total = group.total
        _, e = _dot_values(ops, desc, group)
        ok = group_bound_facts(ops, desc, total, group.quantum, e)
        return (cut(ops, group, ops.and_(dot_hypothesis(ops, group), ops.not_(ok))),
                shown(group, singles))

    def group_truncates(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        group, singles = traced(ops, values)
        total = group.total
        xs, e = _dot_values(ops, desc, group)
        wide = values_sum(ops, desc, xs)
        ok = truncates(ops, wide, ops.sub(e, group.quantum), group.grouped)
        condition = ops.and_(dot_hypothesis(ops, group),
                             group_value_facts(ops, desc, total, wide, e),
                             group_bound_facts(ops, desc, total, group.quantum, e),
                             ops.not_(ok))
        if not isinstance(ops, TraceOps):
            return cut(ops, group, condition), shown(group, singles)
        chosen = {total.mag.node.id: ops.variable("cut!mag", total.mag.width).node,
                  total.negative.node.id: ops.bool_variable("cut!negative").node,
                  **{x.node.id: ops.variable(f"cut!x{i}", x.width).node
                     for i, x in enumerate(xs)}}
        if len(chosen) != len(xs) + 2:
            raise InternalError(f"{desc.name}: the group's values share a node")
        cut_condition = cut(ops, group, condition, chosen)
        if any(n.op == "mul" for n in walk([cut_condition.node])):
            raise InternalError(f"{desc.name}: a multiplier is left in group-truncates")
        return cut_condition, shown(group, singles)

    def composition(case: str) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            group, singles = traced(ops, values)
            violation = dot_violation(ops, desc, group, singles, case, top)
            if not isinstance(ops, TraceOps):
                return violation, shown(group, singles)
            free = {name: ops.variable(name, width) for name, width in tree_variables(desc)}
            chosen = {group.grouped.node.id: free["cut!g"].node,
                      **{u.node.id: free[f"cut!u{i}"].node for i, u in enumerate(singles)}}
            for i, p in enumerate(group.products):
                chosen[p.nonzero.node.id] = ops.eq(free[f"cut!nonzero{i}"], 1).node
                chosen[p.negative.node.id] = ops.eq(free[f"cut!negative{i}"], 1).node
            for name, flag in (("cut!scale_nan", group.scale_nan), ("cut!near_c", group.near_c)):
                if not flag.node.is_const:
                    chosen[flag.node.id] = ops.bool_variable(name).node
            if len(chosen) != len({n.id for n in chosen.values()}):
                raise InternalError(f"{desc.name}: two cut-points share a node")
            (node,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
            check_cut(desc, node, {"cut!g", *(f"cut!u{i}" for i in range(g_count))})
            tree = carry_tree(ops, desc, case, free)
            per_product = compared(ops, free["cut!g"], [free[f"cut!u{i}"]
                                                         for i in range(g_count)])[1]
            if tree.per_product.node.id != per_product.node.id:
                raise InternalError(f"{desc.name}: the carry tree is not the per-product sum's")
            return ops.and_(ops.wrap_bool(node), tree.facts, tree.root, tree.levels[-1]), {}
        return body

    cut_at = "the product path's quantum"
    lemmas = [
        hypothesis_query(variables, possible("same"), "same sign"),
        hypothesis_query(variables, possible("mixed"), "mixed signs"),
        Query("hypothesis-agrees", "forall", variables, agrees, lift=violated),
        Query("quantum", "forall", variables, quantum, lift=violated),
        *(Query(f"units-truncate {part.start}-{part.stop - 1} (q cut)", "forall", variables,
                units_truncate(part), lift=violated, cut_at=cut_at)
          for part in (range(i, min(i + UNITS_PER_QUERY, g_count))
                       for i in range(0, g_count, UNITS_PER_QUERY))),
        Query("product-value", "forall", variables, product_value, lift=violated),
        *((Query(f"group-sum-elements (tree level {level}"
                 f"{', level below cut' if level else ''})", "forall", variables,
                 group_sum_elements(level), lift=violated,
                 cut_at="the tree level below" if level else "")
           for level in range(tree_depth(g_count) + 1)) if element_tree() else
          [Query("group-sum-elements", "forall", variables, group_sum_whole, lift=violated)]),
        Query("group-sum-value (signed element sum cut)", "forall", variables,
              group_sum_value, lift=violated, cut_at="the group's signed element sum"),
        Query("group-value (X_i, multipliers, group sum cut)", "forall", variables,
              group_value, lift=violated, cut_at="the product values, the multipliers and "
              "the group sum"),
        Query("group-bound (q cut)", "forall", variables, group_bound, lift=violated,
              cut_at=cut_at),
        Query("group-truncates (q, group sum and X_i cut)", "forall", variables,
              group_truncates, lift=violated, cut_at=cut_at)]
    lemmas = [replace(q, name=f"group {index}: {q.name}") for q in lemmas]
    shared = [distributive_query(desc),
              *[carry_step_query(desc, case) for case in ("exact", "same-sign", "any-sign")]]
    cases = (("positive", "positive or zero"), ("negative", "negative or zero"),
             ("mixed", "mixed signs"))
    compositions = []
    for case, name in cases:
        if index == 0:
            compositions += [tree_level_query(desc, case, name, level)
                             for level in range(tree_depth(g_count))]
        compositions.append(Query(
            f"group {index}: composition ({name}; g, u_i and the products' flags cut)",
            "forall", variables, composition(case), cut_at="the group units, the per-product "
            "units and the products' flags"))
    chain = lemmas + (shared if index == 0 else []) + compositions
    if desc.sparse:
        kept = ("hypothesis-satisfiable", "hypothesis-agrees")
        chain = [q if q.name.removeprefix(f"group {index}: ").startswith(kept)
                 or q.variables != variables else replace(q, body=lanes_cut(desc, k, q.body))
                 for q in chain]
    return chain


def lanes_cut(desc: Descriptor, k: int, body: QueryBody) -> QueryBody:
    """``body`` with a sparse path's compacted lane words (its ``sparse`` stage) free: the
    block arithmetic after the compaction holds for every word, and ``hypothesis-agrees``
    ties the compaction to the rule book's. The groups' queries then differ only in
    variable names, not in which metadata bits select their lanes."""
    def cut_body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        condition, shown = body(ops, values)
        if not isinstance(ops, TraceOps):
            return condition, shown
        _, every = observed(ops, lambda: run_dot(ops, desc, dot_inputs(desc, k, values)))
        lanes = every["sparse"][0]
        chosen = {w.node.id: ops.variable(f"cut!lane_{side}{i}", w.width).node
                  for side in "ab" for i, w in enumerate(lanes[side])}
        (node,), _ = cut_nodes([condition.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.wrap_bool(node), shown
    return cut_body


CHAIN_DETAIL = (
    "hypothesis and signs from proofs/reference.py (sections 1 and 4: some product nonzero, "
    "no NaN scale, MXF4 family: not merged with C), G and the windows from "
    "proofs/constants.py; hypothesis-agrees: they imply the DAG's; "
    "quantum: q meets the quantum facts; units-truncate (q cut, free under those facts): "
    "u_i = T(X_i) with the sign facts (T: toward zero at shift e - q, left shifts only); "
    "product-value, group-sum-elements, group-sum-value, distributive and group-value "
    "(multipliers cut): the group sum is X_1 + ... + X_G at exponent e; group-bound and "
    "group-truncates (q and the group sum cut): g = T(X_1 + ... + X_G); carry-step (exact, "
    "same-sign, any-sign) for all integers; carry tree levels and composition per sign case, "
    "over free variables only: the violation with g, u_i and the products' flags cut, under "
    "the sign facts and the carry-step conclusions at each node of ops.sum's tree, is unsat.")


def tree_depth(count: int) -> int:
    """Levels of ``ops.sum``'s balanced tree over ``count`` leaves."""
    return (count - 1).bit_length()


def tree_width(desc: Descriptor) -> int:
    """The width of :func:`compared` (the per-product sum's tree and every ``t_N``)."""
    units = group_shape(desc).units
    return max(units) + group_size(desc).bit_length()


def tree_variables(desc: Descriptor) -> tuple[tuple[str, int], ...]:
    """The composition's free variables: ``g``, ``u_i``, ``X_i``, the shift, ``d_N`` of each
    inner node of the tree, and each product's nonzero and negative flags."""
    g, units = group_size(desc), group_shape(desc).units
    return (("cut!g", units[0]), *((f"cut!u{i}", w) for i, w in enumerate(units[1:])),
            *((f"cut!x{i}", value_width(desc)) for i in range(g)), ("cut!shift", EXP_WIDTH),
            *((f"cut!d{i}", tree_width(desc)) for i in range(g - 1)),
            *((f"cut!nonzero{i}", 1) for i in range(g)),
            *((f"cut!negative{i}", 1) for i in range(g)))


@dataclass(frozen=True)
class CarryTree:
    """The composition's facts over :func:`tree_variables`: the leaves' :func:`unit_facts`,
    per tree level the carry-step conclusions at its nodes, and what its level query
    concludes."""

    facts: Bool
    steps: list[Bool]
    levels: list[Bool]
    per_product: BV
    root: Bool


def _range(case: str, n: int) -> tuple[int, int]:
    return {"positive": (0, n - 1), "negative": (1 - n, 0), "mixed": (1 - n, n - 1)}[case]


def carry_tree(ops: Ops, desc: Descriptor, case: str, values: Variables) -> CarryTree:
    """Facts and level conclusions along ``ops.sum``'s own tree over the per-product units.

    Each inner node N = L + R has ``P_N = P_L + P_R`` (the per-product sum's own node, from
    :func:`compared`), ``S_N = S_L + S_R`` (the products' values), ``t_N = P_N + d_N`` with
    ``d_N`` free (``root``: the root's is the group units ``g``), and the carry-step
    conclusions for ``c_N = t_N - t_L - t_R`` at ``(S_L, S_R)``; the leaves are
    ``t = P = u_i``, ``S = X_i``, with :func:`unit_facts`. A level's conclusion:
    ``d_N = t_N - P_N`` within the case's range for N's leaf count (``positive``: 0..n-1
    and ``S_N >= 0`` when every product is positive or zero; ``negative``: mirrored;
    ``mixed``: within n-1).
    """
    g_count = group_size(desc)
    if g_count & (g_count - 1):
        raise InternalError(f"{desc.name}: a group of {g_count} is not a power of two")
    width, wide = tree_width(desc), sum_width(desc)
    right = ops.slt(values["cut!shift"], 0)
    nonzero = [ops.eq(values[f"cut!nonzero{i}"], 1) for i in range(g_count)]
    negative = [ops.eq(values[f"cut!negative{i}"], 1) for i in range(g_count)]
    positive_i = [ops.implies(z, ops.not_(n)) for z, n in zip(nonzero, negative)]
    negative_i = [ops.implies(z, n) for z, n in zip(nonzero, negative)]
    condition = {"positive": ops.all_(positive_i), "negative": ops.all_(negative_i),
                 "mixed": ops.true()}[case]
    facts = [unit_facts(ops, values[f"cut!x{i}"], p, n, values[f"cut!u{i}"])
             for i, (p, n) in enumerate(zip(positive_i, negative_i))]
    leaves = [ops.sext(values[f"cut!u{i}"], width) for i in range(g_count)]
    items = [(u, u, ops.sext(values[f"cut!x{i}"], wide), 1) for i, u in enumerate(leaves)]
    levels: list[Bool] = []
    steps: list[Bool] = []
    inner = 0
    while len(items) > 1:
        paired, concluded, carries = [], [], []
        for (tl, pl, sl, nl), (tr, pr, sr, nr) in zip(items[0::2], items[1::2]):
            p, total, n = ops.add(pl, pr), ops.add(sl, sr), nl + nr
            t, inner = ops.add(p, values[f"cut!d{inner}"]), inner + 1
            c = ops.sub(t, ops.add(tl, tr))
            carries += [ops.implies(ops.not_(right), ops.eq(c, 0)),
                      ops.implies(right, _in_range(ops, c, -1, 1)),
                      ops.implies(ops.and_(right, ops.sge(sl, 0), ops.sge(sr, 0)),
                                  _in_range(ops, c, 0, 1)),
                      ops.implies(ops.and_(right, ops.sle(sl, 0), ops.sle(sr, 0)),
                                  _in_range(ops, c, -1, 0))]
            low, high = _range(case, n)
            sign = {"positive": ops.sge(total, 0), "negative": ops.sle(total, 0),
                    "mixed": ops.true()}[case]
            concluded.append(ops.and_(_in_range(ops, ops.sub(t, p), low, high), sign))
            paired.append((t, p, total, n))
        if len(items) % 2:
            paired.append(items[-1])
        items = paired
        levels.append(ops.implies(condition, ops.all_(concluded)))
        steps.append(ops.all_(carries))
    root = ops.eq(ops.sext(values["cut!g"], width), items[0][0])
    return CarryTree(ops.all_(facts), steps, levels, items[0][1], root)


def tree_level_query(desc: Descriptor, case: str, name: str, level: int) -> Query:
    """Violation of: level ``level`` of :func:`carry_tree` holds under its nodes' carry-step
    conclusions and the level below's conclusion (the leaves' unit facts for the first
    level); free variables only."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        tree = carry_tree(ops, desc, case, values)
        below = tree.levels[level - 1] if level else tree.facts
        return ops.and_(below, tree.steps[level], ops.not_(tree.levels[level])), {}

    return Query(f"carry tree level {level + 1} ({name})", "forall", tree_variables(desc),
                 body)


def check_cut(desc: Descriptor, cut: Node, names: set[str]) -> None:
    """The composition's violation reads every cut variable ``names`` and nothing but
    cut-point variables: no input word (it depends on the datapath's inputs only through
    the cut-points)."""
    reached = {n.params[0] for n in free_variables([cut])}
    if not names <= reached:
        raise InternalError(f"{desc.name}: the violation does not read {sorted(names - reached)}")
    words = sorted(n for n in reached if not n.startswith("cut!"))
    if words:
        raise InternalError(f"{desc.name}: the cut violation still reads {words[:4]}")


# --------------------------------------------- group versus per-product, full K


def per_product_word(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
    """D with every product truncated alone: section 7's ``nvfp4-per-product`` on the
    NVFP4 paths; on the MXF4 family the path's own rules with product groups of 1 (section
    4 names no candidate there; the per-group C merge then applies per product)."""
    if is_nvfp4(desc):
        return build_model(ops, PER_PRODUCT, desc, inputs)
    if desc.sparse:
        desc, inputs = compact_sparse(ops, desc, inputs)
    rules = replace(rules_for(desc.kind, desc.scaling or ""), product_group=1)
    return block_model(rules)(ops, desc, inputs)


def differ_query(desc: Descriptor, k: int, fixed: dict[str, int] | None = None,
                 name: str = "hardware != per-product") -> Query:
    """A witness: ``hardware`` and per-product truncation (:func:`per_product_word`) give
    different F32 words (``fixed`` pins input words to constants)."""
    variables = layout_variables(desc, k)

    widths = dict(variables)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        values = {**values, **{n: ops.const(v, widths[n]) for n, v in (fixed or {}).items()}}
        inputs = dot_inputs(desc, k, values)
        hardware = run_dot(ops, desc, inputs)
        per_product = per_product_word(ops, desc, inputs)
        shown = {"hardware": hardware, "per_product": per_product, **values}
        return ops.ne(hardware, per_product), shown

    return Query(name, "exists", variables, body)


def carry_word_inputs(desc: Descriptor) -> dict[str, int]:
    """The input words of the B200 word ``nvfp4-k4-product-carry``, by variable name."""
    record = frozen_record(CARRY_WORD)
    layout = input_layout(desc, desc.k)
    if record.datapath != desc.name or len(record.words) < len(layout):
        raise ValueError(f"{CARRY_WORD} is not a {desc.name} word")
    return {spec.name: word for spec, word in zip(layout, record.words)}


def free_lanes(desc: Descriptor) -> tuple[int, ...]:
    """The lanes the free search chooses; every other A and B lane and C are zero words (a
    search over all inputs, or over the first group alone, did not finish in 120 s): lanes
    0 and 1 of scale block 0 can cancel while the first four lanes of scale block 1 (a
    group of their own scale) sit at the bottom of the window; the solver chooses those
    lanes' words and all the scales (sparse: the logical lanes whose chunks compact there,
    the metadata free). One scale block's products span too few binades for any
    truncation (section 4: the window keeps 39 bits below P)."""
    start = scale_block(desc) * (2 if desc.sparse else 1)
    return (0, 1, *range(start, start + 4))


def check_differ(desc: Descriptor, k: int, settings: Settings) -> Row:
    free = free_lanes(desc)
    zeros = {f"{side}{i}": 0 for side in "ab" for i in range(k) if i not in free}
    zeros["c"] = 0
    queries = [differ_query(desc, k, zeros, "hardware != per-product (lanes 0, 1, "
                            f"{free[2]}-{free[-1]} free)")]
    if k == desc.k and desc.name == frozen_record(CARRY_WORD).datapath:
        queries.append(differ_query(desc, k, carry_word_inputs(desc), f"B200 {CARRY_WORD}"))
    return check_queries("group-vs-per-product", desc, k, queries, settings,
                         detail="exists queries; the words are replayed on the scalar lowering")


def is_group_path(desc: Descriptor) -> bool:
    """The FP4-group paths (section 4: NVFP4, MXF4, MXF4NVF4) and their sparse siblings."""
    return desc.family == "block" and group_size(desc) > 1


def is_nvfp4(desc: Descriptor) -> bool:
    return desc.family == "block" and not desc.sparse and desc.scaling == "ue4m3"


GROUP_PATHS = every_datapath(is_group_path)

PROPERTIES = [
    Property("k-group-carry", "group truncation keeps 0..G-1 quanta of carries that "
             "per-product truncation drops (mixed signs: within G-1)",
             ("spec.blockscaled", "spec.accumulate"), GROUP_PATHS, is_group_path, check_bounds),
    Property("k-group-carry-ends", "both ends of the carry bounds are reached (witnesses)",
             ("spec.blockscaled", "spec.accumulate"), GROUP_PATHS, is_group_path, check_ends,
             fast=(("dense-nvfp4", 64),)),
    Property("group-vs-per-product", "an input where group and per-product truncation give "
             "other D words; on dense-nvfp4 the B200 word nvfp4-k4-product-carry is one",
             ("spec.blockscaled", "spec.candidates"), GROUP_PATHS, is_group_path, check_differ),
]
