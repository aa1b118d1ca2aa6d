"""Section 10 (nvidia.py): the `fused-dot` and `fused-dot-block` datapaths against the
MMA-Sim vectors of ``ref/vectors/arch/`` (model outputs, not hardware words), the
parameter table against the rule text's table and the files' own index, and hand cases."""

from __future__ import annotations

import json
import random
import struct
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from tcspec.proofs.rulebook import layout, names, reference_dot
from tcspec.proofs.rulebook.names import FUSED_DOT, FUSED_DOT_BLOCK, parse
from tcspec.proofs.rulebook.nvidia import TABLE, fused_dot, key_of, parameters
from tcspec.proofs.rulebook.rounding import F32_E8M13_RZ, F32_RZ
from tcspec.spec.scalar import SCALAR

from .vectors import VECTORS, read_lines

ARCH = VECTORS / "arch"
OURS = [n for n in names() if parse(n).family in (FUSED_DOT, FUSED_DOT_BLOCK)]
FILES = sorted(p for p in ARCH.glob("sm_*.jsonl.gz") if ".f64." not in p.name)
BITS = {"f16": 16, "f32": 32, "f64": 64}


def arch_name(line: dict) -> str:
    """The section-10.1 name a vector line spells (arch, instruction, qualifier, formats)."""
    instruction = line["instruction"]
    if instruction.startswith("wgmma"):
        instr = "wgmma"
    elif "block_scale" in instruction:
        instr = "mma_block_scale"
    else:
        instr = "mma"
    shape = line["mmasim_qualifier"].split(".")[0]
    block = f"-block{line['scale_block']}" if line["scale_block"] else ""
    scale = f"-{line['scale_format']}" if line["scale_format"] else ""
    return (f"{line['arch']}-{instr}-{shape}{block}-{line['a_format']}-{line['b_format']}"
            f"-c{BITS[line['c_format']]}-d{BITS[line['d_format']]}{scale}")


def words_of(name: str, line: dict) -> dict:
    """The layout's words of an architecture vector line (the first n scale bytes)."""
    rec = parse(name)
    values = {f"a{i}": w for i, w in enumerate(line["a"])}
    values.update({f"b{i}": w for i, w in enumerate(line["b"])})
    values["c"] = line["c"]
    for side in ("a", "b"):
        for i in range(rec.n_scales):
            values[f"scale_{side}{i}"] = line[f"scale_{side}"][i]
    return {n: SCALAR.const(values[n], w) for n, w in layout(name)}


def evaluate(name: str, line: dict) -> int:
    return reference_dot(SCALAR, name, words_of(name, line)).word.node


@cache
def lines_of(path: Path) -> tuple[str, list[dict]]:
    lines = read_lines(path)
    names_in = {arch_name(line) for line in lines}
    assert len(names_in) == 1, (path.name, names_in)
    return names_in.pop(), lines


def stratified(lines: list[dict], per_mode: int, seed: int) -> list[dict]:
    """``per_mode`` lines of every generation mode (every mode block of the file)."""
    by_mode: dict[str, list[dict]] = {}
    for line in lines:
        by_mode.setdefault(line["mode"], []).append(line)
    rng = random.Random(seed)
    out = []
    for mode in sorted(by_mode):
        group = by_mode[mode]
        out += rng.sample(group, min(per_mode, len(group)))
    return out


# ------------------------------------------------------------------ coverage and table


def test_names_and_files() -> None:
    """100 datapaths (10.5: 3 + 5 + 8 + 24 + 8 + 12 + 8 + 24 + 8), one vector file each."""
    assert len(OURS) == 100
    sm = [n for n in names() if n.startswith("sm_")]
    assert sorted(OURS) == sorted(n for n in sm if "-f64-" not in n)
    assert len(FILES) == 100
    assert sorted(lines_of(p)[0] for p in FILES) == sorted(OURS)


