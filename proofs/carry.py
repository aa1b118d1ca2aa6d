"""K-group carry preservation (covers spec/blockscaled's exact_group_sum and align_group,
spec/accumulate's align_to_window, and the NVFP4 product path of block_scaled_dot).

SEMANTICS.md section 4: the FP4 families sum aligned groups of G products
exactly and truncate the group sum once to the quantum ``2^q`` (NVFP4 G=4,
MXF4 family G=16); truncating each product alone loses the carries of the
dropped fractions. Stated over the spec's own stage functions, for one
group of G free products (free element words and scale bytes) and any
quantum ``q`` the product path can choose (``q >= top raw - 39``):

- same-sign products: the group result exceeds the per-product sum in
  magnitude by 0 to G-1 quanta;
- mixed signs: the two differ by at most G-1 quanta;
- both ends are reached (witnesses; the MXF4 family reaches 12 and 11 of G-1 = 15,
  see :func:`reachable_excess`).

Every group of every K is this one function of its words, scales and
``q``. On the full ``dense-nvfp4`` datapath: a solver-found input where
group truncation (``hardware``) and per-product truncation
(``nvfp4-per-product``, section 7) give different F32 words, and the B200
word ``nvfp4-k4-product-carry`` is such an input.
"""

from __future__ import annotations

from collections.abc import Callable

from tcspec.proofs.core import (
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    layout_variables,
    run_dot,
)
from tcspec.ref.vectorfiles import frozen_record
from tcspec.spec.accumulate import align_to_window, exact_product
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import align_group, exact_group_sum, rules_for
from tcspec.spec.candidates import build_model
from tcspec.spec.catalog import input_layout
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import EXP_WIDTH, FORMATS, FloatFormat, decode_float

PER_PRODUCT = "nvfp4-per-product"
CARRY_WORD = "nvfp4-k4-product-carry"
GROUP_PATHS = ("dense-nvfp4", "dense-mxf4")


def group_size(desc: Descriptor) -> int:
    """G: the product path's exact-sum group (NVFP4 4, MXF4 family 16)."""
    return rules_for(desc.kind, desc.scaling or "").product_group


def _window_bound(desc: Descriptor) -> int:
    rules = rules_for(desc.kind, desc.scaling or "")
    return max(rules.product_window, rules.c_window)


def group_variables(desc: Descriptor) -> tuple[tuple[str, int], ...]:
    g = group_size(desc)
    return (tuple((f"a{i}", 32) for i in range(g)) + tuple((f"b{i}", 32) for i in range(g))
            + (("scale_a", 8), ("scale_b", 8), ("q", EXP_WIDTH)))


def group_and_products(ops: Ops, desc: Descriptor, values: Variables, exact: bool = False
                       ) -> tuple[BV, BV, Bool, Bool, Bool]:
    """``(group units, per-product unit sum, q usable, same sign, mixed signs)`` of one group."""
    g = group_size(desc)
    fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling or ""])
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fs, FloatFormat)
    lanes_a = [decode_float(ops, fa, values[f"a{i}"]) for i in range(g)]
    lanes_b = [decode_float(ops, fb, values[f"b{i}"]) for i in range(g)]
    scales = [decode_float(ops, fs, values[name]) for name in ("scale_a", "scale_b")]
    scale_pair = exact_product(ops, scales[0].term, scales[1].term)
    elements = [exact_product(ops, x.term, y.term) for x, y in zip(lanes_a, lanes_b)]
    products = [exact_product(ops, e, scale_pair) for e in elements]
    bound = _window_bound(desc)
    group = exact_group_sum(ops, fa, fb, elements, scale_pair, products)
    q = group.exponent if exact else values["q"]
    grouped = align_group(ops, group, q, bound)
    singles = [align_to_window(ops, p, q, bound) for p in products]
    width = max(grouped.width, *(u.width for u in singles)) + g.bit_length()
    per_product = ops.sum([ops.sext(u, width) for u in singles])
    grouped = ops.sext(grouped, width)
    rules = rules_for(desc.kind, desc.scaling or "")
    highest = fa.max_raw + fb.max_raw + 2 * fs.max_raw - rules.scale_window
    usable = ops.and_(group.nonzero, ops.sge(q, ops.sub(group.top_raw, rules.product_window)),
                      ops.sle(q, highest), ops.not_(ops.any_(scale.is_nan for scale in scales)))
    positive = ops.all_(ops.implies(p.nonzero, ops.not_(p.negative)) for p in products)
    negative = ops.all_(ops.implies(p.nonzero, p.negative) for p in products)
    same_sign = ops.or_(positive, negative)
    return grouped, per_product, usable, same_sign, ops.not_(same_sign)


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


def check_bounds(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("k-group-carry", desc, k, bound_queries(desc), settings,
                         detail=_group_detail(desc))


def check_ends(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("k-group-carry-ends", desc, k, end_queries(desc), settings,
                         detail=_group_detail(desc))


# --------------------------------------------- group versus per-product, full K


def differ_query(desc: Descriptor, k: int, fixed: dict[str, int] | None = None,
                 name: str = "hardware != nvfp4-per-product") -> Query:
    """A witness: ``hardware`` and ``nvfp4-per-product`` give different F32 words
    (``fixed`` pins input words to constants)."""
    variables = layout_variables(desc, k)

    widths = dict(variables)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        values = {**values, **{n: ops.const(v, widths[n]) for n, v in (fixed or {}).items()}}
        inputs = dot_inputs(desc, k, values)
        hardware = run_dot(ops, desc, inputs)
        per_product = build_model(ops, PER_PRODUCT, desc, inputs)
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


FREE_LANES = (0, 1, 16, 17, 18, 19)
"""The free search pins every other A and B lane and C to zero words (a search over all
inputs, or over the first group alone, did not finish in 120 s): two lanes of block 0 can
cancel while the first group of block 1 sits at the bottom of the window; the solver
chooses those lanes' words and all eight scales."""


def check_differ(desc: Descriptor, k: int, settings: Settings) -> Row:
    zeros = {f"{side}{i}": 0 for side in "ab" for i in range(k) if i not in FREE_LANES}
    zeros["c"] = 0
    queries = [differ_query(desc, k, zeros, "hardware != nvfp4-per-product (lanes 0, 1, "
                            "16-19 free)")]
    if k == desc.k:
        queries.append(differ_query(desc, k, carry_word_inputs(desc), f"B200 {CARRY_WORD}"))
    return check_queries("group-vs-per-product", desc, k, queries, settings,
                         detail="exists queries; the words are replayed on the scalar lowering")


def is_group_path(desc: Descriptor) -> bool:
    return desc.family == "block" and not desc.sparse and group_size(desc) > 1


def is_nvfp4(desc: Descriptor) -> bool:
    return desc.family == "block" and not desc.sparse and desc.scaling == "ue4m3"


PROPERTIES = [
    Property("k-group-carry", "group truncation keeps 0..G-1 quanta of carries that "
             "per-product truncation drops (mixed signs: within G-1)",
             ("spec.blockscaled", "spec.accumulate"), GROUP_PATHS, is_group_path, check_bounds),
    Property("k-group-carry-ends", "both ends of the carry bounds are reached (witnesses)",
             ("spec.blockscaled", "spec.accumulate"), GROUP_PATHS, is_group_path, check_ends,
             fast=(("dense-nvfp4", 64),)),
    Property("group-vs-per-product", "on full dense-nvfp4, an input where group and "
             "per-product truncation differ; the B200 word nvfp4-k4-product-carry is one",
             ("spec.blockscaled", "spec.candidates"), ("dense-nvfp4",), is_nvfp4, check_differ),
]
