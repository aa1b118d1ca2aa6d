"""Sections 11.2 and 11.3 (cdna3.py): CDNA3's round-down fused dot against the MMA-Sim
vectors of ``ref/vectors/arch/`` (model outputs; NaN by class), the hand-derived lines of
``ours__cdna3-rules.jsonl`` (each pins a reading of 11.2), the chain identities of
ARCHITECTURES.md section 0, and hand cases."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tcspec.proofs.rulebook import layout, reference_dot
from tcspec.proofs.rulebook.cdna3 import cdna3_dot, group_size
from tcspec.proofs.rulebook.names import CDNA3_RD, parse
from tcspec.spec.scalar import SCALAR

from .arch_lines import (
    OURS_CDNA3,
    agrees,
    arch_name,
    evaluate,
    family_files,
    family_names,
    lines_of,
    mismatches,
    stratified,
    words_of,
)
from .vectors import read_lines

OURS = family_names(CDNA3_RD)
FILES = family_files(CDNA3_RD)
RULE_LINES = read_lines(OURS_CDNA3)


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _run(name: str, **values: int) -> int:
    words = {n: SCALAR.const(values.get(n, 0), w) for n, w in layout(name)}
    return reference_dot(SCALAR, name, words).word.node


# ------------------------------------------------------------------ names and files


def test_names_and_files() -> None:
    """20 datapaths (11.2's table: 2 xf32, 5 f16, 5 bf16, 8 fnuz FP8), one file each."""
    assert len(OURS) == 20
    assert len(FILES) == 20
    assert sorted(lines_of(p)[0] for p in FILES) == sorted(OURS)


@pytest.mark.parametrize("name", OURS)
def test_group_sizes(name: str) -> None:
    """11.2's table: xf32 4; f16/bf16 min(8, K); FP8 16; K a multiple of the group."""
    rec = parse(name)
    group = group_size(rec.a_format, rec.b_format, rec.k)
    want = {"xf32": 4, "f16": min(8, rec.k), "bf16": min(8, rec.k)}.get(rec.a_format, 16)
    assert group == want and rec.k % group == 0
    assert _run(name) == 0  # C = +0, every product +0: +0


# ------------------------------------------------------------------ the vectors


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vector_sample(path: Path) -> None:
    """Three lines of every generation mode of every file (30 of 100)."""
    _, lines = lines_of(path)
    assert not mismatches(path, stratified(lines, 3, seed=len(path.name)))


@pytest.mark.full
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_vector_file(path: Path) -> None:
    _, lines = lines_of(path)
    assert not mismatches(path, lines)


@pytest.mark.parametrize("line", RULE_LINES, ids=lambda line: line["name"])
def test_rule_lines(line: dict) -> None:
    """Every hand-derived line of ``ours__cdna3-rules.jsonl`` (11.2's pinned readings)."""
    name = arch_name(line)
    got = evaluate(name, line)
    assert agrees(name, line, got), (line["name"], hex(got), line["expected_hex"])


@pytest.mark.parametrize("line", [x for x in RULE_LINES
                                  if any((alt.get("params") or {}).get("group")
                                         for alt in x["alternatives"])],
                         ids=lambda line: line["name"])
def test_rule_lines_per_instruction_alternative(line: dict) -> None:
    """The lines that pin "per group, not per instruction": one group of all K gives the
    alternative word the line records."""
    name = arch_name(line)
    rec = parse(name)
    words = words_of(name, line)
    alt = next(a for a in line["alternatives"] if (a.get("params") or {}).get("group"))
    word = cdna3_dot(SCALAR, rec.a_format, rec.b_format,
                     [words[f"a{i}"] for i in range(rec.k)],
                     [words[f"b{i}"] for i in range(rec.k)], words["c"],
                     group=alt["params"]["group"]).node
    assert word == alt["expected"] and word != line["expected"]


CHAINS = [  # ARCHITECTURES.md section 0: the longer K is two chained shorter instructions
    ("cdna3-mfma-16x16x16-f16-f16-c32-d32", "cdna3-mfma-32x32x8-f16-f16-c32-d32"),
    ("cdna3-mfma-16x16x16-bf16-bf16-c32-d32", "cdna3-mfma-32x32x8-bf16-bf16-c32-d32"),
    ("cdna3-mfma-16x16x8-xf32-xf32-c32-d32", "cdna3-mfma-32x32x4-xf32-xf32-c32-d32"),
    ("cdna3-mfma-16x16x32-e4m3fnuz-e5m2fnuz-c32-d32",
     "cdna3-mfma-32x32x16-e4m3fnuz-e5m2fnuz-c32-d32"),
]


@pytest.mark.parametrize(("long", "short"), CHAINS)
def test_chain_identities(long: str, short: str) -> None:
    """On every line of the longer instruction's file, D equals the shorter instruction run
    on the first half with C, then on the second half with that D as C."""
    path = next(p for p in FILES if lines_of(p)[0] == long)
    _, lines = lines_of(path)
    half = parse(short).k
    for line in lines:
        first = _run(short, **{f"a{i}": line["a"][i] for i in range(half)},
                     **{f"b{i}": line["b"][i] for i in range(half)}, c=line["c"])
        second = _run(short, **{f"a{i}": line["a"][half + i] for i in range(half)},
                      **{f"b{i}": line["b"][half + i] for i in range(half)}, c=first)
        assert evaluate(long, line) == second, line["case_index"]


# ------------------------------------------------------------------ hand cases

F16_K4 = "cdna3-mfma-32x32x4_2b-f16-f16-c32-d32"
FP8_K16 = "cdna3-mfma-32x32x16-e4m3fnuz-e4m3fnuz-c32-d32"
XF32_K4 = "cdna3-mfma-32x32x4-xf32-xf32-c32-d32"
BF16_K4 = "cdna3-mfma-32x32x4_2b-bf16-bf16-c32-d32"


def test_c_is_floored_not_truncated() -> None:
    """11.2.4: 1 * 1 + C with C = -2^-60: M = 0, C floored to units of 2^-24 is -1 unit, so
    D = 1 - 2^-24 (0x3F7FFFFF), where truncation would give 1.0."""
    assert _run(F16_K4, a0=0x3C00, b0=0x3C00, c=_f32(-(2.0**-60))) == 0x3F7FFFFF


def test_fp8_c_drop_threshold() -> None:
    """11.2.4 FP8: with M = 0, C = -2^-25 (e_C = M - 25) is kept and floored to -1 unit of
    2^-24; C = -2^-26 (e_C < M - 25) is dropped. e4m3fnuz 1.0 is 0x40 (bias 8)."""
    assert _run(FP8_K16, a0=0x40, b0=0x40, c=_f32(-(2.0**-25))) == 0x3F7FFFFF
    assert _run(FP8_K16, a0=0x40, b0=0x40, c=_f32(-(2.0**-26))) == _f32(1.0)
    # Not FP8: f16 floors the same C to -1 unit.
    assert _run(F16_K4, a0=0x3C00, b0=0x3C00, c=_f32(-(2.0**-26))) == 0x3F7FFFFF


def test_zero_results() -> None:
    """11.2.5: an exact zero sum is +0 even from -0 terms (not IEEE's -0 + -0); a negative
    sum that rounds to zero is -0."""
    assert _run(BF16_K4, a0=0x80000000, b0=_f32(1.0), c=0x80000000) == 0
    assert _run(BF16_K4, a0=0x80010000, b0=0x00010000) == 0x80000000


def test_specials_before_the_huge_product_rule() -> None:
    """11.2.1: 2.2's specials come first: an infinite product (or C) beats a huge finite
    product of the other sign (11.2: "gives that infinity, not NaN"); huge products alone
    give their infinity, both signs NaN; just below 2^128 is an ordinary product."""
    inf, two64, mtwo64 = 0x7F800000, 0x5F800000, 0xDF800000
    one = _f32(1.0)
    assert _run(XF32_K4, a0=inf, b0=one, a1=mtwo64, b1=two64) == inf
    assert _run(XF32_K4, a0=mtwo64, b0=two64, c=inf) == inf
    assert _run(XF32_K4, a0=mtwo64, b0=two64, c=_f32(2.0**127)) == 0xFF800000
    assert _run(XF32_K4, a0=two64, b0=two64, a1=mtwo64, b1=two64) == 0x7FFFFFFF
    assert _run(XF32_K4, a0=0x7FC00000, b0=one, a1=two64, b1=two64) == 0x7FFFFFFF
    assert _run(XF32_K4, a0=inf, b0=0) == 0x7FFFFFFF
    below = 0x5F7FE000  # 2^63 * (2 - 2^-10), an xf32 word
    assert _run(XF32_K4, a0=two64, b0=below) == 0x7F7FE000
    # bf16 too: 2^64 * 2^64 in bf16 words.
    assert _run(BF16_K4, a0=two64, b0=two64) == inf


def test_zero_factor_exponent_sets_the_window() -> None:
    """11.2.2-3: a zero factor has exponent -126 in every format, and zeros count in P.
    bf16: 2^-24 * 2^-24 alone gives 2^-48; next to 0 x 2^127 (exponent -126 + 127 = 1)
    P = 1 and 2^-48 truncates to 0 in units of 2^-23: +0."""
    tiny = _f32(2.0**-24)
    assert _run(BF16_K4, a0=tiny, b0=tiny) == _f32(2.0**-48)
    assert _run(BF16_K4, a0=tiny, b0=tiny, a1=0, b1=_f32(2.0**127)) == 0


def test_fp8_parity_windows() -> None:
    """11.2.3 FP8: products at even and odd positions are different windows. 2^14 (0x78 x
    0x78, e4m3fnuz bias 8) and -2^-20 (0x81 x 0x01: -2^-10 x 2^-10, subnormal exponents
    -7): at an odd position -2^-20 is exact in its own window and floored to units of
    2^(14 - 24) it is -2^-10, so D = 2^14 - 2^-10 (0x467FFFFF); at an even position it
    shares 2^14's window and truncates toward zero to 0: D = 2^14."""
    assert _run(FP8_K16, a0=0x78, b0=0x78, a1=0x81, b1=0x01) == 0x467FFFFF
    assert _run(FP8_K16, a0=0x78, b0=0x78, a2=0x81, b2=0x01) == _f32(2.0**14)
