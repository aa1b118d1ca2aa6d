"""The breakers of proofs/mutants.py: each kills what it declares and keeps its controls."""

from __future__ import annotations

import pytest

from tcspec.proofs import mutants
from tcspec.proofs.mutants import BREAKERS, breaker_named, kill_table, run_breaker


def test_every_breaker_applies_to_exactly_one_place(tmp_path) -> None:
    for breaker in BREAKERS:
        package = mutants.scratch_copy(breaker, tmp_path / breaker.name)
        assert breaker.new in (package / "spec" / breaker.path).read_text()
    assert len(BREAKERS) >= 12 and len({b.stage for b in BREAKERS}) >= 10


@pytest.mark.parametrize("name", [b.name for b in BREAKERS if b.cheap])
def test_cheap_breakers_kill_and_keep(name: str) -> None:
    verdict = run_breaker(breaker_named(name))
    assert verdict.ok, verdict
    assert verdict.witness and verdict.witness["replayed"] and verdict.witness["words"]
    assert any(r["role"] == "kill" and r["result"] != "proved" for r in verdict.rows)
    assert any(r["role"] == "keep" and r["result"] == "proved" for r in verdict.rows)
    assert name in kill_table([verdict])


def test_lane_0_breaker_refutes_every_row_it_falsifies() -> None:
    """Issue 16's breaker: no row it falsifies says ``proved``, and the chain rows that stop
    at a refuted lemma are lifted to replayed input words (``refuted``), not ``unknown``."""
    verdict = run_breaker(breaker_named("window-drops-lane-0"))
    kills = {r["property"]: r["result"] for r in verdict.rows if r["role"] == "kill"}
    assert kills == {"sign-symmetry": "refuted", "permutation": "refuted",
                     "sparse-masking": "refuted", "error-bound": "refuted"}


def test_clamp_counterexample_violates_only_the_mutant() -> None:
    """The hand-made words of clamp-minus-132 are within SEMANTICS' bound on the real spec
    (and replayed as a violation on the mutant by the breaker run)."""
    from tcspec.proofs.error_bound import bound_query
    from tcspec.spec.catalog import lookup

    query = bound_query(lookup("dense-bf16").descriptor, 16)
    violated, words = query.replay(dict(mutants.CLAMP_COUNTEREXAMPLE))
    assert not violated and 0 < words["error"] < words["bound"]
    verdict = run_breaker(breaker_named("clamp-minus-132"))
    assert verdict.ok and verdict.witness and verdict.witness["replayed"], verdict


def test_an_unknown_breaker_is_named() -> None:
    with pytest.raises(ValueError, match="unknown breaker 'nope'"):
        breaker_named("nope")


@pytest.mark.full
@pytest.mark.parametrize("name", [b.name for b in BREAKERS if not b.cheap])
def test_breakers(name: str) -> None:
    verdict = run_breaker(breaker_named(name))
    assert verdict.ok, verdict
