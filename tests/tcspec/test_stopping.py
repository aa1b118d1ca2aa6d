"""Long runs stop when asked and say what they will cost (issue 33, items 2, 3, 7, 8, 12).

Ctrl-C ends every command within seconds at any phase and removes partial files; a second
Ctrl-C always ends it; SIGTERM exits 143. ``prove`` keeps the first-pass verdicts when the
second opinions are interrupted, warns before a huge formula, and writes ``--report DIR``
without touching the package's report or any other row's evidence; ``gen`` refuses an output
the disk cannot hold. The signal tests run the real command line in its own session and
signal its whole process group, as a terminal's Ctrl-C does.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tcspec.campaign as campaign
from tcspec.cli import main
from tcspec.processes import WorkerDiedError, pool_map
from tcspec.proofs import runner
from tcspec.proofs.core import PROVED, Row, Settings

ROOT = Path(__file__).resolve().parents[2]


def _default_signals() -> None:
    """In the child: SIGINT and SIGTERM at their defaults. A suite started in the
    background (``nohup pytest &``) inherits SIGINT ignored, and tcspec rightly leaves an
    ignored signal alone, so the child would never see the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", "import sys; from tcspec.cli import main; "
                             "sys.exit(main())", *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            stdin=subprocess.DEVNULL, preexec_fn=_default_signals)


def _wait_for(child: subprocess.Popen[str], text: str, limit: float = 60.0) -> str:
    """Stderr lines up to the first that contains ``text``."""
    assert child.stderr is not None
    seen = ""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = child.stderr.readline()
        seen += line
        if text in line or not line:
            return seen
    raise AssertionError(f"no {text!r} on stderr within {limit} s: {seen}")


def _signal_and_time(child: subprocess.Popen[str], signum: int = signal.SIGINT
                     ) -> tuple[float, str, str]:
    """Signal the process group; seconds to exit, stdout, the rest of stderr."""
    os.killpg(child.pid, signum)
    started = time.monotonic()
    try:
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    return time.monotonic() - started, out, err


def _group_members(pgid: int) -> int:
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        count += int(fields[2]) == pgid
    return count


def _wait_for_workers(child: subprocess.Popen[str], limit: float = 60.0) -> None:
    """Until the child has started its worker processes (so its own SIGINT handler is in
    place: a fixed sleep signalled a child still importing on a busy machine) or has exited."""
    deadline = time.monotonic() + limit
    while child.poll() is None and _group_members(child.pid) < 2:
        assert time.monotonic() < deadline, "check started no worker within the limit"
        time.sleep(0.05)


def _group_gone(pgid: int, limit: float = 5.0) -> bool:
    """Whether every process of the group has exited within ``limit`` seconds (workers
    that outlive their parent stay; on a loaded machine exiting ones take a while)."""
    deadline = time.monotonic() + limit
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


@pytest.fixture
def solvers_restart():
    """An in-process interrupt stops every solver of this process; let later tests run."""
    yield
    from tcspec.smt import solve

    solve._STOPPING.clear()


# ---------------------------------------------------------------- prove


def test_ctrl_c_while_a_huge_formula_is_built_stops_within_seconds(tmp_path):
    """Item 2: Ctrl-C during formula building printed "interrupted" and ran on at 100% CPU
    (a thread pool's worker building the formula was joined at exit)."""
    child = _start(["prove", "--property", "tf32-ignores-low-bits", "--k", "100000",
                    "--second-solver", "none"], tmp_path)
    before = _wait_for(child, "row(s); bitwuzla")
    time.sleep(2)
    seconds, _, err = _signal_and_time(child)
    assert "tcspec: warning:" in before and "GB" in before and "Ctrl-C stops it" in before
    assert child.returncode == 130 and seconds < 5, (seconds, err)
    assert "interrupted" in err and "Traceback" not in err
    assert _group_gone(child.pid)


