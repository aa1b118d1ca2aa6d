"""Section 11.1 (fma.py): the FP64 and F32 FMA chains against the MMA-Sim vectors of
``ref/vectors/arch/`` (model outputs; NaN by class), against an exact-rational IEEE
fusedMultiplyAdd (``exact_ieee``; Python 3.11 has no ``math.fma``) on random and edge
words, and hand cases for the register's sticky half unit and IEEE's zero signs."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from tcspec.proofs.rulebook import layout, reference_dot
from tcspec.proofs.rulebook.fma import fma_word, place, register_bits, register_window
from tcspec.proofs.rulebook.names import FMA_CHAIN, parse
from tcspec.spec.scalar import SCALAR

from . import exact_ieee
from .arch_lines import (
    family_files,
    family_names,
    lines_of,
    mismatches,
    stratified,
)

OURS = family_names(FMA_CHAIN)
FILES = family_files(FMA_CHAIN)


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _fma(a: int, b: int, c: int, fmt: str) -> int:
    w = 32 if fmt == "f32" else 64
    return fma_word(SCALAR, SCALAR.const(a, w), SCALAR.const(b, w), SCALAR.const(c, w),
                    fmt).node


# ------------------------------------------------------------------ names and files


def test_names_and_files() -> None:
    """27 chains (11.1's table: 5 + 3 NVIDIA f64, 2 + 2 AMD f64, 15 AMD f32) and 27 files."""
    assert len(OURS) == 27
    assert sum(parse(n).a_format == "f64" for n in OURS) == 12
    assert len(FILES) == 27
    assert sorted(lines_of(p)[0] for p in FILES) == sorted(OURS)


@pytest.mark.parametrize("name", OURS)
def test_every_chain_on_zeros(name: str) -> None:
    rec = parse(name)
    assert rec.a_format == rec.b_format == rec.c_format == rec.d_format
    zeros = {n: SCALAR.const(0, w) for n, w in layout(name)}
    result = reference_dot(SCALAR, name, zeros)
    assert result.defined.node and result.word.node == 0


def test_register_widths() -> None:
    """11.1: W = p + 3 (51, 109); the signed register W + 3 bits (54, 112), under 1100."""
    assert (register_window("f32"), register_window("f64")) == (51, 109)
    assert (register_bits("f32"), register_bits("f64")) == (54, 112)


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


# ------------------------------------------------------------------ against exact IEEE


def _edge_word(rng: random.Random, ef: tuple[int, int]) -> int:
    e, f = ef
    sign = rng.getrandbits(1) << (e + f)
    kind = rng.randrange(8)
    if kind == 0:
        return rng.getrandbits(1 + e + f)
    if kind == 1:  # subnormal
        return sign | rng.randrange(1, 1 << f)
    if kind == 2:  # extreme exponent fields and fractions (zeros, Inf, NaN included)
        field = rng.choice([0, 1, 2, (1 << e) - 2, (1 << e) - 1, (1 << (e - 1)) - 1])
        frac = rng.choice([0, 1, (1 << f) - 1, rng.getrandbits(f)])
        return sign | (field << f) | frac
    if kind == 3:
        return sign
    mid = 1 << (e - 1)
    return sign | (rng.randrange(mid - 40, mid + 40) << f) | rng.getrandbits(f)


def _triples(fmt: str, count: int, seed: int):
    ef = exact_ieee.FORMATS[fmt]
    rng = random.Random(seed)
    for _ in range(count):
        a, b, c = (_edge_word(rng, ef) for _ in range(3))
        ka, _, va = exact_ieee.decode(a, ef)
        kb, _, vb = exact_ieee.decode(b, ef)
        if rng.random() < 0.4 and ka == kb == "fin" and va * vb != 0:
            # C near -a*b: cancellation, and products that C barely misses.
            near = -va * vb
            c = exact_ieee.encode(near, near < 0, ef) ^ rng.choice([0, 0, 1, 2, 3])
        yield a, b, c


def _check_triples(fmt: str, count: int, seed: int) -> None:
    ef = exact_ieee.FORMATS[fmt]
    bad = [(hex(a), hex(b), hex(c)) for a, b, c in _triples(fmt, count, seed)
           if _fma(a, b, c, fmt) != exact_ieee.fma(a, b, c, ef)]
    assert not bad, bad[:5]


@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_fma_against_exact_rounding(fmt: str) -> None:
    _check_triples(fmt, 2500, seed=11)


@pytest.mark.full
@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_fma_against_exact_rounding_full(fmt: str) -> None:
    _check_triples(fmt, 100_000, seed=12)


def test_chain_is_stepwise_fma() -> None:
    """11.1: acc = C, then acc = fma(A[k], B[k], acc) in k order (sm_90 K=16, f64)."""
    name = "sm_90-mma-m16n8k16-f64-f64-c64-d64"
    rng = random.Random(3)
    for _ in range(20):
        a = [_edge_word(rng, exact_ieee.F64) for _ in range(16)]
        b = [_edge_word(rng, exact_ieee.F64) for _ in range(16)]
        c = _edge_word(rng, exact_ieee.F64)
        values = {**{f"a{i}": x for i, x in enumerate(a)}, **{f"b{i}": x for i, x in enumerate(b)},
                  "c": c}
        words = {n: SCALAR.const(values[n], w) for n, w in layout(name)}
        got = reference_dot(SCALAR, name, words).word.node
        assert got == exact_ieee.fma_chain(a, b, c, exact_ieee.F64)


# ------------------------------------------------------------------ hand cases


def test_tie_lifted_by_a_c_far_below() -> None:
    """11.1: 24929 * 673 = 2^24 + 1 is a tie in f32; + 2^-100 (far below the register)
    lifts it to 2^24 + 2 through the half unit; with C = 0 it goes to the even 2^24, and
    with C = -2^-100 down to 2^24 too."""
    a, b = _f32(24929.0), _f32(673.0)
    assert _fma(a, b, _f32(2.0**-100), "f32") == _f32(2.0**24 + 2)
    assert _fma(a, b, 0, "f32") == _f32(2.0**24)
    assert _fma(a, b, _f32(-(2.0**-100)), "f32") == _f32(2.0**24)
    # f64: (2^26 + 1)(2^27 + 1) = 2^53 + 2^27 + 2^26 + 1, a tie (ulp 2): even, or lifted
    # or lowered by a C far below.
    x, y = _f64(2.0**26 + 1), _f64(2.0**27 + 1)
    base = 2.0**53 + 2.0**27 + 2.0**26
    assert _fma(x, y, 0, "f64") == _f64(base)
    assert _fma(x, y, _f64(2.0**-1000), "f64") == _f64(base + 2)
    assert _fma(x, y, _f64(-(2.0**-1000)), "f64") == _f64(base)


def test_product_far_below_c() -> None:
    """C anchors and the product loses bits: 1 + 2^-24 is a tie (to 1.0); a product of
    2^-24 + 2^-70 lifts it to 1 + 2^-23, one of 2^-24 - 2^-70 leaves 1.0."""
    one = _f32(1.0)
    assert _fma(_f32(2.0**-12), _f32(2.0**-12), one, "f32") == one
    up = _f32(2.0**-24 + 2.0**-47)  # times 1 + 2^-23
    assert _fma(up, _f32(1.0 + 2.0**-23), one, "f32") == _f32(1.0 + 2.0**-23)
    down = _f32(2.0**-24 - 2.0**-48)  # times 1 - 2^-24: 2^-24 - 2^-47 + 2^-72
    assert _fma(down, _f32(1.0 - 2.0**-24), one, "f32") == one


def test_zero_signs() -> None:
    """11.1 (IEEE): an exact zero sum is +0 unless the product and acc are both -0; a
    nonzero sum that rounds to zero keeps its sign."""
    neg0, pos0 = 0x80000000, 0
    one, mone = _f32(1.0), _f32(-1.0)
    assert _fma(neg0, one, neg0, "f32") == neg0
    assert _fma(pos0, mone, neg0, "f32") == neg0
    assert _fma(pos0, one, neg0, "f32") == pos0
    assert _fma(neg0, one, pos0, "f32") == pos0
    assert _fma(_f32(2.0), one, _f32(-2.0), "f32") == pos0
    assert _fma(_f32(-(2.0**-80)), _f32(2.0**-80), neg0, "f32") == neg0
    assert _fma(_f32(-(2.0**-80)), _f32(2.0**-80), pos0, "f32") == neg0
    assert _fma(_f32(2.0**-80), _f32(2.0**-80), neg0, "f32") == pos0
    assert _fma(_f64(-(2.0**-600)), _f64(2.0**-600), 0, "f64") == 1 << 63


def test_subnormals_kept_and_overflow() -> None:
    """Subnormal inputs and results are kept (CDNA2 too); overflow is the signed infinity."""
    name = "cdna2-mfma-32x32x1-f32-f32-c32-d32"
    words = {n: SCALAR.const(v, 32) for n, v in (("a0", 1), ("b0", _f32(1.0)), ("c", 1))}
    assert reference_dot(SCALAR, name, words).word.node == 2
    big = _f32(2.0**100)
    assert _fma(big, big, 0, "f32") == 0x7F800000
    assert _fma(big, _f32(-(2.0**100)), _f32(1.0), "f32") == 0xFF800000
    assert _fma(_f64(2.0**1000), _f64(2.0**24), 0, "f64") == 0x7FF0000000000000
    # 2^-150 is exactly half the smallest subnormal: a tie, to even (+0); a hair more is 1.
    assert _fma(_f32(2.0**-75), _f32(2.0**-75), 0, "f32") == 0
    assert _fma(_f32(2.0**-75), _f32(2.0**-75 * (1 + 2.0**-23)), 0, "f32") == 1


def test_specials() -> None:
    """NaN operand, Inf x 0 (even with an infinite C), opposite infinities: the canonical
    NaN; one infinity: that infinity."""
    nan32, inf32, ninf32 = 0x7FFFFFFF, 0x7F800000, 0xFF800000
    one = _f32(1.0)
    assert _fma(0x7FC00001, one, one, "f32") == nan32
    assert _fma(one, one, 0xFFC00000, "f32") == nan32
    assert _fma(inf32, 0, inf32, "f32") == nan32
    assert _fma(inf32, one, ninf32, "f32") == nan32
    assert _fma(inf32, _f32(-2.0), one, "f32") == ninf32
    assert _fma(one, one, ninf32, "f32") == ninf32
    assert _fma(_f32(2.0**100), _f32(2.0**100), ninf32, "f32") == ninf32
    assert _fma(0x7FF0000000000000, 0, 0, "f64") == 0x7FFFFFFFFFFFFFFF


def test_place_is_truncation_plus_half_unit() -> None:
    """``place``: left shifts exact; right shifts give 2 * trunc(x * 2^(s-1)) + sticky,
    the half unit of 11.1 in units one bit finer, checked on every 7-bit x."""
    for x in range(128):
        for s in range(-10, 4):
            got = place(SCALAR, SCALAR.const(x, 7), SCALAR.const(s, 16), 12).node
            if s >= 0:
                assert got == x << s
            else:
                coarse = x >> (1 - s)  # truncated to units twice the result's
                lost = x & ((1 << (1 - s)) - 1) != 0
                assert got == 2 * coarse + lost, (x, s)
