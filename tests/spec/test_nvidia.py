"""The NVIDIA architecture datapaths (SEMANTICS.md section 10) against MMA-Sim's vectors.

Constants come from ARCHITECTURES.md / SEMANTICS.md section 10 (window bits, split-K, the
e8m13 output, the chain identities of its section 0), never from spec/nvidia.py. Every
shipped NVIDIA line passes on the batch lowering and (a quarter of them by default, all
under ``-m full``) on the scalar one; breaking a parameter of the stage makes the shipped
lines fail wherever they can tell (the gaps are listed).
"""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from tcspec.ref.batch import NUMPY
from tcspec.ref.compiled import compiled_model
from tcspec.ref.run import run_numpy, run_scalar
from tcspec.ref.vectorfiles import ARCH_DIR, Record, arch_vector_files, read_vectors
from tcspec.spec.arch import arch_name
from tcspec.spec.catalog import ARCH_CATALOG, CATALOG, TCGEN05, datapaths_of, input_layout
from tcspec.spec.convert import convert_word
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tcspec.validate import check_files

NVIDIA_FUSED = {n: d.descriptor for n, d in ARCH_CATALOG.items()
                if d.descriptor.algorithm in ("fused-dot", "fused-dot-block")}
FILES = {n: p for n, p in arch_vector_files().items() if n in NVIDIA_FUSED}

# (arch, MMA-Sim qualifier) -> (F, steps, output): rows of ARCHITECTURES.md section 2.
TABLE = {
    ("sm_70", "m8n8k4.f32.f16.f16.f32"): (23, 1, "f32-rz"),
    ("sm_70", "m8n8k4.f32.f16.f16.f16"): (23, 1, "f32-rz"),
    ("sm_70", "m8n8k4.f16.f16.f16.f16"): (23, 1, "f16-rne"),
    ("sm_75", "m8n8k4.f32.f16.f16.f32"): (24, 1, "f32-rz"),
    ("sm_75", "m16n8k8.f16.f16.f16.f16"): (24, 1, "f16-rne"),
    ("sm_80", "m16n8k8.f32.tf32.tf32.f32"): (24, 2, "f32-rz"),
    ("sm_80", "m16n8k4.f32.tf32.tf32.f32"): (24, 1, "f32-rz"),
    ("sm_80", "m16n8k16.f16.f16.f16.f16"): (24, 2, "f16-rne"),
    ("sm_80", "m16n8k16.f32.bf16.bf16.f32"): (24, 2, "f32-rz"),
    ("sm_80", "m16n8k8.f32.bf16.bf16.f32"): (24, 1, "f32-rz"),
    ("sm_89", "m16n8k32.f32.e5m2.e4m3.f32"): (13, 2, "f32_e8m13-rz"),
    ("sm_89", "m16n8k16.f32.e4m3.e4m3.f32"): (13, 1, "f32_e8m13-rz"),
    ("sm_89", "m16n8k32.f16.e4m3.e5m2.f16"): (13, 2, "f16-rne"),
    ("sm_89", "m16n8k16.f32.f16.f16.f32"): (24, 2, "f32-rz"),
    ("sm_90", "m16n8k16.f32.f16.f16.f32"): (25, 1, "f32-rz"),
    ("sm_90", "m16n8k8.f32.tf32.tf32.f32"): (25, 1, "f32-rz"),
    ("sm_90", "m64n8k32.f32.e4m3.e5m2"): (13, 1, "f32_e8m13-rz"),
    ("sm_90", "m64n8k32.f16.e5m2.e5m2"): (13, 1, "f16-rne"),
    ("sm_90", "m64n8k16.f32.bf16.bf16"): (25, 1, "f32-rz"),
    ("sm_100", "m16n8k16.f32.bf16.bf16.f32"): (25, 1, "f32-rz"),
    ("sm_120", "m16n8k32.f32.e5m2.e5m2.f32"): (25, 1, "f32-rz"),
    ("sm_120", "m16n8k32.f16.e4m3.e4m3.f16"): (25, 1, "f16-rne"),
    ("sm_120", "m16n8k32.block32.f32.e4m3.e5m2.f32.ue8m0"): (25, 1, "f32-rz"),
    ("sm_120", "m16n8k64.block32.f32.e2m1.e2m1.f32.ue4m3"): (35, 1, "f32-rz"),
}


