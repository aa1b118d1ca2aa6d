"""Section 11.4 (pairwise.py): CDNA1/CDNA2 f16 and bf16 pairwise trees. No vector exists
(11.4: the published model fails on these instructions), so the rule book is checked
against hand-computed cases and against an independent float reading of 11.4 in NumPy
float32 arithmetic (IEEE binary32 multiply and add, round to nearest even; used in this
test only), which is evidence of the transcription only."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from tcspec.proofs.rulebook import layout, reference_dot
from tcspec.proofs.rulebook.names import PAIRWISE_TREE, parse
from tcspec.proofs.rulebook.pairwise import group_size
from tcspec.spec.scalar import SCALAR

from .arch_lines import family_names, is_nan

OURS = family_names(PAIRWISE_TREE)
NAN32 = 0x7FFFFFFF


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _run(name: str, **values: int) -> int:
    words = {n: SCALAR.const(values.get(n, 0), w) for n, w in layout(name)}
    return reference_dot(SCALAR, name, words).word.node


def _run_lists(name: str, a: list[int], b: list[int], c: int) -> int:
    values = {**{f"a{i}": x for i, x in enumerate(a)}, **{f"b{i}": x for i, x in enumerate(b)},
              "c": c}
    return _run(name, **values)


# ------------------------------------------------------------------ the NumPy reading


def _word_to_f32(word: int) -> np.float32:
    return np.array([word], dtype=np.uint32).view(np.float32)[0]


def _f32_to_word(x: np.float32) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def _operand(word: int, fmt: str) -> np.float32:
    """An f16 (low 16 bits) or bf16 (bits 31..16) operand widened exactly to float32."""
    if fmt == "f16":
        return np.array([word & 0xFFFF], dtype=np.uint16).view(np.float16)[0].astype(np.float32)
    return _word_to_f32(word & 0xFFFF0000)


def _below_normal(word: int, fmt: str) -> bool:
    """Exponent field 0 (zeros and subnormals) of an f16, bf16 or f32 word."""
    if fmt == "f16":
        return (word >> 10) & 0x1F == 0
    return (word >> 23) & 0xFF == 0


def _flush(x: np.float32) -> np.float32:
    """A float32 below 2^-126 in magnitude becomes a zero of its sign."""
    if abs(x) < np.float32(2.0**-126):
        return np.copysign(np.float32(0.0), x)
    return x


def numpy_reading(name: str, a: list[int], b: list[int], c: int) -> int:
    """11.4 in float32 arithmetic: leaves fmaf(a, b, +0) (the float32 product, and +0 for an
    exact zero product), a halving tree of float32 adds per group, the running value C +
    group sums; CDNA2's flushes."""
    rec = parse(name)
    fmt = rec.a_format
    group = 4 if fmt == "f16" or rec.shape.endswith("_1k") else 2
    ftz = rec.arch == "cdna2"
    with np.errstate(all="ignore"):
        av = [np.float32(0.0) if ftz and _below_normal(w, fmt) else _operand(w, fmt) for w in a]
        bv = [np.float32(0.0) if ftz and _below_normal(w, fmt) else _operand(w, fmt) for w in b]
        acc = np.float32(0.0) if ftz and _below_normal(c, "f32") else _word_to_f32(c)

        def leaf(x: np.float32, y: np.float32) -> np.float32:
            p = np.float32(x * y)
            if x == 0 or y == 0:  # exact zero product: -0 + +0 = +0
                p = np.float32(p + np.float32(0.0))
            return _flush(p) if ftz else p

        def tree(xs: list[np.float32]) -> np.float32:
            if len(xs) == 1:
                return xs[0]
            half = len(xs) // 2
            node = np.float32(tree(xs[:half]) + tree(xs[half:]))
            return _flush(node) if ftz else node

        for lo in range(0, len(a), group):
            leaves = [leaf(x, y) for x, y in zip(av[lo:lo + group], bv[lo:lo + group])]
            acc = np.float32(acc + tree(leaves))
            if ftz:
                acc = _flush(acc)
    return _f32_to_word(acc)


# ------------------------------------------------------------------ inputs


