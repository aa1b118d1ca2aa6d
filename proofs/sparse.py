"""Sparse masking of window paths and non-interference (covers spec/sparse, spec/catalog's
compact_sparse, spec/window, spec/accumulate, spec/convert, spec/specials).

SEMANTICS.md section 5: the metadata keeps some positions of each chunk of
the logical K; disabled positions do not exist.

- **Masking equivalence** (window paths; block-scaled paths are a declaration on the
  equivalence engine, :mod:`proofs.families.sparse_masking`): under legal metadata, the
  sparse word equals the dense datapath on the full logical K with A and B zeroed at the
  disabled positions. The mask, the slots (which logical position each compacted lane
  holds) and the legal selectors are computed here from the nibble bits and
  :mod:`proofs.constants`, not through ``spec/sparse.py``, so a nibble-order,
  field-order or legality bug there cannot sit on both sides.
- **Non-interference**: two inputs that agree on the active positions (and
  on C, scales and metadata) give the same word, whatever the disabled
  positions hold.

Both are ``chain`` rows over ``build_dot``'s own DAGs: masking by
:func:`masking_chain`, cut at the stage values the two runs report and each
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
from tcspec.smt.trace import Node, TraceOps, cut_nodes
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


def block_rules(desc: Descriptor) -> BlockRules:
    """Section 4's rules of ``desc``'s family on the compacted K, written in
    :mod:`proofs.constants`, never read from ``spec/``: the windows, the scale floor, the C
    merge, the subnormal floor and the exact-sum groups."""
    family = block_family(desc)
    return BlockRules(product_window=PRODUCT_WINDOW[family], scale_window=SCALE_WINDOW[family],
                      c_window=C_WINDOW[family], product_group=PRODUCT_GROUP[family],
                      c_dominant_group=C_DOMINANT_GROUP[family],
                      group_c_merge=GROUP_C_MERGE[family],
                      subnormal_floor=SUBNORMAL_FLOOR[family])


def dense_rules(desc: Descriptor) -> BlockRules:
    """:func:`block_rules` on the logical K (section 5: they run on the compacted K, so each
    exact-sum group covers twice the logical lanes): the FP4 exact-sum groups doubled
    (NVFP4 4 -> 8 and 16 -> 32, MXF4 16 -> 32); MXF8F6F4 keeps per-product truncation."""
    rules = block_rules(desc)
    doubled = 1 if rules.product_group == rules.c_dominant_group == 1 else 2
    return dataclasses.replace(rules, product_group=doubled * rules.product_group,
                               c_dominant_group=doubled * rules.c_dominant_group)


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
    return block_dot(ops, desc, DotInputs(a, b, inputs.c, inputs.scale_a, inputs.scale_b),
                     block=dense_block(desc), rules=dense_rules(desc))


def block_dot(ops: Ops, desc: Descriptor, inputs: DotInputs, *, block: int,
              rules: BlockRules) -> BV:
    """The specification's block arithmetic of ``desc``'s formats on ``inputs`` with the
    given scale block and rules (ours, from :mod:`proofs.constants`, not the spec's table)."""
    fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling or ""])
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fs, FloatFormat)
    return block_scaled_dot(ops, fa, fb, fs, inputs.a, inputs.b, inputs.c, inputs.scale_a,
                            inputs.scale_b, block=block, rules=rules)


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


def masking_cover(desc: Descriptor, k: int) -> list[str]:
    """The counts the window masking chain covers, against both traced runs (issue 30): the
    slots of every chunk (section 5), each run's product terms and aligned units (one per
    lane and C's). The chain's per-chunk queries are issued for those counts, and their cuts
    replace every unit the runs report: a run with more (or fewer) units than the queries
    cover is not proved."""
    size, rule = sparse_rule(desc)
    kept = SPARSE_KEPT[rule]
    ops = TraceOps()
    runs = mask_runs(ops, desc, k, {n: ops.variable(n, w) for n, w in layout_variables(desc, k)})
    compacted = kept * (k // size)
    counts = [("slots (kept lanes of every chunk)", compacted, len(runs.slots)),
              ("dense aligned units (logical lanes and C)", k + 1,
               len(runs.dense["align"]["units"])),
              ("sparse aligned units (compacted lanes and C)", compacted + 1,
               len(runs.sparse["align"]["units"])),
              ("dense terms (logical lanes and C)", k + 1, len(runs.dense["products"]["terms"])),
              ("sparse terms (compacted lanes and C)", compacted + 1,
               len(runs.sparse["products"]["terms"]))]
    return cover_mismatches(counts)


def check_masking(desc: Descriptor, k: int, settings: Settings) -> Row:
    """A window path's masking row as a chain (block paths: the engine family,
    :mod:`proofs.families.sparse_masking`)."""
    if desc.family != "window":
        raise ValueError(f"the masking chain is stated for window paths, not {desc.name}")
    mismatches = masking_cover(desc, k)
    if mismatches:
        return uncovered_row("sparse-masking", desc, k, mismatches, CHAIN,
                             "two runs: build_dot (sparse) and the dense datapath on the "
                             "logical K")
    queries, detail = masking_chain(desc, k)
    row = check_queries("sparse-masking", desc, k, queries, settings, CHAIN, detail)
    return lift_refuted(row, masking_query(desc, k), settings)


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
    Property("sparse-non-interference", "inputs agreeing on the active positions (and C, "
             "scales, metadata) give the same word",
             ("spec.sparse", "spec.catalog"), SPARSE_PATHS, is_sparse, check_interference,
             fast=(("sparse-nvfp4", 32),)),
]
