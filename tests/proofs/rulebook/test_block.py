"""Section 4 (block.py) against the B200 words and the reference-model vectors, and its rules
on hand-made inputs (dense and, through section 5's compaction, sparse block-scaled names)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tcspec.proofs.rulebook import layout, names, reference_dot
from tcspec.proofs.rulebook.block import UNIT_SCALE
from tcspec.proofs.rulebook.fields import decode
from tcspec.proofs.rulebook.names import F8F6F4, parse
from tcspec.spec.scalar import SCALAR

from .vectors import FROZEN, REFERENCE, evaluate, read_lines, sample

BLOCK_NAMES = [n for n in names() if n.startswith(("dense-", "sparse-")) and parse(n).scaling]
DENSE_NAMES = [n for n in BLOCK_NAMES if n.startswith("dense-")]
FROZEN_LINES = [line for line in read_lines(FROZEN) if parse(line["datapath"]).scaling]


def _files(prefix: str) -> list[Path]:
    out = []
    for path in sorted(REFERENCE.glob(f"{prefix}-*.jsonl.gz")):
        name = path.name[: -len(".jsonl.gz")]
        if name in BLOCK_NAMES:
            out.append(path)
    return out


DENSE_FILES = _files("dense")
SPARSE_FILES = _files("sparse")
FILES = DENSE_FILES + SPARSE_FILES


def _words(name: str, values: dict[str, int]) -> dict:
    """The layout's words: unit scales and legal metadata (0x4 everywhere) unless given."""
    rec = parse(name)
    unit = UNIT_SCALE[rec.scaling] if rec.scaling else 0
    out = {}
    for n, width in layout(name):
        default = unit if n.startswith("scale_") else 0x44444444 if n.startswith("meta") else 0
        out[n] = SCALAR.const(values.get(n, default), width)
    return out


def _dot(name: str, values: dict[str, int]) -> int:
    result = reference_dot(SCALAR, name, _words(name, values))
    assert result.defined.node
    return result.word.node


# ------------------------------------------------------------------ names and vectors


def test_every_block_scaled_name_is_here() -> None:
    """dense-mx-<f>, dense-mx-<a>-<b>, the five E2M1 names, and their sparse siblings."""
    assert len(DENSE_NAMES) == 5 + 20 + 5
    assert len(BLOCK_NAMES) == len(DENSE_NAMES) + 10
    for name in BLOCK_NAMES:
        rec = parse(name)
        scales = [n for n, w in layout(name) if n.startswith("scale_") and w == 8]
        assert len(scales) == 2 * rec.dense_k // rec.block
        assert _dot(name, {}) == 0  # every product zero, C = +0: +0


def test_frozen_b200_words() -> None:
    """The 23 block-scaled B200 words (18 dense, 5 sparse)."""
    assert len(FROZEN_LINES) == 23
    bad = [(line["name"], hex(evaluate(line)), hex(line["expected"]))
           for line in FROZEN_LINES if evaluate(line) != line["expected"]]
    assert not bad


def test_files_cover_the_family() -> None:
    assert len(DENSE_FILES) == 10 and len(SPARSE_FILES) == 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_sample(path) -> None:
    lines = read_lines(path)
    for line in sample(lines, 15, seed=len(lines)):
        assert evaluate(line) == line["expected"], line


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_sensitive_lines_all_match(path) -> None:
    """Every line marked sensitive to a model rule (floor174, split, group_c) matches."""
    lines = [line for line in read_lines(path) if line.get("sensitive_to")]
    if "-mx-" in path.name:
        assert not lines
    else:
        assert lines
    for line in lines:
        assert evaluate(line) == line["expected"], line


@pytest.mark.full
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_full(path) -> None:
    for number, line in enumerate(read_lines(path), 1):
        assert evaluate(line) == line["expected"], (path.name, number)


# ------------------------------------------------------------------ rules on hand-made inputs

E2M1 = {0.5: 0x1, 1.0: 0x2, 2.0: 0x4, 4.0: 0x6, 6.0: 0x7, -1.0: 0xA, -2.0: 0xC, -4.0: 0xE}
E2M1_FAMILIES = ["dense-mxf4", "dense-mxf4nvf4-2x", "dense-mxf4nvf4-4x", "dense-nvfp4",
                 "dense-mxf4nvf4-4x-ue4m3"]
MXF4_UE8M0 = E2M1_FAMILIES[:3]


def test_unit_scales_decode_to_one() -> None:
    for fmt_name, byte in UNIT_SCALE.items():
        d = decode(SCALAR, SCALAR.const(byte, 8), fmt_name)
        assert d.m.node == 1 << d.fmt.F and d.r.node == 0


@pytest.mark.parametrize("name", DENSE_NAMES)
def test_every_product_zero_returns_c(name: str) -> None:
    """4: every product zero -> C's word unchanged (a subnormal too); a zero C -> +0."""
    for c, want in ((0x00000001, 0x00000001), (0xBFC00000, 0xBFC00000), (0x80000000, 0)):
        assert _dot(name, {"c": c}) == want