def _by_qualifier(arch, qualifier):
    return next(d for d in NVIDIA_FUSED.values() if (d.arch, d.qualifier) == (arch, qualifier))


def _records(name):
    return [r for r in read_vectors(FILES[name]) if isinstance(r, Record)]


def _numpy(desc, rows):
    matrix = np.array(rows, dtype=np.uint64).reshape(len(rows), -1)
    return run_numpy(desc, [matrix[:, i] for i in range(matrix.shape[1])], len(rows)).tolist()


def test_the_catalog_holds_every_nvidia_fused_combination_once_by_canonical_name():
    assert len(NVIDIA_FUSED) == 100 and len(TCGEN05) == 110
    assert len(FILES) == 100, "every NVIDIA fused dot-add combination ships its vectors"
    index = json.loads((ARCH_DIR / "INDEX.json").read_text())
    shipped = [e for e in index["files"] if (ARCH_DIR / e["file"]).exists()
               and e["combination"]["arch"].startswith("sm_") and ".f64." not in e["file"]]
    assert sorted(str(FILES[n].name) for n in FILES) == sorted(e["file"] for e in shipped)
    for name, desc in NVIDIA_FUSED.items():
        assert CATALOG[name].arch == desc.arch and not CATALOG[name].is_tcgen05
        assert name == arch_name(desc.arch, desc.instruction, desc.shape, desc.a_format,
                                 desc.b_format, desc.c_format, desc.d_type, desc.scale_format,
                                 desc.scale_block)
    assert "sm_70-mma-m8n8k4-f16-f16-c16-d32" in CATALOG
    assert "sm_70-mma-m8n8k4-f16-f16-c32-d32" in CATALOG
    assert "sm_120-mma_block_scale-m16n8k64-block32-e2m1-e2m1-c32-d32-ue4m3" in CATALOG
    assert {d.arch for d in datapaths_of("sm_90")} == {"sm_90"}
    assert len([d for d in datapaths_of("sm_90") if d.instruction == "wgmma"]) == 12


@pytest.mark.parametrize("arch, qualifier", list(TABLE))
def test_parameters_are_the_rows_of_architectures_md(arch, qualifier):
    desc = _by_qualifier(arch, qualifier)
    p = desc.params
    assert (p.window, p.steps, p.output) == TABLE[(arch, qualifier)]
    assert p.zeros_in_max and p.clamp is None and (p.between or p.output) == p.output


def test_check_passes_every_shipped_nvidia_line_on_the_batch_lowering():
    report = check_files([FILES[n] for n in sorted(FILES)])
    total = report.total
    assert (total.cases, total.passed, total.mismatched) == (10_000, 10_000, 0)
    assert not report.bad_lines and len(report.tallies) == 100


def _scalar_agrees(name, every):
    desc = NVIDIA_FUSED[name]
    for record in _records(name)[::every]:
        assert record.matches(run_scalar(desc, record.words)), (name, record.name)


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_quarter_of_the_shipped_lines_pass_on_the_scalar_lowering(name):
    _scalar_agrees(name, 4)


@pytest.mark.full
@pytest.mark.parametrize("name", sorted(FILES))
def test_every_shipped_line_passes_on_the_scalar_lowering(name):
    _scalar_agrees(name, 1)


def _random_rows(desc, count, seed):
    rng = random.Random(seed)
    return [[rng.getrandbits(s.width) for s in input_layout(desc)] for _ in range(count)]


