"""CDNA1/CDNA2 pairwise trees (SEMANTICS.md 11.4, unvalidated: no model vector exists).

The spec is held to an independent reading of the same rules in NumPy float32 arithmetic
(IEEE binary32, round to nearest even, subnormals kept on this host), on raw and
edge-heavy words; NaN by class.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tcspec.spec.catalog import ARCH_CATALOG, CATALOG
from tcspec.spec.formats import FORMATS
from tcspec.spec.pairwise import pairwise_dot, pairwise_params
from tcspec.spec.scalar import SCALAR

TREES = [n for n, d in ARCH_CATALOG.items() if d.descriptor.algorithm == "pairwise-tree"]


def _f32(words: list[int]) -> np.ndarray:
    return np.array(words, dtype=np.uint32).view(np.float32)


def _operand(fmt: str, word: int) -> np.float32:
    if fmt == "f16":
        return np.float32(np.array([word & 0xFFFF], dtype=np.uint16).view(np.float16)[0])
    return _f32([word & 0xFFFF0000])[0]


def _flush(x: np.float32, ftz: bool) -> np.float32:
    if ftz and not np.isnan(x) and abs(x) < np.float32(2.0 ** -126):
        return np.float32(x * np.float32(0.0))
    return x


def _reference(fmt: str, a: list[int], b: list[int], c: int, group: int, ftz: bool) -> int:
    tiny = np.float32(2.0 ** (-14 if fmt == "f16" else -126))
    xs = [_operand(fmt, w) for w in a]
    ys = [_operand(fmt, w) for w in b]
    acc = _f32([c])[0]
    if ftz:
        xs = [np.float32(0.0) if abs(x) < tiny else x for x in xs]
        ys = [np.float32(0.0) if abs(y) < tiny else y for y in ys]
        acc = np.float32(0.0) if abs(acc) < np.float32(2.0 ** -126) else acc

    def tree(p, q):
        if len(p) == 1:
            return _flush(np.float32(p[0] * q[0]) + np.float32(0.0), ftz)
        h = len(p) // 2
        return _flush(np.float32(tree(p[:h], q[:h]) + tree(p[h:], q[h:])), ftz)

    with np.errstate(all="ignore"):
        for s in range(0, len(a), group):
            acc = _flush(np.float32(acc + tree(xs[s:s + group], ys[s:s + group])), ftz)
    return int(np.array([acc], dtype=np.float32).view(np.uint32)[0])


def _is_nan(word: int) -> bool:
    return (word >> 23) & 0xFF == 0xFF and word & 0x7FFFFF != 0


def _words(rng: np.random.Generator, fmt: str, n: int) -> list[int]:
    bits = 16 if fmt == "f16" else 32
    raw = rng.integers(0, 1 << bits, n, dtype=np.uint64)
    pool = ([0, 0x8000, 1, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0x0400, 0x03FF] if fmt == "f16"
            else [0, 0x80000000, 0x10000, 0x80010000, 0x3F800000, 0x7F7F0000, 0x00800000,
                  0x3F810000, 0xBF800000])
    edge = rng.choice(pool, n)
    pick = rng.random(n) < 0.5
    return [int(e) if p else int(r) for e, r, p in zip(edge, raw, pick)]


@pytest.mark.parametrize("name", TREES)
def test_tree_matches_a_float32_reading_of_the_rules(name):
    desc = CATALOG[name].descriptor
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fmt = FORMATS[desc.a_format]
    for _ in range(40):
        a, b = _words(rng, desc.a_format, desc.k), _words(rng, desc.a_format, desc.k)
        c = _words(rng, "f32", 1)[0] if rng.random() < 0.5 else int(rng.integers(0, 1 << 32))
        got = SCALAR.value(pairwise_dot(SCALAR, fmt, [SCALAR.const(w, 32) for w in a],
                                        [SCALAR.const(w, 32) for w in b],
                                        SCALAR.const(c, 32), desc.params))
        want = _reference(desc.a_format, a, b, c, desc.params.group, desc.params.ftz)
        assert got == want or (_is_nan(got) and _is_nan(want)), (name, a, b, hex(c),
                                                                 hex(got), hex(want))


def test_tree_shapes_follow_the_table():
    assert len(TREES) == 25
    assert pairwise_params("cdna1", "f16", 16, False).steps == 4
    assert pairwise_params("cdna2", "bf16", 16, True).group == 4
    assert pairwise_params("cdna2", "bf16", 8, False).group == 2
    assert pairwise_params("cdna2", "f16", 4, False).ftz


def test_cdna2_flushes_and_cdna1_keeps_subnormals():
    """A subnormal f16 product survives on CDNA1 and is flushed to +0 on CDNA2."""
    one, sub = 0x3C00, 0x0001
    f16 = FORMATS["f16"]
    words = [SCALAR.const(w, 32) for w in (sub, 0, 0, 0)]
    ones = [SCALAR.const(w, 32) for w in (one, 0, 0, 0)]
    keep = pairwise_dot(SCALAR, f16, words, ones, SCALAR.const(0, 32),
                        pairwise_params("cdna1", "f16", 4, False))
    flush = pairwise_dot(SCALAR, f16, words, ones, SCALAR.const(0, 32),
                         pairwise_params("cdna2", "f16", 4, False))
    assert SCALAR.value(keep) == 0x33800000 and SCALAR.value(flush) == 0
