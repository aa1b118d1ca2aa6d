"""The equivalence engine on small DAGs (issue 30): every verdict, the relations it merges
by, sums in another order, case splits, hypotheses, and the proof cache."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tcspec.proofs.engine import (
    PROVED,
    REFUTED,
    UNKNOWN,
    EngineSettings,
    ProofCache,
    prove_equivalent,
    structure_key,
)
from tcspec.proofs.engine.relations import WordRelation
from tcspec.proofs.engine.sums import equal_extrema, equal_sums
from tcspec.proofs.engine.sweep import Sweep, _Proposal
from tcspec.smt.trace import TraceOps, evaluate

FAST = EngineSettings(local_timeout=10, cone_timeout=20, output_timeout=30, quick_output=0)
ROOMY = EngineSettings(local_timeout=120, cone_timeout=120, output_timeout=300, quick_output=0)
"""Limits no trivial query reaches even on a loaded machine (the chain tests' verdicts)."""


def _samples(names: dict[str, int], count: int = 64, seed: int = 1) -> dict[str, list[int]]:
    rng = random.Random(seed)
    return {name: [rng.getrandbits(width) for _ in range(count)] for name, width in names.items()}


def _replay(left, right):
    def replay(words: dict[str, int]) -> list[tuple[int, int]]:
        return [tuple(evaluate([left.node, right.node], words))]  # type: ignore[list-item]
    return replay


def test_two_texts_of_one_function_are_proved_equal():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    left = ops.mul(ops.add(x, y), 2)
    right = ops.add(ops.shl(x, 1), ops.shl(y, 1))
    result = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                              settings=FAST, replay=_replay(left, right))
    assert result.result == PROVED
    assert result.stats.samples == 64


def test_a_difference_is_refuted_with_words_replayed_on_both_sides():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    left, right = ops.add(x, y), ops.bvor(x, y)
    result = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                              settings=FAST, replay=_replay(left, right))
    assert result.result == REFUTED
    (a, b), = result.outputs
    assert a != b
    assert (result.words["x"] + result.words["y"]) % 256 == a
    assert result.words["x"] | result.words["y"] == b


def test_a_rare_difference_the_samples_miss_is_found_by_the_solver():
    ops = TraceOps()
    x = ops.variable("x", 32)
    left = ops.bvand(x, 0xFF)
    right = ops.ite(ops.eq(x, 0xDEADBEEF), ops.const(1, 32), ops.bvand(x, 0xFF))
    result = prove_equivalent([(left, right)], samples=_samples({"x": 32}), settings=FAST,
                              replay=_replay(left, right))
    assert result.result == REFUTED
    assert result.words["x"] == 0xDEADBEEF


def test_a_replay_that_disagrees_with_the_trace_is_an_error_not_a_verdict():
    ops = TraceOps()
    x = ops.variable("x", 8)
    left, right = ops.add(x, 1), ops.add(x, 2)
    with pytest.raises(AssertionError, match="executable sides"):
        prove_equivalent([(left, right)], samples=_samples({"x": 8}), settings=FAST,
                         replay=lambda words: [(0, 0)])


def test_cut_points_by_relation_negation_and_extension():
    ops = TraceOps()
    a, b = ops.variable("a", 8), ops.variable("b", 8)
    left_inner = ops.sub(ops.sext(a, 12), ops.sext(b, 12))
    left = ops.extract(ops.mul(left_inner, left_inner), 11, 0)
    right_inner = ops.neg(ops.sub(ops.sext(b, 16), ops.sext(a, 16)))
    right = ops.extract(ops.mul(right_inner, right_inner), 11, 0)
    result = prove_equivalent([(left, right)], samples=_samples({"a": 8, "b": 8}),
                              settings=FAST, replay=_replay(left, right))
    assert result.result == PROVED
    assert result.stats.proved >= 1


def test_sums_in_another_order_are_equal_by_their_normal_form():
    ops = TraceOps()
    terms = [ops.variable(f"u{i}", 28) for i in range(9)]
    tree = ops.sum([ops.sext(t, 32) for t in terms])
    chain = ops.sext(terms[8], 34)
    for t in reversed(terms[:8]):
        chain = ops.add(chain, ops.sext(t, 34))
    assert equal_sums(tree.node, chain.node, "sext")
    result = prove_equivalent([(ops.sext(tree, 34), chain)],
                              samples=_samples({f"u{i}": 28 for i in range(9)}),
                              settings=FAST, replay=_replay(ops.sext(tree, 34), chain))
    assert result.result == PROVED