@pytest.mark.parametrize("arch, split, half", [
    ("sm_80", "m16n8k16.f32.f16.f16.f32", "m16n8k8.f32.f16.f16.f32"),
    ("sm_80", "m16n8k16.f16.f16.f16.f16", "m16n8k8.f16.f16.f16.f16"),
    ("sm_80", "m16n8k8.f32.tf32.tf32.f32", "m16n8k4.f32.tf32.tf32.f32"),
    ("sm_89", "m16n8k32.f32.e4m3.e5m2.f32", "m16n8k16.f32.e4m3.e5m2.f32"),
    ("sm_89", "m16n8k32.f16.e5m2.e5m2.f16", "m16n8k16.f16.e5m2.e5m2.f16"),
])
def test_split_k_is_the_half_instruction_chained(arch, split, half):
    """ARCHITECTURES.md section 0: the split instruction = its half-K instruction twice, the
    D of the first step being the C of the second (100 of 100 there; here 300 random)."""
    whole, part = _by_qualifier(arch, split), _by_qualifier(arch, half)
    rows = _random_rows(whole, 300, 20)
    k = whole.k // 2
    first = _numpy(part, [r[:k] + r[2 * k:3 * k] + [r[-1]] for r in rows])
    second = _numpy(part, [r[k:2 * k] + r[3 * k:4 * k] + [d] for r, d in zip(rows, first)])
    assert _numpy(whole, rows) == second


def test_hopper_does_not_split():
    """ARCHITECTURES.md section 0: sm_90 m16n8k16 equals two chained m16n8k8 on 79 of 100."""
    whole = _by_qualifier("sm_90", "m16n8k16.f32.f16.f16.f32")
    part = _by_qualifier("sm_90", "m16n8k8.f32.f16.f16.f32")
    rows = _random_rows(whole, 300, 21)
    first = _numpy(part, [r[:8] + r[16:24] + [r[-1]] for r in rows])
    second = _numpy(part, [r[8:16] + r[24:32] + [d] for r, d in zip(rows, first)])
    same = sum(a == b for a, b in zip(_numpy(whole, rows), second))
    assert 0 < same < 300


@pytest.mark.parametrize("arch, qualifier, narrow", [
    ("sm_89", "m16n8k16.f32.e4m3.e5m2.f32", True),
    ("sm_90", "m64n8k32.f32.e5m2.e4m3", True),
    ("sm_120", "m16n8k16.f32.e4m3.e5m2.f32", False),
    ("sm_90", "m16n8k16.f32.f16.f16.f32", False),
])
def test_the_fp8_accumulator_keeps_13_fraction_bits(arch, qualifier, narrow):
    """Ada mma and Hopper wgmma fp8 round F32 D to e8m13 (low 10 bits zero); others do not."""
    desc = _by_qualifier(arch, qualifier)
    words = [w for w in _numpy(desc, _random_rows(desc, 400, 22))
             if (w >> 23) & 0xFF != 0xFF]
    low = [w & 0x3FF for w in words]
    assert words and (all(v == 0 for v in low) if narrow else any(low))


def test_an_f16_c_is_read_exactly_in_the_f32_d_format():
    """Every F16 word converts to the F32 word of the same value (the host's float16 ->
    float32 cast is the oracle; NaN to the canonical F32 NaN)."""
    f16, f32 = FORMATS["f16"], FORMATS["f32"]
    words = np.arange(1 << 16, dtype=np.uint64)
    got = NUMPY.values(convert_word(NUMPY, NUMPY.input(words, 32), f16, f32), 1 << 16)
    values = words.astype(np.uint16).view(np.float16).astype(np.float32)
    want = np.where(np.isnan(values), np.uint32(0x7FFFFFFF), values.view(np.uint32))
    assert (got.astype(np.uint64) == want.astype(np.uint64)).all()
    assert SCALAR.value(convert_word(SCALAR, SCALAR.const(0x0001, 32), f16, f32)) == 0x33800000


def test_volta_f16_c_and_its_f32_word_give_the_same_d():
    c16 = ARCH_CATALOG["sm_70-mma-m8n8k4-f16-f16-c16-d32"].descriptor
    c32 = ARCH_CATALOG["sm_70-mma-m8n8k4-f16-f16-c32-d32"].descriptor
    rows = _random_rows(c16, 300, 23)
    wide = [r[:-1] + [int(np.array([r[-1] & 0xFFFF], dtype=np.uint16).view(np.float16)
                          .astype(np.float32).view(np.uint32)[0])] for r in rows]
    finite = [i for i, r in enumerate(rows) if (r[-1] >> 10) & 0x1F != 0x1F]
    got16, got32 = _numpy(c16, rows), _numpy(c32, wide)
    assert [got16[i] for i in finite] == [got32[i] for i in finite]