def test_formula_size_warning_names_the_row_and_the_estimate(capsys):
    from tcspec.proof_matrix import FORMULA_WARN_BYTES, formula_bytes, warn_formula_sizes

    rows = runner.select_rows("tf32-ignores-low-bits", None, 100_000)
    assert formula_bytes(rows[0]) > FORMULA_WARN_BYTES
    warn_formula_sizes(rows)
    warn_formula_sizes(runner.select_rows("tf32-ignores-low-bits", None, 1024))
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "K=100000" in lines[0] and "GB" in lines[0]
    warn_formula_sizes(runner.select_rows("tf32-ignores-low-bits,error-bound",
                                          "dense-tf32,dense-bf16,dense-f16", 65536))
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4 and lines[-1].startswith("tcspec: warning: 1 more row(s) past")


def _interrupt_second_opinions(monkeypatch) -> None:
    def interrupted(row, settings):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "second_opinions", interrupted)


def test_ctrl_c_in_the_second_opinions_keeps_the_first_pass_verdict(
        tmp_path, capsys, monkeypatch, solvers_restart):
    """Item 7: the first-pass ``proved`` is printed and written (``--report DIR``), the
    progress says the first pass is done, not that all rows are decided."""
    _interrupt_second_opinions(monkeypatch)
    package = runner.REPORT_JSON.read_bytes()
    out_dir = tmp_path / "report"
    code = main(["prove", "--property", "tf32-ignores-low-bits", "--no-cache",
                 "--report", str(out_dir)])
    out, err = capsys.readouterr()
    assert code == 130
    assert "tf32-ignores-low-bits" in out and " proved " in out
    assert "[first pass 1/1]" in err and "first pass done" in err
    assert "every first-pass verdict is kept" in err and "--second-solver none" in err
    data = json.loads((out_dir / "REPORT.json").read_text())
    row = next(r for r in data["rows"] if r["property"] == "tf32-ignores-low-bits"
               and r["datapath"] == "dense-tf32")
    assert row["result"] == PROVED and "second opinion interrupted" in row["detail"]
    assert data["run"]["second_pass_interrupted"] is True
    assert runner.REPORT_JSON.read_bytes() == package
    assert sorted(p.name for p in out_dir.iterdir()) == ["REPORT.json", "REPORT.md"]


def test_prove_report_dir_merges_without_touching_other_rows(tmp_path, capsys,
                                                             solvers_restart):
    """Item 8: ``--report DIR`` writes there; every other row's record and table line are
    kept byte for byte, and the package report is never written."""
    package_json, package_md = runner.REPORT_JSON.read_bytes(), runner.REPORT_MD.read_bytes()
    code = main(["prove", "--property", "tf32-ignores-low-bits", "--second-solver", "none",
                 "--no-cache", "--report", str(tmp_path)])
    assert code == 0 and f"wrote {tmp_path / 'REPORT.json'}" in capsys.readouterr().out
    assert runner.REPORT_JSON.read_bytes() == package_json
    assert runner.REPORT_MD.read_bytes() == package_md
    old, new = json.loads(package_json), json.loads((tmp_path / "REPORT.json").read_text())
    changed = [i for i, (a, b) in enumerate(zip(old["rows"], new["rows"], strict=True))
               if a != b]
    assert [new["rows"][i]["property"] for i in changed] == ["tf32-ignores-low-bits"]
    old_lines = package_md.decode().splitlines()
    new_lines = (tmp_path / "REPORT.md").read_text().splitlines()
    table = [line for line in old_lines if line.startswith("| ") and "tf32-ignores" not in line]
    assert all(line in new_lines for line in table)


def test_report_dir_that_is_a_file_is_refused(tmp_path, capsys):
    target = tmp_path / "plain"
    target.write_text("x")
    code = main(["prove", "--property", "tf32-ignores-low-bits", "--report", str(target)])
    assert code == 2 and "not a directory" in capsys.readouterr().err


