"""Sign symmetry as a chain of stage queries: what the per-architecture matrix and the
breakers still ask (the ``sign-symmetry`` rows are the engine's, :mod:`proofs.families`).

Flipping the format's own sign bit of every A element (or B element) and of C negates D,
except that a zero D stays +0 and a NaN stays the canonical NaN (SEMANTICS.md 2.5, 2.7):
truncation toward zero is odd. :func:`sign_query` states it over one run pair;
:func:`unit_chain` proves it on a window path (the ``arch-sign-symmetry`` rows of the NVIDIA
fused dots) by a chain over two runs of ``build_dot``'s own DAG, its multipliers cut
(:mod:`proofs.cutpoints`): the terms negate, the aligned units negate and stay in range,
each level of the sum negates, and the encoded word negates, each query cut at the stage
below it. Sign bits come from the rule book's field tables (:mod:`proofs.reference`),
never from ``spec/``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tcspec.proofs import reference
from tcspec.proofs.constants import CANONICAL_NAN
from tcspec.proofs.core import (
    InternalError,
    Property,
    Query,
    QueryBody,
    Variables,
    cover_mismatches,
    dot_inputs,
    layout_variables,
    run_dot,
)
from tcspec.proofs.cutpoints import recorded
from tcspec.smt.trace import Node, TraceOps, cut_nodes
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import DotInputs
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FloatFormat, Term


def sign_bit(name: str) -> int:
    """The bit of a raw word that holds the format's sign (section 1 container layout, from
    :mod:`proofs.reference`'s field table; never the spec's ``FORMATS``)."""
    return reference.sign_bit(name)


def d_bits(desc: Descriptor) -> int:
    """The D word's width (section 1: F32 32 bits, F16 16 bits), from the reference."""
    return reference.word_bits(desc.d_type)


def _flip(ops: Ops, word: BV, bit: int) -> BV:
    return ops.bvxor(word, 1 << bit)


def negated(ops: Ops, d: BV, d_format: str | FloatFormat, nan_word: int | None = None) -> BV:
    """``-d`` as the datapath must give it: a zero stays +0, a NaN stays canonical
    (``nan_word``; default: section 2.2's, :mod:`proofs.constants`)."""
    top = d.width - 1
    magnitude = ops.extract(d, top - 1, 0)
    is_zero = ops.eq(magnitude, 0)
    name = d_format if isinstance(d_format, str) else d_format.name
    canonical = CANONICAL_NAN[name] if nan_word is None else nan_word
    is_nan = ops.eq(d, canonical)
    flipped = _flip(ops, d, top)
    return ops.ite(ops.or_(is_zero, is_nan), d, flipped)


def sign_query(desc: Descriptor, k: int, operand: str, flip_c: bool = True) -> Query:
    """Violation: flipping every ``operand`` (``a`` or ``b``) sign and C's does not negate D
    (``flip_c=False`` leaves C alone: a property that fails, for tests)."""
    d_format = desc.d_type
    variables = layout_variables(desc, k)
    operand_format = desc.a_format if operand == "a" else desc.b_format
    lane_bit, c_bit = sign_bit(operand_format), sign_bit(desc.d_type)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        c = _flip(ops, inputs.c, c_bit) if flip_c else inputs.c
        flipped = DotInputs(lanes if operand == "a" else inputs.a,
                            lanes if operand == "b" else inputs.b, c, inputs.scale_a,
                            inputs.scale_b, inputs.metadata)
        d = run_dot(ops, desc, inputs)
        d_flipped = run_dot(ops, desc, flipped)
        width = d_bits(desc)
        d, d_flipped = ops.extract(d, width - 1, 0), ops.extract(d_flipped, width - 1, 0)
        return ops.ne(d_flipped, negated(ops, d, d_format)), {"d": d, "d_flipped": d_flipped}

    return Query(f"flip-{operand}-and-c", "forall", variables, body, cut_products=True)


# ------------------------------------------------------------------ lemmas


# --------------------------------------------- block paths that sum groups (NVFP4)


Level = list[tuple[BV, BV, int]]
"""Nodes of one level of a sum tree in both runs: ``(node, flipped run's node, bound)``."""


def sum_tree(ops: Ops, leaves: Level) -> list[Level]:
    """The levels of ``ops.sum``'s balanced tree (adjacent pairs, an odd last node carried
    up) over ``leaves`` in both runs, leaves first; an inner node's bound is the sum of its
    children's. On :class:`TraceOps` the nodes are the DAG's own (hash-consing)."""
    level, levels = leaves, [leaves]
    while len(level) > 1:
        paired = [(ops.add(x1, y1), ops.add(x2, y2), bx + by)
                  for (x1, x2, bx), (y1, y2, by) in zip(level[0::2], level[1::2])]
        level = paired + level[len(paired) * 2:]
        levels.append(level)
    return levels


