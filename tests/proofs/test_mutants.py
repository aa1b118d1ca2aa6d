"""The breakers of proofs/mutants.py: each kills what it declares and keeps its controls."""

from __future__ import annotations

import pytest

from tcspec.proofs import mutants
from tcspec.proofs.mutants import BREAKERS, breaker_named, kill_table, run_breaker
from tests.limits import SOLVER_LIMIT


def test_every_breaker_applies_to_exactly_one_place(tmp_path) -> None:
    for breaker in BREAKERS:
        package = mutants.scratch_copy(breaker, tmp_path / breaker.name)
        assert breaker.new in mutants.changed_file(package, breaker).read_text()
    assert len(BREAKERS) >= 12 and len({b.stage for b in BREAKERS}) >= 10
    rulebook = [b for b in BREAKERS if b.text == mutants.RULEBOOK and not b.equivalent]
    assert len(rulebook) >= 10 and len({b.path for b in rulebook}) >= 6


LANE_0 = "window-drops-lane-0"


def _kills_and_keeps(name: str) -> mutants.Verdict:
    """Run a cheap breaker with :data:`SOLVER_LIMIT` per query (a keep row must prove, so an
    ``unknown`` on a busy machine would fail it) and check what every cheap breaker must show."""
    verdict = run_breaker(breaker_named(name), timeout=SOLVER_LIMIT)
    assert verdict.ok, verdict
    assert verdict.witness and verdict.witness["replayed"] and verdict.witness["words"]
    assert any(r["role"] == "kill" and r["result"] != "proved" for r in verdict.rows)
    assert any(r["role"] == "keep" and r["result"] == "proved" for r in verdict.rows)
    assert name in kill_table([verdict])
    return verdict


@pytest.mark.parametrize("name", [b.name for b in BREAKERS if b.cheap and b.name != LANE_0])
def test_cheap_breakers_kill_and_keep(name: str) -> None:
    _kills_and_keeps(name)


def test_lane_0_breaker_refutes_every_row_it_falsifies() -> None:
    """Issue 16's breaker (a cheap one, run once: this is its kill-and-keep test too): no row
    it falsifies says ``proved``, and the chain rows that stop at a refuted lemma are lifted
    to replayed input words (``refuted``), not ``unknown``."""
    verdict = _kills_and_keeps(LANE_0)
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
    verdict = run_breaker(breaker_named("clamp-minus-132"), timeout=SOLVER_LIMIT)
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


def test_rulebook_breakers_are_declared() -> None:
    """Issue 30: at least 10 breakers of proofs/rulebook, each declaring the equals-reference
    rows it falsifies (and a control row that must still prove), and at least 2 equivalent
    mutants whose equals-reference rows must still prove."""
    rulebook = [b for b in BREAKERS if b.text == mutants.RULEBOOK and not b.equivalent]
    assert len(rulebook) >= 10
    for breaker in rulebook:
        assert breaker.kills and all(p == mutants.EQUALS_REFERENCE for p, _, _ in breaker.kills)
        assert breaker.keeps and breaker.witness is None
    equivalent = [b for b in BREAKERS if b.equivalent]
    assert len(equivalent) >= 2 and {b.text for b in equivalent} == {"spec", "rulebook"}
    for breaker in equivalent:
        assert not breaker.kills and breaker.keeps
        assert all(p == mutants.EQUALS_REFERENCE for p, _, _ in breaker.keeps)
    for name in ("e2m1-container-5", "bf16-bias-126", "exponent-below-max-special",
                 "nvfp4-c-dominant-groups-of-8", "mxf8f6f4-c-window-24"):
        assert any(p == mutants.EQUALS_REFERENCE for p, _, _ in breaker_named(name).kills)


REFUTED_REPLAYED = {"role": "kill", "property": "equals-reference", "datapath": "dense-tf32",
                    "k": 8, "result": "refuted", "seconds": 0.1, "replayed": True,
                    "words": {"d_spec": "0x1", "d_reference": "0x2"},
                    "detail": "D differ (replayed)"}