def test_a_merge_keeps_figures_and_second_opinions_of_other_rows():
    """Item 8: a re-decided row kept nothing of the others as written: their figures were
    rounded again (27.3 -> 27.2 in the table) and evidence went through ``Row``."""
    first = [Row("p", "dense-tf32", 8, PROVED, "bitwuzla", 27.25, "chain", 8,
                 second={"solver": "z3", "result": PROVED, "seconds": 12.34}),
             Row("q", "dense-bf16", 16, PROVED, "bitwuzla", 2.0, "chain", 16,
                 second={"solver": "cvc5", "result": PROVED, "seconds": 3.0})]
    json_text, md_text = runner.report_texts(first, Settings(), 60.0)
    previous = json.loads(json_text)
    previous["rows"][0]["evidence"] = {"kept": True}
    md_text = md_text.replace("| 27.2 |", "| 27.3 |")
    again = [Row("q", "dense-bf16", 16, PROVED, "bitwuzla", 1.5, "chain", 16)]
    json_text, new_md = runner.report_texts(
        again, Settings(second_solver=None), 5.0, previous, previous_md=md_text)
    rows = json.loads(json_text)["rows"]
    assert rows[0] == previous["rows"][0]
    assert "| p | dense-tf32 | 8 | proved | bitwuzla | 27.3 |" in new_md
    assert rows[1]["seconds"] == 1.5 and rows[1]["run"] == 1
    assert rows[1]["second"] == {"solver": "cvc5", "result": PROVED, "seconds": 3.0, "run": 0}
    assert "cvc5 proved 3.0s (run 0)" in new_md
    refuted = [Row("q", "dense-bf16", 16, "refuted", "bitwuzla", 1.5, "chain", 16)]
    json_text, _ = runner.report_texts(refuted, Settings(second_solver=None), 5.0, previous)
    assert json.loads(json_text)["rows"][1]["second"] is None


def test_prove_help_suggests_skipping_second_opinions(capsys):
    assert main(["prove", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--second-solver none" in text and "--report [DIR]" in text


# ---------------------------------------------------------------- signals


STUCK = """
import sys, time
import tcspec.cli as cli

def stuck(args):
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        print("cleaning", file=sys.stderr, flush=True)
        while True:
            try:
                time.sleep(60)
            except KeyboardInterrupt:
                pass

cli.command = lambda name: stuck
sys.argv = ["tcspec", "list"]
sys.exit(cli.main())
"""


def _stuck(tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", STUCK], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, stdin=subprocess.DEVNULL,
                            preexec_fn=_default_signals)


def test_a_second_ctrl_c_always_stops(tmp_path):
    """Item 2: a second Ctrl-C was ignored while the first one's cleanup ran on."""
    child = _stuck(tmp_path)
    time.sleep(1.5)
    os.killpg(child.pid, signal.SIGINT)
    _wait_for(child, "cleaning")
    seconds, _, err = _signal_and_time(child)
    assert child.returncode == 130 and seconds < 2, (seconds, err)
    assert "stopped at once" in err


def test_a_stuck_cleanup_ends_after_the_grace(tmp_path):
    from tcspec.cli import STOP_GRACE_SECONDS

    child = _stuck(tmp_path)
    time.sleep(1.5)
    seconds, _, err = _signal_and_time(child, signal.SIGTERM)
    assert child.returncode == 143, err
    assert STOP_GRACE_SECONDS - 1 < seconds < STOP_GRACE_SECONDS + 5
    assert "stopping took over" in err


# ---------------------------------------------------------------- gen and check


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGINT, 130),
                                            (signal.SIGTERM, 143)])
def test_interrupted_parallel_npy_dir_gen_stops_clean(tmp_path, signum, status):
    """Item 3: after "interrupted" it hung (2 of 7 tries) or printed an InvalidStateError
    traceback from concurrent.futures; SIGTERM exited 130."""
    child = _start(["gen", "--datapath", "tf32", "--cases", "50000000", "--format", "npy-dir",
                    "--jobs", "2", "--out", str(tmp_path / "big")], tmp_path)
    _wait_for(child, "cases written")
    seconds, _, err = _signal_and_time(child, signum)
    assert child.returncode == status and seconds < 5, (seconds, err)
    assert "Traceback" not in err and "InvalidStateError" not in err
    assert list(tmp_path.iterdir()) == []
    assert _group_gone(child.pid)