def level_facts(ops: Ops, level: Level) -> Bool:
    """Each node of ``level``: the flipped run's node is the negated node, whose magnitude
    is within its bound (so it is not the minimum)."""
    return ops.all_([ops.and_(ops.eq(x2, ops.neg(x)), ops.sle(-bound, x), ops.sle(x, bound),
                              ops.ne(x, 1 << (x.width - 1)))
                     for x, x2, bound in level])


def terms_differ(ops: Ops, pairs: list[tuple[Term, Term]]) -> Bool:
    """Some term's raw or nonzero flag differs between the two runs."""
    return ops.not_(ops.all_([ops.and_(ops.eq(x.raw, y.raw), ops.iff(x.nonzero, y.nonzero))
                              for x, y in pairs]))


def terms_cut(ops: TraceOps, pairs: list[tuple[Term, Term]], desc: Descriptor
              ) -> dict[int, Node]:
    """Each term's raw and nonzero flag one free variable for both runs (sound once
    :func:`terms_differ` is unsat)."""
    chosen: dict[int, Node] = {}
    for i, (x, y) in enumerate(pairs):
        raw, nonzero = ops.variable(f"cut!raw{i}", x.raw.width), ops.bool_variable(
            f"cut!nonzero{i}")
        for node, free in ((x.raw, raw), (y.raw, raw), (x.nonzero, nonzero),
                           (y.nonzero, nonzero)):
            if chosen.setdefault(node.node.id, free.node) is not free.node:
                raise InternalError(f"{desc.name}: two terms' raws or flags share a node")
    return chosen


def negated_cut(ops: TraceOps, chosen: dict[int, Node], pairs: list[tuple[BV, BV]],
                name: str, desc: Descriptor) -> list[Bool]:
    """Cut each pair ``(x, x2)`` (a node and the flipped run's node) to ``y`` and ``-y``
    in ``chosen``; returns the premises ``y`` is not the minimum."""
    premises = []
    for i, (x, x2) in enumerate(pairs):
        if x.node.id in chosen or x2.node.id in chosen:
            raise InternalError(f"{desc.name}: two cut nodes share a node")
        y = ops.variable(f"cut!{name}!{i}", x.width)
        chosen[x.node.id], chosen[x2.node.id] = y.node, ops.neg(y).node
        premises.append(ops.ne(y, 1 << (y.width - 1)))
    return premises


def window_runs(desc: Descriptor, k: int, operand: str
                ) -> Callable[[Ops, Variables], tuple[BV, BV, dict, dict]]:
    """Both runs of a window path's sign chain: ``(D, D flipped, stages, flipped stages)``,
    each stage record the first ``align`` stage's units, quantum and terms and the sum the
    ``convert`` stage encodes."""
    lane_bit, c_bit = sign_bit(desc.a_format if operand == "a" else desc.b_format), sign_bit(
        desc.d_type)
    width = d_bits(desc)

    def runs(ops: Ops, values: Variables) -> tuple[BV, BV, dict, dict]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        flipped = dataclasses.replace(inputs, c=_flip(ops, inputs.c, c_bit),
                                      **{operand: lanes})
        d, first = recorded(ops, lambda: run_dot(ops, desc, inputs))
        d2, second = recorded(ops, lambda: run_dot(ops, desc, flipped))
        return (ops.extract(d, width - 1, 0), ops.extract(d2, width - 1, 0),
                *({"units": list(stage["align"]["units"]), "quantum": stage["align"]["quantum"],
                   "terms": list(stage["align"]["terms"]),
                   "sum": stage["convert"]["units"] if "convert" in stage else None}
                  for stage in (first, second)))

    return runs


def window_cover(desc: Descriptor, k: int, operand: str, lanes: int | None = None
                 ) -> list[str]:
    """The counts :func:`unit_chain` covers against the traced DAG: ``lanes + 1`` terms and
    units (the lanes of the first ``align`` stage and C; default all ``k``) in both runs;
    the sum tree's levels then follow from the units (checked by node identity)."""
    ops = TraceOps()
    variables = layout_variables(desc, k)
    _, _, first, second = window_runs(desc, k, operand)(
        ops, {n: ops.variable(n, w) for n, w in variables})
    n = (k if lanes is None else lanes) + 1
    return cover_mismatches([
        ("aligned units (lanes and C)", n, len(first["units"])),
        ("terms (lanes and C)", n, len(first["terms"])),
        ("aligned units of the flipped run", n, len(second["units"])),
        ("terms of the flipped run", n, len(second["terms"]))])