def test_a_sum_that_can_overflow_is_not_taken_for_an_integer_sum():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    narrow = ops.add(ops.sext(x, 8), ops.sext(y, 8))
    wide = ops.add(ops.sext(x, 9), ops.sext(y, 9))
    assert not equal_sums(narrow.node, wide.node, "sext")
    assert equal_sums(ops.add(y, x).node, narrow.node, "equal")


def test_special_value_selectors_split_the_output_into_cases():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    nan = ops.eq(ops.extract(x, 7, 6), 3)
    left = ops.ite(nan, ops.const(0xFF, 8), ops.add(x, y))
    nan_too = ops.and_(ops.bit(x, 7), ops.bit(x, 6))
    right = ops.ite(nan_too, ops.const(0xFF, 8), ops.add(y, x))
    result = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                              settings=FAST, replay=_replay(left, right))
    assert result.result == PROVED
    assert result.stats.cases == 2


def test_a_hypothesis_restricts_the_inputs():
    ops = TraceOps()
    x = ops.variable("x", 8)
    small = ops.ult(x, 100)
    left = ops.extract(ops.add(ops.zext(x, 9), 100), 7, 0)
    right = ops.add(x, 100)
    samples = {"x": list(range(0, 256, 3))}
    result = prove_equivalent([(left, right)], samples=samples, assumptions=[small],
                              settings=FAST, replay=_replay(left, right))
    assert result.result == PROVED
    left2 = ops.ite(small, x, ops.const(0, 8))
    right2 = ops.ite(ops.ult(x, 99), x, ops.const(0, 8))
    result = prove_equivalent([(left2, right2)], samples=samples, assumptions=[small],
                              settings=FAST, replay=_replay(left2, right2))
    assert result.result == REFUTED and result.words["x"] == 99


def test_unknown_names_the_pair_it_stopped_at():
    ops = TraceOps()
    a, b = ops.variable("a", 64), ops.variable("b", 64)
    left = ops.mul(ops.mul(a, b), ops.mul(a, b))
    right = ops.mul(a, ops.mul(b, ops.mul(a, b)))
    tight = EngineSettings(local_timeout=0.5, cone_timeout=0.5, output_timeout=1)
    result = prove_equivalent([(left, right)], samples=_samples({"a": 64, "b": 64}),
                              settings=tight, replay=_replay(left, right))
    assert result.result in (UNKNOWN, PROVED)
    if result.result == UNKNOWN:
        assert "not decided" in result.stopped


def test_the_proof_cache_answers_a_repeated_query_and_keys_ignore_variable_names(tmp_path):
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    p, q = ops.variable("p", 8), ops.variable("q", 8)
    assert structure_key([ops.add(ops.mul(x, y), x).node]) == \
        structure_key([ops.add(ops.mul(p, q), p).node])
    assert structure_key([ops.add(ops.mul(x, y), y).node]) != \
        structure_key([ops.add(ops.mul(x, y), x).node])
    left = ops.mul(ops.add(x, y), 2)
    right = ops.add(ops.shl(x, 1), ops.shl(y, 1))
    cache = ProofCache(tmp_path / "cache.jsonl")
    first = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                             settings=FAST, cache=cache)
    again = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                             settings=FAST, cache=ProofCache(tmp_path / "cache.jsonl"))
    assert first.result == again.result == PROVED
    assert again.stats.cache_hits >= 1 and again.stats.solver_seconds == 0


def test_widths_and_tracers_are_checked():
    ops, other = TraceOps(), TraceOps()
    x = ops.variable("x", 8)
    with pytest.raises(ValueError, match="widths"):
        prove_equivalent([(x, ops.zext(x, 9))], samples={"x": [1]})
    with pytest.raises(ValueError, match="one TraceOps"):
        prove_equivalent([(x, other.variable("x", 8))], samples={"x": [1]})


def test_a_hint_splits_cases_on_its_condition_and_both_are_proved():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    some = ops.ne(x, 0)
    left = ops.ite(some, ops.add(x, y), y)
    right = ops.add(x, y)
    result = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                              settings=FAST, replay=_replay(left, right), splits=[some])
    assert result.result == PROVED
    assert result.stats.cases >= 2


