"""Architecture differences by solver (proofs/probes/portability.py): pair probes, the
portability table, fingerprint suites and ``classify --arch``.

Small queries only (a few seconds each), each given tests/limits.py's limit; the committed
table's witnesses all replay. ``compare``'s cut-point proofs keep their own caps (10 s a
lemma, 30 s in all), more than 10 x what the one cut-point test needs.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tcspec.cli import main
from tcspec.proofs.probes import portability as port
from tcspec.proofs.probes.portability import (
    DIFFER,
    EQUAL,
    SAME_TERM,
    Side,
    compare,
    compiled_chain,
    side,
)
from tcspec.spec.catalog import CATALOG, Datapath, input_layout, lookup
from tests.limits import SOLVER_LIMIT

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "proofs" / "PORTABILITY.json"
FINGERPRINTS = ROOT / "ref" / "vectors" / "fingerprints"
AMPERE_F16 = "sm_80-mma-m16n8k16-f16-f16-c32-d32"
HOPPER_F16 = "sm_90-mma-m16n8k16-f16-f16-c32-d32"
HOPPER_F16_K8 = "sm_90-mma-m16n8k8-f16-f16-c32-d32"
BLACKWELL_F16 = "sm_100-mma-m16n8k16-f16-f16-c32-d32"


def _replayed(result: port.Comparison) -> dict[str, int]:
    w = result.witness
    assert w is not None
    return {s.label: compiled_chain(s, w.layout, w.inputs) for s in (result.first, result.second)}


def test_split_k_against_one_window_gives_a_replayed_witness():
    result = compare(side(AMPERE_F16), side(HOPPER_F16), timeout=SOLVER_LIMIT)
    assert result.status == DIFFER and result.k == 16
    words = _replayed(result)
    assert words == result.witness.words
    assert words[AMPERE_F16] != words[HOPPER_F16]


def test_chained_half_k_against_the_full_instruction():
    """Hopper does not split: two chained k8 steps differ from one k16 window; Ampere's
    k16 is its k8 chained twice (the same term)."""
    hopper = compare(side(HOPPER_F16_K8), side(HOPPER_F16), timeout=SOLVER_LIMIT)
    assert hopper.status == DIFFER and hopper.witness.live_lanes < 16
    assert len(set(_replayed(hopper).values())) == 2
    ampere = compare(side("sm_80-mma-m16n8k8-f16-f16-c32-d32"), side(AMPERE_F16),
                     timeout=SOLVER_LIMIT)
    assert ampere.status == EQUAL and ampere.method == SAME_TERM


def test_same_qualifier_on_two_architectures_is_unsat():
    result = compare(side(HOPPER_F16), side(BLACKWELL_F16), timeout=SOLVER_LIMIT)
    assert result.status == EQUAL
    assert result.calls and result.calls[-1][1].unsat


def test_the_unsat_stops_when_one_side_is_broken(monkeypatch):
    """Breaker: Blackwell's k16 with zeros left out of the window maximum (B200's rule)."""
    desc = lookup(BLACKWELL_F16).descriptor
    broken = dataclasses.replace(desc, params=dataclasses.replace(desc.params,
                                                                  zeros_in_max=False))
    monkeypatch.setitem(CATALOG, BLACKWELL_F16, Datapath(BLACKWELL_F16, broken))
    result = compare(side(HOPPER_F16), side(BLACKWELL_F16), timeout=SOLVER_LIMIT)
    assert result.status == DIFFER
    words = _replayed(result)
    assert words[HOPPER_F16] != words[BLACKWELL_F16]


def test_a_model_on_one_side():
    """Hopper against itself with B200's zero rule (``--vs-model b200-zeros``)."""
    result = compare(side(HOPPER_F16), side(HOPPER_F16, "b200-zeros"), timeout=SOLVER_LIMIT)
    assert result.status == DIFFER
    assert set(result.witness.words) == {HOPPER_F16, f"{HOPPER_F16}[b200-zeros]"}


def test_incompatible_formats_and_chains_are_refused(capsys):
    assert main(["probe", "--datapath", HOPPER_F16, "--vs-datapath",
                 "sm_90-mma-m16n8k16-f16-f16-c16-d16"]) == 2
    assert "different operand formats" in capsys.readouterr().err
    assert main(["probe", "--datapath", HOPPER_F16, "--vs-datapath", "sparse-f16"]) == 2
    assert "sparse" in capsys.readouterr().err
    assert main(["probe", "--datapath", HOPPER_F16, "--vs-datapath", HOPPER_F16]) == 2
    volta = lookup("sm_70-mma-m8n8k4-f16-f16-c16-d32").descriptor
    with pytest.raises(ValueError, match="not in its C format"):
        port.chain_steps(volta, 8)


