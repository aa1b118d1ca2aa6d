"""tcspec gen and columnar vector files (tcspec/campaign.py), and check on hostile input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tcspec import campaign
from tcspec.cli import main
from tcspec.spec.catalog import CATALOG
from tcspec.spec.formats import FORMATS


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_generated_lines_check_clean_and_are_reproducible(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second):
        code, out, _ = run(capsys, "gen", "--datapath", "dense-e4m3", "--cases", "90",
                           "--seed", "3", "--out", str(path))
        assert code == 0 and "90 cases" in out
    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert len(lines) == 90 and {line["source"] for line in lines} == {"tcspec gen"}
    code, out, _ = run(capsys, "check", str(first))
    assert code == 0 and "90      90" in out


def test_columnar_directory_round_trip_and_mismatch(tmp_path, capsys):
    out_dir = tmp_path / "cases"
    code, _, _ = run(capsys, "gen", "--datapath", "sparse-nvfp4", "--cases", "70", "--mix",
                     "edge,raw", "--format", "npy-dir", "--out", str(out_dir))
    assert code == 0
    desc = CATALOG["sparse-nvfp4"].descriptor
    a = np.load(out_dir / "a.npy", allow_pickle=False)
    assert a.dtype == np.uint32 and a.shape == (70, desc.k)
    assert np.load(out_dir / "scale_a.npy").dtype == np.uint8
    assert np.load(out_dir / "metadata.npy").shape == (70, desc.metadata_words)
    code, out, _ = run(capsys, "check", str(out_dir))
    assert code == 0 and "sparse-nvfp4" in out
    expected = np.load(out_dir / "expected.npy")
    expected[5] ^= 1
    np.save(out_dir / "expected.npy", expected)
    code, out, _ = run(capsys, "check", str(out_dir))
    assert code == 1 and "row 5 [sparse-nvfp4]" in out


def test_jobs_split_gives_the_same_tallies(tmp_path, capsys, monkeypatch):
    out_dir = tmp_path / "cases"
    run(capsys, "gen", "--datapath", "dense-tf32", "--cases", "300", "--format", "npy-dir",
        "--out", str(out_dir))
    monkeypatch.setattr(campaign, "CHUNK_ROWS", 64)
    one = campaign.check_columns(out_dir, jobs=1)
    two = campaign.check_columns(out_dir, jobs=2)
    assert one.total.passed == two.total.passed == 300


def _columns(tmp_path, capsys):
    out_dir = tmp_path / "cases"
    run(capsys, "gen", "--datapath", "dense-tf32", "--cases", "20", "--format", "npy-dir",
        "--out", str(out_dir))
    return out_dir


@pytest.mark.parametrize("damage, message", [
    (lambda d: np.save(d / "c.npy", np.array([object()] * 20), allow_pickle=True),
     "holds Python objects"),
    (lambda d: np.save(d / "c.npy", np.zeros(20, dtype=np.int64)), "expected uint32"),
    (lambda d: (d / "a.npy").write_bytes((d / "a.npy").read_bytes()[:300]), "truncated"),
    (lambda d: (d / "b.npy").write_bytes(b"not a numpy file at all"), "not a valid .npy"),
    (lambda d: (d / "descriptor.json").write_text("[" * 20000), "not valid JSON"),
    (lambda d: (d / "descriptor.json").write_text('{"format": "other"}'), "not a tcspec"),
    (lambda d: (d / "expected.npy").unlink(), "cannot read column"),
])
def test_hostile_columnar_input_is_one_clear_error(tmp_path, capsys, damage, message):
    out_dir = _columns(tmp_path, capsys)
    damage(out_dir)
    code, _, err = run(capsys, "check", str(out_dir))
    assert code == 2 and message in err and "Traceback" not in err


def test_deeply_nested_json_line_is_a_bad_line(tmp_path, capsys):
    path = tmp_path / "nested.jsonl"
    path.write_text("[" * 100000 + "\n")
    code, _out, err = run(capsys, "check", str(path))
    assert code == 2 and "nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--mix", "raw,odd"], "unknown case category 'odd'"),
    (["--cases", "0"], "--cases must be at least 1"),
    (["--out", "/proc/forbidden/x.jsonl"], "cannot write"),
])
def test_gen_bad_input(tmp_path, capsys, argv, message):
    base = {"--datapath": "tf32", "--cases": "5", "--out": str(tmp_path / "x.jsonl")}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    code, _, err = run(capsys, "gen", *[item for pair in base.items() for item in pair])
    assert code == 2 and message in err


def test_finite_category_has_only_finite_containers():
    rng = np.random.default_rng(1)
    for name in ("tf32", "e4m3", "e5m2", "bf16"):
        fmt = FORMATS[name]
        words = campaign.operand_words(rng, name, "finite", (4000,))
        exp = (words >> np.uint64(fmt.cleared_bits + fmt.frac_bits)) & np.uint64(
            fmt.exp_max_field)
        frac = (words >> np.uint64(fmt.cleared_bits)) & np.uint64((1 << fmt.frac_bits) - 1)
        if fmt.specials == "ieee":
            assert not (exp == fmt.exp_max_field).any()
        else:
            assert not ((exp == fmt.exp_max_field) & (frac == (1 << fmt.frac_bits) - 1)).any()


def test_dask_cluster_gives_the_local_tallies(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    out_dir = tmp_path / "cases"
    lines = tmp_path / "cases.jsonl"
    run(capsys, "gen", "--datapath", "dense-bf16", "--cases", "400", "--format", "npy-dir",
        "--out", str(out_dir))
    run(capsys, "gen", "--datapath", "i8-s8-s8-wrap", "--cases", "50", "--out", str(lines))
    expected = np.load(out_dir / "expected.npy")
    expected[7] ^= 4
    np.save(out_dir / "expected.npy", expected)
    _, local, _ = run(capsys, "check", str(out_dir), str(lines), "--jobs", "1")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code, out, _ = run(capsys, "check", "--dask", cluster.scheduler_address,
                           str(out_dir), str(lines))
    assert code == 1 and "row 7 [dense-bf16]" in out
    for name in ("dense-bf16", "i8-s8-s8-wrap"):
        want = next(line for line in local.splitlines() if line.startswith(name))
        assert want in out.splitlines()
    assert "450     449          1" in out


def _gen(capsys, out, fmt, *extra):
    code, _, err = run(capsys, "gen", "--datapath", "sparse-nvfp4", "--cases", "1000",
                       "--mix", "edge,raw,finite", "--seed", "9", "--format", fmt,
                       "--out", str(out), *extra)
    assert code == 0, err


def _same_bytes(first, second):
    if first.is_dir():
        names = sorted(p.name for p in first.iterdir())
        assert names == sorted(p.name for p in second.iterdir())
        return all((first / n).read_bytes() == (second / n).read_bytes() for n in names)
    return first.read_bytes() == second.read_bytes()


def test_jobs_and_dask_write_the_serial_bytes(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(campaign, "CHUNK_ROWS", 128)
    outputs = {("npy-dir", "serial"): tmp_path / "serial", ("jsonl", "serial"):
               tmp_path / "serial.jsonl.gz"}
    for fmt, base in list(outputs.items()):
        _gen(capsys, base, fmt[0], "--jobs", "1")
        outputs[fmt[0], "jobs"] = tmp_path / base.name.replace("serial", "jobs")
        _gen(capsys, outputs[fmt[0], "jobs"], fmt[0], "--jobs", "2")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        for fmt in ("npy-dir", "jsonl"):
            outputs[fmt, "dask"] = tmp_path / outputs[fmt, "serial"].name.replace("serial", "dask")
            _gen(capsys, outputs[fmt, "dask"], fmt, "--dask", cluster.scheduler_address)
    for fmt in ("npy-dir", "jsonl"):
        serial = outputs[fmt, "serial"]
        assert _same_bytes(serial, outputs[fmt, "jobs"])
        assert _same_bytes(serial, outputs[fmt, "dask"])
        code, out, _ = run(capsys, "check", str(serial))
        assert code == 0 and "1000    1000" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in outputs.values())
    assert json.loads((outputs["npy-dir", "dask"] / "descriptor.json").read_text())[
        "chunk_rows"] == 128


def test_chunks_follow_the_global_row_mix():
    plan = campaign.GenerationPlan("dense-tf32", 650, ("finite", "raw"), 1, 65)
    fmt = FORMATS["tf32"]
    for index in range(plan.chunks):
        block = plan.block(index)
        finite = np.arange(index * 65, index * 65 + block.rows) % 2 == 0
        exp = (block.a[finite] >> np.uint64(fmt.cleared_bits + fmt.frac_bits)) & np.uint64(
            fmt.exp_max_field)
        assert not (exp == fmt.exp_max_field).any()


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "--jobs must be at least 1"),
    (["--jobs", "2", "--dask", "tcp://127.0.0.1:1"], "cannot be combined"),
    (["--dask", "tcp://127.0.0.1:1"], "cannot reach the Dask scheduler"),
    (["--jobs", "2", "--out", "/proc/forbidden/x.jsonl"], "cannot write"),
    (["--jobs", "2", "--format", "npy-dir", "--out", "/proc/forbidden/x"], "cannot write"),
])
def test_gen_parallel_bad_input(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.setattr(campaign, "CHUNK_ROWS", 8)
    monkeypatch.setattr(campaign, "DASK_TIMEOUT", 1)
    base = {"--datapath": "tf32", "--cases": "20", "--out": str(tmp_path / "x.jsonl")}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    code, _, err = run(capsys, "gen", *[item for pair in base.items() for item in pair])
    assert code == 2 and message in err and "Traceback" not in err


def test_explain_first_names_the_model_behind_a_users_words(capsys):
    """MMA-Sim's published words as a user's kernel outputs: the first mismatching line is
    explained stage by stage and MMA-Sim is named as the model that gives its word."""
    from pathlib import Path

    words = Path(__file__).resolve().parents[2] / "ref/vectors/candidates/mma-sim.jsonl"
    assert main(["check", "--explain-first", str(words)]) == 1
    out = capsys.readouterr().out
    assert "the first mismatch, line 1 [dense-bf16]: observed 0xB902C000, hardware gives " \
        "0xB902C774" in out
    assert "-- window exponent (SEMANTICS.md 2.4)" in out
    assert "the observed word is candidate model mma-sim's; They first differ at alignment" \
        in out
    assert main(["check", "--explain-first", "--json", str(words)]) == 1
    first = json.loads(capsys.readouterr().out)["files"][str(words)]["explain_first"]
    assert first["line"] == 1 and first["observed"] == "0xB902C000"
