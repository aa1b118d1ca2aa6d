"""The breakers of proofs/mutants.py: each kills what it declares and keeps its controls."""

from __future__ import annotations

import pytest

from tcspec.proofs import mutants
from tcspec.proofs.mutants import BREAKERS, breaker_named, kill_table, run_breaker


def test_every_breaker_applies_to_exactly_one_place(tmp_path) -> None:
    for breaker in BREAKERS:
        package = mutants.scratch_copy(breaker, tmp_path / breaker.name)
        assert breaker.new in mutants.changed_file(package, breaker).read_text()
    assert len(BREAKERS) >= 12 and len({b.stage for b in BREAKERS}) >= 10
    rulebook = [b for b in BREAKERS if b.text == mutants.RULEBOOK and not b.equivalent]
    assert len(rulebook) >= 10 and len({b.path for b in rulebook}) >= 6


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


@pytest.mark.parametrize(("name", "datapath", "k", "words"), [
    ("nvfp4-c-dominant-groups-of-8", "sparse-nvfp4", 128, mutants.NVFP4_C_GROUP_COUNTEREXAMPLE),
    ("mxf8f6f4-c-window-24", "sparse-mx-e4m3", 64, mutants.MXF8F6F4_C_WINDOW_COUNTEREXAMPLE)])
def test_block_counterexamples_violate_only_the_mutant(name, datapath, k, words) -> None:
    """The hand-made masking counterexamples of issue 30's block breakers: on the real spec
    sparse equals the masked dense rules of proofs/constants; the breaker's run replays them
    as a violation on the mutant."""
    from tcspec.proofs.sparse import masking_query
    from tcspec.spec.catalog import lookup

    violated, shown = masking_query(lookup(datapath).descriptor, k).replay(dict(words))
    assert not violated and shown["sparse"] == shown["masked_dense"]
    assert breaker_named(name).words == words


def test_a_crash_is_an_error_never_a_kill() -> None:
    """Issue 30: a row whose check raised in the mutated copy, or a child that failed, is an
    error of the run: not ok, shown as an error, and not counted among the kills."""
    crashed = mutants.Verdict("demo", "stage", rows=[
        {"role": "kill", "property": "sign-symmetry", "datapath": "dense-tf32", "k": 8,
         "result": mutants.ERROR, "seconds": 0.1, "detail": "the check raised KeyError: 1"},
        {"role": "kill", "property": "permutation", "datapath": "dense-tf32", "k": 8,
         "result": "refuted", "seconds": 0.1, "detail": ""}],
        error="error: sign-symmetry dense-tf32: the check raised KeyError: 1")
    failed = mutants.Verdict("child", "stage", error="error: the mutated copy failed (exit 1)")
    assert not crashed.ok and not failed.ok
    table = kill_table([crashed, failed])
    assert "sign-symmetry dense-tf32: **ERROR**" in table
    assert "sign-symmetry 0/1 (1 errors, not kills)" in table and "permutation 1/1" in table
    assert "Runs that crashed (errors, never counted as kills): demo, child." in table


def test_issue_30_breakers_are_declared() -> None:
    names = {b.name for b in BREAKERS}
    assert {"e2m1-container-5", "bf16-bias-126", "exponent-below-max-special",
            "nvfp4-c-dominant-groups-of-8", "mxf8f6f4-c-window-24"} <= names
    for name in ("e2m1-container-5", "bf16-bias-126", "exponent-below-max-special",
                 "nvfp4-c-dominant-groups-of-8", "mxf8f6f4-c-window-24"):
        breaker = breaker_named(name)
        assert breaker.kills and breaker.keeps and breaker.witness


def test_an_unknown_breaker_is_named() -> None:
    with pytest.raises(ValueError, match="unknown breaker 'nope'"):
        breaker_named("nope")


@pytest.mark.full
@pytest.mark.parametrize("name", [b.name for b in BREAKERS if not b.cheap])
def test_breakers(name: str) -> None:
    verdict = run_breaker(breaker_named(name))
    assert verdict.ok, verdict
