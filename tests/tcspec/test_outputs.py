"""Outputs of the writing commands (tcspec/outputs.py, issue 19): atomic, protected, locked.

Each test drives a command the way a user does (``tcspec.cli.main``) and looks at
what is left on disk: nothing partial after Ctrl-C or an error, no silent
overwrite without ``--force``, no second writer reporting success.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tcspec.campaign as campaign
from tcspec.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _interrupt_second_chunk(monkeypatch, error: type[BaseException] = KeyboardInterrupt):
    """Chunks of 50 rows, and chunk 1 interrupted (as Ctrl-C would, mid-run)."""
    monkeypatch.setattr(campaign, "CHUNK_ROWS", 50)
    block = campaign.GenerationPlan.block

    def broken(self, index):
        if index == 1:
            raise error("interrupted" if error is not KeyboardInterrupt else None)
        return block(self, index)

    monkeypatch.setattr(campaign.GenerationPlan, "block", broken)


@pytest.mark.parametrize("name", ["cases.jsonl", "cases.jsonl.gz"])
def test_gen_interrupted_leaves_no_file_and_exits_130(name, tmp_path, capsys, monkeypatch):
    _interrupt_second_chunk(monkeypatch)
    out = tmp_path / name
    code, stdout, _ = run(capsys, "gen", "--datapath", "tf32", "--cases", "200", "--jobs", "1",
                          "--out", str(out))
    assert code == 130 and "wrote" not in stdout
    assert list(tmp_path.iterdir()) == []


def test_gen_npy_dir_interrupted_leaves_no_directory(tmp_path, capsys, monkeypatch):
    _interrupt_second_chunk(monkeypatch)
    out = tmp_path / "cols"
    code, _, _ = run(capsys, "gen", "--datapath", "tf32", "--cases", "200", "--jobs", "1",
                     "--format", "npy-dir", "--out", str(out))
    assert code == 130 and list(tmp_path.iterdir()) == []


def test_gen_error_mid_run_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    out = tmp_path / "cases.jsonl"
    out.write_text("precious\n")
    _interrupt_second_chunk(monkeypatch, ValueError)
    code, _, err = run(capsys, "gen", "--datapath", "tf32", "--cases", "200", "--jobs", "1",
                       "--out", str(out), "--force")
    assert code == 2 and err.startswith("tcspec: error:")
    assert out.read_text() == "precious\n" and sorted(tmp_path.iterdir()) == [out]


def test_gen_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    out.write_text("precious\n")
    code, stdout, err = run(capsys, "gen", "--datapath", "tf32", "--cases", "5",
                            "--out", str(out))
    assert code == 2 and "already exists" in err and "--force" in err and "wrote" not in stdout
    assert out.read_text() == "precious\n"
    code, stdout, _ = run(capsys, "gen", "--datapath", "tf32", "--cases", "5", "--out", str(out),
                          "--force")
    assert code == 0 and len(out.read_text().splitlines()) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl"]


def test_gen_npy_dir_refuses_a_full_directory_without_force(tmp_path, capsys):
    out = tmp_path / "cols"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    code, _, err = run(capsys, "gen", "--datapath", "tf32", "--cases", "5", "--format",
                       "npy-dir", "--out", str(out))
    assert code == 2 and "already exists" in err and (out / "mine.txt").exists()


def test_a_held_lock_refuses_a_second_writer(tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    lock = tmp_path / ".cases.jsonl.lock"
    lock.write_text(f"{os.getpid()}\n")
    code, stdout, err = run(capsys, "gen", "--datapath", "tf32", "--cases", "5",
                            "--out", str(out))
    assert code == 2 and "being written" in err and "wrote" not in stdout
    assert not out.exists() and lock.exists()


def test_a_stale_lock_is_taken_over(tmp_path, capsys):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / ".cases.jsonl.lock").write_text(f"{dead}\n")
    code, _, _ = run(capsys, "gen", "--datapath", "tf32", "--cases", "5",
                     "--out", str(tmp_path / "cases.jsonl"))
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl"]


def test_two_concurrent_gens_to_one_path_cannot_both_succeed(tmp_path):
    out = tmp_path / "cases.jsonl"
    argv = [sys.executable, "-m", "tcspec.cli", "gen", "--datapath", "tf32", "--cases",
            "30000", "--jobs", "1", "--out", str(out)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    assert sum("wrote" in out_text for _, out_text, _ in results) == 1
    lines = out.read_text().splitlines()
    assert len(lines) == 30000 and all(json.loads(line)["expected"] >= 0 for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl"]


def test_probe_out_refuses_an_existing_file_before_solving(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    out.write_text("precious\n")
    code, stdout, err = run(capsys, "probe", "--datapath", "tf32", "--vs", "exact-rne",
                            "--out", str(out))
    assert code == 2 and "already exists" in err and "probe 0" not in stdout
    assert out.read_text() == "precious\n"


@pytest.mark.parametrize("argv", [
    ["export", "--lang", "smtlib", "--datapath", "tf32", "-o", "{out}"],
    ["smtlib", "--datapath", "tf32", "-o", "{out}"],
    ["explain", "--datapath", "tf32", "--a", ",".join(["0x3f800000"] * 8),
     "--b", ",".join(["0x3f800000"] * 8), "--svg", "{out}"],
])
def test_file_writers_refuse_to_overwrite_without_force(argv, tmp_path, capsys):
    out = tmp_path / "out.txt"
    out.write_text("precious\n")
    argv = [a.replace("{out}", str(out)) for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "already exists" in err and out.read_text() == "precious\n"
    code, _, _ = run(capsys, *argv, "--force")
    assert code == 0 and out.read_text() != "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_export_c_refuses_to_overwrite_the_header(tmp_path, capsys):
    (tmp_path / "tcspec_tcgen05.h").write_text("mine\n")
    code, _, err = run(capsys, "export", "--lang", "c", "--datapath", "tf32", "-o",
                       str(tmp_path))
    assert code == 2 and "already exists" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tcspec_tcgen05.h"]


def test_prove_report_holds_the_lock_of_the_report(tmp_path, capsys, monkeypatch):
    import tcspec.proof_matrix as prove

    monkeypatch.setattr(prove, "REPORT_JSON", tmp_path / "REPORT.json")
    monkeypatch.setattr(prove, "REPORT_MD", tmp_path / "REPORT.md")
    monkeypatch.setattr(prove, "write_report", lambda *a, **k: None, raising=False)
    monkeypatch.setattr(prove, "run_rows", lambda rows, settings, *progress: [])
    (tmp_path / ".REPORT.json.lock").write_text(f"{os.getpid()}\n")
    code, _, err = run(capsys, "prove", "--report")
    assert code == 2 and "being written" in err


def test_prove_report_replaces_the_report_atomically(tmp_path, capsys, monkeypatch):
    import tcspec.proof_matrix as prove

    json_path, md_path = tmp_path / "REPORT.json", tmp_path / "REPORT.md"
    json_path.write_text("old\n")
    monkeypatch.setattr(prove, "REPORT_JSON", json_path)
    monkeypatch.setattr(prove, "REPORT_MD", md_path)
    monkeypatch.setattr(prove, "write_report", lambda *a, **k: None, raising=False)
    monkeypatch.setattr(prove, "run_rows", lambda rows, settings, *progress: [])
    code, _, _ = run(capsys, "prove", "--report")
    assert code == 0 and json.loads(json_path.read_text())["rows"] == []
    assert md_path.read_text().startswith("# Proof report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["REPORT.json", "REPORT.md"]


def test_ctrl_c_during_a_parallel_gen_stops_the_workers_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(campaign, "CHUNK_ROWS", 50)
    block = campaign.GenerationPlan.block

    def slow(self, index):
        time.sleep(0.5)
        return block(self, index)

    def interrupted(results, progress):
        next(iter(results))
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign.GenerationPlan, "block", slow)
    monkeypatch.setattr(campaign, "_tally", interrupted)
    started = time.monotonic()
    code, _, _ = run(capsys, "gen", "--datapath", "tf32", "--cases", "2000", "--jobs", "2",
                     "--out", str(tmp_path / "cases.jsonl"))
    assert code == 130 and time.monotonic() - started < 8
    assert list(tmp_path.iterdir()) == []
    assert multiprocessing.active_children() == []


def test_hw_run_refuses_an_existing_out_before_opening_a_device(tmp_path, capsys):
    out = tmp_path / "observed.jsonl"
    out.write_text("precious\n")
    code, _, err = run(capsys, "hw", "run", str(ROOT / "ref/vectors/b200_frozen.jsonl"),
                       "--out", str(out))
    assert code == 2 and "already exists" in err and out.read_text() == "precious\n"


def test_prove_fast_rows_never_reach_the_report(tmp_path, capsys, monkeypatch):
    import tcspec.proof_matrix as prove

    monkeypatch.setattr(prove, "REPORT_JSON", tmp_path / "REPORT.json")
    monkeypatch.setattr(prove, "REPORT_MD", tmp_path / "REPORT.md")
    code, _, err = run(capsys, "prove", "--fast", "--report")
    assert code == 2 and "--fast" in err and not list(tmp_path.iterdir())


def test_prove_jobs_stops_at_once_on_sigterm(tmp_path) -> None:
    """``prove --jobs 2`` on SIGTERM cancels the rows not started, kills the running solver
    children and exits 143 (128 + SIGTERM) within seconds (it used to run every remaining
    row first, and exit 130 as for Ctrl-C)."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-m", "tcspec.cli", "prove", "--property",
                              "sign-symmetry", "--datapath", "dense-*", "--jobs", "2",
                              "--second-solver", "none"],
                             cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    time.sleep(6)
    child.send_signal(signal.SIGTERM)
    started = time.monotonic()
    _, err = child.communicate(timeout=60)
    assert child.returncode == 143 and time.monotonic() - started < 20
    assert "terminated" in err
