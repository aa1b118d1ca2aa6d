"""The proof layer's plumbing: solver runner, query verdicts and replay, the matrix, the CLI."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tcspec.cli import main
from tcspec.proofs import runner
from tcspec.proofs.core import (
    AUTO,
    PROVED,
    REFUTED,
    UNKNOWN,
    WITNESS,
    Outcome,
    Query,
    Row,
    Settings,
    check_queries,
    decide,
    row_from_outcomes,
    second_opinions,
)
from tcspec.smt.solve import SOLVERS, check_sat, run_script
from tcspec.smt.trace import TraceOps
from tcspec.spec.catalog import lookup
from tests.limits import SOLVER_LIMIT

TF32 = lookup("dense-tf32").descriptor
QUICK = Settings(second_solver=None, timeout=SOLVER_LIMIT)
SECOND = Settings(timeout=SOLVER_LIMIT, second_solver=AUTO, second_timeout=SOLVER_LIMIT)


def _query(kind, condition):
    def body(ops, values):
        x, y = values["x"], values["y"]
        return condition(ops, x, y), {"x": x, "y": y, "sum": ops.add(x, y)}

    return Query("q", kind, (("x", 8), ("y", 8)), body)


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_answers_sat_with_a_model_and_unsat(solver):
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    found = check_sat([ops.eq(ops.add(x, y), 7).node, ops.ult(x, y).node], solver=solver,
                      timeout=SOLVER_LIMIT)
    assert found.sat and (found.model["x"] + found.model["y"]) % 256 == 7
    assert found.model["x"] < found.model["y"]
    assert check_sat([ops.ne(ops.add(x, y), ops.add(y, x)).node], solver=solver,
                     timeout=SOLVER_LIMIT).unsat


def test_a_query_past_its_time_is_unknown_never_a_verdict():
    ops = TraceOps()
    x, y = ops.variable("x", 128), ops.variable("y", 128)
    semiprime = (2**61 - 1) * (2**31 - 1)
    hard = [ops.eq(ops.mul(x, y), semiprime).node, ops.ugt(x, 1).node, ops.ugt(y, 1).node,
            ops.ult(x, 2**64).node, ops.ult(y, 2**64).node,
            ops.ne(x, 2**61 - 1).node, ops.ne(x, 2**31 - 1).node]
    answer = check_sat(hard, timeout=0.5)
    # the child is killed at 0.5 s + KILL_GRACE (5 s) at the latest; 30 s leaves room for a
    # slow start on a busy machine, far below the time this factoring would take
    assert answer.status == "unknown" and answer.reason and answer.seconds < 30


def test_solver_errors_are_unknown_and_bad_settings_are_refused():
    broken = run_script("(assert (= x 1))\n(check-sat)\n", timeout=10)
    assert broken.status == "unknown" and "x" in broken.reason
    with pytest.raises(ValueError, match="unknown solver"):
        run_script("(check-sat)\n", solver="yices")
    with pytest.raises(ValueError, match="timeout"):
        run_script("(check-sat)\n", timeout=0)


def test_forall_queries_are_proved_or_refuted_with_a_replayed_counterexample():
    commutes = _query("forall", lambda ops, x, y: ops.ne(ops.add(x, y), ops.add(y, x)))
    assert decide(commutes, "bitwuzla", SOLVER_LIMIT).result == PROVED
    false_claim = _query("forall", lambda ops, x, y: ops.ult(ops.add(x, y), x))
    outcome = decide(false_claim, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED
    assert (outcome.words["x"] + outcome.words["y"]) % 256 == outcome.words["sum"]
    assert outcome.words["sum"] < outcome.words["x"]


def test_exists_queries_give_a_replayed_witness_or_none():
    carry = _query("exists", lambda ops, x, y: ops.ult(ops.add(x, y), x))
    outcome = decide(carry, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS and outcome.words["sum"] < outcome.words["x"]
    impossible = _query("exists", lambda ops, x, y: ops.ne(ops.add(x, y), ops.add(y, x)))
    assert decide(impossible, "bitwuzla", SOLVER_LIMIT).result == REFUTED


def test_rows_combine_verdicts_and_second_opinions():
    commutes = _query("forall", lambda ops, x, y: ops.ne(ops.add(x, y), ops.add(y, x)))
    row = check_queries("demo", TF32, 8, [commutes, commutes], SECOND, method="chain")
    assert row.result == PROVED and len(row.lemmas) == 2
    assert row.second and row.second["result"] == PROVED
    prose = check_queries("demo", TF32, 8, [commutes], QUICK, method="lemmas")
    assert prose.result == UNKNOWN and "prose" in prose.detail
    false_lemma = _query("forall", lambda ops, x, y: ops.ult(ops.add(x, y), x))
    row = check_queries("demo", TF32, 8, [commutes, false_lemma], QUICK, method="lemmas")
    assert row.result == UNKNOWN and "q: refuted" in row.detail
    row = check_queries("demo", TF32, 8, [false_lemma], QUICK)
    assert row.result == REFUTED and row.words


def test_second_opinions_can_wait_for_a_second_pass():
    """With ``second_later`` the row has no second opinion until :func:`second_opinions`
    asks the second solver of each proved query; the lemmas then carry theirs."""
    commutes = _query("forall", lambda ops, x, y: ops.ne(ops.add(x, y), ops.add(y, x)))
    settings = SECOND
    row = check_queries("demo", TF32, 8, [commutes, commutes],
                        dataclasses.replace(settings, second_later=True), method="chain")
    assert row.result == PROVED and row.second is None
    assert all(lem["second"] is None for lem in row.lemmas)
    assert second_opinions(row, settings) > 0
    assert row.second["result"] == PROVED
    assert all(lem["second"]["result"] == PROVED for lem in row.lemmas)
    assert second_opinions(row, settings) == 0


def test_the_matrix_runs_the_second_opinions_after_every_first_verdict(monkeypatch):
    order = []

    def check(desc, k, settings):
        order.append(("first", desc.name))
        return check_queries("demo", desc, k, [_query("forall", lambda ops, x, y: ops.ne(
            ops.add(x, y), ops.add(y, x)))], settings, method="chain")

    prop = dataclasses.replace(runner.properties()["permutation"], check=check)
    rows = [runner.RowSpec(prop, lookup(name).descriptor, 4)
            for name in ("dense-tf32", "dense-bf16")]
    passes = {}
    results = runner.run_rows(rows, dataclasses.replace(SECOND, jobs=2),
                              second_progress=lambda row, done, total: order.append(
                                  ("second", row.datapath)), passes=passes)
    assert [step for step, _ in order] == ["first", "first", "second", "second"]
    assert all(r.second and r.second["result"] == PROVED for r in results)
    assert set(passes) == {"first_pass_seconds", "second_pass_seconds", "from_cache"}
    assert passes["from_cache"] == 0


def test_a_keyed_row_is_reused_only_while_its_key_is_unchanged():
    calls = []

    def check(desc, k, settings):
        calls.append(desc.name)
        row = check_queries("demo", desc, k, [_query("forall", lambda ops, x, y: ops.ne(
            ops.add(x, y), ops.add(y, x)))], settings, method="chain")
        row.key = key[0]
        return row

    key = ["k1"]
    prop = dataclasses.replace(runner.properties()["permutation"], check=check,
                               key=lambda desc, k, settings: key[0])
    rows = [runner.RowSpec(prop, lookup("dense-tf32").descriptor, 4)]
    first = runner.run_rows(rows, QUICK)
    previous = {(r.property, r.datapath, r.k): r for r in first}
    passes = {}
    again = runner.run_rows(rows, QUICK, passes=passes, previous=previous)
    assert calls == ["dense-tf32"] and passes["from_cache"] == 1
    assert again[0].result == PROVED and "from the cache" in runner.describe_row(again[0])
    key[0] = "k2"
    runner.run_rows(rows, QUICK, previous=previous)
    assert calls == ["dense-tf32", "dense-tf32"]


def test_an_unkeyed_property_is_reused_by_its_source_key(monkeypatch):
    """A property with no key of its own (the chains) is keyed by the code that decides it:
    reused while the sources, solver and limit are the same, re-decided when any changes."""
    from tcspec.proofs import core

    calls = []

    def check(desc, k, settings):
        calls.append(desc.name)
        return check_queries("demo", desc, k, [_query("forall", lambda ops, x, y: ops.ne(
            ops.add(x, y), ops.add(y, x)))], settings, method="chain")

    prop = dataclasses.replace(runner.properties()["tf32-ignores-low-bits"], check=check)
    rows = [runner.RowSpec(prop, lookup("dense-tf32").descriptor, 8)]
    first = runner.run_rows(rows, QUICK)
    assert first[0].key == core.source_key(prop.name, rows[0].desc, 8, QUICK)
    previous = {(r.property, r.datapath, r.k): r for r in first}
    passes = {}
    runner.run_rows(rows, QUICK, passes=passes, previous=previous)
    assert calls == ["dense-tf32"] and passes["from_cache"] == 1
    runner.run_rows(rows, dataclasses.replace(QUICK, timeout=QUICK.timeout + 1),
                    previous=previous)
    monkeypatch.setattr(core, "_sources_digest", lambda: "an edited tree")
    runner.run_rows(rows, QUICK, previous=previous)
    assert calls == ["dense-tf32"] * 3


def test_rows_are_selected_by_property_datapath_and_k():
    rows = runner.select_rows("tf32-ignores-low-bits", "dense-tf32", 4)
    assert [(r.prop.name, r.desc.name, r.k) for r in rows] == [
        ("tf32-ignores-low-bits", "dense-tf32", 4)]
    required = runner.select_rows("sparse-non-interference")
    assert len(required) == 18 and all(r.k == r.desc.k for r in required)
    fast = {r.prop.name for r in runner.select_rows(fast=True)}
    assert fast and fast <= set(runner.properties())
    assert all(r.k <= r.desc.k for r in runner.select_rows(fast=True))
    both = runner.select_rows("k-group-carry, sign-symmetry")
    assert [r.prop.name for r in both] == ["k-group-carry"] * 10 + ["sign-symmetry"] * 274
    with pytest.raises(ValueError, match="unknown property 'nope'"):
        runner.select_rows("nope")
    with pytest.raises(ValueError, match="unknown property 'nope'"):
        runner.select_rows("sign-symmetry,nope")
    with pytest.raises(ValueError, match="does not apply"):
        runner.select_rows("sign-symmetry", "i8-u8-u8-wrap")
    with pytest.raises(ValueError, match="impossible"):
        runner.select_rows("permutation", "dense-nvfp4", 8)
    with pytest.raises(ValueError, match="instruction's K=64"):
        runner.select_rows("sign-symmetry", "dense-nvfp4", 128)


def test_report_files_and_list_counts(tmp_path):
    rows = [Row("p", "dense-tf32", 8, PROVED, "bitwuzla", 1.0, "lemmas", 8),
            Row("q", "dense-tf32", 4, UNKNOWN, "bitwuzla", 120.0, "monolithic", 8, "timeout"),
            Row("r", "dense-bf16", 16, WITNESS, "bitwuzla", 2.0, "monolithic", 16,
                words={"d": 0x3F800000})]
    json_path, md_path = tmp_path / "r.json", tmp_path / "r.md"
    runner.write_report(rows, Settings(), 123.0, json_path, md_path)
    data = json.loads(json_path.read_text())
    assert [r["result"] for r in data["rows"]] == [PROVED, UNKNOWN, WITNESS]
    assert data["rows"][1]["model_k"] and not data["rows"][0]["model_k"]
    assert "d=0x3F800000" in md_path.read_text()
    counts = runner.proof_counts(json_path)
    assert counts["dense-tf32"] == {"proved": 1, "unknown": 1, "refuted": 0}
    assert counts["dense-bf16"]["proved"] == 1
    assert runner.proof_counts(tmp_path / "missing.json") == {}


def test_prove_command_prints_rows_as_json(capsys):
    code = main(["prove", "--property", "tf32-ignores-low-bits", "--json",
                 "--second-solver", "none", "--timeout", str(SOLVER_LIMIT)])
    out = capsys.readouterr().out
    rows = json.loads(out)
    assert code == 0 and rows[0]["result"] == PROVED
    assert {"property", "datapath", "k", "result", "solver", "seconds", "method"} <= set(rows[0])


@pytest.mark.parametrize("argv", [
    ["--property", "nope"],
    ["--property", "sign-symmetry", "--datapath", "i8-u8-u8-wrap"],
    ["--property", "permutation", "--datapath", "dense-nvfp4", "--k", "8"],
    ["--datapath", "nope"],
    ["--jobs", "0"],
    ["--timeout", "-1"],
    ["--second-solver", "yices"],
])
def test_prove_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(["prove", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tcspec: error: ") and err.count("\n") == 1


def test_every_property_is_required_on_every_datapath_it_applies_to():
    """Issue 31 item 4: the required matrix is the applicable pairs, listed from the
    descriptors, so a datapath selects the same rows with or without ``every``."""
    for name, prop in runner.properties().items():
        assert set(prop.required) == {n for n, entry in runner.CATALOG.items()
                                      if prop.applies(entry.descriptor)}, name
    required = {r.prop.name for r in runner.select_rows(datapath="dense-bf16")}
    every = {r.prop.name for r in runner.select_rows(datapath="dense-bf16", every=True)}
    assert required == every and "c-monotonicity-fails" in required
    sparse = {r.prop.name for r in runner.select_rows(datapath="sparse-tf32")}
    assert {"sparse-masking", "sparse-non-interference", "equals-reference",
            "sign-symmetry", "ignores-unread-bits", "error-bound"} <= sparse
    assert {r.prop.name for r in runner.select_rows(datapath="dense-mxf4nvf4-4x-ue4m3")} == {
        "equals-reference", "sign-symmetry", "ignores-unread-bits", "permutation",
        "k-group-carry", "k-group-carry-ends", "group-vs-per-product",
        "permutation-across-groups"}


def test_a_failing_check_is_an_internal_error_never_a_row():
    from tcspec.proofs.core import InternalError, timed

    def broken():
        raise ZeroDivisionError("boom")

    with pytest.raises(InternalError, match="demo: the check failed: ZeroDivisionError"):
        timed(broken, "demo")


def test_a_refuted_lemma_refutes_a_chain_only_when_its_words_violate_the_property():
    """``Query.lift``: the lemma's replayed model is tried on the property's violation."""
    false_lemma = _query("forall", lambda ops, x, y: ops.ult(ops.add(x, y), x))

    def wraps(ops, values):
        x, y = values["x"], values["y"]
        return ops.ult(ops.add(x, y), y), {"sum": ops.add(x, y)}

    def never(ops, values):
        return ops.false(), {}

    lifted = dataclasses.replace(false_lemma, lift=wraps)
    outcome = decide(lifted, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED and outcome.words["sum"] < outcome.words["y"]
    row = check_queries("demo", TF32, 8, [lifted], QUICK, "chain")
    assert row.result == REFUTED and row.words
    unlifted = dataclasses.replace(false_lemma, lift=never)
    outcome = decide(unlifted, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == UNKNOWN and "do not violate the property" in outcome.reason
    assert {"x", "y"} <= set(outcome.words)
    row = check_queries("demo", TF32, 8, [unlifted], QUICK, "chain")
    assert row.result == UNKNOWN and "q: unknown" in row.detail


def test_a_chain_needs_every_forall_query_proved_not_only_its_witness():
    commutes = _query("forall", lambda ops, x, y: ops.ne(ops.add(x, y), ops.add(y, x)))
    possible = _query("exists", lambda ops, x, y: ops.ult(ops.add(x, y), x))
    slow = dataclasses.replace(commutes, name="slow")
    row = check_queries("demo", TF32, 8, [possible, commutes], QUICK, "chain")
    assert row.result == PROVED
    outcomes = [decide(possible, "bitwuzla", SOLVER_LIMIT),
                decide(commutes, "bitwuzla", SOLVER_LIMIT)]
    outcomes.append(Outcome(slow.name, UNKNOWN, "bitwuzla", 120.0, "no answer within 120s"))
    row = row_from_outcomes("demo", TF32, 8, outcomes, "chain")
    assert row.result == UNKNOWN and "slow: unknown" in row.detail


def test_a_hypothesis_without_a_witness_is_never_proved():
    """Issue 30: a row whose hypothesis no input meets would hold vacuously; it is unknown and
    says why. A satisfiable hypothesis is shown (its replayed words, in the row's lemmas and
    detail) and does not turn a proved monolithic row into a witness row."""
    from tcspec.proofs.core import HYPOTHESIS, hypothesis_query

    commutes = _query("forall", lambda ops, x, y: ops.and_(
        ops.eq(x, 3), ops.ne(ops.add(x, y), ops.add(y, x))))

    def never(ops, values):
        return ops.and_(ops.eq(values["x"], 3), ops.eq(values["x"], 4)), {"x": values["x"]}

    def three(ops, values):
        return ops.eq(values["x"], 3), {"x": values["x"]}

    settings = QUICK
    for method in ("monolithic", "chain"):
        vacuous = check_queries("demo", TF32, 8, [hypothesis_query(commutes.variables, never),
                                                  commutes], settings, method)
        assert vacuous.result == UNKNOWN, method
        assert "hypothesis is unsatisfiable" in vacuous.detail
        shown = check_queries("demo", TF32, 8, [hypothesis_query(commutes.variables, three),
                                                commutes], settings, method)
        assert shown.result == PROVED, (method, shown.detail)
        assert shown.lemmas[0]["name"] == HYPOTHESIS and shown.lemmas[0]["words"] == {"x": 3}
        assert f"{HYPOTHESIS}: witness replayed (x=0x3)" in shown.detail and not shown.words


def test_a_chain_that_does_not_cover_the_dag_is_never_proved():
    """Issue 30: counts of a chain (groups, lanes, steps) against the DAG's; a mismatch is
    an unknown row naming it, and a decided row is demoted (a refutation stands)."""
    from tcspec.proofs.core import cover_mismatches, require_cover, uncovered_row

    mismatches = cover_mismatches([("groups", 4, 8), ("lanes", 16, 16)])
    assert mismatches == ["groups: the chain covers 4, the DAG has 8"]
    row = uncovered_row("demo", TF32, 8, mismatches, "chain", "what it cuts")
    assert row.result == UNKNOWN and "does not cover the DAG" in row.detail
    assert "groups: the chain covers 4, the DAG has 8" in row.detail
    proved = Row("demo", "dense-tf32", 8, PROVED, "bitwuzla", 1.0, "chain", 8)
    assert require_cover(proved, mismatches).result == UNKNOWN
    refuted = Row("demo", "dense-tf32", 8, REFUTED, "bitwuzla", 1.0, "chain", 8)
    assert require_cover(refuted, mismatches).result == REFUTED
    assert require_cover(Row("demo", "dense-tf32", 8, PROVED, "b", 1.0, "chain", 8),
                         []).result == PROVED


def test_a_row_selection_merges_into_the_committed_report(tmp_path):
    first = [Row("p", "dense-tf32", 8, UNKNOWN, "bitwuzla", 120.0, "chain", 8, "timeout"),
             Row("q", "dense-bf16", 16, PROVED, "bitwuzla", 2.0, "chain", 16)]
    json_text, _ = runner.report_texts(first, Settings(), 600.0)
    previous = json.loads(json_text)
    again = [Row("p", "dense-tf32", 8, PROVED, "bitwuzla", 30.0, "chain", 8),
             Row("s", "dense-f16", 16, WITNESS, "bitwuzla", 1.0, "monolithic", 16)]
    json_text, md_text = runner.report_texts(again, Settings(), 31.0, previous)
    data = json.loads(json_text)
    assert [(r["property"], r["result"], r["run"]) for r in data["rows"]] == [
        ("p", PROVED, 1), ("q", PROVED, 0), ("s", WITNESS, 1)]
    assert [run.get("rows") for run in data["runs"]] == [None, 2]
    assert "Run 0" in md_text and "2 row(s) re-decided" in md_text
    assert "Counts: 2 proved, 1 witness" in md_text
    assert runner.row_from_json(data["rows"][1]) == first[1]


def test_list_counts_read_every_committed_matrix():
    files = runner.report_files()
    assert files[0] == runner.REPORT_JSON and any("arch" in f.parts for f in files[1:])
    counts = runner.proof_counts()
    assert any(name.startswith("sm_") for name in counts)
    assert "dense-tf32" in counts


def test_datapath_patterns_select_rows_in_catalogue_order():
    rows = runner.select_rows("equals-reference", "i8-*-wrap,dense-tf32")
    assert rows[0].desc.name == "dense-tf32"
    assert {r.desc.name for r in rows} == {"dense-tf32", "i8-u8-u8-wrap", "i8-u8-s8-wrap",
                                           "i8-s8-u8-wrap", "i8-s8-s8-wrap"}
    with pytest.raises(ValueError, match="matches no datapath"):
        runner.select_rows("equals-reference", "nope-*")


def test_equals_reference_verdicts_are_read_per_datapath(tmp_path):
    report = tmp_path / "REPORT.json"
    report.write_text(json.dumps({"rows": [
        {"property": "equals-reference", "datapath": "dense-tf32", "result": "proved"},
        {"property": "sign-symmetry", "datapath": "dense-bf16", "result": "proved"}]}))
    assert runner.equals_reference_results(report) == {"dense-tf32": "proved"}
    assert runner.equals_reference_results(tmp_path / "missing.json") == {}