def test_equals_reference_kills_only_when_refuted_and_replayed() -> None:
    assert mutants.killed(REFUTED_REPLAYED)
    assert not mutants.killed({**REFUTED_REPLAYED, "replayed": False})
    assert not mutants.killed({**REFUTED_REPLAYED, "result": "unknown", "replayed": False})
    assert mutants.replayed_difference("refuted", {"d_spec": 1, "d_reference": 2},
                                       "D differ (replayed); ...")["replayed"]
    assert not mutants.replayed_difference("refuted", {"d_spec": 1, "d_reference": 1},
                                           "D differ (replayed)")["replayed"]
    assert not mutants.replayed_difference("unknown", {}, "D not decided")["replayed"]


def test_kill_table_counts_per_text_and_family() -> None:
    """The MUTANTS.md table gives equals-reference kills per text and per datapath family,
    and the equivalent mutants kept."""
    keep = {"role": "keep", "property": "equals-reference", "datapath": "i8-s8-s8-wrap",
            "k": 32, "result": "proved", "seconds": 0.1, "detail": ""}
    verdicts = [
        mutants.Verdict("s", "stage", rows=[REFUTED_REPLAYED]),
        mutants.Verdict("r1", "stage", rows=[REFUTED_REPLAYED, keep], text="rulebook"),
        mutants.Verdict("r2", "stage", rows=[{**REFUTED_REPLAYED, "datapath": "i8-s8-s8-wrap",
                                              "replayed": False}], text="rulebook"),
        mutants.Verdict("e", "stage", rows=[keep], text="rulebook", equivalent=True),
        mutants.Verdict("old", "stage", rows=[{**keep, "property": "permutation"}])]
    table = kill_table(verdicts)
    assert "| r1 | rulebook |" in table and "| e | rulebook (equivalent mutant) |" in table
    assert "replayed: spec D 0x1, rule book D 0x2" in table
    assert "**not replayed**: not a kill" in table
    assert "per text (every equals-reference row the breaker declares refuted, its words " \
           "replayed on both executable sides): rulebook 1/2, spec 1/1." in table
    assert "integer: rulebook 0/1; window: rulebook 1/1, spec 1/1." in table
    assert "Equivalent mutants whose equals-reference rows still prove, per text: " \
           "rulebook 1/1." in table
    assert "Breakers declaring no equals-reference row: spec 1 (old)." in table
    assert not verdicts[2].ok and verdicts[1].ok and verdicts[3].ok


@pytest.mark.parametrize("name", ["rb-s8-read-unsigned", "rb-window-24"])
def test_rulebook_breaker_refuted_by_equals_reference(name: str) -> None:
    """A breaker of the rule book (the spec untouched): its equals-reference rows refuted,
    the input words replayed on both executable sides (two different D words), and its
    control row still proved. A generous limit (tests/limits.py): a refutation ends at its
    first model."""
    verdict = run_breaker(breaker_named(name), timeout=SOLVER_LIMIT)
    assert verdict.ok and verdict.text == "rulebook", verdict
    kills = [r for r in verdict.rows if r["role"] == "kill"]
    assert kills and all(r["result"] == "refuted" and r["replayed"] for r in kills), kills
    for r in kills:
        assert "(replayed)" in r["detail"] and r["words"]["d_spec"] != r["words"]["d_reference"]
    assert all(r["result"] == "proved" for r in verdict.rows if r["role"] == "keep")
    assert "rulebook 1/1" in kill_table([verdict])


def test_equivalent_mutant_keeps_equals_reference_proved() -> None:
    """An edit of the rule book that changes no output (saturating at ``>= 2^31 - 1``
    instead of ``>``): equals-reference still proves on the saturating paths."""
    verdict = run_breaker(breaker_named("rb-saturate-at-max-inclusive"), timeout=SOLVER_LIMIT)
    assert verdict.ok and verdict.equivalent, verdict
    assert verdict.rows and all(r["role"] == "keep" and r["result"] == "proved"
                                for r in verdict.rows)
    assert "per text: rulebook 1/1." in kill_table([verdict])
