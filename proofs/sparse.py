"""Sparse masking equivalence and non-interference (covers spec/sparse, spec/catalog's
compact_sparse, spec/window, spec/blockscaled, spec/accumulate, spec/convert, spec/specials).

SEMANTICS.md section 5: the metadata keeps some positions of each chunk of
the logical K; disabled positions do not exist.

- **Masking equivalence**: under legal metadata, the sparse word equals the
  dense datapath on the full logical K with A and B zeroed at the disabled
  positions. The mask, the slots (which logical position each compacted lane
  holds) and the legal selectors are computed here from the nibble bits and
  :mod:`proofs.constants`, not through ``spec/sparse.py``, so a nibble-order,
  field-order or legality bug there cannot sit on both sides. Block-scaled
  paths run the dense rules on the logical K with every scale block doubled
  and the FP4 families' exact-sum groups doubled (NVFP4 4 -> 8, MXF4
  16 -> 32); MXF8F6F4 keeps per-product truncation (groups of 1).
- **Non-interference**: two inputs that agree on the active positions (and
  on C, scales and metadata) give the same word, whatever the disabled
  positions hold.

Both are ``chain`` rows over ``build_dot``'s own DAGs: masking by
:func:`masking_chain` (window paths) and :func:`block_masking_chain`
(block paths), each cut at the stage values the two runs report and each
cut's relation proved on the real nodes first; non-interference by
:func:`interference_chain`, cut at the compacted lanes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from tcspec.proofs import reference
from tcspec.proofs.constants import (
    C_DOMINANT_GROUP,
    C_WINDOW,
    GROUP_C_MERGE,
    PRODUCT_GROUP,
    PRODUCT_WINDOW,
    SCALE_WINDOW,
    SPARSE_CHUNK,
    SPARSE_KEPT,
    SPARSE_LEGAL,
    SPARSE_RULE,
    SUBNORMAL_FLOOR,
    block_family,
    c_dominant_group,
    product_group,
    scale_block,
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
    hypothesis_query,
    layout_variables,
    lift_refuted,
    run_dot,
    uncovered_row,
)
from tcspec.proofs.cutpoints import Record, recorded
from tcspec.smt.solve import free_variables
from tcspec.smt.trace import Node, TraceOps, cut_nodes, walk
from tcspec.spec.accumulate import exact_sum
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import BlockRules, block_scaled_dot
from tcspec.spec.catalog import CATALOG, DotInputs, compact_sparse
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import (
    EXP_WIDTH,
    FORMATS,
    MIN_EXP,
    FloatFormat,
    Term,
)

SPARSE_PATHS = tuple(name for name, path in CATALOG.items() if path.descriptor.sparse)
MASKING_REQUIRED = ("sparse-tf32", "sparse-bf16", "sparse-f16", "sparse-e4m3", "sparse-e2m1",
                    "sparse-nvfp4", "sparse-mxf4", "sparse-mx-e4m3")
NIBBLES_PER_WORD = 8
LOWER_ONLY, UPPER_ONLY = 0x4, 0xE
"""The two tf32 selectors (section 5): keep the lower or the upper element of a pair."""

Keeps = Callable[[Ops, BV, int, str], Bool]
"""``keeps(ops, selector, position, rule)``: does the selector keep that chunk position?"""


# ------------------------------------------------------------------ the mask


def nibble(ops: Ops, metadata: Sequence[BV], chunk: int) -> BV:
    """Chunk ``chunk``'s selector: word ``chunk // 8``, least significant nibble first."""
    word = metadata[chunk // NIBBLES_PER_WORD]
    low = 4 * (chunk % NIBBLES_PER_WORD)
    return ops.extract(word, low + 3, low)


def keeps_position(ops: Ops, selector: BV, position: int, rule: str) -> Bool:
    """Whether ``selector`` keeps element ``position`` of its chunk (section 5).

    tf32: ``0x4`` keeps element 0, ``0xE`` element 1; 2-of-4: either 2-bit
    field names the position; pairs: either field names the pair ``position // 2``.
    """
    if rule == "one":
        return ops.eq(selector, UPPER_ONLY if position else LOWER_ONLY)
    slot = position if rule == "two" else position // 2
    return ops.or_(ops.eq(ops.extract(selector, 1, 0), slot),
                   ops.eq(ops.extract(selector, 3, 2), slot))


def sparse_rule(desc: Descriptor) -> tuple[int, str]:
    """Section 5's chunk size and selection rule of ``desc`` (from proofs/constants)."""
    rule = SPARSE_RULE[desc.kind]
    return SPARSE_CHUNK[rule], rule


def active_mask(ops: Ops, desc: Descriptor, metadata: Sequence[BV], k: int,
                keeps: Keeps = keeps_position) -> list[Bool]:
    """One flag per logical lane: is that position active under ``metadata``?"""
    size, rule = sparse_rule(desc)
    return [keeps(ops, nibble(ops, metadata, lane // size), lane % size, rule)
            for lane in range(k)]


def legal(ops: Ops, desc: Descriptor, inputs: DotInputs) -> Bool:
    """Every selector of the ``len(inputs.a)`` logical lanes is legal (section 5)."""
    size, rule = sparse_rule(desc)
    return ops.all_(ops.any_(ops.eq(nibble(ops, inputs.metadata, chunk), selector)
                             for selector in SPARSE_LEGAL[rule])
                    for chunk in range(len(inputs.a) // size))


def kept_positions(ops: Ops, selector: BV, rule: str) -> list[list[Bool]]:
    """For each kept slot of a chunk, in ascending logical order, one flag per chunk
    position: does ``selector`` put that position in the slot? (Section 5.)"""
    size = SPARSE_CHUNK[rule]
    if rule == "one":
        return [[ops.eq(selector, LOWER_ONLY), ops.eq(selector, UPPER_ONLY)]]
    first, second = ops.extract(selector, 1, 0), ops.extract(selector, 3, 2)
    ascending = ops.ult(first, second)
    low, high = ops.ite(ascending, first, second), ops.ite(ascending, second, first)
    if rule == "two":
        return [[ops.eq(field, p) for p in range(size)] for field in (low, high)]
    return [[ops.eq(field, p // 2) if p % 2 == parity else ops.false() for p in range(size)]
            for field in (low, high) for parity in (0, 1)]


def d_bits(desc: Descriptor) -> int:
    """The D word's width (section 1), from :mod:`proofs.reference`."""
    return reference.word_bits(desc.d_type)


def masked(ops: Ops, lanes: Sequence[BV], mask: Sequence[Bool]) -> list[BV]:
    """Each lane where its flag is set, the zero word elsewhere."""
    return [ops.ite(m, lane, ops.const(0, lane.width)) for lane, m in zip(lanes, mask)]


# -------------------------------------------------- the independent formulation


def dense_rules(desc: Descriptor) -> BlockRules:
    """The dense rules on the logical K (section 5: they run on the compacted K, so each
    exact-sum group covers twice the logical lanes), written from section 4 in
    :mod:`proofs.constants`, never read from ``spec/``: the windows, the scale floor, the C
    merge and the subnormal floor of the family, its FP4 exact-sum groups doubled (NVFP4
    4 -> 8 and 16 -> 32, MXF4 16 -> 32); MXF8F6F4 keeps per-product truncation (groups of 1)."""
    family = block_family(desc)
    doubled = 1 if PRODUCT_GROUP[family] == 1 and C_DOMINANT_GROUP[family] == 1 else 2
    return BlockRules(product_window=PRODUCT_WINDOW[family], scale_window=SCALE_WINDOW[family],
                      c_window=C_WINDOW[family],
                      product_group=doubled * PRODUCT_GROUP[family],
                      c_dominant_group=doubled * C_DOMINANT_GROUP[family],
                      group_c_merge=GROUP_C_MERGE[family],
                      subnormal_floor=SUBNORMAL_FLOOR[family])


def dense_block(desc: Descriptor) -> int:
    """Logical lanes one scale byte covers on the dense side: twice the compacted K's block
    (sections 4 and 5, :func:`proofs.constants.scale_block`)."""
    return 2 * scale_block(desc)


def masked_dense(ops: Ops, desc: Descriptor, inputs: DotInputs, mask: Sequence[Bool]) -> BV:
    """The dense datapath on the logical K with A and B zeroed where ``mask`` is clear (block
    paths: the dense rules of :func:`dense_rules` with scale blocks of :func:`dense_block`)."""
    a, b = masked(ops, inputs.a, mask), masked(ops, inputs.b, mask)
    dense = dataclasses.replace(desc, sparse=False)
    if desc.family == "window":
        return run_dot(ops, dense, DotInputs(a, b, inputs.c))
    fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling or ""])
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fs, FloatFormat)
    return block_scaled_dot(ops, fa, fb, fs, a, b, inputs.c, inputs.scale_a, inputs.scale_b,
                            block=dense_block(desc), rules=dense_rules(desc))


def masking_query(desc: Descriptor, k: int,
                  keeps: Keeps = keeps_position) -> Query:
    """Violation: legal metadata, yet sparse differs from the masked dense datapath."""
    width = d_bits(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        mask = active_mask(ops, desc, inputs.metadata, k, keeps)
        sparse = ops.extract(run_dot(ops, desc, inputs), width - 1, 0)
        dense = ops.extract(masked_dense(ops, desc, inputs, mask), width - 1, 0)
        return (ops.and_(legal(ops, desc, inputs), ops.ne(sparse, dense)),
                {"sparse": sparse, "masked_dense": dense, **_meta_words(inputs)})

    return Query("sparse-equals-masked-dense", "forall", layout_variables(desc, k), body)


def _meta_words(inputs: DotInputs) -> dict[str, BV]:
    return {f"meta{i}": word for i, word in enumerate(inputs.metadata)}


def chunk_maxima(ops: Ops, terms: Sequence[Term], lanes: int, top: BV,
                 last: Term | None = None) -> tuple[list[BV], list[list[BV]]] | None:
    """The chunk maxima of ``terms``' raws (``lanes`` terms a chunk, each a raw or the
    minimum where the term is zero, as ``masked_max`` builds them) and the candidates chunk
    by chunk; ``None`` when, on the traced DAG, ``top`` is not the balanced tree over those
    maxima (then with ``last``'s candidate, C's on window paths): only then does cutting
    the maxima make two runs' ``top`` one node."""
    flat = [ops.ite(t.nonzero, t.raw, ops.const(MIN_EXP, EXP_WIDTH)) for t in terms]
    chunked = [flat[i:i + lanes] for i in range(0, len(flat), lanes)]
    maxima = [ops.smax_all(chunk) for chunk in chunked]
    tree = ops.smax_all(maxima)
    if last is not None:
        tree = ops.smax(tree, ops.ite(last.nonzero, last.raw, ops.const(MIN_EXP, EXP_WIDTH)))
    if isinstance(ops, TraceOps) and tree.node is not top.node:
        return None
    return maxima, chunked


def bounded(ops: Ops, maxima: Sequence[list[BV]], candidates: Sequence[list[list[BV]]],
            part: range) -> list[Bool]:
    """Each candidate of the chunks in ``part`` is at most its chunk's maximum, which is
    below :data:`QUANTUM_CEILING` (for each run's maxima and candidates)."""
    return [fact for top, chunked in zip(maxima, candidates) for c in part
            for fact in (ops.slt(top[c], QUANTUM_CEILING),
                         *(ops.sle(x, top[c]) for x in chunked[c]))]


def maxima_cut(ops: TraceOps, maxima: Sequence[list[BV]]) -> dict[int, Node]:
    """Chunk ``c``'s maximum of both runs one free variable (sound once they are equal)."""
    stand_in = {}
    for c, (x, y) in enumerate(zip(*maxima)):
        stand_in[x.node.id] = stand_in[y.node.id] = ops.variable(f"cut!chunk{c}", x.width).node
    return stand_in


QUANTUM_CEILING = 1 << (EXP_WIDTH - 2)
"""A bound no quantum reaches (raws are at most a few hundred): below it, exponent
differences cannot wrap in EXP_WIDTH bits."""


# ------------------------------------------------- the window datapath, as a chain


@dataclasses.dataclass
class _MaskRuns:
    """Both runs of a masking chain on one ``ops``: the hypothesis, the nibble mask, the
    slot flags of every compacted lane, both runs' stage records and D words."""

    hypothesis: Bool
    mask: list[Bool]
    slots: list[list[Bool]]
    """Per compacted lane, one flag per position of its chunk: the slot holds that lane."""
    dense: Record
    sparse: Record
    d_dense: BV
    d_sparse: BV
    dense_words: tuple[list[BV], list[BV]]

    def violation(self, ops: Ops) -> Bool:
        return ops.and_(self.hypothesis, ops.ne(self.d_sparse, self.d_dense))

    def specials(self) -> list[tuple[str, Bool, Bool]]:
        """Each special-value flag of both runs (dense, sparse)."""
        return [(f, getattr(self.dense["specials"]["specials"], f),
                 getattr(self.sparse["specials"]["specials"], f)) for f in SPECIAL_FLAGS]


SPECIAL_FLAGS = ("is_nan", "is_inf", "inf_negative")


def mask_runs(ops: Ops, desc: Descriptor, k: int, values: Variables,
              keeps: Keeps = keeps_position) -> _MaskRuns:
    """``build_dot`` on the sparse inputs and on the dense datapath with A and B zeroed
    where the nibble mask is clear, each with the stage values it reports."""
    size, rule = sparse_rule(desc)
    inputs = dot_inputs(desc, k, values)
    mask = active_mask(ops, desc, inputs.metadata, k, keeps)
    width = d_bits(desc)
    d_dense, dense = recorded(ops, lambda: masked_dense(ops, desc, inputs, mask))
    d_sparse, sparse = recorded(ops, lambda: run_dot(ops, desc, inputs))
    slots = [slot for chunk in range(k // size)
             for slot in kept_positions(ops, nibble(ops, inputs.metadata, chunk), rule)]
    return _MaskRuns(legal(ops, desc, inputs), mask, slots, dense, sparse,
                     ops.extract(d_dense, width - 1, 0), ops.extract(d_sparse, width - 1, 0),
                     (masked(ops, inputs.a, mask), masked(ops, inputs.b, mask)))


def _unit_relation(ops: Ops, runs: _MaskRuns, dense: Sequence[BV], sparse: Sequence[BV],
                   size: int, kept: int, chunks: range | None = None) -> list[Bool]:
    """What ``units-relate`` proves, over ``dense`` (K lanes and C) and ``sparse`` (K/2
    lanes and C) units: a cleared lane is 0 units; a compacted lane is the units of the
    logical lane its slot holds; C's units are equal. ``chunks``: only those chunks' lanes
    (and C's units only without it or with the first chunk)."""
    chunks = chunks if chunks is not None else range(len(runs.mask) // size)
    facts = [ops.implies(ops.not_(runs.mask[j]), ops.eq(dense[j], 0))
             for chunk in chunks for j in range(size * chunk, size * (chunk + 1))]
    for i in range(kept * chunks.start, kept * chunks.stop):
        chunk = i // kept
        facts += [ops.implies(flag, ops.eq(sparse[i], dense[size * chunk + p]))
                  for p, flag in enumerate(runs.slots[i])]
    if chunks.start == 0:
        facts.append(ops.eq(sparse[-1], dense[-1]))
    return facts


UnitPairs = Callable[["_MaskRuns"], list[tuple[list[BV], list[BV]]]]
"""Each path's units in both runs (dense: K lanes and C; sparse: K/2 lanes and C)."""
StageCut = Callable[[TraceOps, "_MaskRuns"], dict[int, Node]]


def lane_selection(ops: Ops, runs: _MaskRuns, size: int, kept: int, chunks: range
                   ) -> list[Bool]:
    """What ``lanes-select`` proves of the words both runs' lanes read (section 5): a slot
    that holds a logical lane reads that lane's A and B words on the sparse side, which
    the masked dense side reads there too; a cleared lane reads zero words."""
    a, b = runs.sparse["sparse"]["a"], runs.sparse["sparse"]["b"]
    dense_a, dense_b = runs.dense_words
    facts = []
    for chunk in chunks:
        for i in range(kept * chunk, kept * (chunk + 1)):
            facts += [ops.implies(flag, ops.and_(ops.eq(a[i], dense_a[size * chunk + p]),
                                                 ops.eq(b[i], dense_b[size * chunk + p])))
                      for p, flag in enumerate(runs.slots[i])]
        facts += [ops.implies(ops.not_(runs.mask[j]), ops.and_(ops.eq(dense_a[j], 0),
                                                              ops.eq(dense_b[j], 0)))
                  for j in range(size * chunk, size * (chunk + 1))]
    return facts


def one_unit_dag(ops: TraceOps, runs: _MaskRuns, pairs: Sequence[tuple[list[BV], list[BV]]],
                 cut: dict[int, Node], size: int, kept: int, chunks: range) -> bool:
    """Whether, with ``cut`` applied to both runs, each compacted lane's units with its A and
    B words renamed to those of a logical lane of its chunk is that logical lane's units
    node, and C's units are one node: then equal words give equal units (one DAG, one
    function), so :func:`lane_selection` gives :func:`_unit_relation`'s slot facts."""
    a, b = runs.sparse["sparse"]["a"], runs.sparse["sparse"]["b"]
    dense_a, dense_b = runs.dense_words

    def rebuilt(unit: BV, rename: dict[int, Node]) -> int:
        (node,), _ = cut_nodes([unit.node], lambda n: rename.get(n.id), ops=ops)
        return node.id

    for dense, sparse in pairs:
        if chunks.start == 0 and rebuilt(dense[-1], cut) != rebuilt(sparse[-1], cut):
            return False
        for chunk in chunks:
            logical = {j: rebuilt(dense[j], cut) for j in range(size * chunk, size * (chunk + 1))}
            for i in range(kept * chunk, kept * (chunk + 1)):
                for p, flag in enumerate(runs.slots[i]):
                    j = size * chunk + p
                    if flag.node.is_const and not flag.node.value:
                        continue
                    rename = {**cut, a[i].node.id: dense_a[j].node,
                              b[i].node.id: dense_b[j].node}
                    if rebuilt(sparse[i], rename) != logical[j]:
                        return False
    return True


def unit_queries(desc: Descriptor, variables: tuple[tuple[str, int], ...], runs_of: RunsOf,
                 pairs: UnitPairs, cut: StageCut, parts: Sequence[range],
                 label: Callable[[range], str], lift: QueryBody) -> dict[range, list[Query]]:
    """``units-relate`` over the chunks of each of ``parts`` by one DAG (:func:`one_unit_dag`,
    checked once on the traced runs): ``lanes-select`` on the real words
    (:func:`lane_selection`) and ``cleared-lanes-zero``: with ``cut`` applied, each logical
    lane's units on zero words are 0. Together they give :func:`_unit_relation`. A part is
    missing when the two runs' units are not one DAG there (a changed spec): then the
    caller asks the relation itself."""
    ops = TraceOps()
    traced = runs_of(ops, {n: ops.variable(n, w) for n, w in variables})
    traced_pairs, traced_cut = pairs(traced), cut(ops, traced)
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    return {part: _unit_part_queries(variables, runs_of, pairs, cut, (size, kept), part,
                                     label(part), lift)
            for part in parts
            if one_unit_dag(ops, traced, traced_pairs, traced_cut, size, kept, part)}


def _unit_part_queries(variables: tuple[tuple[str, int], ...], runs_of: RunsOf,
                       pairs: UnitPairs, cut: StageCut, chunk: tuple[int, int], part: range,
                       label: str, lift: QueryBody) -> list[Query]:
    """:func:`unit_queries`' two queries over the chunks of ``part`` (``chunk``: logical
    lanes per chunk and how many it keeps)."""
    size, kept = chunk

    def select(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        facts = lane_selection(ops, runs, size, kept, part)
        runs = runs_of(ops, values)
        facts = lane_selection(ops, runs, size, kept, part)
        return ops.and_(runs.hypothesis, ops.not_(ops.all_(facts))), {}

    def cleared(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        if not isinstance(ops, TraceOps):
            return runs.violation(ops), {}
        stand_in = cut(ops, runs)
        dense_a, dense_b = runs.dense_words
        lanes = range(size * part.start, size * part.stop)
        words = [(ops.variable(f"cut!zero_a{j}", dense_a[j].width),
                  ops.variable(f"cut!zero_b{j}", dense_b[j].width)) for j in lanes]
        premises = [ops.and_(ops.eq(x, 0), ops.eq(y, 0)) for x, y in words]
        zeros = []
        for dense, _ in pairs(runs):
            for j, (x, y) in zip(lanes, words):
                zero = {**stand_in, dense_a[j].node.id: x.node, dense_b[j].node.id: y.node}
                (unit,), _ = cut_nodes([dense[j].node], lambda n, z=zero: z.get(n.id),
                                       ops=ops)
                zeros.append(ops.eq(BV(ops, unit, dense[j].width), 0))
        return ops.and_(*premises, ops.not_(ops.all_(zeros))), {}

    return [Query(f"lanes-select ({label})", "forall", variables, select, lift=lift),
            Query(f"cleared-lanes-zero ({label})", "forall", variables, cleared,
                  cut_at="the quanta and a cleared lane's words")]


Level = list[tuple[BV, BV, int]]
"""One level of both runs' sum trees: ``(dense node, sparse node, bound on the sparse one)``."""


@dataclasses.dataclass
class SumPath:
    """One path's units and exact sum in both runs (:func:`spec.accumulate.exact_sum`), and
    when the path is read (``None``: always)."""

    dense_units: list[BV]
    sparse_units: list[BV]
    dense_total: BV
    sparse_total: BV
    when: Bool | None = None


def _climb(ops: Ops, level: list[Any], times: int, add: Callable[[Any, Any], Any]) -> list[Any]:
    """``times`` levels of ``ops.sum``'s balanced tree (adjacent pairs, an odd last one
    carried up) over ``level``."""
    for _ in range(times):
        paired = [add(x, y) for x, y in zip(level[0::2], level[1::2])]
        level = paired + level[len(paired) * 2:]
    return level


def sum_levels(ops: Ops, path: SumPath, size: int, kept: int) -> list[Level]:
    """Both runs' sum trees from the sparsity chunks up (section 2.6). Level 0 pairs each
    chunk's partial sum, the dense tree's node over its ``size`` logical lanes with the
    sparse tree's over the ``kept`` lanes they compact to (C's leaf carried last); above
    it the two trees have one shape, up to the totals (checked by node id: hash-consing
    gives back the DAG's own nodes). A sparse leaf of width ``w`` is bounded by
    ``2^(w-1)``, an inner node by the sum of its children's bounds."""
    wd, ws = path.dense_total.width, path.sparse_total.width
    dense = _climb(ops, [ops.sext(u, wd) for u in path.dense_units],
                   (size - 1).bit_length(), ops.add)
    sparse = _climb(ops, [(ops.sext(u, ws), 1 << (u.width - 1)) for u in path.sparse_units],
                    (kept - 1).bit_length(), lambda x, y: (ops.add(x[0], y[0]), x[1] + y[1]))
    if len(dense) != len(sparse):
        raise InternalError("the two sum trees do not meet at the sparsity chunks")
    level: Level = [(x, y, bound) for x, (y, bound) in zip(dense, sparse)]
    levels = [level]
    while len(level) > 1:
        level = _climb(ops, level, 1, lambda x, y: (ops.add(x[0], y[0]), ops.add(x[1], y[1]),
                                                     x[2] + y[2]))
        levels.append(level)
    ((root, root_sparse, bound),) = level
    if (root.node.id, root_sparse.node.id) != (path.dense_total.node.id,
                                               path.sparse_total.node.id):
        raise InternalError("an exact sum is not ops.sum's tree over its units")
    if bound >= 1 << (ws - 1):
        raise InternalError("a sparse exact sum could wrap")
    return levels


def level_facts(ops: Ops, level: Level, when: Bool | None) -> list[Bool]:
    """Each node of ``level``: the dense node is the sparse one sign extended, and the
    sparse one is within its bound (when the path is read)."""
    facts = [ops.and_(ops.eq(x, ops.sext(y, x.width)), ops.sle(-bound, y), ops.sle(y, bound))
             for x, y, bound in level]
    return facts if when is None else [ops.implies(when, f) for f in facts]


def level_cut(ops: TraceOps, level: Level, name: str, when: Bool | None
              ) -> tuple[dict[int, Node], list[Bool]]:
    """``level``'s nodes free: the sparse one a variable under its bound, the dense one its
    sign extension (where the path is not read, a variable of its own); sound by the
    query that proved :func:`level_facts` of ``level``."""
    stand_in: dict[int, Node] = {}
    premises = []
    for i, (x, y, bound) in enumerate(level):
        free = ops.variable(f"cut!{name}!{i}", y.width)
        dense = ops.sext(free, x.width)
        within = ops.and_(ops.sle(-bound, free), ops.sle(free, bound))
        if when is not None:
            dense = ops.ite(when, dense, ops.variable(f"cut!{name}!other{i}", x.width))
            within = ops.implies(when, within)
        if x.node.id in stand_in or y.node.id in stand_in:
            raise InternalError("two nodes of a sum tree level share a node")
        stand_in[x.node.id], stand_in[y.node.id] = dense.node, free.node
        premises.append(within)
    return stand_in, premises


def shared_flag(ops: TraceOps, name: str) -> Bool:
    """The free flag ``name`` of ``ops``, declared on first use."""
    node = ops.inputs.get(name)
    return ops.bool_variable(name) if node is None else ops.wrap_bool(node)


UnitsCut = Callable[[TraceOps, "_MaskRuns"], tuple[dict[int, Node], list[Bool]]]
"""Stage nodes of both runs free under the relations earlier queries proved: the cut and
its premises."""
RunsOf = Callable[[Ops, Variables], "_MaskRuns"]


def word_equal_query(desc: Descriptor, variables: tuple[tuple[str, int], ...],
                     runs_of: RunsOf, cut: UnitsCut, what: str) -> Query:
    """``word-equal``: the violation with ``cut`` applied under its premises (the relations
    earlier queries proved of the nodes it replaces); D then reads no A or B word
    (checked), so the query is about what lies past the cut alone."""
    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        if not isinstance(ops, TraceOps):
            return runs.violation(ops), {}
        stand_in, premises = cut(ops, runs)
        (cut_violation,), _ = cut_nodes([runs.violation(ops).node],
                                        lambda n: stand_in.get(n.id), ops=ops)
        words = {name for name, _ in variables if name[0] in "ab"}
        reached = {n.params[0] for n in free_variables([cut_violation])} & words
        if reached:
            raise InternalError(f"{desc.name}: with its {what} cut, D still reads "
                                f"{sorted(reached)[:4]}")
        return ops.and_(ops.wrap_bool(cut_violation), *premises), {}

    return Query(f"word-equal ({what} cut)", "forall", variables, body, cut_at=f"the {what}")


def tree_queries(desc: Descriptor, variables: tuple[tuple[str, int], ...], runs_of: RunsOf,
                 paths: Callable[[TraceOps, _MaskRuns], list[SumPath]], units_cut: UnitsCut,
                 rest_cut: Callable[[TraceOps, _MaskRuns], dict[int, Node]],
                 parts: Sequence[range], what: str) -> list[Query]:
    """The masking chain from the units to D along both runs' sum trees (:func:`sum_levels`).

    ``chunk-sums-alike``: with the units cut (``units_cut``), each chunk of ``parts`` meets
    :func:`level_facts` (C's leaf with the first part); ``sum-level i``: with level
    ``i - 1`` cut (:func:`level_cut`), level ``i`` does; ``word-equal``: the violation with
    the totals cut and ``rest_cut`` (``what``: quanta or path choice, special flags). When
    the sums are not those trees (a changed spec), one ``word-equal`` with the units cut.
    """
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    ops = TraceOps()
    traced = runs_of(ops, {n: ops.variable(n, w) for n, w in variables})
    try:
        depth = len(sum_levels(ops, paths(ops, traced)[0], size, kept))
    except InternalError:
        def whole(ops: TraceOps, runs: _MaskRuns) -> tuple[dict[int, Node], list[Bool]]:
            stand_in, premises = units_cut(ops, runs)
            return {**stand_in, **rest_cut(ops, runs)}, premises

        return [word_equal_query(desc, variables, runs_of, whole, f"units, {what}")]

    def cut_query(build: Callable[[TraceOps, _MaskRuns], tuple[Bool, dict[int, Node]]]
                  ) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            if not isinstance(ops, TraceOps):
                return runs.violation(ops), {}
            bad, stand_in = build(ops, runs)
            (cut,), _ = cut_nodes([ops.and_(runs.hypothesis, bad).node],
                                  lambda n: stand_in.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    def chunks(part: range) -> QueryBody:
        def build(ops: TraceOps, runs: _MaskRuns) -> tuple[Bool, dict[int, Node]]:
            stand_in, premises = units_cut(ops, runs)
            facts = []
            for path in paths(ops, runs):
                level = sum_levels(ops, path, size, kept)[0]
                chosen = level[part.start:part.stop] + (level[-1:] if part.start == 0 else [])
                facts += level_facts(ops, chosen, path.when)
            return ops.and_(*premises, ops.not_(ops.all_(facts))), stand_in

        return cut_query(build)

    def level(index: int) -> QueryBody:
        def build(ops: TraceOps, runs: _MaskRuns) -> tuple[Bool, dict[int, Node]]:
            stand_in: dict[int, Node] = {}
            premises, facts = [], []
            for p, path in enumerate(paths(ops, runs)):
                levels = sum_levels(ops, path, size, kept)
                cut, within = level_cut(ops, levels[index - 1], f"level{index - 1}!{p}",
                                        path.when)
                stand_in.update(cut)
                premises += within
                facts += level_facts(ops, levels[index], path.when)
            return ops.and_(*premises, ops.not_(ops.all_(facts))), stand_in

        return cut_query(build)

    def totals_cut(ops: TraceOps, runs: _MaskRuns) -> tuple[dict[int, Node], list[Bool]]:
        stand_in, premises = rest_cut(ops, runs), []
        for p, path in enumerate(paths(ops, runs)):
            cut, within = level_cut(ops, sum_levels(ops, path, size, kept)[-1], f"total!{p}",
                                    path.when)
            stand_in.update(cut)
            premises += within
        return stand_in, premises

    return [*(Query(f"chunk-sums-alike (units cut, lanes {size * part.start}-"
                    f"{size * part.stop - 1})", "forall", variables, chunks(part),
                    cut_at="the units") for part in parts),
            *(Query(f"sum-level {i} (level {i - 1} cut)", "forall", variables, level(i),
                    cut_at=f"level {i - 1} of the sum trees") for i in range(1, depth)),
            word_equal_query(desc, variables, runs_of, totals_cut, f"sums, {what}")]

LANES_PER_UNIT_QUERY = 8
"""A ``units-relate`` (``chunk-maxima-agree``, ``quanta-range``) query covers the chunks of
at most this many logical lanes: one query over all 64 lanes of sparse-e4m3 gives no answer
in 120 s, 16 lanes take 15-90 s on a shared machine. The block chains ask the chunk maxima
one chunk a query, equality and bound apart: on sparse-mxf4 two chunks in one query took
6.9 s, the same two chunks in four such queries 4.2 s in all, and the bounds of eight
chunks in one query 18 s."""


def masking_chain(desc: Descriptor, k: int, keeps: Keeps = keeps_position
                  ) -> tuple[list[Query], str]:
    """Masking of a window path as a chain over ``build_dot``'s two DAGs (sparse, masked dense).

    ``specials-agree``: the special-value flags are equal in both runs;
    ``chunk-maxima-agree``: so is each chunk's maximum product raw, and the
    window maximum of each run is the balanced tree over those maxima and C's
    raw (checked once on the traced DAG; else ``quanta-agree`` is asked
    whole); ``quanta-agree`` (chunk maxima cut): so the quanta the ``align``
    stages report are equal. ``units-relate``
    (both quanta one free ``q``): every cleared logical lane
    aligns to 0 units, every compacted lane to the units of the logical lane
    its slot holds (slots from the nibble bits, section 5), C to the same units.
    It is split (:func:`unit_queries`) into a structural step outside the solver,
    that with the quanta cut a compacted lane's units with its words renamed to a
    logical lane's are that lane's units node (:func:`one_unit_dag`: one DAG, one
    function), and two solver queries, ``lanes-select`` (a slot reads the words of
    the lane it holds) and ``cleared-lanes-zero``; when the structural step fails
    (a changed spec) the relation is asked whole. ``chunk-sums-alike``,
    ``sum-level`` and ``word-equal`` then follow both runs' sum trees with every
    unit free under exactly those relations, the quanta one free ``q`` and the
    special flags shared free flags; D then reads no A, B or C word (checked), so
    those queries are about the sums, conversion and specials alone. ``keeps``:
    another mask (a wrong one, for tests).
    """
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    variables = layout_variables(desc, k)
    per = max(1, LANES_PER_UNIT_QUERY // size)
    parts = [range(i, min(i + per, k // size)) for i in range(0, k // size, per)]

    def quanta(runs: _MaskRuns) -> tuple[BV, BV]:
        return runs.dense["align"]["quantum"], runs.sparse["align"]["quantum"]

    def units(runs: _MaskRuns) -> tuple[list[BV], list[BV]]:
        return list(runs.dense["align"]["units"]), list(runs.sparse["align"]["units"])

    def possible(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = mask_runs(ops, desc, k, values, keeps)
        return runs.hypothesis, {**_meta_words(dot_inputs(desc, k, values)),
                                 "sparse": runs.d_sparse, "masked_dense": runs.d_dense}

    def violation(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = mask_runs(ops, desc, k, values, keeps)
        return runs.violation(ops), {"sparse": runs.d_sparse, "masked_dense": runs.d_dense}

    def specials_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = mask_runs(ops, desc, k, values, keeps)
        differ = ops.any_(ops.xor_(x, y) for _, x, y in runs.specials())
        return ops.and_(runs.hypothesis, differ), {}

    def window_maxima(ops: Ops, runs: _MaskRuns) -> list[list[BV]] | None:
        """Both runs' chunk maxima of the product raws (:func:`chunk_maxima`), or ``None``."""
        found = [chunk_maxima(ops, record["products"]["terms"][:-1], lanes,
                              record["window"]["max_raw"], record["products"]["terms"][-1])
                 for record, lanes in ((runs.dense, size), (runs.sparse, kept))]
        if found[0] is None or found[1] is None:
            return None
        return [found[0][0], found[1][0]]

    def chunks_agree(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = mask_runs(ops, desc, k, values, keeps)
            maxima = window_maxima(ops, runs)
            if maxima is None:
                raise InternalError(f"{desc.name}: the window maximum is no longer the tree "
                                    "of chunk maxima")
            differ = ops.any_(ops.ne(maxima[0][c], maxima[1][c]) for c in part)
            return ops.and_(runs.hypothesis, differ), {}

        return body

    def quanta_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = mask_runs(ops, desc, k, values, keeps)
        q_dense, q_sparse = quanta(runs)
        bad = ops.and_(runs.hypothesis, ops.ne(q_dense, q_sparse))
        maxima = window_maxima(ops, runs)
        if not isinstance(ops, TraceOps) or maxima is None:
            return bad, {}
        stand_in = maxima_cut(ops, maxima)
        (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def quantum_cut(ops: TraceOps, runs: _MaskRuns) -> dict[int, Node]:
        q = ops.variable("cut!q", EXP_WIDTH)
        return {x.node.id: q.node for x in quanta(runs)}

    def units_relate(chunks: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = mask_runs(ops, desc, k, values, keeps)
            if not isinstance(ops, TraceOps):
                return runs.violation(ops), {}
            dense, sparse = units(runs)
            bad = ops.and_(runs.hypothesis, ops.not_(ops.all_(
                _unit_relation(ops, runs, dense, sparse, size, kept, chunks))))
            stand_in = quantum_cut(ops, runs)
            (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    def runs_of(ops: Ops, values: Variables) -> _MaskRuns:
        return mask_runs(ops, desc, k, values, keeps)

    def paths(ops: TraceOps, runs: _MaskRuns) -> list[SumPath]:
        dense, sparse = units(runs)
        return [SumPath(dense, sparse, runs.dense["convert"]["units"],
                        runs.sparse["convert"]["units"])]

    def units_cut(ops: TraceOps, runs: _MaskRuns) -> tuple[dict[int, Node], list[Bool]]:
        dense, sparse = units(runs)
        free_dense = [ops.variable(f"cut!dense{j}", u.width) for j, u in enumerate(dense)]
        free_sparse = [ops.variable(f"cut!sparse{i}", u.width) for i, u in enumerate(sparse)]
        stand_in: dict[int, Node] = {}
        for real, free in [*zip(dense, free_dense), *zip(sparse, free_sparse)]:
            stand_in.setdefault(real.node.id, free.node)
        return stand_in, _unit_relation(ops, runs, free_dense, free_sparse, size, kept)

    def rest_cut(ops: TraceOps, runs: _MaskRuns) -> dict[int, Node]:
        stand_in = quantum_cut(ops, runs)
        for f, x, y in runs.specials():
            shared = ops.bool_variable(f"cut!{f}")
            stand_in[x.node.id] = stand_in[y.node.id] = shared.node
        return stand_in

    ops = TraceOps()
    traced = mask_runs(ops, desc, k, {n: ops.variable(n, w) for n, w in variables}, keeps)
    tree = window_maxima(ops, traced) is not None
    by_dag = unit_queries(desc, variables, runs_of, lambda runs: [units(runs)], quantum_cut,
                          parts, lambda part: f"lanes {size * part.start}-{size * part.stop - 1}",
                          violation)
    queries = [hypothesis_query(variables, possible),
               Query("specials-agree", "forall", variables, specials_agree, lift=violation),
               *(Query(f"chunk-maxima-agree (lanes {size * part.start}-"
                       f"{size * part.stop - 1})", "forall", variables, chunks_agree(part),
                       lift=violation) for part in (parts if tree else [])),
               Query("quanta-agree (chunk maxima cut)" if tree else "quanta-agree", "forall",
                     variables, quanta_agree, lift=violation,
                     cut_at="the chunk maxima" if tree else ""),
               *(query for part in parts for query in by_dag.get(part) or [
                   Query(f"units-relate (quanta cut, lanes {size * part.start}-"
                         f"{size * part.stop - 1})", "forall", variables, units_relate(part),
                         cut_products=True, cut_at="the quanta")]),
               *tree_queries(desc, variables, runs_of, paths, units_cut, rest_cut, parts,
                             "quanta, special flags")]
    return queries, ("two runs of build_dot (sparse; dense on the logical K with A and B "
                     "zeroed where the nibble mask is clear), cut at the chunk maxima, the "
                     "quanta and units "
                     "their align stages report and at their special flags: each cut's "
                     "relation is proved on the real nodes first")


# ------------------------------------------------- the block datapath, as a chain


def _differ(ops: Ops, x: BV | Bool, y: BV | Bool) -> Bool:
    if isinstance(x, BV):
        return ops.ne(x, y)
    return ops.xor_(x, y)


def _block_relation(ops: Ops, runs: _MaskRuns, role: str, size: int, kept: int,
                    per_lane: bool, part: range) -> list[Bool]:
    """What the block ``units-relate`` proves of one path's units (``role``: groups, then
    C): per lane as on window paths for groups of one product; else dense group ``g``
    (``2G`` logical lanes) is sparse group ``g`` (the ``G`` lanes they compact to), sign
    extended. ``part``: those chunks (groups of one) or groups, C's units with the first."""
    dense, sparse = runs.dense["groups"][role], runs.sparse["groups"][role]
    if per_lane:
        facts = _unit_relation(ops, runs, dense, sparse, size, kept, part)
    else:
        facts = [ops.eq(dense[g], ops.sext(sparse[g], dense[g].width)) for g in part]
        if part.start == 0:
            facts.append(ops.eq(dense[-1], ops.sext(sparse[-1], dense[-1].width)))
    if role == "c_units":
        return [ops.implies(runs.sparse["block_choice"]["c_dominant"], f) for f in facts]
    return facts


def quanta_range(ops: Ops, desc: Descriptor, runs: _MaskRuns,
                 which: Sequence[str] = ("product_units", "c_units"),
                 part: range | None = None, per_lane: bool = False) -> list[Bool]:
    """Where the chosen quanta lie, in both runs: for every nonzero product group, the
    product quantum at least its top raw minus the product window (section 4) and below
    :data:`QUANTUM_CEILING`; the C-dominant one too when that path is taken. ``which``
    and ``part``: the groups of those paths (chunks of lanes for groups of one)."""
    window = PRODUCT_WINDOW[block_family(desc)]
    size, rule = sparse_rule(desc)
    facts = []
    for record, lanes in ((runs.dense, size), (runs.sparse, SPARSE_KEPT[rule])):
        choice, groups = record["block_choice"], record["groups"]
        for name, role, when in (("product_quantum", "product_units", ops.true()),
                                 ("c_quantum", "c_units", choice["c_dominant"])):
            if role not in which:
                continue
            q = choice[name]
            chosen = groups[role.replace("units", "groups")]
            if part is not None:
                step = lanes if per_lane else 1
                chosen = chosen[step * part.start:step * part.stop]
            facts += [ops.implies(ops.and_(when, group.nonzero), ops.and_(
                ops.sge(q, ops.sub(group.top_raw, window)), ops.slt(q, QUANTUM_CEILING)))
                for group in chosen]
    return facts


GROUP_KEYS = {"product_units": "product_groups", "c_units": "c_groups"}


def group_pairs(runs: _MaskRuns, role: str, part: range) -> list[tuple[Any, Any]]:
    """The (dense, sparse) exact group sums of ``role``'s path, groups ``part``."""
    key = GROUP_KEYS[role]
    pairs = list(zip(runs.dense["groups"][key], runs.sparse["groups"][key]))
    return pairs[part.start:part.stop]


def chunk_sums(ops: Ops, dense: Any, sparse: Any, size: int, kept: int
               ) -> tuple[list[tuple[BV, BV]], int]:
    """Each sparsity chunk's partial sum in both runs' group sums (``size`` logical lanes of
    the dense group, the ``kept`` they compact to), and a bound ``B`` on every sparse one.

    ``ops.sum`` is a balanced tree, so with power-of-two groups these are nodes of the
    group's own sum (checked on the traced DAG); with every element below ``2^(W-1)/G`` (a
    group of ``G`` in ``W`` bits), a chunk of ``kept`` is below ``B = kept 2^(W-1)/G`` and
    the group's ``G/kept`` chunks cannot wrap."""
    count = len(dense.placed) // size
    if count * kept != len(sparse.placed) or count & (count - 1):
        raise InternalError(f"group of {len(sparse.placed)} is not {count} chunks of {kept}")
    pairs = [(ops.sum(list(dense.placed[size * c:size * (c + 1)])),
              ops.sum(list(sparse.placed[kept * c:kept * (c + 1)]))) for c in range(count)]
    if isinstance(ops, TraceOps):
        cones = [set(n.id for n in walk([g.total.node])) for g in (dense, sparse)]
        if any(x.node.id not in cones[0] or y.node.id not in cones[1] for x, y in pairs):
            raise InternalError("a chunk's partial sum is not a node of its group's sum")
    width, group = sparse.total.width, len(sparse.placed)
    return pairs, kept << (width - 1 - (group - 1).bit_length())


def below_power(ops: Ops, mag: BV, shift: BV) -> Bool:
    """``mag < 2^shift`` (``mag`` unsigned, ``shift`` signed)."""
    width = mag.width + 1
    k = ops.resize_signed(shift, max(shift.width, width.bit_length() + 1))
    one = ops.shl(ops.const(1, width), ops.resize_signed(k, width))
    return ops.ite(ops.sge(k, mag.width), ops.true(),
                   ops.ite(ops.slt(k, 0), ops.eq(mag, 0), ops.ult(ops.zext(mag, width), one)))


def group_bounded(ops: Ops, group: Any) -> Bool:
    """The static bound of a group sum (spec/blockscaled ``GroupSum``, section 4):
    ``|value| < 2^(top_raw + excess)`` when a product of the group is nonzero, else 0."""
    shift = ops.sub(ops.add(group.top_raw, group.excess), group.exponent)
    return ops.ite(group.nonzero, below_power(ops, group.mag, shift), ops.eq(group.mag, 0))


def pair_sums(ops: Ops, runs: _MaskRuns, dense: Any, sparse: Any, group: int, size: int,
              kept: int) -> tuple[list[tuple[list[BV], list[BV], list[list[Bool]]]], int]:
    """For the ``pairs`` rule (section 5: a chunk of 8 keeps two of its 4 pairs), each chunk
    of group ``group``: its 4 dense pair sums, its 2 sparse pair sums (the first level of
    each group's balanced adder tree) and, per sparse pair, which dense pair its slots hold;
    and a bound on every sparse pair sum (half the chunk bound of :func:`chunk_sums`)."""
    _, bound = chunk_sums(ops, dense, sparse, size, kept)
    first = group * len(sparse.placed)
    chunks = []
    for c in range(len(sparse.placed) // kept):
        d = [ops.sum(list(dense.placed[size * c + 2 * j:size * c + 2 * j + 2]))
             for j in range(size // 2)]
        sp = [ops.sum(list(sparse.placed[kept * c + 2 * t:kept * c + 2 * t + 2]))
              for t in range(kept // 2)]
        held = [[runs.slots[first + kept * c + 2 * t][2 * j] for j in range(size // 2)]
                for t in range(kept // 2)]
        chunks.append((d, sp, held))
    return chunks, bound // 2


def held_pair(ops: Ops, pairs: Sequence[BV], held: Sequence[Sequence[Bool]], j: int,
              width: int) -> BV:
    """Dense pair ``j`` as the slots say: the sparse pair that holds it (sign extended), else 0."""
    value = ops.const(0, width)
    for t in reversed(range(len(pairs))):
        value = ops.ite(held[t][j], ops.sext(pairs[t], width), value)
    return value


def _within(ops: Ops, x: BV, bound: int) -> Bool:
    """``-bound < x < bound`` for signed ``x`` (a bound past its width only excludes the
    minimum, or nothing)."""
    half = 1 << (x.width - 1)
    if bound > half:
        return ops.true()
    return ops.ne(x, -half) if bound == half else ops.and_(ops.sgt(x, -bound),
                                                           ops.slt(x, bound))


def block_masking_chain(desc: Descriptor, k: int) -> tuple[list[Query], str]:
    """Masking of a block path as a chain over ``build_dot``'s sparse DAG and the dense
    rules' DAG on the logical K (:func:`masked_dense`), cut at their stage values.

    ``chunk-maxima-agree`` and ``chunk-maxima-bound``, one chunk a query: each
    chunk's maximum product raw is equal in both runs, and bounds the chunk's
    raws; P of each run is the balanced tree over those maxima (checked);
    ``maxima-agree``: with the chunk maxima cut, P, S, "some product is
    nonzero", the path choice and both quanta agree. ``quanta-range`` (chunk
    maxima cut, each bounding its chunk's raws): the quanta lie where section
    4 puts them (:func:`quanta_range`).
    For groups of several products, queries first cut the group sums:
    ``pairs-sum-alike`` (for the FP4 ``pairs`` rule: each dense pair sum, on
    the first level of the group's own balanced adder tree, is the sparse
    pair sum whose slots hold it, or 0; each sparse one bounded),
    ``chunks-sum-alike`` (with those cut: each sparsity chunk's partial sum, a
    node of the same tree, is the sparse one's sign extended, and bounded),
    ``totals-agree`` (with those partial sums one free variable per chunk,
    the group sums agree) and ``totals-bounded`` (each sparse group sum
    is below ``2^(top_raw + excess)``, or 0 for a group of zeros).
    ``units-relate`` (the choice, both quanta and S one free set, under that
    range; products cut for groups of one; group sums cut, under their bounds,
    for larger groups, and then the chunk maxima too, each bounding its
    chunk's raws): each path's units of every group (of every lane, for
    groups of one product) on the dense side are those of the sparse group
    (lane) they correspond to, C's too. ``word-equal``: the violation with
    every unit, the choice, the quanta, S and the special flags cut under
    exactly those relations; D then reads no A or B word (checked). With MXF4's
    subnormal floor, ``kept-alike`` (units cut: each group's kept units, dense the sparse
    sign extended) and ``floor-sums-alike`` (kept units cut: so is the floored sum) come
    first, and ``word-equal`` cuts the floored sum too. A unit that
    is one node in both runs (C's units at the C-dominant quantum, a function
    of C alone) takes the dense side's variable; the sparse side's is then only
    bound by the relations, which hold.
    """
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    per_lane = product_group(desc) == 1
    variables = layout_variables(desc, k)
    chosen = ("c_dominant", "c_quantum", "product_quantum", "scale_max")
    maxima = ("max_raw", "any_product", *chosen)
    roles = ("product_units", "c_units")
    if per_lane:
        per = max(1, LANES_PER_UNIT_QUERY // size)
        parts = [(roles, range(i, min(i + per, k // size))) for i in range(0, k // size, per)]
    else:
        parts = []
        for role, group in (("product_units", product_group(desc)),
                            ("c_units", c_dominant_group(desc))):
            count, per = (k // 2) // group, max(1, PRODUCTS_PER_UNIT_QUERY // group)
            parts += [((role,), range(i, min(i + per, count))) for i in range(0, count, per)]

    per_chunks = max(1, LANES_PER_UNIT_QUERY // size)
    chunk_parts = [range(i, min(i + per_chunks, k // size))
                   for i in range(0, k // size, per_chunks)]

    def runs_of(ops: Ops, values: Variables) -> _MaskRuns:
        return mask_runs(ops, desc, k, values)

    def choice(runs: _MaskRuns) -> list[tuple[Any, Any]]:
        return [(runs.dense["block_choice"][n], runs.sparse["block_choice"][n]) for n in maxima]

    def choice_cut(ops: TraceOps, runs: _MaskRuns) -> dict[int, Node]:
        """The path choice, both quanta and S of both runs one shared free set (sound by
        ``maxima-agree``)."""
        stand_in = {}
        for name in chosen:
            x, y = runs.dense["block_choice"][name], runs.sparse["block_choice"][name]
            shared = (shared_flag(ops, f"cut!{name}") if name == "c_dominant" else
                      ops.variable(f"cut!{name}", x.width))
            stand_in[x.node.id] = stand_in[y.node.id] = shared.node
        return stand_in

    def possible(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        return runs.hypothesis, {**_meta_words(dot_inputs(desc, k, values)),
                                 "sparse": runs.d_sparse, "masked_dense": runs.d_dense}

    def violation(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        return runs.violation(ops), {"sparse": runs.d_sparse, "masked_dense": runs.d_dense}

    def agree(pairs: Callable[[_MaskRuns], list[tuple[Any, Any]]]) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            differ = ops.any_(_differ(ops, x, y) for x, y in pairs(runs))
            return ops.and_(runs.hypothesis, differ), {}

        return body

    def block_maxima(ops: Ops, runs: _MaskRuns
                     ) -> tuple[list[list[BV]], list[list[list[BV]]]] | None:
        """Both runs' chunk maxima and candidates (:func:`chunk_maxima`), or ``None``."""
        found = [chunk_maxima(ops, record["products"]["products"], lanes,
                              record["block_choice"]["max_raw"])
                 for record, lanes in ((runs.dense, size), (runs.sparse, kept))]
        if found[0] is None or found[1] is None:
            return None
        return [found[0][0], found[1][0]], [found[0][1], found[1][1]]

    def chunks_agree(part: range, bound: bool) -> QueryBody:
        """Violation: a chunk maximum of ``part`` differs between the runs, or (``bound``)
        does not bound its chunk's raws (:func:`bounded`)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            found = block_maxima(ops, runs)
            if found is None:
                raise InternalError(f"{desc.name}: P is no longer the tree of chunk maxima")
            maxima, candidates = found
            if bound:
                bad = ops.not_(ops.all_(bounded(ops, maxima, candidates, part)))
            else:
                bad = ops.any_(ops.ne(maxima[0][c], maxima[1][c]) for c in part)
            return ops.and_(runs.hypothesis, bad), {}

        return body

    def maxima_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        runs = runs_of(ops, values)
        bad = ops.and_(runs.hypothesis,
                       ops.any_(_differ(ops, x, y) for x, y in choice(runs)))
        found = block_maxima(ops, runs)
        if not isinstance(ops, TraceOps) or found is None:
            return bad, {}
        stand_in = maxima_cut(ops, found[0])
        (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def covered_chunks(runs: _MaskRuns, which: tuple[str, ...], part: range) -> range:
        """The sparsity chunks whose lanes the groups ``part`` of ``which``'s path cover
        (``part`` itself counts chunks on paths of single products)."""
        if per_lane:
            return part
        group = len(group_pairs(runs, which[0], part)[0][1].placed)
        return range(part.start * group // kept, part.stop * group // kept)

    def in_range(which: tuple[str, ...], part: range) -> QueryBody:
        """The range facts, with the chunk maxima cut, every maximum below the ceiling and
        every candidate of the chunks the groups cover at most its chunk's maximum (proved
        by ``chunk-maxima-agree`` and ``chunk-maxima-bound``)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            facts = quanta_range(ops, desc, runs, which, part, per_lane)
            bad = ops.and_(runs.hypothesis, ops.not_(ops.all_(facts)))
            found = block_maxima(ops, runs)
            if not isinstance(ops, TraceOps) or found is None:
                return bad, {}
            maxima, candidates = found
            premises = ops.all_([*bounded(ops, maxima, candidates,
                                          covered_chunks(runs, which, part)),
                                 *(ops.slt(top, QUANTUM_CEILING) for run in maxima
                                   for top in run)])
            stand_in = maxima_cut(ops, maxima)
            (cut,), _ = cut_nodes([ops.and_(premises, bad).node], lambda n: stand_in.get(n.id),
                                  ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    by_pairs = rule == "pairs"

    def pairs_of(ops: Ops, runs: _MaskRuns, which: tuple[str, ...], part: range
                 ) -> list[tuple[tuple[list[BV], list[BV], list[list[Bool]]], int]]:
        return [(chunk, bound) for role in which
                for g, (dense, sparse) in enumerate(group_pairs(runs, role, part))
                for chunks, bound in [pair_sums(ops, runs, dense, sparse, part.start + g,
                                                size, kept)]
                for chunk in chunks]

    def pairs_sum_alike(which: tuple[str, ...], part: range) -> QueryBody:
        """Each dense pair sum is the sparse pair sum whose slots hold it (0 if none), and
        every sparse pair sum is within the bound of :func:`pair_sums`."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            facts = []
            for (d, sp, held), bound in pairs_of(ops, runs, which, part):
                facts += [ops.eq(x, held_pair(ops, sp, held, j, x.width))
                          for j, x in enumerate(d)]
                facts += [_within(ops, y, bound) for y in sp]
            return ops.and_(runs.hypothesis, ops.not_(ops.all_(facts))), {}

        return body

    def chunks_sum_alike(which: tuple[str, ...], part: range) -> QueryBody:
        """Each chunk's partial sum of the dense group is the sparse one's, sign extended,
        and within the bound of :func:`chunk_sums` (for the ``pairs`` rule with the pair
        sums cut: each sparse one free under its bound, each dense one :func:`held_pair`)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            facts = []
            for role in which:
                for dense, sparse in group_pairs(runs, role, part):
                    pairs, bound = chunk_sums(ops, dense, sparse, size, kept)
                    facts += [ops.and_(ops.eq(x, ops.sext(y, x.width)), _within(ops, y, bound))
                              for x, y in pairs]
            bad = ops.and_(runs.hypothesis, ops.not_(ops.all_(facts)))
            if not by_pairs or not isinstance(ops, TraceOps):
                return bad, {}
            stand_in: dict[int, Node] = {}
            premises = []
            for n, ((d, sp, held), bound) in enumerate(pairs_of(ops, runs, which, part)):
                free = [ops.variable(f"cut!pair{n}!{t}", y.width) for t, y in enumerate(sp)]
                premises += [_within(ops, v, bound) for v in free]
                for y, v in zip(sp, free):
                    stand_in[y.node.id] = v.node
                for j, x in enumerate(d):
                    stand_in[x.node.id] = held_pair(ops, free, held, j, x.width).node
            (cut,), _ = cut_nodes([ops.and_(bad, *premises).node],
                                  lambda node: stand_in.get(node.id), ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    def sums_cut(ops: TraceOps, runs: _MaskRuns, which: tuple[str, ...], part: range,
                 level: str) -> tuple[dict[int, Node], list[Bool]]:
        """Both runs' chunk sums (``level="chunk"``) or group sums (``"group"``) of the
        groups in ``part`` one free variable each, the dense one its sign extension, under
        the bound ``chunks-sum-alike`` (or ``totals-agree``) proved."""
        stand_in: dict[int, Node] = {}
        premises = []
        for role in which:
            for g, (dense, sparse) in enumerate(group_pairs(runs, role, part)):
                if level == "group":
                    pairs, bound = [(dense.total, sparse.total)], 1 << (sparse.total.width - 1)
                else:
                    pairs, bound = chunk_sums(ops, dense, sparse, size, kept)
                for c, (x, y) in enumerate(pairs):
                    free = ops.variable(f"cut!{role}!{level}{part.start + g}!{c}", y.width)
                    stand_in[x.node.id] = ops.sext(free, x.width).node
                    stand_in[y.node.id] = free.node
                    premises.append(_within(ops, free, bound))
        return stand_in, premises

    def totals_agree(which: tuple[str, ...], part: range) -> QueryBody:
        """With the chunk sums cut, each dense group sum is the sparse one's, sign extended,
        and the sparse one is not the minimum of its width."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            if not isinstance(ops, TraceOps):
                return runs.violation(ops), {}
            facts = [ops.and_(ops.eq(d.total, ops.sext(sp.total, d.total.width)),
                              _within(ops, sp.total, 1 << (sp.total.width - 1)))
                     for role in which for d, sp in group_pairs(runs, role, part)]
            stand_in, premises = sums_cut(ops, runs, which, part, "chunk")
            bad = ops.and_(runs.hypothesis, *premises, ops.not_(ops.all_(facts)))
            (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    def bounds_of(ops: Ops, runs: _MaskRuns, which: tuple[str, ...], part: range
                  ) -> list[Bool]:
        """The sparse groups' bounds (the dense ones follow: ``totals-agree`` makes each
        dense sum the sparse one, and ``units-relate`` sees both groups' products)."""
        return [group_bounded(ops, sparse) for role in which
                for _, sparse in group_pairs(runs, role, part)]

    def totals_bounded(which: tuple[str, ...], part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            return ops.and_(runs.hypothesis,
                            ops.not_(ops.all_(bounds_of(ops, runs, which, part)))), {}

        return body

    def units_relate(which: tuple[str, ...], part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            runs = runs_of(ops, values)
            if not isinstance(ops, TraceOps):
                return runs.violation(ops), {}
            facts = [fact for role in which for fact in _block_relation(
                ops, runs, role, size, kept, per_lane, part)]
            stand_in, premises = ({}, []) if per_lane else sums_cut(ops, runs, which, part,
                                                                   "group")
            if not per_lane:
                premises += bounds_of(ops, runs, which, part)
            bad = ops.and_(runs.hypothesis, *premises,
                           *quanta_range(ops, desc, runs, which, part, per_lane),
                           ops.not_(ops.all_(facts)))
            stand_in.update(choice_cut(ops, runs))
            found = None if per_lane else block_maxima(ops, runs)
            if found is not None:
                maxima, candidates = found
                bad = ops.and_(bad, *bounded(ops, maxima, candidates,
                                             covered_chunks(runs, which, part)))
                stand_in.update(maxima_cut(ops, maxima))
            (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}

        return body

    def units_cut(ops: TraceOps, runs: _MaskRuns) -> tuple[dict[int, Node], list[Bool]]:
        """The path choice cut and every unit free under the relations ``units-relate``
        proved (groups of one: per lane; larger groups: the dense group's units the sparse
        one's sign extended, C-dominant ones only on that path)."""
        stand_in = choice_cut(ops, runs)
        premises = []
        c_path = ops.wrap_bool(stand_in[runs.sparse["block_choice"]["c_dominant"].node.id])
        for role in roles:
            dense, sparse = runs.dense["groups"][role], runs.sparse["groups"][role]
            free_sparse = [ops.variable(f"cut!{role}!sparse{i}", u.width)
                           for i, u in enumerate(sparse)]
            if per_lane:
                free_dense = [ops.variable(f"cut!{role}!dense{j}", u.width)
                              for j, u in enumerate(dense)]
                relation = _unit_relation(ops, runs, free_dense, free_sparse, size, kept)
                premises += ([ops.implies(c_path, f) for f in relation] if role == "c_units"
                             else relation)
            else:
                free_dense = [ops.sext(x, u.width) for x, u in zip(free_sparse, dense)]
                if role == "c_units":
                    free_dense = [ops.ite(c_path, x, ops.variable(f"cut!{role}!other{g}",
                                                                  x.width))
                                  for g, x in enumerate(free_dense)]
            for real, free in [*zip(dense, free_dense), *zip(sparse, free_sparse)]:
                stand_in.setdefault(real.node.id, free.node)
        return stand_in, premises

    def specials_cut(ops: TraceOps, runs: _MaskRuns) -> dict[int, Node]:
        stand_in = {}
        for f, x, y in runs.specials():
            shared = ops.bool_variable(f"cut!{f}")
            stand_in[x.node.id] = stand_in[y.node.id] = shared.node
        return stand_in

    def paths(ops: TraceOps, runs: _MaskRuns) -> list[SumPath]:
        """Both paths' units and sums; the C-dominant one read on that path only."""
        c_path = shared_flag(ops, "cut!c_dominant")
        return [SumPath(runs.dense["groups"][role], runs.sparse["groups"][role],
                        runs.dense["groups"][total], runs.sparse["groups"][total], when)
                for role, total, when in (("product_units", "product_total", None),
                                          ("c_units", "c_total", c_path))]

    def rest_cut(ops: TraceOps, runs: _MaskRuns) -> dict[int, Node]:
        return {**choice_cut(ops, runs), **specials_cut(ops, runs)}

    def floor_sums(ops: Ops, runs: _MaskRuns) -> list[BV]:
        """Both runs' sums of the units the subnormal floor keeps (section 4), the dense
        run's first: ``exact_sum`` over them gives back the DAG's own nodes."""
        return [exact_sum(ops, [*record["floor"]["kept"], record["groups"]["product_units"][-1]])
                for record in (runs.dense, runs.sparse)]

    def kept_pairs(runs: _MaskRuns) -> list[tuple[BV, BV]]:
        return list(zip(runs.dense["floor"]["kept"], runs.sparse["floor"]["kept"]))

    def kept_alike(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """With the units and the path choice cut (``units-relate``), each group's units
        the floor keeps (or 0) on the dense side are the sparse group's, sign extended."""
        runs = runs_of(ops, values)
        if not isinstance(ops, TraceOps):
            return runs.violation(ops), {}
        stand_in, premises = units_cut(ops, runs)
        bad = ops.and_(runs.hypothesis, *premises, ops.any_(
            ops.ne(d, ops.sext(sp, d.width)) for d, sp in kept_pairs(runs)))
        (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def floor_sums_alike(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """With the units, the path choice and the kept units cut (``kept-alike``), the
        dense floored sum is the sparse one sign extended."""
        runs = runs_of(ops, values)
        if not isinstance(ops, TraceOps):
            return runs.violation(ops), {}
        dense, sparse = floor_sums(ops, runs)
        stand_in, premises = units_cut(ops, runs)
        for g, (d, sp) in enumerate(kept_pairs(runs)):
            free = ops.variable(f"cut!kept{g}", sp.width)
            stand_in[d.node.id], stand_in[sp.node.id] = ops.sext(free, d.width).node, free.node
        bad = ops.and_(runs.hypothesis, *premises, ops.ne(dense, ops.sext(sparse, dense.width)))
        (cut,), _ = cut_nodes([bad.node], lambda n: stand_in.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def whole_cut(ops: TraceOps, runs: _MaskRuns) -> tuple[dict[int, Node], list[Bool]]:
        stand_in, premises = units_cut(ops, runs)
        if floored:
            dense, sparse = floor_sums(ops, runs)
            free = ops.variable("cut!floor_sum", sparse.width)
            stand_in[dense.node.id], stand_in[sparse.node.id] = (ops.sext(free, dense.width).node,
                                                                 free.node)
        return {**stand_in, **specials_cut(ops, runs)}, premises

    def label(which: tuple[str, ...], part: range) -> str:
        if per_lane:
            return f"lanes {size * part.start}-{size * part.stop - 1}"
        path = "product" if which == ("product_units",) else "C-dominant"
        return f"{path} groups {part.start}-{part.stop - 1}"

    def unit_pairs(runs: _MaskRuns) -> list[tuple[list[BV], list[BV]]]:
        return [(runs.dense["groups"][role], runs.sparse["groups"][role]) for role in roles]

    by_dag = unit_queries(desc, variables, runs_of, unit_pairs, choice_cut,
                          [part for _, part in parts] if per_lane else [],
                          lambda part: label(roles, part), violation)

    ops = TraceOps()
    traced = runs_of(ops, {n: ops.variable(n, w) for n, w in variables})
    tree = block_maxima(ops, traced) is not None
    floored = not per_lane and all("floor" in record for record in (traced.dense, traced.sparse))
    if floored:
        dense_floor, sparse_floor = floor_sums(ops, traced)
        floored = dense_floor.width >= sparse_floor.width
    queries = [hypothesis_query(variables, possible),
               Query("specials-agree", "forall", variables,
                     agree(lambda runs: [(x, y) for _, x, y in runs.specials()]),
                     lift=violation),
               *(Query(f"chunk-maxima-{'bound' if bound else 'agree'} (lanes "
                       f"{size * c}-{size * c + size - 1})", "forall", variables,
                       chunks_agree(range(c, c + 1), bound), lift=violation)
                 for c in (range(k // size) if tree else []) for bound in (False, True)),
               Query("maxima-agree (chunk maxima cut)", "forall", variables, maxima_agree,
                     lift=violation, cut_at="the chunk maxima"),
               *(query for part in parts for query in by_dag.get(part[1], [])),
               *(Query(f"quanta-range ({label(*part)})", "forall", variables, in_range(*part),
                       lift=violation) for part in parts if part[1] not in by_dag),
               *(query for part in parts if part[1] not in by_dag for query in (
                   [] if per_lane else [
                       *([Query(f"pairs-sum-alike ({label(*part)})", "forall", variables,
                                pairs_sum_alike(*part), lift=violation)] if by_pairs else []),
                       Query(f"chunks-sum-alike ({'pair sums cut, ' if by_pairs else ''}"
                             f"{label(*part)})", "forall", variables, chunks_sum_alike(*part),
                             lift=violation, cut_at="the pair sums" if by_pairs else ""),
                       Query(f"totals-agree (chunk sums cut, {label(*part)})", "forall",
                             variables, totals_agree(*part), cut_at="the chunk sums"),
                       Query(f"totals-bounded ({label(*part)})", "forall", variables,
                             totals_bounded(*part), lift=violation)]) + [
                   Query(f"units-relate (choice{'' if per_lane else ', group sums'} cut, "
                         f"{label(*part)})", "forall", variables, units_relate(*part),
                         cut_products=per_lane, cut_at="the path choice")]),
               *(tree_queries(desc, variables, runs_of, paths, units_cut, rest_cut, chunk_parts,
                              "path choice, special flags") if per_lane else
                 [*([Query("kept-alike (units, path choice cut)", "forall", variables,
                            kept_alike, lift=violation, cut_at="the units"),
                     Query("floor-sums-alike (units, kept units, path choice cut)", "forall",
                           variables, floor_sums_alike, lift=violation,
                           cut_at="the units the floor keeps")] if floored else []),
                  word_equal_query(desc, variables, runs_of, whole_cut,
                                   "units, floored sum, path choice, special flags" if floored
                                   else "units, path choice, special flags")])]
    return queries, ("two runs: build_dot (sparse) and the dense rules on the logical K ("
                     f"{_block_detail(desc)}) with A and B zeroed where the nibble mask is "
                     "clear, cut at the chunk maxima, the path choice, the units their groups "
                     "stages report and their special flags: each cut's relation is proved "
                     "on the real nodes first")


PRODUCTS_PER_UNIT_QUERY = 4
"""A block ``units-relate`` query covers the groups of at most this many compacted lanes (at
least one group). With its group sums cut, one NVFP4 group takes 0.2 s and one MXF4 group of
16 with its C merge 21 s (uncut: 60 s, and no answer in 120 s)."""


def masking_cover(desc: Descriptor, k: int) -> list[str]:
    """The counts the masking chains cover, against both traced runs (issue 30): the slots of
    every chunk (section 5), each run's product terms and units (window paths: one per lane
    and C's; block paths: one per group of each path and C's, the groups of
    :mod:`proofs.constants`' sizes on the compacted K and twice that on the logical K, or one
    per lane for groups of one product). The chains' per-chunk and per-group queries are
    issued for those counts, and their cuts replace every unit the runs report: a run with
    more (or fewer) units or groups than the queries cover is not proved."""
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    ops = TraceOps()
    runs = mask_runs(ops, desc, k, {n: ops.variable(n, w) for n, w in layout_variables(desc, k)})
    compacted = kept * (k // size)
    counts = [("slots (kept lanes of every chunk)", compacted, len(runs.slots))]
    if desc.family == "window":
        counts += [
            ("dense aligned units (logical lanes and C)", k + 1,
             len(runs.dense["align"]["units"])),
            ("sparse aligned units (compacted lanes and C)", compacted + 1,
             len(runs.sparse["align"]["units"])),
            ("dense terms (logical lanes and C)", k + 1, len(runs.dense["products"]["terms"])),
            ("sparse terms (compacted lanes and C)", compacted + 1,
             len(runs.sparse["products"]["terms"]))]
        return cover_mismatches(counts)
    counts += [("dense products (logical lanes)", k, len(runs.dense["products"]["products"])),
               ("sparse products (compacted lanes)", compacted,
                len(runs.sparse["products"]["products"]))]
    per_lane = product_group(desc) == 1
    for role, group in (("product_units", product_group(desc)),
                        ("c_units", c_dominant_group(desc))):
        path = "product" if role == "product_units" else "C-dominant"
        if per_lane:
            counts += [(f"dense {path} units (logical lanes and C)", k + 1,
                        len(runs.dense["groups"][role])),
                       (f"sparse {path} units (compacted lanes and C)", compacted + 1,
                        len(runs.sparse["groups"][role]))]
            continue
        count = compacted // group
        for side, record, lanes in (("dense", runs.dense, 2 * group),
                                    ("sparse", runs.sparse, group)):
            groups = record["groups"][GROUP_KEYS[role]]
            counts += [(f"{side} {path} groups (section 4: {lanes} lanes each)", count,
                        len(groups)),
                       (f"{side} {path} units (groups and C)", count + 1,
                        len(record["groups"][role])),
                       (f"{side} {path} lanes in its groups", count * lanes,
                        sum(len(g.placed) or 1 for g in groups))]
    return cover_mismatches(counts)


def check_masking(desc: Descriptor, k: int, settings: Settings) -> Row:
    chain = masking_chain if desc.family == "window" else block_masking_chain
    mismatches = masking_cover(desc, k)
    if mismatches:
        detail = ("two runs: build_dot (sparse) and the dense datapath on the logical K"
                  + (f" ({_block_detail(desc)})" if desc.family == "block" else ""))
        return uncovered_row("sparse-masking", desc, k, mismatches, CHAIN, detail)
    queries, detail = chain(desc, k)
    row = check_queries("sparse-masking", desc, k, queries, settings, CHAIN, detail)
    return lift_refuted(row, masking_query(desc, k), settings)


def _block_detail(desc: Descriptor) -> str:
    rules = dense_rules(desc)
    return (f"dense rules on the logical K from proofs/constants.py (SEMANTICS.md sections 4 "
            f"and 5): scale block {dense_block(desc)}, product groups {rules.product_group}, "
            f"C-dominant groups {rules.c_dominant_group}, windows {rules.product_window}/"
            f"{rules.c_window}/{rules.scale_window}")


# ---------------------------------------------------------- non-interference


def _other_lanes(desc: Descriptor, k: int) -> tuple[tuple[str, int], ...]:
    return tuple((f"other_{side}{i}", 32) for side in "ab" for i in range(k))


def _agreeing_inputs(ops: Ops, desc: Descriptor, k: int, values: Variables,
                     keeps: Keeps = keeps_position) -> tuple[DotInputs, DotInputs, Bool]:
    """The inputs, a second input with other A/B words, and "they agree where active"."""
    inputs = dot_inputs(desc, k, values)
    other = dataclasses.replace(inputs, a=[values[f"other_a{i}"] for i in range(k)],
                                b=[values[f"other_b{i}"] for i in range(k)])
    mask = active_mask(ops, desc, inputs.metadata, k, keeps)
    agree = ops.all_(ops.implies(m, ops.and_(ops.eq(x, y), ops.eq(u, v)))
                     for m, x, y, u, v in zip(mask, inputs.a, other.a, inputs.b, other.b))
    return inputs, other, ops.and_(legal(ops, desc, inputs), agree)


def selection_lemma(desc: Descriptor, k: int, keeps: Keeps = keeps_position) -> Query:
    """Inputs agreeing on the active positions compact to the same A and B words."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs, other, hypothesis = _agreeing_inputs(ops, desc, k, values, keeps)
        _, first = compact_sparse(ops, desc, inputs)
        _, second = compact_sparse(ops, desc, other)
        differ = ops.any_(ops.ne(x, y) for x, y in zip([*first.a, *first.b],
                                                       [*second.a, *second.b]))
        return ops.and_(hypothesis, differ), _meta_words(inputs)

    return Query("selection", "forall", layout_variables(desc, k) + _other_lanes(desc, k),
                 body)


def interference_query(desc: Descriptor, k: int) -> Query:
    """Violation (monolithic form): agreeing inputs give different words."""
    width = d_bits(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs, other, hypothesis = _agreeing_inputs(ops, desc, k, values)
        d = ops.extract(run_dot(ops, desc, inputs), width - 1, 0)
        d_other = ops.extract(run_dot(ops, desc, other), width - 1, 0)
        return ops.and_(hypothesis, ops.ne(d, d_other)), {"d": d, "d_other": d_other}

    return Query("agreeing-inputs-same-word", "forall",
                 layout_variables(desc, k) + _other_lanes(desc, k), body)


def interference_chain(desc: Descriptor, k: int) -> tuple[list[Query], str]:
    """Non-interference as two queries on ``build_dot``'s own DAG, cut at its compacted lanes.

    ``selection``: under the hypothesis (legal metadata, the inputs agree on
    the active positions of the nibble mask), the compacted A and B lanes
    that ``build_dot`` reports in its ``sparse`` stage are equal words in
    both runs. ``same-word``: the violation with each compacted lane of both
    runs replaced, at every occurrence, by one free variable per lane (sound
    by ``selection``: the real lanes are an instance), which also shows D
    depends on the A and B words only through those lanes.
    """
    variables = layout_variables(desc, k) + _other_lanes(desc, k)
    width = d_bits(desc)

    def runs(ops: Ops, values: Variables) -> tuple[Bool, list[BV], list[BV], BV, BV]:
        inputs, other, hypothesis = _agreeing_inputs(ops, desc, k, values)
        d, first = recorded(ops, lambda: run_dot(ops, desc, inputs))
        d_other, second = recorded(ops, lambda: run_dot(ops, desc, other))
        lanes = [[*r["sparse"]["a"], *r["sparse"]["b"]] for r in (first, second)]
        return (hypothesis, lanes[0], lanes[1], ops.extract(d, width - 1, 0),
                ops.extract(d_other, width - 1, 0))

    def selection(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        hypothesis, lanes, other_lanes, _, _ = runs(ops, values)
        differ = ops.any_(ops.ne(x, y) for x, y in zip(lanes, other_lanes))
        return ops.and_(hypothesis, differ), {}

    def same_word(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        hypothesis, lanes, other_lanes, d, d_other = runs(ops, values)
        violation = ops.and_(hypothesis, ops.ne(d, d_other))
        if not isinstance(ops, TraceOps):
            return violation, {"d": d, "d_other": d_other}
        names = {}
        for i, (x, y) in enumerate(zip(lanes, other_lanes)):
            for lane in (x, y):
                if names.setdefault(lane.node.id, f"lane!{i}") != f"lane!{i}":
                    raise InternalError(f"{desc.name}: compacted lanes share a node")
        (cut,), _ = cut_nodes([violation.node], lambda n: names.get(n.id), ops=ops)
        (cut_d,), _ = cut_nodes([ops.ne(d, d_other).node], lambda n: names.get(n.id), ops=ops)
        lane_words = {n for n, _ in variables if n[0] in "ab" or n.startswith("other_")}
        reached = {n.params[0] for n in free_variables([cut_d])}
        if reached & lane_words:
            raise InternalError(f"{desc.name}: D reads A/B words other than through the "
                                f"compacted lanes: {sorted(reached & lane_words)[:4]}")
        return ops.wrap_bool(cut), {}

    def possible(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        hypothesis, _, _, d, d_other = runs(ops, values)
        return hypothesis, {**_meta_words(dot_inputs(desc, k, values)), "d": d,
                            "d_other": d_other}

    queries = [hypothesis_query(variables, possible),
               Query("selection", "forall", variables, selection),
               Query("same-word (lanes cut)", "forall", variables, same_word)]
    return queries, ("two runs of build_dot, cut at the compacted lanes its sparse stage "
                     "reports: selection proves them equal under the hypothesis, same-word "
                     "proves D equal with them free (and that D reads A and B only through "
                     "them)")


def check_interference(desc: Descriptor, k: int, settings: Settings) -> Row:
    queries, detail = interference_chain(desc, k)
    return check_queries("sparse-non-interference", desc, k, queries, settings, CHAIN, detail)


def is_sparse(desc: Descriptor) -> bool:
    return desc.sparse and desc.family in ("window", "block")


PROPERTIES = [
    Property("sparse-masking", "sparse equals the dense datapath on the logical K with A and "
             "B zeroed at disabled positions (mask from the nibble bits)",
             ("spec.sparse", "spec.catalog", "spec.window", "spec.blockscaled",
              "spec.accumulate", "spec.convert", "spec.specials"),
             MASKING_REQUIRED, is_sparse, check_masking,
             fast=(("sparse-tf32", 4),)),
    Property("sparse-non-interference", "inputs agreeing on the active positions (and C, "
             "scales, metadata) give the same word",
             ("spec.sparse", "spec.catalog"), SPARSE_PATHS, is_sparse, check_interference,
             fast=(("sparse-nvfp4", 32),)),
]