def test_gen_refuses_an_output_larger_than_the_free_disk(tmp_path, capsys):
    """Item 3: 10^11 cases (about 7 TB) started writing with 78 GB free."""
    code = main(["gen", "--datapath", "tf32", "--cases", "100000000000", "--format",
                 "npy-dir", "--out", str(tmp_path / "toobig")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "TB" in err and "free" in err
    assert list(tmp_path.iterdir()) == []


def test_gen_disk_check_counts_the_compressed_lines(tmp_path, capsys, monkeypatch):
    plan = campaign.GenerationPlan("dense-tf32", 100_000, campaign.CATEGORIES, 0,
                                   campaign.CHUNK_ROWS)
    plain = campaign.output_bytes(plan, "jsonl", False)
    packed = campaign.output_bytes(plan, "jsonl", True)
    assert 200 * 100_000 < plain < 1000 * 100_000 and packed < plain / 2

    class Usage:
        free = packed

    monkeypatch.setattr(campaign.shutil, "disk_usage", lambda path: Usage)
    code = main(["gen", "--datapath", "tf32", "--cases", "100000", "--out",
                 str(tmp_path / "c.jsonl")])
    assert code == 2 and "need about" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _square(x: int) -> int:
    return x * x


def _fails_at_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    time.sleep(0.05)
    return x


def test_pool_map_keeps_order_and_kills_every_worker_on_an_error_or_a_stop():
    import multiprocessing

    assert list(pool_map(3, _square, range(20))) == [x * x for x in range(20)]
    with pytest.raises(ValueError, match="three"):
        list(pool_map(2, _fails_at_three, range(50)))
    assert multiprocessing.active_children() == []
    results = pool_map(2, _square, range(1000))
    assert next(results) == 0
    results.close()
    assert multiprocessing.active_children() == []


def _exits(x: int) -> int:
    os._exit(9)


def test_pool_map_names_a_worker_that_died():
    with pytest.raises(WorkerDiedError, match="exit status 9"):
        list(pool_map(1, _exits, range(2)))


def test_ctrl_c_during_check_stops_within_seconds(tmp_path):
    assert main(["gen", "--datapath", "tf32", "--cases", "8000000", "--format", "npy-dir",
                 "--out", str(tmp_path / "cols")]) == 0
    child = _start(["check", "--jobs", "2", str(tmp_path / "cols")], tmp_path)
    _wait_for_workers(child)
    seconds, _, err = _signal_and_time(child)
    assert child.returncode in (130, 0) and seconds < 5, (seconds, err)
    assert "Traceback" not in err and _group_gone(child.pid)


# ---------------------------------------------------------------- the test suite itself


def test_the_session_end_freezes_the_heap():
    """Item 12: pytest's five closing ``gc.collect()`` calls on a big xdist worker heap
    outlasted execnet's 5 s, whose SIGINT then printed a KeyboardInterrupt traceback from
    hypothesis's gc callback in a passing run (tests/conftest.py)."""
    from tests.conftest import pytest_unconfigure

    before = gc.get_freeze_count()
    try:
        pytest_unconfigure(None)  # type: ignore[arg-type]
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


def test_an_interrupt_in_the_first_pass_keeps_the_rows_decided_in_the_report(
        tmp_path, capsys, monkeypatch):
    """SIGTERM or Ctrl-C after some rows of a long first pass: those rows go into the
    report (every other row keeps its record), then the command exits 130."""
    import tcspec.proof_matrix as prove

    package = json.loads(runner.REPORT_JSON.read_text())
    kept = next(r for r in package["rows"] if r["property"] == "ignores-unread-bits")
    decided = Row("ignores-unread-bits", kept["datapath"], kept["k"], PROVED, "bitwuzla", 0.5,
                  "equivalence", kept["k"], "decided before the interrupt", [], None, {}, "")

    def interrupted(*args, **kwargs):
        raise runner.RowsInterruptedError([decided], second_pass=False)

    monkeypatch.setattr(prove, "run_rows", interrupted)
    out_dir = tmp_path / "report"
    code = main(["prove", "--property", "ignores-unread-bits", "--second-solver", "none",
                 "--report", str(out_dir)])
    _, err = capsys.readouterr()
    assert code == 130 and "1 of" in err and "--report keeps them" in err
    rows = json.loads((out_dir / "REPORT.json").read_text())["rows"]
    assert len(rows) == len(package["rows"])
    row = next(r for r in rows if r["property"] == "ignores-unread-bits"
               and r["datapath"] == kept["datapath"])
    assert row["detail"] == "decided before the interrupt"
    other = next(r for r in package["rows"] if r["property"] == "sparse-masking")
    assert other in rows