def test_b200_rules_are_candidates_beside_mma_sims():
    """Zero-times-huge on Hopper bf16: MMA-Sim's zero exponent -126 + 127 sets R, B200's rule
    leaves the zero out (the replayed probe of `tcspec probe --vs b200-zeros`)."""
    name = "sm_90-mma-m16n8k8-bf16-bf16-c32-d32"
    desc = ARCH_CATALOG[name].descriptor
    a = [0x7F010000, 0x00800000] + [0] * 6
    b = [0x80000000, 0x67000000] + [0] * 6
    words = a + b + [0x93FF067A]
    mma_sim, b200 = (compiled_model(m, desc)(*words) for m in ("hardware", "b200-zeros"))
    assert (mma_sim, b200) == (0x00000000, 0x28000000)
    assert compiled_model("mma-sim", desc)(*words) == mma_sim
    assert compiled_model("b200-rules", desc)(*words) == b200


MUTANTS = {"F-1": lambda p: {"window": p.window - 1},
           "zeros-out": lambda p: {"zeros_in_max": False},
           "steps": lambda p: {"steps": 3 - p.steps}}

UNPINNED = {
    "F-1": "F16-D paths with F >= 23 and the K=64 chunk paths (ARCHITECTURES.md section 0: "
           "the F16-D files do not separate F = 23/24/25)",
    "zeros-out": "f16 and fp8 operands, NVFP4 block16: no shipped line has a zero product whose "
                 "-126 exponent sets R",
}


def _fails(desc, records, **change):
    mutant = dataclasses.replace(desc, params=dataclasses.replace(desc.params, **change))
    got = _numpy(mutant, [r.words for r in records])
    return sum(not r.matches(w) for r, w in zip(records, got))


def _pinned(name, mutant):
    desc = NVIDIA_FUSED[name]
    if mutant == "steps" and (desc.algorithm != "fused-dot" or desc.k % 2):
        return None
    return _fails(desc, _records(name), **MUTANTS[mutant](desc.params)) > 0


def _expect_pinned(desc, mutant):
    """Where the shipped lines can tell a broken parameter (found by running them)."""
    if mutant == "F-1":
        chunk = desc.params.chunk is not None
        return not chunk and (desc.d_type == "f32" or desc.params.window == 13)
    if mutant == "zeros-out":
        return desc.a_format in ("tf32", "bf16") or (
            desc.algorithm == "fused-dot-block" and desc.name !=
            "sm_120-mma_block_scale-m16n8k64-block16-e2m1-e2m1-c32-d32-ue4m3")
    return True


SAMPLE = ["sm_70-mma-m8n8k4-f16-f16-c16-d32", "sm_80-mma-m16n8k16-f16-f16-c16-d16",
          "sm_89-mma-m16n8k32-e4m3-e5m2-c32-d32", "sm_90-wgmma-m64n8k8-tf32-tf32-c32-d32",
          "sm_120-mma_block_scale-m16n8k32-block32-e5m2-e4m3-c32-d32-ue8m0"]


@pytest.mark.parametrize("mutant", list(MUTANTS))
@pytest.mark.parametrize("name", SAMPLE)
def test_a_broken_parameter_fails_the_shipped_lines_sample(name, mutant):
    pinned = _pinned(name, mutant)
    if pinned is not None:
        assert pinned == _expect_pinned(NVIDIA_FUSED[name], mutant), UNPINNED.get(mutant)


@pytest.mark.full
@pytest.mark.parametrize("mutant", list(MUTANTS))
@pytest.mark.parametrize("name", sorted(FILES))
def test_a_broken_parameter_fails_the_shipped_lines(name, mutant):
    pinned = _pinned(name, mutant)
    if pinned is not None:
        assert pinned == _expect_pinned(NVIDIA_FUSED[name], mutant), UNPINNED.get(mutant)