def _operand_word(rng: random.Random, fmt: str) -> int:
    """Edge and random f16 / bf16 words (with junk in the ignored bits)."""
    if fmt == "f16":
        e_bits, f_bits, shift = 5, 10, 0
    else:
        e_bits, f_bits, shift = 8, 7, 16
    sign = rng.getrandbits(1) << (e_bits + f_bits)
    kind = rng.randrange(10)
    top = (1 << e_bits) - 1
    if kind == 0:
        field = rng.choice([0, 1, top - 1, top])
        raw = sign | (field << f_bits) | rng.choice([0, 1, (1 << f_bits) - 1])
    elif kind == 1:
        raw = sign | rng.randrange(1 << f_bits)  # zero or subnormal
    elif kind == 2:
        raw = rng.getrandbits(1 + e_bits + f_bits)
    elif kind in (3, 4) and fmt == "bf16":  # products near F32's underflow
        raw = sign | (rng.randrange(50, 80) << f_bits) | rng.getrandbits(f_bits)
    else:
        mid = 1 << (e_bits - 1)
        raw = sign | (rng.randrange(mid - 6, mid + 6) << f_bits) | rng.getrandbits(f_bits)
    junk = rng.getrandbits(16)
    return (raw << 16) | junk if shift else (junk << 16) | raw


def _c_word(rng: random.Random) -> int:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.getrandbits(32)
    if kind == 1:
        return (rng.getrandbits(1) << 31) | rng.randrange(1 << 23)  # zero or subnormal
    if kind == 2:
        return rng.choice([0, 0x80000000, 0x7F800000, 0xFF800000, 0x00800000, 0x80800000])
    return (rng.getrandbits(1) << 31) | (rng.randrange(120, 134) << 23) | rng.getrandbits(23)


def _cases(name: str, count: int, seed: int):
    rec = parse(name)
    rng = random.Random(seed)
    for _ in range(count):
        a = [_operand_word(rng, rec.a_format) for _ in range(rec.k)]
        b = [_operand_word(rng, rec.a_format) for _ in range(rec.k)]
        roll = rng.random()
        if roll < 0.2 and rec.a_format == "bf16":  # products around F32's underflow
            a = [(rng.getrandbits(1) << 31) | (rng.randrange(40, 76) << 23)
                 | (rng.getrandbits(7) << 16) for _ in range(rec.k)]
            b = [(rng.getrandbits(1) << 31) | (rng.randrange(40, 76) << 23)
                 | (rng.getrandbits(7) << 16) for _ in range(rec.k)]
            if rng.random() < 0.5:  # every product negative: leaves and nodes of -0
                a = [x | 0x80000000 for x in a]
                b = [x & 0x7FFFFFFF for x in b]
            c = rng.choice([0, 0x80000000, 1, 0x80000001, 0x00800000, 0x80800000])
            yield a, b, c
            continue
        if roll < 0.5:  # cancellation: B = 1, pairs of opposite A
            one = 0x3C00 if rec.a_format == "f16" else 0x3F800000
            b = [one] * rec.k
            for i in range(1, rec.k, 2):
                a[i] = a[i - 1] ^ (0x8000 if rec.a_format == "f16" else 0x80000000)
                a[i] ^= rng.choice([0, 0, 1, 2]) << (0 if rec.a_format == "f16" else 16)
        yield a, b, _c_word(rng)


def _check(name: str, count: int, seed: int) -> None:
    bad = []
    for a, b, c in _cases(name, count, seed):
        got = _run_lists(name, a, b, c)
        want = numpy_reading(name, a, b, c)
        if not (got == want or (is_nan(want, 32) and got == NAN32)):
            bad.append(([hex(x) for x in a], [hex(x) for x in b], hex(c), hex(got), hex(want)))
    assert not bad, bad[:3]


# ------------------------------------------------------------------ tests


def test_names() -> None:
    """25 datapaths (11.4's table: CDNA1 5 f16 + 5 bf16; CDNA2 the same and 5 bf16_1k)."""
    assert len(OURS) == 25
    assert sum(n.startswith("cdna2") for n in OURS) == 15
    groups = sorted(group_size(parse(n)) for n in OURS)
    assert groups == [2] * 10 + [4] * 15


@pytest.mark.parametrize("name", OURS)
def test_against_numpy_float32(name: str) -> None:
    _check(name, 24, seed=len(name))


@pytest.mark.full
@pytest.mark.parametrize("name", OURS)
def test_against_numpy_float32_full(name: str) -> None:
    _check(name, 1500, seed=len(name) + 1)