def test_probe_vs_datapath_cli(capsys):
    assert main(["probe", "--datapath", "sm_70-mma-m8n8k4-f16-f16-c32-d32",
                 "--vs-datapath", "sm_75-mma-m8n8k4-f16-f16-c32-d32",
                 "--timeout", str(SOLVER_LIMIT)]) == 0
    out, err = capsys.readouterr()
    assert "differ at K=4" in out and "replayed on both compiled lowerings" in out
    assert "sat by bitwuzla" in err


def test_heartbeat_logs_while_a_call_runs(monkeypatch):
    import time

    monkeypatch.setattr(port, "PROGRESS_SECONDS", 0.05)
    lines: list[str] = []
    with port.heartbeat(lines.append, "waiting"):
        time.sleep(1.0)  # 2 beats need 0.1 s: a 10 x margin for a busy machine
    assert len(lines) >= 2 and all("waiting" in line for line in lines)


def test_nan_words_compare_by_class_where_a_side_is_the_hosts():
    assert not port.words_differ("f32", 0x7FC00000, 0xFFC00001, by_class=True)
    assert port.words_differ("f32", 0x7FC00000, 0xFFC00001, by_class=False)
    assert port.words_differ("f32", 0x7FC00000, 0x7F800000, by_class=True)


# ------------------------------------------------------------------ committed table


def _table() -> dict:
    return json.loads(TABLE.read_text(encoding="utf-8"))


def test_table_classes_partition_each_group_and_name_every_pair():
    for group in _table()["groups"]:
        members = [m for c in group["classes"] for m in c["datapaths"]]
        assert len(members) == len(set(members))
        index = {m: i for i, c in enumerate(group["classes"]) for m in c["datapaths"]}
        split = {tuple(sorted((index[p["first"]], index[p["second"]])))
                 for p in group["pairs"] if p["status"] == DIFFER}
        n = len(group["classes"])
        assert len(split) + sum(p["status"] == "unknown" for p in group["pairs"]) \
            >= n * (n - 1) // 2, group["formats"]
        for p in group["pairs"]:
            if p["status"] == EQUAL:
                assert index[p["first"]] == index[p["second"]]


def _check_witness(group: dict, pair: dict) -> None:
    first, second = Side(pair["first"]), Side(pair["second"])
    layout = input_layout(max((first.desc, second.desc), key=lambda d: d.k), group["k"])
    w = pair["witness"]
    lists = {"a": w["a"], "b": w["b"], "c": [w["c"]], "scale_a": w["scale_a"] or [],
             "scale_b": w["scale_b"] or []}
    inputs = [lists[s.role][s.index] for s in layout]
    words = port.replay((first, second), layout, inputs)
    digits = len(next(iter(w["words"].values()))) - 2
    assert {m: f"0x{x:0{digits}X}" for m, x in words.items()} == w["words"]
    by_class = port.nan_by_class(first.desc) or port.nan_by_class(second.desc)
    assert port.words_differ(group["d_format"], *words.values(), by_class)


def test_every_committed_witness_replays():
    for group in _table()["groups"]:
        for pair in group["pairs"]:
            if "witness" in pair:
                _check_witness(group, pair)


# ------------------------------------------------------------------ fingerprints, classify


def _fingerprints(label: str) -> list[dict]:
    path = FINGERPRINTS / f"{label}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_fingerprint_suite_separates_its_classes():
    for group in _table()["groups"]:
        if len(group["classes"]) == 1:
            assert group["suite"]["size"] == 0
            continue
        lines = _fingerprints(group["formats"])
        assert len(lines) == group["suite"]["size"]
        reps = [c["datapaths"][0] for c in group["classes"]]
        assert all(line["provenance"] == "ours" for line in lines)
        undecided = {tuple(pair) for pair in group["suite"]["undecided"]}
        assert undecided == {tuple(p["classes"]) for p in group["pairs"]
                             if p["status"] == "unknown"}
        for i in range(len(reps)):
            for j in range(i + 1, len(reps)):
                if (i, j) in undecided:
                    continue
                by_class = any(port.nan_by_class(lookup(r).descriptor)
                               for r in (reps[i], reps[j]))
                assert any(port.words_differ(group["d_format"], line["predicted"][reps[i]],
                                             line["predicted"][reps[j]], by_class)
                           for line in lines), (group["formats"], reps[i], reps[j])