@pytest.mark.parametrize("name", OURS)
def test_every_name_has_a_row(name: str) -> None:
    rec = parse(name)
    params = parameters(rec)
    assert rec.k % params.steps == 0
    zeros = {n: SCALAR.const(0, w) for n, w in layout(name)}
    if rec.scaling:  # unit scales
        unit = 0x7F if rec.scaling == "ue8m0" else 0x38
        zeros.update({n: SCALAR.const(unit, 8) for n, _ in layout(name) if n.startswith("sc")})
    result = reference_dot(SCALAR, name, zeros)
    assert result.defined.node and result.word.node == 0  # 0 + sum 0 * 0 = +0


def test_every_row_is_used_and_fp64_has_none() -> None:
    used = {key_of(parse(n)) for n in OURS}
    assert used == set(TABLE)
    for name in names():
        if name.startswith("sm_") and "-f64-" in name:
            with pytest.raises(ValueError, match=r"no section-10\.5 parameter row"):
                parameters(parse(name))


def test_table_agrees_with_the_vector_index() -> None:
    """Each file's recorded MMA-Sim instance parameters (INDEX.json) are the table's row:
    F, split or not, and the F32-D output (`f32` RZ or `f32_e8m13`)."""
    index = json.loads((ARCH / "INDEX.json").read_text())
    checked = 0
    for entry in index["files"]:
        path = ARCH / entry["file"]
        if path not in FILES:
            continue
        name, _ = lines_of(path)
        rec = parse(name)
        params = parameters(rec)
        mmasim = entry["combination"]["mmasim_params"]
        assert mmasim["n_accum_fractional_bits"] == params.F, name
        assert (params.steps == 2) == mmasim.get("is_split_k", False), name
        assert params.steps in (1, 2)
        if rec.d_format == "f32":
            want = {"f32": F32_RZ, "f32_e8m13": F32_E8M13_RZ}[mmasim["output_type"]]
            assert params.output("f32") is want, name
        checked += 1
    assert checked == 100


# ------------------------------------------------------------------ the vectors


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vector_sample(path: Path) -> None:
    """Two lines of every generation mode of every file (20 of 100)."""
    name, lines = lines_of(path)
    for line in stratified(lines, 2, seed=len(path.name)):
        assert evaluate(name, line) == line["expected"], (path.name, line["case_index"])


@pytest.mark.full
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vector_file(path: Path) -> None:
    name, lines = lines_of(path)
    bad = [(line["case_index"], hex(evaluate(name, line)), line["expected_hex"])
           for line in lines if evaluate(name, line) != line["expected"]]
    assert not bad, (path.name, bad)


def _pinned_by(path: Path, change) -> bool:
    """Whether some line of ``path`` disagrees with the table row changed by ``change``."""
    name, lines = lines_of(path)
    rec = parse(name)
    params = change(parameters(rec))
    for line in lines:
        words = words_of(name, line)
        a = [words[f"a{i}"] for i in range(rec.k)]
        b = [words[f"b{i}"] for i in range(rec.k)]
        scales = (words["scale_a0"], words["scale_b0"]) if rec.scaling else None
        word = fused_dot(SCALAR, params, rec.a_format, rec.b_format, rec.c_format,
                         rec.d_format, a, b, words["c"], scales).node
        if word != line["expected"]:
            return True
    return False


UNCHUNKED = [p for p in FILES if parameters(parse(lines_of(p)[0])).chunk is None]


@pytest.mark.full
@pytest.mark.parametrize("path", UNCHUNKED, ids=lambda p: p.name)
def test_vectors_pin_the_row(path: Path) -> None:
    """10.8: splitting an unsplit datapath (or joining a split one) fails lines of every
    file; F - 1 fails lines of every F32-D file and of the F16-D ones with F = 13."""
    name, _ = lines_of(path)
    rec = parse(name)
    params = parameters(rec)
    other = 1 if params.steps == 2 else 2
    assert _pinned_by(path, lambda p: replace(p, steps=other)), name
    if rec.d_format == "f32" or params.F == 13:
        assert _pinned_by(path, lambda p: replace(p, F=p.F - 1)), name


