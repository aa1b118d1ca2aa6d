"""`tcspec hw` without a GPU: the PTX assembles, the packer matches an emulated device.

The emulated device (``hw_emulator.py``) reads the operand images with its
own transcription of the PTX ISA figures and computes D with the C reference
of ``tcspec export --lang c``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcspec.classify import classify_file
from tcspec.hw import ptx, run, selftest
from tcspec.hw.campaign import campaign_cases, compare
from tcspec.hw.table import HARNESSES, harness_named, harnesses_for
from tcspec.outputs import atomic_file
from tcspec.validate import check_file
from tests.tcspec.hw_emulator import EmulatedDevice

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "ref" / "vectors" / "probes"
CI_TARGETS = ("sm_70", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a")

REPRESENTATIVE = [  # one row per layout family
    "sm_90a/mma.sync.m8n8k4.f16.f16.f16.f16",
    "sm_90a/mma.sync.m16n8k4.f32.tf32.tf32.f32",
    "sm_90a/mma.sync.m16n8k8.f16.f16.f16.f16",
    "sm_90a/mma.sync.m16n8k16.f32.bf16.bf16.f32",
    "sm_90a/mma.sync.m16n8k16.f16.e5m2.e4m3.f16",
    "sm_90a/mma.sync.m16n8k32.f32.e4m3.e5m2.f32",
    "sm_90a/mma.sync.m16n8k32.s32.u8.s8.s32.satfinite",
    "sm_90a/wgmma.mma_async.m64n8k8.f32.tf32.tf32.f32",
    "sm_90a/wgmma.mma_async.m64n8k16.f16.f16.f16.f16",
    "sm_90a/wgmma.mma_async.m64n8k32.f32.e5m2.e4m3.f32",
    "sm_100a/tcgen05.mma.m128n16k16.f32.bf16.bf16.f32",
    "sm_100a/tcgen05.mma.m128n16k32.f16.e4m3.e2m1.f16",
]


def ptxas() -> str:
    """ptxas of the pinned pip wheel (nvidia-cuda-nvcc-cu12, the test extra)."""
    import nvidia.cuda_nvcc

    return str(Path(next(iter(nvidia.cuda_nvcc.__path__))) / "bin" / "ptxas")


def assemble(text: str, target: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    source = tmp_path / f"{target}.ptx"
    source.write_text(text)
    return subprocess.run([ptxas(), f"-arch={target}", str(source), "-o",
                           str(tmp_path / f"{target}.cubin")], capture_output=True, text=True)


@pytest.mark.parametrize("target", CI_TARGETS)
def test_generated_ptx_assembles(target: str, tmp_path: Path) -> None:
    done = assemble(ptx.module(target), target, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(harnesses_for(target)) >= 1


@pytest.mark.parametrize(("old", "new", "target"), [
    ("m16n8k16.row.col.f32.f16.f16.f32", "m16n8k12.row.col.f32.f16.f16.f32", "sm_80"),
    ("m16n8k16.row.col.f32.f16.f16.f32", "m16n8k16.row.col.f32.f16.bf16.f32", "sm_80"),
    ("kind::f8f6f4 [%taddr]", "kind::i8 [%taddr]", "sm_103a"),
])
def test_ptxas_rejects_a_wrong_form(old: str, new: str, target: str, tmp_path: Path) -> None:
    """A wrong shape, type or qualifier fails to assemble (so the CI check means something)."""
    name = {"sm_80": "sm_80/mma.sync.m16n8k16.f32.f16.f16.f32",
            "sm_103a": "sm_103a/tcgen05.mma.m128n16k32.f32.e4m3.e4m3.f32"}[target]
    text = ptx.kernel(harness_named(name))
    assert old in text
    header = f".version {ptx.PTX_VERSION}\n.target {target}\n.address_size 64\n"
    assert assemble(header + text, target, tmp_path).returncode == 0
    assert assemble(header + text.replace(old, new), target, tmp_path).returncode != 0


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_selftest_passes_on_the_emulated_device(name: str) -> None:
    result = selftest.selftest(EmulatedDevice(), harness_named(name))
    assert result.passed, result.failures
    assert result.elements > 1000


def test_selftest_fails_with_a_swapped_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness_named("sm_90a/mma.sync.m16n8k16.f32.f16.f16.f32")
    assert not selftest.selftest(EmulatedDevice(swap=(0, 1)), h).passed
    right = h.placements()
    wrong = dict(right, a=right["a"].swapped((3, 4), (3, 12)))
    monkeypatch.setattr(type(h), "placements", lambda self: wrong)
    result = selftest.selftest(EmulatedDevice(), h)
    assert not result.passed
    assert any(f.startswith("A lane 4") for f in result.failures)


@pytest.mark.full
@pytest.mark.parametrize("name", [h.name for h in HARNESSES if h.packed
                                  and h.target in ("sm_90a", "sm_100a")])
def test_every_harness_on_the_emulated_device(name: str) -> None:
    assert selftest.selftest(EmulatedDevice(sm=int(name[3:6].rstrip("a/"))),
                             harness_named(name)).passed


def test_hw_run_on_the_emulated_device(tmp_path: Path) -> None:
    """Probe files run through the packer and back; the output reads as frozen words."""
    out = tmp_path / "observed.jsonl"
    files = [PROBES / f"{name}.jsonl" for name in (
        "dense-tf32.suite", "dense-f16.suite", "mixed-e4m3-e4m3-f16.suite",
        "dense-nvfp4.hardware-mma-sim")]
    report = run.run_files(EmulatedDevice(sm=90), files, out)
    assert report.ran == {"sm_90a/wgmma.mma_async.m64n8k8.f32.tf32.tf32.f32": 5,
                          "sm_90a/wgmma.mma_async.m64n8k16.f32.f16.f16.f32": 5,
                          "sm_90a/wgmma.mma_async.m64n8k32.f16.e4m3.e4m3.f16": 3}
    (reason, labels), = report.not_run.items()
    assert "dense-nvfp4" in reason and len(labels) == 1
    lines = [json.loads(t) for t in out.read_text().splitlines()]
    assert all(line["provenance"] == "emulated" and line["gpu"] == "emulator"
               and line["datapath"].startswith("sm_90-wgmma-") for line in lines)
    assert check_file(out).total.mismatched == 0  # the emulator is the hardware model
    classified = classify_file(out, ["hardware", "mma-sim"])
    assert "hardware" in classified.survivors()
    text = run.report_text(report, str(out))
    assert "not run: 1 line(s): dense-nvfp4" in text


def test_hw_run_choice_follows_the_gpu() -> None:
    from tcspec.spec.catalog import lookup

    tf32 = lookup("dense-tf32").descriptor
    assert run.choose(tf32, 90).instruction == "wgmma.mma_async"
    assert run.choose(tf32, 90, "mma.sync").name == "sm_90a/mma.sync.m16n8k8.f32.tf32.tf32.f32"
    assert run.choose(tf32, 100).instruction == "tcgen05.mma"
    assert run.choose(tf32, 80).name == "sm_80/mma.sync.m16n8k8.f32.tf32.tf32.f32"
    assert run.choose(lookup("dense-nvfp4").descriptor, 100) is None


def test_campaign_regenerates_and_compares() -> None:
    h = harness_named("sm_90a/mma.sync.m16n8k4.f32.tf32.tf32.f32")
    a, b, c, category = campaign_cases(h, 2000, 7)
    again = campaign_cases(h, 2000, 7)
    assert all(np.array_equal(x, y) for x, y in zip((a, b, c, category), again))
    assert a.shape == (2000, 4) and set(np.unique(category)) == {0, 1, 2, 3}
    observed = run.run_cases(EmulatedDevice(), h, a, b, c)
    found = compare(h, observed, 7, ["mma-sim", "b200-zeros"])
    assert found["datapath"] == "sm_90-mma-m16n8k4-tf32-tf32-c32-d32"
    assert found["datapath_source"] == "architecture" and found["datapath_k"] == 4
    assert found["models"]["hardware"]["agree"] == 2000  # the spec is always compared
    assert found["models"]["mma-sim"]["agree"] == 2000  # sm_90's rules are MMA-Sim's
    agree, total = found["models"]["b200-zeros"]["per_category"]["zero-times-huge"]
    assert total == 500 and agree < total  # B200's zero rule is not sm_90's model
    blackwell = compare(h, observed, 7, ["mma-sim"], sm=100)
    assert blackwell["datapath"] == "sm_100-mma-m16n8k4-tf32-tf32-c32-d32"


def test_atomic_output_leaves_nothing_on_error(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError), atomic_file(target) as handle:
        handle.write("partial")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_hw_without_a_gpu_is_a_usage_error(tmp_path: Path) -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-m", "tcspec.cli", "hw", "run",
                           str(PROBES / "dense-tf32.suite.jsonl"), "--out",
                           str(tmp_path / "o.jsonl")], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("tcspec: error: ") and done.stderr.count("\n") == 1
    assert not (tmp_path / "o.jsonl").exists()


BLOCK_SOLVERS = """
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("z3", "bitwuzla", "pysmt", "cvc5"):
            raise ImportError("no solver on the GPU machine: " + name)
