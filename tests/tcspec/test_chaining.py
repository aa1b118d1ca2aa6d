"""Whole-GEMM K chaining (tcspec/chaining.py): ``gemm`` is a chain of instructions, D -> next C."""

from __future__ import annotations

import numpy as np
import pytest

from tcspec import gemm, mma, mma_dot
from tcspec.ref.oracle import exact_model

ONE = 0x3F800000
TWO_30, MINUS_TWO_30 = 0x4E800000, 0xCE800000


def _random(shape, bits=32, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 1 << bits, size=shape, dtype=np.uint64).astype(np.uint32)


def _scalar_chain(a, b, c, k, order, fields, scale_a=None, scale_b=None, metadata=None,
                  scales_per_step=0):
    """Per output element: mma_dot (the compiled scalar lowering) once per K block."""
    m, n = a.shape[0], b.shape[1]
    d = np.array(c, dtype=np.uint64)
    for i in range(m):
        for j in range(n):
            word = int(d[i, j])
            for step in order:
                lanes = slice(step * k, (step + 1) * k)
                scales = slice(step * scales_per_step, (step + 1) * scales_per_step)
                word = mma_dot(a[i, lanes].tolist(), b[lanes, j].tolist(), word,
                               scale_a=None if scale_a is None else scale_a[i, scales].tolist(),
                               scale_b=None if scale_b is None else scale_b[j, scales].tolist(),
                               sparse_metadata=(None if metadata is None
                                                else metadata[i, step].tolist()),
                               **fields)
            d[i, j] = word
    return d.astype(np.uint32)


@pytest.mark.parametrize("order", [None, [2, 0, 1]])
def test_chain_equals_repeated_instructions(order):
    a, b, c = _random((3, 48), seed=1), _random((48, 2), seed=2), _random((3, 2), seed=3)
    got = gemm(a, b, c, k_order=order, a_format="bf16")
    assert got.dtype == np.uint32 and got.shape == (3, 2)
    want = c
    for step in order or [0, 1, 2]:
        want = mma(a[:, 16 * step:16 * step + 16], b[16 * step:16 * step + 16], want,
                   a_format="bf16")
    assert got.tolist() == want.tolist()
    assert got.tolist() == _scalar_chain(a, b, c, 16, order or [0, 1, 2],
                                         {"a_format": "bf16"}).tolist()
    assert gemm(a.tolist(), b.tolist(), c.tolist(), k_order=order, a_format="bf16") == \
        got.tolist()


def test_block_scaled_sparse_and_f16_chains_match_the_scalar_lowering():
    a, b = _random((2, 128), 4, 4), _random((128, 2), 4, 5)
    scale_a = np.random.default_rng(6).integers(0x30, 0x40, (2, 8)).astype(np.uint8)
    scale_b = np.random.default_rng(7).integers(0x30, 0x40, (2, 8)).astype(np.uint8)
    nvfp4 = {"a_format": "e2m1", "scaling": "ue4m3"}
    got = gemm(a, b, None, scale_a=scale_a, scale_b=scale_b, k_order=[1, 0], **nvfp4)
    zeros = np.zeros((2, 2), dtype=np.uint32)
    assert got.tolist() == _scalar_chain(a, b, zeros, 64, [1, 0], nvfp4, scale_a, scale_b,
                                         scales_per_step=4).tolist()

    a, b, c = _random((2, 32), seed=8), _random((32, 3), seed=9), _random((2, 3), seed=10)
    metadata = np.array([0x4E4E4E4E, 0xE4E4E4E4, 0x44444444, 0xEEEE4E4E], dtype=np.uint32)
    metadata = metadata.reshape(2, 2, 1)
    got = gemm(a, b, c, sparse_metadata=metadata, a_format="tf32")
    assert got.tolist() == _scalar_chain(a, b, c, 16, [0, 1], {"a_format": "tf32"},
                                         metadata=metadata).tolist()

    mixed = {"a_format": "e2m1", "b_format": "e4m3", "d_type": "f16"}
    a, b, c = _random((2, 64), 4, 11), _random((64, 2), 8, 12), _random((2, 2), 16, 13)
    got = gemm(a, b, c, **mixed)
    assert int(got.max()) < 1 << 16
    assert got.tolist() == _scalar_chain(a, b, c, 32, [0, 1], mixed).tolist()


def test_integer_wrap_chain_is_the_exact_sum_modulo_2_32():
    a, b, c = _random((3, 96), 8, 14), _random((96, 2), 8, 15), _random((3, 2), seed=16)
    got = gemm(a, b, c, a_format="s8", b_format="u8", k_order=[2, 1, 0])
    signed_a = a.astype(np.int64) - 256 * (a >= 128)
    exact = (c.astype(np.int64) + signed_a @ b.astype(np.int64)) % (1 << 32)
    assert got.tolist() == exact.tolist()


def test_tf32_chain_truncates_at_each_step_and_depends_on_k_order():
    """Block 0 holds 1.0; block 1 holds 2^30 and -2^30, which cancel exactly."""
    a = np.zeros((1, 16), dtype=np.uint32)
    a[0, 0], a[0, 8], a[0, 9] = ONE, TWO_30, MINUS_TWO_30
    b = np.full((16, 1), ONE, dtype=np.uint32)
    exact = exact_model(a[0].tolist(), b[:, 0].tolist(), 0, a_format="tf32", rounding="rz")
    assert exact == ONE
    ascending = gemm(a, b, a_format="tf32")
    assert ascending.tolist() == [[0]]
    assert ascending[0, 0] != exact
    assert gemm(a, b, a_format="tf32", k_order=[1, 0]).tolist() == [[ONE]]


@pytest.mark.parametrize("call, message", [
    (lambda: gemm([[0] * 12], [[0]] * 12, a_format="tf32"), "positive multiple of 8, got 12"),
    (lambda: gemm([[0] * 16], [[0]] * 16, a_format="tf32", k_order=[0, 0]), "exactly once"),
    (lambda: gemm([[0] * 128], [[0]] * 128, a_format="e2m1", scaling="ue4m3",
                  scale_a=[[0x38] * 4]), r"scale_a must have shape \(1, 8\)"),
    (lambda: gemm([[0] * 32], [[0]] * 32, a_format="tf32", sparse_metadata=[[0x4E]]),
     r"shape \(1, 2, 1\)"),
    (lambda: gemm([[0] * 16], [[0]] * 16, a_format="tf32", scale_a=[[1, 1]]),
     "not block-scaled"),
])
def test_gemm_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_mma_with_a_longer_k_points_at_gemm():
    with pytest.raises(ValueError, match=r"takes K=8.*ref\.gemm"):
        mma([[0] * 16], [[0]] * 16, a_format="tf32")