# ------------------------------------------------------------------ hand cases


def _run(name: str, **values: int) -> int:
    words = {n: SCALAR.const(values.get(n, 0), w) for n, w in layout(name)}
    return reference_dot(SCALAR, name, words).word.node


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_zero_factor_sets_the_window() -> None:
    """10.7's example, Hopper bf16: A = (2^127 * 1.0078, 2^-126), B = (-0, 2^79), C =
    -6.4e-27. The zero product has exponent 127 - 126 = 1, so q = -24 and 2^-47 and C
    both truncate to 0: +0 (B200's rule, zeros left out, would give 0x28000000)."""
    name = "sm_90-mma-m16n8k8-bf16-bf16-c32-d32"
    word = _run(name, a0=0x7F010000, a1=0x00800000, b0=0x80000000, b1=0x67000000,
                c=_f32(-6.4e-27))
    assert word == 0


def test_f16_c_converted_to_f32_before_the_window() -> None:
    """10.3.2: an F16 C of 2^-24 (subnormal in F16) becomes an F32 normal with exponent
    -24, which sets R; with F = 23 the product 2^-20 * 2^-20 = 2^-40 (window exponent
    -28) survives: D = 2^-24 + 2^-40. Read as an F16 subnormal (exponent -14) the product
    would truncate away (0x33800000)."""
    for arch in ("sm_70", "sm_75"):
        f16_c = _run(f"{arch}-mma-m8n8k4-f16-f16-c16-d32", a0=0x0010, b0=0x0010, c=0x0001)
        f32_c = _run(f"{arch}-mma-m8n8k4-f16-f16-c32-d32", a0=0x0010, b0=0x0010,
                     c=0x33800000)
        assert f16_c == f32_c == 0x33800080


def test_split_k_rounds_between_steps() -> None:
    """10.4, f16 K=16 with C = 1, lane 0 = 2^-14 * 2^-10 and lane 8 = -1 * 1. Ampere (two
    steps of 8, F = 24): the first step keeps the 2^-24 unit but its F32 RZ output 1 + 2^-24
    truncates to 1, and the second step gives +0. Hopper (one window, F = 25): 2^-24."""
    values = dict(a0=0x0400, b0=0x1400, a8=0xBC00, b8=0x3C00, c=_f32(1.0))
    assert _run("sm_80-mma-m16n8k16-f16-f16-c32-d32", **values) == 0
    assert _run("sm_90-mma-m16n8k16-f16-f16-c32-d32", **values) == _f32(2.0**-24)


def test_longer_k_chains_the_same_step() -> None:
    """10.4: on a longer logical K the instruction's step is chained more times: Ampere's
    K=16 f16 is two chained K=8 instructions, and K=32 of it four steps of 8."""
    rec = parse("sm_80-mma-m16n8k16-f16-f16-c32-d32")
    params = parameters(rec)
    rng = random.Random(7)
    lanes = [SCALAR.const(rng.choice([0x3C00, 0x0400, 0x1400, 0xBC00, 0x3555]), 32)
             for _ in range(64)]
    a, b, c = lanes[:32], lanes[32:], SCALAR.const(_f32(1.0), 32)
    long = fused_dot(SCALAR, params, "f16", "f16", "f32", "f32", a, b, c, step=8).node
    assert params.steps == 2
    acc = c
    for lo in (0, 16):
        acc = fused_dot(SCALAR, params, "f16", "f16", "f32", "f32", a[lo:lo + 16],
                        b[lo:lo + 16], acc)
    assert long == acc.node


