"""Accumulation patterns (tcspec/accumulation.py) and the integer F32 arithmetic they use:
f32_add / f32_mul against NumPy float32 on random words (subnormals, infinities, NaN,
cancellation), and each pattern replayed through ``mma_dot`` step by step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcspec import Chain, Promote, SplitK, gemm, mma_dot
from tcspec.accumulation import accumulation_of, segments
from tcspec.rounding import F32_NAN, f16_to_f32, f32_add, f32_mul

EDGE_WORDS = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,
              0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
              0x3F800000, 0xBF800000, 0x33800000, 0x4B800000, 0x34000000]


def _words(rng, n):
    raw = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near = (raw & np.uint32(0x807FFFFF)) | (rng.integers(0, 40, n).astype(np.uint32) << 23)
    pick = rng.integers(0, 3, n)
    edge = np.array(EDGE_WORDS, dtype=np.uint32)[rng.integers(0, len(EDGE_WORDS), n)]
    return np.choose(pick, [raw, near, edge]).astype(np.uint32)


def _agree(got, want):
    got_nan = np.isnan(got.view(np.float32))
    want_nan = np.isnan(want.view(np.float32))
    assert (got_nan == want_nan).all()
    assert (got[got_nan] == F32_NAN).all()
    assert got[~want_nan].tolist() == want[~want_nan].tolist()


@pytest.mark.parametrize("seed", range(4))
def test_f32_add_and_mul_match_numpy_float32(seed):
    rng = np.random.default_rng(seed)
    n = 100_000
    x, y = _words(rng, n), _words(rng, n)
    close = rng.random(n) < 0.3
    y = np.where(close, (x ^ np.uint32(0x80000000)) + rng.integers(-4, 5, n).astype(np.uint32),
                 y).astype(np.uint32)
    with np.errstate(all="ignore"):
        fx, fy = x.view(np.float32), y.view(np.float32)
        _agree(f32_add(x, y), (fx + fy).view(np.uint32))
        _agree(f32_mul(x, y), (fx * fy).view(np.uint32))


@settings(max_examples=500, deadline=None, database=None)
@given(st.floats(width=32), st.floats(width=32))
def test_f32_add_matches_numpy_on_hypothesis_floats(x, y):
    wx = np.array([x], dtype=np.float32).view(np.uint32)
    wy = np.array([y], dtype=np.float32).view(np.uint32)
    with np.errstate(all="ignore"):
        _agree(f32_add(wx, wy), (wx.view(np.float32) + wy.view(np.float32)).view(np.uint32))
        _agree(f32_mul(wx, wy), (wx.view(np.float32) * wy.view(np.float32)).view(np.uint32))


def test_f16_widening_is_exact():
    half = np.arange(1 << 16, dtype=np.uint32)
    _agree(f16_to_f32(half), half.astype(np.uint16).view(np.float16).astype(np.float32)
           .view(np.uint32))


def test_pattern_names_and_segments():
    assert accumulation_of(None) == Chain() and accumulation_of("split-k:3") == SplitK(3)
    assert accumulation_of("promote:4") == Promote(4) and str(Promote(4)) == "promote:4"
    for bad in ("split-k", "promote:0", "fast", "chain:2", "split-k:x"):
        with pytest.raises(ValueError, match=r"accumulation|positive"):
            accumulation_of(bad)
    assert segments(SplitK(3), [4, 3, 2, 1, 0]) == [[4, 3], [2, 1], [0]]
    assert segments(Promote(2), [0, 1, 2, 3, 4]) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="at least 3 K steps"):
        segments(SplitK(3), [0, 1])


def _example():
    """tf32, K = 32 (four instructions of K = 8): the three patterns give three D words."""
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((1, 32)) * np.exp2(rng.integers(-12, 12, (1, 32))))
    a = a.astype(np.float32).view(np.uint32)
    b = rng.standard_normal((32, 1)).astype(np.float32).view(np.uint32)
    return a, b


def _step(a, b, c, s):
    return mma_dot(a[0, 8 * s:8 * s + 8].tolist(), b[8 * s:8 * s + 8, 0].tolist(), c,
                   a_format="tf32")


def test_three_patterns_differ_and_replay_through_mma_dot():
    a, b = _example()
    chain = gemm(a, b, a_format="tf32")
    split = gemm(a, b, a_format="tf32", accumulation="split-k:2")
    promote = gemm(a, b, a_format="tf32", accumulation=Promote(1))
    assert len({int(chain[0, 0]), int(split[0, 0]), int(promote[0, 0])}) == 3
    word = 0
    for s in range(4):
        word = _step(a, b, word, s)
    assert int(chain[0, 0]) == word
    left, right = _step(a, b, _step(a, b, 0, 0), 1), _step(a, b, _step(a, b, 0, 2), 3)
    assert int(split[0, 0]) == int(f32_add(np.uint32(left), np.uint32(right)))
    total = np.uint32(0)
    for s in range(4):
        total = f32_add(total, np.uint32(_step(a, b, 0, s)))
    assert int(promote[0, 0]) == int(total)


def test_patterns_with_c_k_order_f16_and_integers():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, (2, 128), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 256, (128, 3), dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 1 << 16, (2, 3), dtype=np.uint64).astype(np.uint32)
    fields = {"a_format": "e4m3", "d_type": "f16"}
    order = [3, 1, 0, 2]
    got = gemm(a, b, c, k_order=order, accumulation="split-k:2", **fields)

    def chain(steps, start):
        d = start
        for s in steps:
            d = gemm(a[:, 32 * s:32 * s + 32], b[32 * s:32 * s + 32], d, **fields)
        return d if d is not None else np.zeros((2, 3), np.uint32)

    first = chain([3, 1], c)
    second = gemm(a[:, 0:32], b[0:32], None, **fields)
    second = gemm(a[:, 64:96], b[64:96], second, **fields)
    assert got.tolist() == f32_add(f16_to_f32(first), f16_to_f32(second)).tolist()
    promoted = gemm(a, b, c, accumulation="promote:3", **fields)
    partial = [gemm(a[:, :96], b[:96], None, **fields), gemm(a[:, 96:], b[96:], None, **fields)]
    want = f32_add(f32_add(f16_to_f32(c), f16_to_f32(partial[0])), f16_to_f32(partial[1]))
    assert promoted.tolist() == want.tolist()
    with pytest.raises(ValueError, match="integer"):
        gemm(a, b, a_format="u8", b_format="s8", accumulation="promote:2")