def _observed(tmp_path: Path, label: str, truth: str, tweak=None) -> Path:
    lines = []
    for line in _fingerprints(label):
        line = dict(line, expected=line["predicted"][truth])
        del line["predicted"], line["predicted_hex"]
        lines.append(tweak(line) if tweak else line)
    path = tmp_path / "observed.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_classify_arch_names_the_architecture(tmp_path, capsys):
    path = _observed(tmp_path, "f16-f16-c32-d32", HOPPER_F16)
    assert main(["classify", "--arch", str(path)]) == 0
    out = capsys.readouterr().out
    consistent = out.split("consistent: ")[1].splitlines()[0]
    for name in (HOPPER_F16, BLACKWELL_F16, "sm_120-mma-m16n8k16-f16-f16-c32-d32",
                 "sm_90-wgmma-m64n8k16-f16-f16-c32-d32"):
        assert name in consistent
    for name in (AMPERE_F16, HOPPER_F16_K8, "dense-f16", "sm_70-mma-m8n8k4-f16-f16-c32-d32"):
        assert name not in consistent
    assert f"ruled out: {AMPERE_F16}" in out


def test_classify_arch_compares_amd_nan_by_class(tmp_path, capsys):
    label = "f16-f16-c32-d32"
    truth = "cdna3-mfma-32x32x8-f16-f16-c32-d32"

    def other_nan(line):
        if (line["expected"] >> 23) & 0xFF == 0xFF and line["expected"] & 0x7FFFFF:
            line["expected"] ^= 0x80000001
        return line

    path = _observed(tmp_path, label, truth, other_nan)
    assert main(["classify", "--arch", str(path)]) == 0
    consistent = capsys.readouterr().out.split("consistent: ")[1].splitlines()[0]
    assert truth in consistent and "cdna3-mfma-16x16x16-f16-f16-c32-d32" in consistent
    assert "sm_90" not in consistent


def test_classify_arch_bad_input(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"a_format": "f16"}\n', encoding="utf-8")
    assert main(["classify", "--arch", str(empty)]) == 2
    assert "no usable observed lines" in capsys.readouterr().err
    assert main(["classify", "--arch", str(tmp_path / "missing.jsonl")]) == 2


def test_cut_points_prove_a_chain_equal_and_a_breaker_stops_it(monkeypatch):
    """Ada's split fp8 k32 with F16 D is its k16 chained twice; the chain resizes the F16
    D back to a C word, so the terms differ and cut points decide. Breaker: the k32's
    window at 14 fraction bits instead of 13."""
    k16, k32 = "sm_89-mma-m16n8k16-e4m3-e4m3-c16-d16", "sm_89-mma-m16n8k32-e4m3-e4m3-c16-d16"
    result = compare(side(k16), side(k32), timeout=SOLVER_LIMIT)
    assert result.status == EQUAL and result.method == port.CUT_POINTS
    desc = lookup(k32).descriptor
    broken = dataclasses.replace(desc, params=dataclasses.replace(desc.params, window=14))
    monkeypatch.setitem(CATALOG, k32, Datapath(k32, broken))
    result = compare(side(k16), side(k32), timeout=SOLVER_LIMIT)
    assert result.status == DIFFER
    assert len(set(_replayed(result).values())) == 2


def test_classify_arch_on_mma_sims_ampere_words(capsys):
    """MMA-Sim's sm_80 m16n8k16 F32-D words: consistent with Ampere's split K and every
    datapath it equals (Turing/Ampere/Ada k8 chained twice), nothing else."""
    path = ROOT / "ref" / "vectors" / "arch" / "sm_80__mma__m16n8k16.f32.f16.f16.f32.jsonl.gz"
    assert main(["classify", "--arch", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].endswith(": sm_75, sm_80, sm_89")
    consistent = out.split("consistent: ")[1].splitlines()[0]
    assert AMPERE_F16 in consistent and HOPPER_F16 not in consistent


def test_b200_f16_d_equality_rests_on_the_window(monkeypatch):
    """The committed table proves tcgen05's F16-D f16 model equal to Hopper's m16n8k16 (unsat
    at full K, minutes). Breaker: Hopper's window at 24 bits gives a replayed witness fast."""
    record = next(g for g in _table()["groups"] if g["formats"] == "f16-f16-c16-d16")
    hopper = "sm_90-mma-m16n8k16-f16-f16-c16-d16"
    assert any({"mixed-f16-f16-f16", hopper} <= set(c["datapaths"]) for c in record["classes"])
    desc = lookup(hopper).descriptor
    broken = dataclasses.replace(desc, params=dataclasses.replace(desc.params, window=24))
    monkeypatch.setitem(CATALOG, hopper, Datapath(hopper, broken))
    result = compare(side("mixed-f16-f16-f16"), side(hopper), timeout=SOLVER_LIMIT)
    assert result.status == DIFFER
    assert len(set(_replayed(result).values())) == 2