@pytest.mark.parametrize("name", ["dense-nvfp4", "dense-mxf4nvf4-4x-ue4m3"])
def test_ue4m3_bit7_and_zero_scale(name: str) -> None:
    """Section 1: UE4M3 ignores bit 7; 0x80 is a zero scale (its products are zero, so D = C),
    0xFF is NaN."""
    values = {f"a{i}": E2M1[1.0] for i in range(16)} | {f"b{i}": E2M1[1.0] for i in range(16)}
    values["c"] = 0x3F800000
    assert _dot(name, values) == 0x41880000  # 1 + 16
    assert _dot(name, values | {"scale_a0": 0xB8}) == 0x41880000
    assert _dot(name, values | {"scale_a0": 0x80}) == 0x3F800000
    assert _dot(name, values | {"scale_b3": 0xFF}) == 0x7FFFFFFF


@pytest.mark.parametrize("name", DENSE_NAMES)
def test_scale_nan_wins(name: str) -> None:
    """4: a NaN in any scale byte covering K gives the canonical NaN, whatever the elements
    (C = -Inf included)."""
    rec = parse(name)
    nan = 0xFF if rec.scaling == "ue8m0" else 0x7F
    last = rec.dense_k // rec.block - 1
    assert _dot(name, {f"scale_b{last}": nan, "c": 0xFF800000}) == 0x7FFFFFFF


def test_mx_element_specials() -> None:
    """Section 2's element specials on MXF8F6F4 (e5m2 has infinities)."""
    name = "dense-mx-e5m2"
    inf, ninf, one, zero = 0x7C, 0xFC, 0x3C, 0x00
    assert _dot(name, {"a0": inf, "b0": one}) == 0x7F800000
    assert _dot(name, {"a0": inf, "b0": one, "scale_a0": 0}) == 0x7F800000
    assert _dot(name, {"a0": ninf, "b0": one, "c": 0x3F800000}) == 0xFF800000
    assert _dot(name, {"a0": inf, "b0": zero}) == 0x7FFFFFFF
    assert _dot(name, {"a0": inf, "b0": one, "a1": inf, "b1": 0xBC}) == 0x7FFFFFFF
    assert _dot(name, {"a0": one, "b0": one, "c": 0x7FC00000}) == 0x7FFFFFFF