def test_a_spent_row_budget_is_unknown_never_proved():
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    some = ops.ne(x, 0)
    left = ops.ite(some, ops.add(x, y), y)
    right = ops.add(x, y)
    spent = EngineSettings(local_timeout=10, cone_timeout=20, output_timeout=30,
                           row_budget=0.0)
    result = prove_equivalent([(left, right)], samples=_samples({"x": 8, "y": 8}),
                              settings=spent, replay=_replay(left, right), splits=[some])
    assert result.result == UNKNOWN
    assert "were spent before case" in result.stopped


def test_an_undecided_ite_pair_is_split_on_its_selector_the_engine_found():
    ops = TraceOps()
    a, b, d = (ops.variable(n, 32) for n in "abd")
    chosen = ops.ne(ops.variable("c", 1), 0)

    def hard(x):
        return ops.mul(ops.add(ops.mul(x, x), a), ops.bvxor(x, a))

    left = ops.add(ops.ite(chosen, hard(b), hard(d)), 1)
    right = ops.add(hard(ops.ite(chosen, b, d)), 1)
    tight = EngineSettings(local_timeout=1, cone_timeout=1, output_timeout=2, quick_output=0)
    result = prove_equivalent([(left, right)],
                              samples=_samples({"a": 32, "b": 32, "d": 32, "c": 1}),
                              settings=tight, replay=_replay(left, right))
    assert result.result == PROVED, result.stopped
    if result.stats.undecided:
        assert len(result.stats.splits_found) == 1 and result.stats.cases == 2
    sweep = Sweep([(left.node, right.node)], [], _samples({"a": 32, "b": 32, "d": 32, "c": 1}),
                  tight)
    sweep.undecided.append(_Proposal(left.node.args[0], right.node.args[0], "equal"))
    assert sweep.found_split() is chosen.node
    sweep.image[chosen.node.id] = sweep.merged.p_bool_const(True)
    assert sweep.found_split() is None