def test_e8m13_output_and_inf_carry() -> None:
    """Ada fp8 F32 D is e8m13 RZ (10.3.5: the low 10 fraction bits are zero; Blackwell RTX
    keeps 23 bits), and an infinity of the first split step carries on (10.4)."""
    c = _f32(1.0 + 2.0**-20)
    ada = _run("sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", c=c)
    rtx = _run("sm_120-mma-m16n8k32-e4m3-e4m3-c32-d32", c=c)
    assert ada == _f32(1.0) and rtx == c
    inf = _run("sm_89-mma-m16n8k32-e5m2-e5m2-c32-d32", a0=0x7C, b0=0x3C, a16=0x3C, b16=0x3C)
    assert inf == 0x7F800000
    nan = _run("sm_89-mma-m16n8k32-e5m2-e5m2-c32-d32", a0=0x7C, b0=0x3C, a16=0xFC, b16=0x3C)
    assert nan == 0x7FFFFFFF


def test_block_scale_specials_and_chunks() -> None:
    """10.6: a NaN scale byte is the canonical NaN (K=32 UE8M0 0xFF; K=64 UE4M3 0x7F and
    0xFF, bit 7 ignored); an all-zero chunk with large scales sets R and swallows C."""
    k32 = "sm_120-mma_block_scale-m16n8k32-block32-e4m3-e4m3-c32-d32-ue8m0"
    assert _run(k32, scale_a0=0xFF, scale_b0=0x7F, c=_f32(1.0)) == 0x7FFFFFFF
    assert _run(k32, scale_a0=0x7F, scale_b0=0x7F, a0=0x38, b0=0x38, c=_f32(1.0)) == _f32(2.0)
    k64 = "sm_120-mma_block_scale-m16n8k64-block16-e2m1-e2m1-c32-d32-ue4m3"
    unit = {f"scale_{s}{i}": 0x38 for s in "ab" for i in range(4)}
    for nan_byte in (0x7F, 0xFF):
        assert _run(k64, **{**unit, "scale_b2": nan_byte}) == 0x7FFFFFFF
    assert _run(k64, **{**unit, "scale_a1": 0xB8}, a16=0x2, b16=0x2, c=_f32(1.0)) == _f32(2.0)
    # chunk 3 all zero with scales 2^8 * 2^8: R = 16, q = -19; C = 2^-20 truncates to 0.
    big = {**unit, "scale_a3": 0x78, "scale_b3": 0x78}
    assert _run(k64, **big, c=_f32(2.0**-20)) == 0
    assert _run(k64, **unit, c=_f32(2.0**-20)) == _f32(2.0**-20)


def test_zero_fp8_factor_with_large_scales_sets_the_window() -> None:
    """10.2 and 10.6 K=32: a zero e4m3 factor has exponent -126, and the product carries the
    scales: 0 x (e5m2 1.75 * 2^15) with both scales 2^127 has window exponent
    -126 + 15 + 254 = 143, so q = 118 and C = 1 truncates to +0 (the zerobig lines of the
    K=32 block-scale files depend on this; B200's rule would give C)."""
    k32 = "sm_120-mma_block_scale-m16n8k32-block32-e4m3-e5m2-c32-d32-ue8m0"
    assert _run(k32, b0=0x7B, scale_a0=0xFE, scale_b0=0xFE, c=_f32(1.0)) == 0
    assert _run(k32, b0=0x7B, scale_a0=0x7F, scale_b0=0x7F, c=_f32(1.0)) == _f32(1.0)


def test_bad_input() -> None:
    name = OURS[0]
    good = {n: SCALAR.const(0, w) for n, w in layout(name)}
    with pytest.raises(ValueError, match="sm_70-mma-m8n8k4-f16-f16-c99-d32"):
        reference_dot(SCALAR, "sm_70-mma-m8n8k4-f16-f16-c99-d32", good)
    with pytest.raises(ValueError, match=r"missing input word.*a3"):
        reference_dot(SCALAR, name, {n: v for n, v in good.items() if n != "a3"})
    with pytest.raises(ValueError, match=r"unexpected input word.*scale_a0"):
        reference_dot(SCALAR, name, {**good, "scale_a0": SCALAR.const(0, 8)})
    with pytest.raises(ValueError, match="word c must be 32 bits, got 16"):
        reference_dot(SCALAR, name, {**good, "c": SCALAR.const(0, 16)})