sys.meta_path.insert(0, Block())
plan = runpy.run_path(sys.argv[1])
sys.meta_path.insert(1, plan["_WorkTree"]())
import tcspec.hw.run, tcspec.hw.selftest, tcspec.hw.campaign, tcspec.hw.device
assert tcspec.hw.run.__file__.startswith(sys.argv[2]), tcspec.hw.run.__file__
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("z3", "bitwuzla", "pysmt", "cvc5"))
assert not loaded, loaded
print("no solver")
"""


def test_the_device_plan_imports_no_solver(tmp_path: Path) -> None:
    """The GPU machine has no solver and no install: the work tree alone must import."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", BLOCK_SOLVERS,
                           str(ROOT / "tcspec" / "hw" / "device_plan.py"), str(ROOT)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no solver" in done.stdout


def test_compare_reads_a_device_plan_directory(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tcspec.hw.campaign import compare_dir

    h = harness_named("sm_90a/wgmma.mma_async.m64n8k8.f32.tf32.tf32.f32")
    a, b, c, _ = campaign_cases(h, 400, 3)
    np.save(tmp_path / "words.npy", run.run_cases(EmulatedDevice(), h, a, b, c))
    (tmp_path / "index.json").write_text(json.dumps({
        "provenance": {"source": "emulated"},
        "campaigns": [{"harness": h.name, "offset": 0, "count": 400, "seed": 3}]}))
    assert compare_dir(tmp_path, str(tmp_path / "findings.md")) == 0
    found = json.loads((tmp_path / "findings.json").read_text())
    assert found[0]["models"]["hardware"]["agree"] == 400
    assert "| sm_90-wgmma-m64n8k8-tf32-tf32-c32-d32 | 400 |" in (
        tmp_path / "findings.md").read_text()
    assert "0 finding(s) in 1 campaign(s)" in capsys.readouterr().out


class _NoDriverBindings:
    """cuda-python installed on a machine without the NVIDIA driver: ``cuInit`` raises."""

    def cuInit(self, flags: int) -> tuple[object]:  # noqa: N802 - the driver API name
        raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found via '
                           "system search.\nEnsure the NVIDIA display driver is installed.")