def test_an_undecided_step_word_is_decided_as_a_lemma_and_merged_for_the_next_step():
    ops = TraceOps()
    a, b, d, e = (ops.variable(n, 64) for n in "abde")
    special = ops.ne(ops.variable("c", 1), 0)

    def hard(x):
        return ops.mul(ops.add(ops.mul(x, x), a), ops.bvxor(x, a))

    def step(word):
        return ops.ite(ops.eq(e, 0), e, ops.add(ops.mul(word, e), hard(e)))

    left_word = ops.ite(special, hard(b), hard(d))
    right_word = hard(ops.ite(special, b, d))
    instant = EngineSettings(local_timeout=0.01, cone_timeout=0.01, output_timeout=0.01,
                             quick_output=0)
    words = {"a": 64, "b": 64, "d": 64, "e": 64, "c": 1}
    left, right = step(left_word), step(right_word)
    result = prove_equivalent([(left, right)], samples=_samples(words), settings=instant,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped
    assert result.stats.lemmas == 1 and "1 decided as lemmas" in result.stats.summary()
    wrong = step(hard(ops.ite(special, b, a)))
    result = prove_equivalent([(left, wrong)], samples=_samples(words), settings=instant,
                              replay=_replay(left, wrong))
    assert result.result == REFUTED


def test_a_case_split_keeps_every_output_pair():
    """Cases split on the first pair's special-value chain carry the other pairs too."""
    ops = TraceOps()
    a, b = ops.variable("a", 32), ops.variable("b", 32)
    first = ops.ite(ops.eq(b, 0), a, ops.add(a, b))
    rare = ops.ite(ops.eq(a, 0x9E3779B9), ops.add(a, 1), a)
    result = prove_equivalent([(first, first), (a, rare)],
                              samples=_samples({"a": 32, "b": 32}), settings=FAST)
    assert result.result == REFUTED and result.words["a"] == 0x9E3779B9


def _chain(ops, words, first, step):
    value = first
    for x in words:
        value = step(value, x)
    return value


def test_a_chain_of_step_words_is_proved_step_by_step_with_earlier_words_cut():
    """Each step reads the word of the step before; the engine decides the words bottom-up
    as lemmas, each with the words below it cut to free variables, and the output last."""
    ops = TraceOps()
    c = ops.variable("c", 32)
    xs = [ops.variable(f"x{i}", 32) for i in range(3)]

    def special(x):
        return ops.eq(ops.extract(x, 1, 0), 0)

    def left_step(w, x):
        return ops.ite(special(x), x, ops.bvxor(ops.mul(w, ops.const(3, 32)), x))

    def right_step(w, x):
        return ops.ite(special(x), x, ops.bvxor(ops.add(ops.add(w, w), w), x))

    left, right = _chain(ops, xs, c, left_step), _chain(ops, xs, c, right_step)
    names = {"c": 32, **{f"x{i}": 32 for i in range(3)}}
    result = prove_equivalent([(left, right)], samples=_samples(names), settings=ROOMY,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped
    wrong = right_step(_chain(ops, xs[:2], c, right_step), ops.add(xs[2], 1))
    result = prove_equivalent([(left, wrong)], samples=_samples(names), settings=ROOMY,
                              replay=_replay(left, wrong))
    assert result.result == REFUTED


def test_a_step_equal_only_on_the_words_the_inputs_give_is_still_proved_exactly():
    """The first word is always even; the second step's texts agree only on even words, so
    the query with that word cut has a model, which proves nothing; the sweep decides the
    pair over the real DAG."""
    ops = TraceOps()
    xs = [ops.variable(f"x{i}", 32) for i in range(3)]
    zero, one = ops.const(0, 32), ops.const(1, 32)

    def special(x):
        return ops.eq(ops.extract(x, 1, 0), 0)

    def chain(double, plus_one):
        word = ops.ite(special(xs[0]), zero, double(xs[0]))
        word = ops.ite(special(xs[1]), zero, plus_one(word))
        return ops.ite(special(xs[2]), zero, ops.bvxor(word, xs[2]))

    left = chain(lambda x: ops.shl(x, one), lambda w: ops.bvor(w, one))
    right = chain(lambda x: ops.add(x, x), lambda w: ops.add(w, one))
    names = {f"x{i}": 32 for i in range(3)}
    result = prove_equivalent([(left, right)], samples=_samples(names), settings=ROOMY,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped


def test_a_flushed_step_word_is_matched_to_the_flushed_partner_not_the_unflushed_one():
    """A flushed word and the unflushed one agree on every sample (a tiny result is rare);
    the step above reads the flushed word, so the chain tries the next partner when the
    first one's cut query is refuted on free words."""
    ops = TraceOps()
    xs = [ops.variable(f"x{i}", 32) for i in range(3)]
    zero = ops.const(0, 32)

    def special(x):
        return ops.eq(ops.extract(x, 1, 0), 0)

    def chain(triple):
        word = ops.ite(special(xs[0]), xs[0], ops.bvxor(triple(xs[0]), xs[1]))
        flushed = ops.ite(ops.eq(ops.extract(word, 31, 20), 0), zero, word)
        return ops.ite(special(xs[2]), xs[2], ops.bvxor(triple(flushed), xs[2]))

    left = chain(lambda x: ops.mul(x, ops.const(3, 32)))
    right = chain(lambda x: ops.add(ops.add(x, x), x))
    names = {f"x{i}": 32 for i in range(3)}
    result = prove_equivalent([(left, right)], samples=_samples(names), settings=ROOMY,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped


def test_a_sum_of_wide_terms_with_small_values_is_an_integer_sum_by_proved_bounds():
    """Terms 13 bits wide whose values stay below 2^8 (a 4-bit significand shifted by at
    most 4): sixteen of them fit 13 bits only by their proved bounds."""
    ops = TraceOps()
    names = {}
    terms = []
    for i in range(16):
        m, d, s = ops.variable(f"m{i}", 4), ops.variable(f"d{i}", 2), ops.variable(f"s{i}", 1)
        names.update({f"m{i}": 4, f"d{i}": 2, f"s{i}": 1})
        placed = ops.shl(ops.zext(m, 13), ops.zext(d, 13))
        terms.append(ops.ite(ops.eq(s, 1), ops.neg(placed), placed))
    narrow = ops.sum(terms)
    wide = ops.const(0, 15)
    for t in reversed(terms):
        wide = ops.add(wide, ops.sext(t, 15))
    assert not equal_sums(narrow.node, wide.node, "sext")
    assert not equal_sums(narrow.node, wide.node, "sext", lambda leaf, signed, b: False)
    result = prove_equivalent([(ops.sext(narrow, 15), wide)], samples=_samples(names),
                              settings=ROOMY, replay=_replay(ops.sext(narrow, 15), wide))
    assert result.result == PROVED
    assert result.stats.sums >= 1


def test_the_left_sides_own_test_of_a_hinted_case_is_fixed_with_the_hint():
    """The left side picks its branch by a test that agrees with the hint except where a
    special-value selector above it decides the output anyway: the special cases go
    first, and in the last one the left test is proved the hint's twin."""
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    special = ops.eq(x, 0xFF)
    own_test = ops.ult(ops.ite(special, ops.const(0, 8), x), y)
    hint = ops.ult(x, y)
    left = ops.ite(special, ops.const(0, 8), ops.add(ops.ite(own_test, y, x), x))
    right = ops.ite(special, ops.const(0, 8), ops.add(x, ops.ite(hint, y, x)))
    samples = _samples({"x": 8, "y": 8})
    samples["x"][:8] = [0xFF] * 8
    sweep = Sweep([(left.node, right.node)], [], samples, ROOMY)
    assert sweep.twin_candidates(hint.node) == []
    mask = sweep.finite_mask()
    assert mask is not None and not mask[:8].any() and mask[8:].all()
    assert [n.id for n, _ in sweep.twin_candidates(hint.node, mask)] == [own_test.node.id]
    sweep.close()
    result = prove_equivalent([(left, right)], samples=samples, settings=ROOMY,
                              replay=_replay(left, right), splits=[hint])
    assert result.result == PROVED
    assert result.stats.twins >= 1


def test_a_narrow_subtree_read_inside_a_wider_chain_is_opened_when_it_cannot_wrap():
    """The other side's chain reads a balanced subtree (already merged) through a sign
    extension: its leaves count only once the subtree is shown not to wrap."""
    ops = TraceOps()
    terms = [ops.sext(ops.variable(f"t{i}", 6), 10) for i in range(8)]
    tree = ops.sum(terms)
    half = ops.sum(terms[:4])
    chain = ops.sext(half, 12)
    for t in terms[4:]:
        chain = ops.add(chain, ops.sext(t, 12))
    assert equal_sums(tree.node, chain.node, "sext")
    small = [ops.sext(ops.variable(f"s{i}", 10), 10) for i in range(2)]
    wrapping_half = ops.add(ops.zext(ops.variable("w", 9), 10), small[0])
    other = ops.add(ops.sext(wrapping_half, 12), ops.sext(small[1], 12))
    assert not equal_sums(ops.add(wrapping_half, small[1]).node, other.node, "sext")


def test_more_leaves_than_a_narrow_sum_can_hold_never_fit_by_proved_bounds():
    ops = TraceOps()
    terms = [ops.sext(ops.variable(f"v{i}", 2), 3) for i in range(4)]
    narrow = ops.sum(terms)
    wide = ops.sum([ops.sext(t, 5) for t in terms])
    assert not equal_sums(narrow.node, wide.node, "sext", lambda leaf, signed, b: True)


def _abs(ops, x):
    return ops.ite(ops.slt(x, 0), ops.neg(x), x)


def _negated_run(ops):
    """|sum| in two runs, the second over negated terms (a sign-symmetry shape): the
    right sum is the left one negated, and the right magnitude reads it."""
    terms = [ops.sext(ops.variable(f"t{i}", 8), 12) for i in range(4)]
    left_sum = ops.sum(terms)
    right_sum = ops.sum([ops.neg(t) for t in terms])
    return _abs(ops, left_sum), _abs(ops, right_sum)


def test_a_cut_sum_is_kept_off_its_most_negative_word():
    """``|-u| == |u|`` with ``u`` cut holds only when ``u != -2^11``: the sum's leaves'
    static bound says so, and the query states it (else the free cut takes -2^11)."""
    ops = TraceOps()
    left, right = _negated_run(ops)
    sweep = Sweep([(left.node, right.node)], [], _samples({f"t{i}": 8 for i in range(4)}),
                  ROOMY)
    try:
        sweep.sweep()
        outcome = sweep.outputs(None, 60)
        assert outcome is not None and outcome.result == PROVED
        left_sum = left.node.args[2]
        assert sweep.off_minimum.get(sweep.img(left_sum).id) is True
    finally:
        sweep.close()


def test_an_image_taken_before_a_merge_is_rebuilt_over_the_merge():
    """A right node imaged early (a lemma's query reads it before the sweep reaches its
    arguments) and not merged itself reads its arguments' merged images afterwards."""
    ops = TraceOps()
    left, right = _negated_run(ops)
    sweep = Sweep([(left.node, right.node)], [], _samples({f"t{i}": 8 for i in range(4)}),
                  ROOMY)
    try:
        selector = right.node.args[0]
        stale = sweep.img(selector)
        sweep.sweep()
        fresh = sweep.img(selector)
        assert fresh.id != stale.id or selector.id in sweep.matched
        assert all(sweep.img(a).id == b.id for a, b in zip(selector.args, fresh.args))
    finally:
        sweep.close()


def _negated_word(ops, word):
    """An 8-bit sign-magnitude word negated, zero (either sign) unchanged."""
    zero = ops.eq(ops.extract(word, 6, 0), 0)
    return ops.ite(zero, word, ops.bvxor(word, ops.const(0x80, 8)))


def test_a_declared_word_relation_is_proposed_and_proved():
    """The second run's intermediate word is the first's negated word (zero kept): no
    relation of the engine's own, so only the declared one proposes the pair; a wrong
    declaration (plain sign flip, wrong on zero) is never proposed for it."""
    ops = TraceOps()
    x = ops.variable("x", 8)

    def step(word):
        magnitude = ops.extract(word, 6, 0)
        gray = ops.bvxor(magnitude, ops.lshr(magnitude, ops.const(1, 7)))
        return ops.concat(ops.extract(word, 7, 7), gray)

    first = step(x)
    second = step(_negated_word(ops, x))
    negated = WordRelation("negated", 8, _negated_word)
    flipped = WordRelation("flipped", 8, lambda o, w: o.bvxor(w, o.const(0x80, 8)))
    samples = _samples({"x": 8}, count=256)
    samples["x"][:2] = [0, 0x80]
    for relation, proposed in ((negated, True), (flipped, False)):
        sweep = Sweep([(_negated_word(ops, first).node, second.node)], [], samples,
                      dataclasses.replace(ROOMY, word_relations=(relation,)))
        try:
            proposal = sweep.propose(second.node.args[0].args[0])
            assert (proposal is not None and proposal.relation == relation.name) == proposed
        finally:
            sweep.close()
    result = prove_equivalent([(_negated_word(ops, first), second)], samples=samples,
                              settings=dataclasses.replace(ROOMY, word_relations=(negated,)))
    assert result.result == PROVED, result.stopped
    assert negated.on_int(0x85) == 0x05 and negated.on_int(0x80) == 0x80


def test_maxima_over_one_set_of_leaves_are_equal_by_their_normal_form():
    """A balanced maximum and a chain over the lanes in another order are one maximum; a
    minimum, or a maximum missing a leaf, is not."""
    ops = TraceOps()
    xs = [ops.variable(f"x{i}", 12) for i in range(4)]
    tree = ops.smax(ops.smax(xs[0], xs[1]), ops.smax(xs[2], xs[3]))
    chain = ops.smax(ops.smax(ops.smax(xs[3], xs[1]), xs[0]), xs[2])
    assert equal_extrema(tree.node, chain.node)
    assert not equal_extrema(tree.node, ops.smin(ops.smin(xs[0], xs[1]),
                                                 ops.smin(xs[2], xs[3])).node)
    assert not equal_extrema(tree.node, ops.smax(ops.smax(xs[3], xs[1]), xs[0]).node)
    assert not equal_extrema(tree.node, ops.umax(ops.umax(xs[0], xs[1]),
                                                 ops.umax(xs[2], xs[3])).node)
    left, right = ops.add(tree, 1), ops.add(chain, 1)
    result = prove_equivalent([(left, right)], samples=_samples({f"x{i}": 12 for i in range(4)}),
                              settings=FAST)
    assert result.result == PROVED and result.stats.local_queries == 0, result.stats.summary()


def test_an_or_over_lanes_in_another_order_is_one_or():
    ops = TraceOps()
    bits = [ops.ne(ops.variable(f"x{i}", 4), 0) for i in range(3)]
    assert equal_extrema(ops.or_(ops.or_(bits[0], bits[1]), bits[2]).node,
                         ops.or_(bits[2], ops.or_(bits[1], bits[0])).node)
    assert not equal_extrema(ops.or_(bits[0], bits[1]).node, ops.and_(bits[0], bits[1]).node)


def test_a_netlists_one_bit_flag_register_is_merged_with_the_specs_boolean():
    """Yosys keeps a flag set in a loop (``if (x[k] == 15) nan = 1``) as a chain of 1-bit
    multiplexers; the spec has an ``or`` of booleans. The 1-bit word is proposed as the
    boolean's bit (or its complement's), proved and merged; a flag set on another lane
    is not proposed. Inside the case "no flag" the register is proposed constant 0."""
    ops = TraceOps()
    lanes = [ops.variable(f"x{i}", 4) for i in range(4)]
    flag = ops.any_(ops.eq(x, 15) for x in lanes)
    left = ops.ite(flag, ops.const(0x7F, 8), ops.zext(ops.add(lanes[0], lanes[1]), 8))
    one, zero = ops.const(1, 1), ops.const(0, 1)
    register, clear = zero, one
    for x in lanes:
        register = ops.ite(ops.eq(x, 15), one, register)
        clear = ops.ite(ops.eq(x, 15), zero, clear)
    right = ops.ite(ops.eq(register, 1), ops.const(0x7F, 8),
                    ops.zext(ops.add(lanes[1], lanes[0]), 8))
    other_lane = ops.ite(ops.eq(lanes[0], 14), one, zero)
    finite = ops.zext(ops.add(lanes[1], lanes[0]), 8)
    rights = [right, ops.ite(ops.eq(clear, 0), ops.const(0x7F, 8), finite),
              ops.ite(ops.eq(other_lane, 1), ops.const(0x7F, 8), finite)]
    samples = _samples({f"x{i}": 4 for i in range(4)}, count=256)
    sweep = Sweep([(left.node, r.node) for r in rights], [], samples, FAST)
    try:
        held, failed = sweep.propose(register.node), sweep.propose(clear.node)
        other = sweep.propose(other_lane.node)
        assert held is not None and held.left is flag.node and held.relation == "bit"
        assert failed is not None and failed.left is flag.node and failed.relation == "nbit"
        assert other is None or other.left is not flag.node
    finally:
        sweep.close()
    inside = Sweep([(left.node, right.node)], [ops.not_(flag).node], samples, FAST)
    inside.case = "!flag"
    try:
        fixed = inside.propose(register.node)
        assert fixed is not None and fixed.left is None and fixed.value == 0
        assert inside.decide(fixed, 20.0)[0] == PROVED
    finally:
        inside.close()
    result = prove_equivalent([(left, right)], samples=samples, settings=FAST,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped
    broken = ops.ite(ops.eq(ops.ite(ops.eq(lanes[3], 14), one, register), 1),
                     ops.const(0x7F, 8), ops.zext(ops.add(lanes[1], lanes[0]), 8))
    assert prove_equivalent([(left, broken)], samples=samples, settings=FAST,
                            replay=_replay(left, broken)).result == REFUTED


def _sm_add(ops, x, y, saturate_negative=127):
    """Sign-magnitude 8-bit add: an exact cancellation gives +0, two zeros the AND of
    their signs (an IEEE add's zero rule); magnitudes saturate at 127."""
    def value(w):
        m = ops.zext(ops.extract(w, 6, 0), 9)
        return ops.ite(ops.eq(ops.extract(w, 7, 7), 1), ops.neg(m), m)
    total = ops.add(value(x), value(y))
    negative = ops.slt(total, ops.const(0, 9))
    magnitude = ops.ite(negative, ops.neg(total), total)
    limit = ops.ite(negative, ops.const(saturate_negative, 9), ops.const(127, 9))
    magnitude = ops.ite(ops.ult(limit, magnitude), limit, magnitude)
    both_zero = ops.and_(ops.eq(ops.extract(x, 6, 0), 0), ops.eq(ops.extract(y, 6, 0), 0))
    both_negative = ops.eq(ops.bvand(ops.extract(x, 7, 7), ops.extract(y, 7, 7)), 1)
    sign = ops.ite(ops.eq(total, 0), ops.and_(both_zero, both_negative), negative)
    return ops.concat(ops.ite(sign, ops.const(1, 1), ops.const(0, 1)),
                      ops.extract(magnitude, 6, 0))


def _zero_classes():
    from tcspec.proofs.engine.relations import Classes

    def canon(ops, w):
        return ops.ite(ops.eq(ops.extract(w, 6, 0), 0), ops.const(0, 8), w)

    def choose(ops, w, sign):
        return ops.ite(ops.eq(w, 0), ops.concat(sign, ops.const(0, 7)), w)

    return Classes("zero-sign", 1, canon, choose, lambda ops, w: ops.extract(w, 7, 7))


def _flip(ops, w):
    return ops.bvxor(w, ops.const(0x80, 8))


def _sign_chain(saturate_negative=127):
    """A four-step chain of :func:`_sm_add` on words and on the words with every sign
    flipped; the pair says D negates up to a zero's sign."""
    ops = TraceOps()
    names = ["c", "a0", "a1", "a2", "a3"]
    words = [ops.variable(n, 8) for n in names]
    first = second = None
    for w in words:
        first = w if first is None else _sm_add(ops, w, first)
        flipped = _flip(ops, w)
        second = flipped if second is None else _sm_add(ops, flipped, second,
                                                        saturate_negative)
    classes = _zero_classes()
    pair = (classes.canon(ops, _flip(ops, first)), classes.canon(ops, second))
    return ops, names, pair


def test_a_loose_relation_merges_words_equal_up_to_a_zeros_sign():
    """The negated run's running word is the first's with its sign flipped, except that an
    exact cancellation's zero has +0 in both runs: no function of the first run's word, so
    the engine's strict relations cannot merge the steps. A loose relation (equal up to
    the sign of a zero) is proposed, proved and merged with a free sign bit, and the chain
    is proved; a chain whose negated side saturates one short is refuted with replayed
    words; classes that do not pick every word back are refused."""
    from tcspec.proofs.engine.relations import Classes
    relation = WordRelation("negated-any-zero", 8, _flip, _zero_classes())
    _, names, (left, right) = _sign_chain()
    samples = _samples({n: 8 for n in names}, count=256)
    for n in names:
        samples[n][:4] = [0, 0x80, 0, 0x80]
    settings = dataclasses.replace(ROOMY, word_relations=(relation,))
    sweep = Sweep([(left.node, right.node)], [], samples, settings)
    try:
        sweep.structural()
        sweep.sweep()
        assert len(sweep.loose_vars) >= 3, sweep.stats.summary()
        assert sweep.outputs(_replay(left, right), 60) is not None
    finally:
        sweep.close()
    result = prove_equivalent([(left, right)], samples=samples, settings=settings,
                              replay=_replay(left, right))
    assert result.result == PROVED, result.stopped
    _, names, (left, right) = _sign_chain(saturate_negative=126)
    result = prove_equivalent([(left, right)], samples=samples, settings=settings,
                              replay=_replay(left, right))
    assert result.result == REFUTED
    (a, b), = result.outputs
    assert a != b
    wrong = Classes("no-sign", 1, _zero_classes().canon,
                    lambda o, w, s: w, lambda o, w: o.extract(w, 7, 7))
    with pytest.raises(ValueError, match="pick every word back"):
        Sweep([(left.node, right.node)], [], samples,
              dataclasses.replace(ROOMY, word_relations=(
                  WordRelation("bad", 8, _flip, wrong),)))


def test_a_loose_merge_whose_class_is_too_coarse_is_undone():
    """The right side's word is the flipped ``x`` with a zero whose sign is ``y``, and it
    reads that sign only together with ``y`` (so a ``-0`` with ``y = 0`` never occurs): the
    loose merge forgets the link, the output's model moves with the loose variable, the
    merge is undone, and the outputs are proved."""
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 1)
    classes = _zero_classes()
    zero = ops.eq(ops.extract(x, 6, 0), 0)
    word = ops.ite(zero, ops.concat(y, ops.const(0, 7)), _flip(ops, x))
    odd = ops.and_(ops.eq(word, 0x80), ops.eq(y, 0))
    right = ops.ite(odd, ops.const(0x55, 8), classes.canon(ops, word))
    left = classes.canon(ops, _flip(ops, x))
    relation = WordRelation("negated-any-zero", 8, _flip, classes)
    samples = _samples({"x": 8, "y": 1}, count=256)
    sweep = Sweep([(left.node, right.node)], [], samples,
                  dataclasses.replace(ROOMY, word_relations=(relation,)))
    try:
        sweep.structural()
        sweep.sweep()
        merged = len(sweep.loose_vars)
        assert merged >= 1, sweep.stats.summary()
        result = sweep.outputs(_replay(left, right), 60)
        assert result is not None and result.result == PROVED
        assert len(sweep.loose_vars) < merged
    finally:
        sweep.close()