def _random_mx_words(rng: random.Random, name: str, finite: bool) -> dict[str, int]:
    rec = parse(name)
    values = {}
    for side, f in (("a", rec.a_format), ("b", rec.b_format)):
        width = {"e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}[f]
        for i in range(rec.dense_k):
            word = rng.getrandbits(width)
            if finite and f in ("e4m3", "e5m2"):
                word &= 0xBF  # exponent below all ones: finite
            values[f"{side}{i}"] = word
    values["c"] = rng.getrandbits(32) if not finite else rng.getrandbits(31) & 0x7F7FFFFF
    return values


@pytest.mark.parametrize("a", F8F6F4)
def test_mx_unit_scales_are_the_section_2_window(a: str) -> None:
    """4: MXF8F6F4 is section 2's window with 25 fraction bits and no clamp, so with unit
    scales every pair equals the unscaled f8f6f4 datapath (mixed-<a>-<b>-f32 / dense-<a>)."""
    rng = random.Random(a)
    for b in F8F6F4:
        mx = f"dense-mx-{a}" if a == b else f"dense-mx-{a}-{b}"
        plain = f"dense-{a}" if a == b else f"mixed-{a}-{b}-f32"
        for trial in range(6):
            values = _random_mx_words(rng, mx, finite=trial % 2 == 0)
            assert _dot(mx, values) == _dot(plain, values), (mx, values)


@pytest.mark.parametrize("a", F8F6F4)
def test_mx_pairs_commute(a: str) -> None:
    """Products commute: dense-mx-<a>-<b>(A, B, SA, SB) = dense-mx-<b>-<a>(B, A, SB, SA)."""
    rng = random.Random(a + "swap")
    for b in F8F6F4:
        if a == b:
            continue
        ab, ba = f"dense-mx-{a}-{b}", f"dense-mx-{b}-{a}"
        for _ in range(4):
            values = _random_mx_words(rng, ab, finite=False)
            values |= {"scale_a0": rng.randrange(100, 150), "scale_b0": rng.randrange(100, 150)}
            swapped = {"c": values["c"], "scale_a0": values["scale_b0"],
                       "scale_b0": values["scale_a0"]}
            for i in range(32):
                swapped[f"a{i}"], swapped[f"b{i}"] = values[f"b{i}"], values[f"a{i}"]
            assert _dot(ab, values) == _dot(ba, swapped)


def test_mx_scales_shift_the_window() -> None:
    """4: UE8M0 scales multiply in exactly and move the window with them: scaling A by 2^d
    scales a normal, unclamped result by 2^d."""
    rng = random.Random(44)
    for name in ("dense-mx-e4m3", "dense-mx-e2m1-e3m2"):
        for _ in range(10):
            values = _random_mx_words(rng, name, finite=True)
            values["c"] = 0
            base = _dot(name, values)
            exp = (base >> 23) & 0xFF
            if not 40 < exp < 200:
                continue
            for d in (-20, 13):
                assert _dot(name, values | {"scale_a0": 127 + d}) == base + (d << 23)


@pytest.mark.parametrize("name", MXF4_UE8M0)
def test_mxf4_per_group_c_merge(name: str) -> None:
    """4 (model): C = 8 (rC = 3) below P = 4, so q = -35; the K=16 group at lanes 32.. holds
    0.5 * 0.5 * 2^-32 = 2^-34, its g = -32 <= rC, so it is truncated to units of
    2^max(-35, 3 - 35) = 2^-32 first: 0. The rest cancels exactly: D = +0 (2^-34 without
    the merge)."""
    rec = parse(name)
    values = {"a0": E2M1[4.0], "b0": E2M1[4.0], "a1": E2M1[-4.0], "b1": E2M1[4.0],
              "a2": E2M1[-2.0], "b2": E2M1[4.0], "c": 0x41000000,
              "a32": E2M1[0.5], "b32": E2M1[0.5], f"scale_a{32 // rec.block}": 127 - 32}
    assert _dot(name, values) == 0x00000000
    # A group with g above rC is truncated to 2^q directly: 0.5 * 0.5 * 2^4 = 4 at lanes 32..
    values[f"scale_a{32 // rec.block}"] = 127 + 4
    assert _dot(name, values) == 0x40800000


@pytest.mark.parametrize("name", MXF4_UE8M0)
def test_mxf4_subnormal_group_floor(name: str) -> None:
    """4 (model): C = 0; block 0: 4 * 4 * 2^-150 = 2^-146 (P = -146, S = -150, q = -185); the
    group at lanes 32..: -1 * 1 * 2^-180 = -32 units, scale raw -180 < S and 32 < 2^11 units.
    The sum 2^-146 - 2^-180 truncates to the subnormal 7 * 2^-149, so the floor recomputes
    without that group: 2^-146 = 8 * 2^-149 (7 without the floor)."""
    rec = parse(name)
    hi = 32 // rec.block
    values = {"a0": E2M1[4.0], "b0": E2M1[4.0], "a32": E2M1[-1.0], "b32": E2M1[1.0]}
    for i in range(rec.dense_k // rec.block):
        values[f"scale_a{i}"] = values[f"scale_b{i}"] = 127 - 75
    values[f"scale_a{hi}"] = values[f"scale_b{hi}"] = 127 - 90
    assert _dot(name, values) == 0x00000008
    # A group at scale raw S is never left out: -0.5 * 0.5 * 2^-150 = -2^-152.
    values[f"scale_a{hi}"] = values[f"scale_b{hi}"] = 127 - 75
    values["a32"], values["b32"] = 0x9, E2M1[0.5]
    assert _dot(name, values) == 0x00000007  # 2^-146 - 2^-152 = 7.875 * 2^-149, truncated


@pytest.mark.parametrize("name", MXF4_UE8M0)
def test_mxf4_floor_reads_the_converted_word(name: str) -> None:
    """Reading of 4's "if that result is a nonzero F32 subnormal": the converted word.
    1 * 1 * 2^-149 - 2^-180 truncates to +0, which is not a nonzero subnormal, so no group
    is left out and D = +0 (on the exact value the floor would give 2^-149). No reference
    line decides this reading."""
    rec = parse(name)
    hi = 32 // rec.block
    values = {"a0": E2M1[1.0], "b0": E2M1[1.0], "a32": E2M1[-1.0], "b32": E2M1[1.0]}
    for i in range(rec.dense_k // rec.block):
        values[f"scale_a{i}"], values[f"scale_b{i}"] = 127 - 75, 127 - 74
    values[f"scale_a{hi}"] = values[f"scale_b{hi}"] = 127 - 90
    assert _dot(name, values) == 0x00000000


@pytest.mark.parametrize("name", E2M1_FAMILIES)
def test_c_dominant_block_sums(name: str) -> None:
    """4: C != 0 and rC >= P: q = rC - 35 and each K=16 block is summed exactly before its
    truncation. Lanes 0..15 hold 16 products of 1/16 unit each: one by one (or in K=4
    groups) they truncate to 0, as a K=16 block they make 1 unit, which moves the negative
    C toward zero: D is the F32 just below |C| (RZ), not C."""
    rec = parse(name)
    if rec.scaling == "ue8m0":
        # C = -1 (rC = 0, q = -35); products 0.5 * 0.5 * 2^-37 = 2^-39 (P = -37).
        values = {"c": 0xBF800000, "scale_a0": 127 - 37}
        want = 0xBF7FFFFF
    else:
        # C = -2^19 (rC = 19, q = -16); products 0.5 * 0.5 * 2^-9 * 2^-9 = 2^-20 (P = -12).
        values = {"c": 0xC9000000, "scale_a0": 0x01, "scale_b0": 0x01}
        want = 0xC8FFFFFF
    for i in range(16):
        values[f"a{i}"] = values[f"b{i}"] = E2M1[0.5]
    assert _dot(name, values) == want
    values["a15"] = 0
    assert _dot(name, values) == values["c"]  # 15/16 of a unit truncates to 0