def _parts(start: int, stop: int, size: int) -> list[range]:
    return [range(i, min(i + size, stop)) for i in range(start, stop, size)]


def unit_chain(desc: Descriptor, k: int, operand: str, cut_sum: bool = True) -> list[Query]:
    """Sign symmetry of a window path as a chain of queries on two runs of ``build_dot``'s
    DAG (signs flipped or not), cut at the units its ``align`` stage reports, at each level
    of :func:`spec.accumulate.exact_sum`'s tree over them and at the sum its ``convert``
    stage encodes.

    - ``terms-agree``: every term's raw and nonzero flag are equal in the two runs;
      ``quanta-agree`` (those cut to one variable for both runs): so are the quanta.
    - ``units-negate`` (both quanta one free ``q``; :data:`UNITS_PER_WINDOW_QUERY` units a
      query): each unit of the flipped run is the negated unit; ``units-in-range`` (the
      first run's real nodes): no unit is the most negative value.
    - ``sum-negates`` (one query per level of :func:`sum_tree`; the first with the units
      cut to ``v_i`` and ``-v_i``, ``v_i`` not the minimum; then the level below cut, free
      under its facts): each node of the flipped run is the negated node, within the sum
      of its leaves' bounds (so never the minimum). The root is checked to be the sum the
      ``convert`` stage reports (hash-consing gives back the DAG's own node).
    - ``word-negates`` (sum cut to ``s`` and ``-s``, ``s`` not the minimum, both quanta to
      one ``q``): the violation is unsat.

    Where the traced sum is not that tree (a broken ``exact_sum``), ``word-negates`` is
    asked with the units cut instead of the tree. ``cut_sum=False`` (models whose
    ``convert`` stage is not the sum of the first ``align`` stage's units) asks one
    ``units-negate`` on the real DAG (quanta equal, units negated and never the minimum),
    then ``word-negates`` with the units cut.
    Products are cut in each query (:mod:`proofs.cutpoints`).
    """
    d_format = desc.d_type
    variables = layout_variables(desc, k)
    runs = window_runs(desc, k, operand)

    def terms_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        return terms_differ(ops, list(zip(first["terms"], second["terms"]))), {}

    def quanta_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """Violation: the quanta differ, with every term's raw and nonzero flag one
        variable for both runs (sound by ``terms-agree``)."""
        _, _, first, second = runs(ops, values)
        violation = ops.ne(first["quantum"], second["quantum"])
        if not isinstance(ops, TraceOps):
            return violation, {}
        chosen = terms_cut(ops, list(zip(first["terms"], second["terms"])), desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def units_part_negate(part: range) -> QueryBody:
        """Violation: a unit of ``part`` in the flipped run is not the negated unit, with
        both quanta one free ``q`` (sound by ``quanta-agree``)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            violation = ops.any_(ops.ne(second["units"][i], ops.neg(first["units"][i]))
                                 for i in part)
            if not isinstance(ops, TraceOps):
                return violation, {}
            chosen = quantum_cut(ops, first, second)
            (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}
        return body

    def units_in_range(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, _ = runs(ops, values)
            return ops.any_(ops.eq(first["units"][i], 1 << (first["units"][i].width - 1))
                            for i in part), {}
        return body

    def violated(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, _, _ = runs(ops, values)
        return ops.ne(d2, negated(ops, d, d_format)), {"d": d, "d_flipped": d2}

    def units_negate(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        bad = [ops.ne(first["quantum"], second["quantum"])]
        for u, v in zip(first["units"], second["units"]):
            bad += [ops.ne(v, ops.neg(u)), ops.eq(u, 1 << (u.width - 1))]
        return ops.any_(bad), {}

    def quantum_cut(ops: TraceOps, first: dict, second: dict) -> dict[int, Node]:
        q = ops.variable("unit!q", first["quantum"].width).node
        return {first["quantum"].node.id: q, second["quantum"].node.id: q}

    def levels(ops: Ops, first: dict, second: dict) -> list[Level]:
        total, total2 = first["sum"], second["sum"]
        if total is None or total2 is None:
            raise InternalError(f"{desc.name}: no convert stage reports the sum")
        leaves = [(ops.sext(u, total.width), ops.sext(v, total.width), (1 << (u.width - 1)) - 1)
                  for u, v in zip(first["units"], second["units"])]
        tree = sum_tree(ops, leaves)
        ((root, root2, bound),) = tree[-1]
        if (root.node.id, root2.node.id) != (total.node.id, total2.node.id):
            raise InternalError(f"{desc.name}: the sum is not ops.sum's tree over the units")
        if bound >= 1 << (total.width - 1):
            raise InternalError(f"{desc.name}: the sum could reach its minimum")
        return tree

    def sum_level(index: int) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            if not isinstance(ops, TraceOps):
                return violated(ops, values)
            tree = levels(ops, first, second)
            chosen = quantum_cut(ops, first, second)
            if index == 1:
                premise = ops.all_(negated_cut(ops, chosen, [
                    (u, v) for u, v in zip(first["units"], second["units"])], "unit", desc))
            else:
                below = tree[index - 1]
                negated_cut(ops, chosen, [(x, x2) for x, x2, _ in below],
                            f"level{index - 1}", desc)
                premise = level_facts(ops, below)
            violation = ops.not_(level_facts(ops, tree[index]))
            (cut, premise_cut), _ = cut_nodes([violation.node, premise.node],
                                              lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), ops.wrap_bool(premise_cut)), {}
        return body

    def word_negates(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, first, second = runs(ops, values)
        violation = ops.ne(d2, negated(ops, d, d_format))
        if not isinstance(ops, TraceOps):
            return violation, {"d": d, "d_flipped": d2}
        chosen = quantum_cut(ops, first, second)
        if cut_sum:
            pairs = [(first["sum"], second["sum"])]
            if pairs[0][0] is None or pairs[0][1] is None:
                raise InternalError(f"{desc.name}: no convert stage reports the sum")
        else:
            pairs = list(zip(first["units"], second["units"]))
        premises = negated_cut(ops, chosen, pairs, "sum" if cut_sum else "unit", desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.and_(ops.wrap_bool(cut), *premises), {}

    def sum_is_tree() -> bool:
        ops = TraceOps()
        _, _, first, second = runs(ops, {name: ops.variable(name, w) for name, w in variables})
        try:
            levels(ops, first, second)
        except InternalError:
            return False
        return True

    if not cut_sum:
        negate = [Query(f"units-negate ({operand})", "forall", variables, units_negate,
                        cut_products=True, lift=violated)]
    else:
        parts = _parts(0, k + 1, UNITS_PER_WINDOW_QUERY)
        label = {part: "" if len(parts) == 1 else f", units {part.start}-{part.stop - 1}"
                 for part in parts}
        negate = [Query(f"terms-agree ({operand})", "forall", variables, terms_agree,
                        lift=violated),
                  Query(f"quanta-agree ({operand}, term raws and flags cut)", "forall",
                        variables, quanta_agree, lift=violated,
                        cut_at="the terms' raws and nonzero flags"),
                  *(Query(f"units-negate ({operand}, quanta cut{label[part]})", "forall",
                          variables, units_part_negate(part), cut_products=True, lift=violated,
                          cut_at="the quanta") for part in parts),
                  *(Query(f"units-in-range ({operand}{label[part]})", "forall", variables,
                          units_in_range(part), cut_products=True, lift=violated)
                    for part in parts)]
    if not (cut_sum and sum_is_tree()):
        return [*negate, Query(f"word-negates ({operand}, units cut)", "forall", variables,
                              word_negates, cut_products=True, lift=violated,
                              cut_at="the units and quanta the align stage reports")]
    depth = (k + 1 - 1).bit_length()
    return [*negate,
            *(Query(f"sum-negates ({operand}, tree level {index}, "
                    f"{'units' if index == 1 else 'level below'} cut)", "forall", variables,
                    sum_level(index), cut_products=True, lift=violated,
                    cut_at="the units and quanta" if index == 1 else "the tree level below")
              for index in range(1, depth + 1)),
            Query(f"word-negates ({operand}, sum cut)", "forall", variables, word_negates,
                  cut_products=True, lift=violated,
                  cut_at="the sum and quantum the convert stage encodes")]


UNITS_PER_WINDOW_QUERY = 8
"""A window chain's ``units-negate`` and ``units-in-range`` queries cover at most this many
units each."""

PROPERTIES: tuple[Property, ...] = ()
"""``sign-symmetry`` is a declaration on the equivalence engine now
(:mod:`proofs.families.sign_symmetry`); this module keeps the chain's queries that the
per-architecture matrix and the breakers' small-K counterexamples still use."""
