"""`tcspec hw` against the architecture datapaths: an emulated H200 campaign, `hw compare`,
its hardware-word file, then `list`, `check` and `classify` reading that file.

The emulated device computes each row with the datapath ``catalog_datapath(h, 90)`` names
(the C reference), so its words are the sm_90 model's. Its device-plan directory *says*
``"source": "hardware"``, ``"gpu": "NVIDIA H200"``: a labelled stand-in, in a temporary
directory, so that the hardware-word path is exercised end to end. No word here was
observed on a GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tcspec import cli
from tcspec.hw import run
from tcspec.hw.campaign import campaign_cases
from tcspec.hw.table import HARNESSES, catalog_datapath, datapath_source, harness_named
from tcspec.ref import vectorfiles
from tests.tcspec.hw_emulator import EmulatedDevice

STAND_IN = {"source": "hardware", "gpu": "NVIDIA H200", "sm": "sm_90", "driver": "stand-in",
            "cuda": "none", "tcspec": "test"}
TF32 = "sm_90a/wgmma.mma_async.m64n8k8.f32.tf32.tf32.f32"
BF16 = "sm_80/mma.sync.m16n8k16.f32.bf16.bf16.f32"  # an sm_80 form run on the H200
INTEGER = "sm_90a/mma.sync.m16n8k32.s32.u8.s8.s32"  # no architecture datapath: fallback


def _plan(directory: Path, device: EmulatedDevice, names: list[str], count: int = 400,
          provenance: dict[str, str] | None = None) -> Path:
    """A device-plan directory (words.npy, index.json) as device_plan.py writes one."""
    words, campaigns, offset = [], [], 0
    for name in names:
        h = harness_named(name)
        a, b, c, _ = campaign_cases(h, count, 5)
        words.append(run.run_cases(device, h, a, b, c))
        campaigns.append({"harness": name, "offset": offset, "count": count, "seed": 5})
        offset += count
    directory.mkdir()
    np.save(directory / "words.npy", np.concatenate(words))
    (directory / "index.json").write_text(json.dumps(
        {"provenance": provenance or STAND_IN, "campaigns": campaigns}))
    return directory


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_rows_map_to_the_datapath_of_the_gpu_that_runs_them() -> None:
    cases = {
        (TF32, None): ("sm_90-wgmma-m64n8k8-tf32-tf32-c32-d32", "architecture"),
        ("sm_90a/mma.sync.m16n8k16.f32.f16.f16.f32", None):
            ("sm_90-mma-m16n8k16-f16-f16-c32-d32", "architecture"),
        (BF16, None): ("sm_80-mma-m16n8k16-bf16-bf16-c32-d32", "architecture"),
        (BF16, 90): ("sm_90-mma-m16n8k16-bf16-bf16-c32-d32", "architecture"),
        ("sm_89/mma.sync.m16n8k32.f32.e4m3.e5m2.f32", None):
            ("sm_89-mma-m16n8k32-e4m3-e5m2-c32-d32", "architecture"),
        ("sm_90a/mma.sync.m16n8k8.f64.f64.f64.f64", None):
            ("sm_90-mma-m16n8k8-f64-f64-c64-d64", "architecture"),
        ("sm_120a/mma.sync.m16n8k64.f32.e2m1.e2m1.f32.kind::mxf4nvf4.scale_vec::4X.ue4m3",
         None): ("sm_120-mma_block_scale-m16n8k64-block16-e2m1-e2m1-c32-d32-ue4m3",
                 "architecture"),
        (INTEGER, None): ("i8-u8-s8-wrap", "tcgen05 fallback"),
        ("sm_90a/mma.sync.m8n8k4.f16.f16.f16.f16", None): ("mixed-f16-f16-f16", "tcgen05 fallback"),
        ("sm_103a/mma.sync.m16n8k16.f32.f16.f16.f32", None):
            ("dense-f16", "tcgen05 fallback"),
    }
    for (name, sm), expected in cases.items():
        h = harness_named(name)
        assert (catalog_datapath(h, sm), datapath_source(h, sm)) == expected, name
    for h in HARNESSES:  # an architecture datapath has exactly the row's K and formats
        if datapath_source(h) == "architecture":
            from tcspec.hw.table import arch_datapath

            desc = arch_datapath(h)
            assert desc is not None and desc.k == h.k, h.name
            assert (desc.a_format, desc.b_format, desc.d_type) == (
                h.a_format, h.b_format, h.d_format), h.name


def test_hw_list_says_which_datapaths_are_fallbacks(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    code, out, _ = _cli(capsys, "hw", "list", "--arch", "sm_90")
    assert code == 0
    line = next(t for t in out.splitlines() if t.startswith(BF16))
    assert line.endswith("sm_90-mma-m16n8k16-bf16-bf16-c32-d32 (architecture)")
    line = next(t for t in out.splitlines() if t.startswith(INTEGER))
    assert line.endswith("(tcgen05 fallback)")
    assert "tcgen05 fallbacks" in out.splitlines()[-1]
    assert "sm_100a/" not in out  # an H200 does not run the Blackwell-only forms
    code, _, err = _cli(capsys, "hw", "list", "--arch", "hopper")
    assert code == 2 and err.startswith("tcspec: error: --arch 'hopper'")


def test_h200_campaign_to_hardware_words_to_list_and_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path / "plan", EmulatedDevice(sm=90), [TF32, BF16, INTEGER])
    monkeypatch.setattr(vectorfiles, "HARDWARE_DIR", tmp_path / "hardware")
    (tmp_path / "hardware").mkdir()
    code, out, _ = _cli(capsys, "hw", "compare", str(plan), "--hardware-words",
                        "--words-per-harness", "100")
    assert code == 0, out
    assert "0 finding(s) in 3 campaign(s) on H200 (sm_90)" in out
    found = {r["harness"]: r for r in json.loads((plan / "findings.json").read_text())}
    assert found[BF16]["datapath"] == "sm_90-mma-m16n8k16-bf16-bf16-c32-d32"
    assert found[INTEGER]["datapath_source"] == "tcgen05 fallback"
    assert all(r["models"]["hardware"]["agree"] == 400 for r in found.values())
    path = tmp_path / "hardware" / "h200.jsonl"
    lines = [json.loads(t) for t in path.read_text().splitlines()]
    assert len(lines) == 200  # 100 per architecture datapath; the fallback row has none
    assert {(x["gpu"], x["provenance"]) for x in lines} == {("H200", "hardware")}
    code, out, _ = _cli(capsys, "list", "--arch", "sm_90", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    for name in ("sm_90-wgmma-m64n8k8-tf32-tf32-c32-d32",
                 "sm_90-mma-m16n8k16-bf16-bf16-c32-d32"):
        assert rows[name]["evidence"] == "hardware words (H200)"
        assert rows[name]["hardware_words"] == 100
    assert rows["sm_90-mma-m16n8k8-bf16-bf16-c32-d32"]["evidence"] == "published model only"
    code, out, _ = _cli(capsys, "check", str(path))
    assert code == 0 and "finding" not in out
    total = out.split("\ntotal")[1].split()
    assert total[:3] == ["200", "200", "0"]
    # a rerun replaces that campaign's lines and keeps the rest of the file
    path.write_text(path.read_text() + json.dumps(dict(lines[0], seed=99)) + "\n")
    assert _cli(capsys, "hw", "compare", str(plan), "--hardware-words",
                "--words-per-harness", "100")[0] == 0
    assert len(path.read_text().splitlines()) == 201


def test_a_wrong_word_is_a_finding_beside_the_model(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(tmp_path / "plan", EmulatedDevice(sm=90, flip=(0, 5, 5)), [TF32])
    out_file = tmp_path / "h200.jsonl"
    code, out, _ = _cli(capsys, "hw", "compare", str(plan), "--hardware-words",
                        str(out_file), "--words-per-harness", "3")
    assert code == 1
    finding = next(t for t in out.splitlines() if t.startswith("finding:"))
    assert finding.startswith(f"finding: 1 of 400 observed word(s) (H200) of {TF32} disagree "
                              "with the model of sm_90-wgmma-m64n8k8-tf32-tf32-c32-d32")
    assert "candidates that give every word: none" in finding
    lines = [json.loads(t) for t in out_file.read_text().splitlines()]
    assert len(lines) == 4  # the first 3 cases and the disagreeing one
    code, out, _ = _cli(capsys, "check", str(out_file))
    assert code == 1 and "finding: 1 hardware word(s) (H200) disagree with the published" in out


def test_emulated_words_never_become_a_hardware_file(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    device = EmulatedDevice(sm=90)
    plan = _plan(tmp_path / "plan", device, [TF32], 40, device.provenance)
    code, _, err = _cli(capsys, "hw", "compare", str(plan), "--hardware-words",
                        str(tmp_path / "x.jsonl"))
    assert code == 2 and err.startswith("tcspec: error: ") and "not hardware" in err
    assert not (tmp_path / "x.jsonl").exists()
    code, _, err = _cli(capsys, "hw", "compare", str(plan), "--words-per-harness", "-1")
    assert code == 2 and "--words-per-harness must be 0 (all) or more" in err


def test_nan_compares_by_class_only_where_the_datapath_says_so() -> None:
    from tcspec.hw.campaign import disagree
    from tcspec.spec.catalog import ARCH_CATALOG

    observed = np.array([0x7FC00001, 0x7F800000, 0x3F800000], dtype=np.uint32)
    model = np.array([0x7FFFFFFF, 0x7FC00000, 0x3F800000], dtype=np.uint32)
    fma = ARCH_CATALOG["cdna3-mfma-16x16x4-f32-f32-c32-d32"].descriptor
    fused = ARCH_CATALOG["sm_90-mma-m16n8k8-tf32-tf32-c32-d32"].descriptor
    assert not fma.nan_canonical and fused.nan_canonical
    assert disagree(fma, model, observed).tolist() == [False, True, False]
    assert disagree(fused, model, observed).tolist() == [True, True, False]


def test_the_device_plan_on_an_emulated_h200_then_compare(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """device_plan.py's own run (self-test, probes, campaigns) on the emulator, its printed
    next step, then `hw compare --hardware-words` on what it wrote."""
    from tcspec.hw.device_plan import run_plan

    device = EmulatedDevice(sm=90)
    device.provenance = STAND_IN
    monkeypatch.setattr(vectorfiles, "HARDWARE_DIR", tmp_path)
    monkeypatch.setattr("tcspec.hw.device_plan.ROOT", tmp_path)  # no probe files: faster
    plan = tmp_path / "plan"
    assert run_plan(plan, 200, 1, [TF32, BF16], 60.0, device) == 0
    out = capsys.readouterr().out
    assert f"next, on the work machine: tcspec hw compare {plan} --hardware-words" in out
    assert "2 of 2 rows have one" in out
    code, out, _ = _cli(capsys, "hw", "compare", str(plan), "--hardware-words")
    assert code == 0 and "0 finding(s) in 2 campaign(s) on H200 (sm_90)" in out
    assert len((tmp_path / "h200.jsonl").read_text().splitlines()) == 400