def test_tree_order() -> None:
    """((p0 + p1) + (p2 + p3)) with p = 2^24, 1, 1, 1 (f16 2^12 = 0x6C00): 2^24 + 1 ties to
    2^24, 1 + 1 = 2, so D = 2^24 + 2 (0x4B800001); in order it would be 2^24, exactly
    (2^24 + 3) 2^24 + 4."""
    for arch in ("cdna1", "cdna2"):
        name = f"{arch}-mfma-32x32x4-f16-f16-c32-d32"
        assert _run_lists(name, [0x6C00, 0x3C00, 0x3C00, 0x3C00], [0x6C00] + [0x3C00] * 3,
                          0) == 0x4B800001


def test_group_size_is_observable() -> None:
    """C = 1, p = 2^24, 0, 1, 1 (bf16). Groups of 4 (``_1k``): the root is 2^24 + 2 and
    1 + (2^24 + 2) ties to 2^24 + 4. Groups of 2: 1 + 2^24 ties to 2^24, then + 2."""
    a = [0x45800000, 0, 0x3F800000, 0x3F800000]
    b = [0x45800000, 0, 0x3F800000, 0x3F800000]
    one = _f32(1.0)
    assert _run_lists("cdna2-mfma-4x4x4_1k-bf16-bf16-c32-d32", a, b, one) == 0x4B800002
    assert _run_lists("cdna2-mfma-32x32x4-bf16-bf16-c32-d32", a, b, one) == 0x4B800001
    assert _run_lists("cdna1-mfma-32x32x4-bf16-bf16-c32-d32", a, b, one) == 0x4B800001


def test_cdna2_input_flush() -> None:
    """CDNA2: an f16 subnormal A (2^-24) and an F32 subnormal or -0 C become +0 first; CDNA1
    keeps them (and the leaf -0 x 1 is +0: fmaf(-0, 1, +0))."""
    one = 0x3C00
    assert _run("cdna1-mfma-32x32x4-f16-f16-c32-d32", a0=0x0001, b0=one) == _f32(2.0**-24)
    assert _run("cdna2-mfma-32x32x4-f16-f16-c32-d32", a0=0x0001, b0=one) == 0
    assert _run("cdna1-mfma-32x32x4-f16-f16-c32-d32", c=1) == 1
    assert _run("cdna2-mfma-32x32x4-f16-f16-c32-d32", c=1) == 0
    assert _run("cdna1-mfma-32x32x4-f16-f16-c32-d32", a0=0x8000, b0=one, c=0x80000000) == 0
    assert _run("cdna1-mfma-32x32x4-f16-f16-c32-d32", c=0x80000000) == 0


def test_cdna2_flush_keeps_the_sign() -> None:
    """bf16, groups of 2, C = 2^-126. Group 1: -2^-126 (1 + 2^-7) + 0 added to C is
    -2^-133, a subnormal (CDNA1: 0x80010000; CDNA2 flushes it to -0). Group 2: the leaves
    -2^-100 x 2^-100 round to -0 (nonzero, so the sign stays), their node is -0, and
    -2^-133 + -0 (CDNA1) or -0 + -0 (CDNA2) keeps the value."""
    a = [0x80810000, 0, 0x8D800000, 0x8D800000]
    b = [0x3F800000, 0, 0x0D800000, 0x0D800000]
    c = 0x00800000
    assert _run_lists("cdna1-mfma-32x32x4-bf16-bf16-c32-d32", a, b, c) == 0x80010000
    assert _run_lists("cdna2-mfma-32x32x4-bf16-bf16-c32-d32", a, b, c) == 0x80000000


def test_specials() -> None:
    """IEEE F32 specials, canonical NaN: Inf x 0, opposite infinities, NaN; a bf16 product
    beyond F32 overflows to the infinity of its sign."""
    name = "cdna1-mfma-32x32x4-bf16-bf16-c32-d32"
    inf, ninf = 0x7F800000, 0xFF800000
    one = _f32(1.0)
    assert _run(name, a0=inf, b0=0) == NAN32
    assert _run(name, a0=inf, b0=one, a1=ninf, b1=one) == NAN32
    assert _run(name, a0=inf, b0=one, c=ninf) == NAN32
    assert _run(name, a0=0x7FC10000, b0=one) == NAN32
    assert _run(name, a0=_f32(2.0**100), b0=_f32(-(2.0**100))) == ninf
    assert _run(name, a0=inf, b0=_f32(-2.0), c=one) == ninf