@pytest.mark.parametrize("command", [["hw", "selftest"],
                                     ["hw", "run", str(PROBES / "dense-tf32.suite.jsonl"),
                                      "--out", "o.jsonl"]])
def test_hw_with_bindings_but_no_driver_is_one_line(command: list[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tcspec.cli import main
    from tcspec.hw import device

    monkeypatch.setattr(device, "_driver", _NoDriverBindings)
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.startswith("tcspec: error: no NVIDIA driver here") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_hw_run_checks_its_inputs_before_opening_the_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tcspec.cli import main

    def never(*args: object) -> None:
        raise AssertionError("the device was opened before the inputs were checked")

    monkeypatch.setattr(run, "open_device", never)
    assert main(["hw", "run", str(tmp_path / "typo.jsonl"), "--out",
                 str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err == (
        f"tcspec: error: no such vector, probe or campaign file: {tmp_path / 'typo.jsonl'}\n")
    (tmp_path / "notcolumns").mkdir()
    assert main(["hw", "run", str(tmp_path / "notcolumns"), "--out",
                 str(tmp_path / "o.jsonl")]) == 2
    assert "descriptor.json" in capsys.readouterr().err


def test_the_device_plan_without_a_driver_is_one_line(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from tcspec.hw import device, device_plan

    monkeypatch.setattr(device, "_driver", _NoDriverBindings)
    assert device_plan.main(["run", "--out", str(tmp_path / "plan")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("device_plan.py: error: no NVIDIA driver here") and err.count("\n") == 1
    assert not (tmp_path / "plan").exists()
