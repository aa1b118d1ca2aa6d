"""The public API: mma_dot, mma and evaluate (tcspec/api.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tcspec import evaluate, mma, mma_dot

ONE, TWO = 0x3F800000, 0x40000000


def test_mma_dot_basic_and_defaults():
    assert mma_dot([ONE] * 8, [TWO] * 8, a_format="tf32") == 0x41800000
    assert mma_dot([ONE] * 8, [TWO] * 8, ONE, a_format="tf32", b_format="tf32",
                   d_type="f32") == 0x41880000
    assert mma_dot([0x38] * 32, [0x38] * 32, a_format="fp8") == 0x42000000


@pytest.mark.parametrize("call, message", [
    (lambda: mma_dot([ONE] * 7, [ONE] * 8, a_format="tf32"), "K=8 A words, got 7"),
    (lambda: mma_dot([ONE] * 8, [ONE] * 9, a_format="tf32"), "K=8 B words, got 9"),
    (lambda: mma_dot([1 << 32] + [0] * 7, [0] * 8, a_format="tf32"), r"A\[0\] = 4294967296"),
    (lambda: mma_dot([-1] + [0] * 7, [0] * 8, a_format="tf32"), "out of range"),
    (lambda: mma_dot([0] * 8, [0] * 8, 1.0, a_format="tf32"), "C must be an int"),
    (lambda: mma_dot([True] + [0] * 7, [0] * 8, a_format="tf32"), "int raw word"),
    (lambda: mma_dot("abc", [0] * 8, a_format="tf32"), "sequence of raw words"),
    (lambda: mma_dot([0] * 8, [0] * 8, a_format="fp64"), "unknown a_format"),
    (lambda: mma_dot([0] * 8, [0] * 8, a_format="tf32", scale_a=[0x7F]), "not block-scaled"),
])
def test_mma_dot_refuses_bad_input_with_a_named_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_mma_matches_mma_dot_per_element():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 32, size=(3, 16), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, size=(16, 4), dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 1 << 32, size=(3, 4), dtype=np.uint64).astype(np.uint32)
    d = mma(a, b, c, a_format="bf16")
    assert isinstance(d, np.ndarray) and d.shape == (3, 4) and d.dtype == np.uint32
    for i in range(3):
        for j in range(4):
            want = mma_dot(a[i].tolist(), b[:, j].tolist(), int(c[i, j]), a_format="bf16")
            assert d[i, j] == want
    lists = mma(a.tolist(), b.tolist(), c.tolist(), a_format="bf16")
    assert lists == d.tolist()
    assert mma([[ONE] * 8], [[ONE]] * 8, a_format="tf32") == [[0x41000000]]


def test_mma_shape_errors():
    with pytest.raises(ValueError, match="inner dimensions differ"):
        mma([[0] * 8], [[0]] * 7, a_format="tf32")
    with pytest.raises(ValueError, match="takes K=8"):
        mma([[0] * 4], [[0]] * 4, a_format="tf32")
    with pytest.raises(ValueError, match="shape"):
        mma([[0] * 8], [[0]] * 8, [[0, 0]], a_format="tf32")


def test_evaluate_by_name_and_by_descriptor():
    a = np.full((5, 8), ONE, dtype=np.uint32)
    b = np.full((5, 8), TWO, dtype=np.uint32)
    c = np.array([0, ONE, TWO, 0x7F800000, 0x7FC00000], dtype=np.uint32)
    got = evaluate("dense-tf32", a, b, c)
    assert got.dtype == np.uint32
    assert got.tolist() == [mma_dot(a[i].tolist(), b[i].tolist(), int(c[i]), a_format="tf32")
                            for i in range(5)]
    assert evaluate({"a_format": "tf32"}, a, b, c).tolist() == got.tolist()
    assert evaluate("tf32", a, b, 0).tolist()[0] == 0x41800000


def test_evaluate_errors():
    a = np.zeros((2, 8), dtype=np.uint32)
    with pytest.raises(ValueError, match="takes K=16"):
        evaluate("dense-bf16", a, a, np.zeros(2, dtype=np.uint32))
    with pytest.raises(ValueError, match="C must have shape"):
        evaluate("dense-tf32", a, a, np.zeros(3, dtype=np.uint32))
    with pytest.raises(ValueError, match="integer raw words"):
        evaluate("dense-tf32", a.astype(float), a, np.zeros(2, dtype=np.uint32))
    with pytest.raises(ValueError, match="outside"):
        evaluate("dense-tf32", a.astype(np.int64) - 1, a, np.zeros(2, dtype=np.uint32))
    with pytest.raises(ValueError, match="unknown datapath"):
        evaluate("dense-nope", a, a, np.zeros(2, dtype=np.uint32))
    with pytest.raises(ValueError, match="is dense"):
        evaluate("dense-tf32", a, a, np.zeros(2, dtype=np.uint32), sparse_metadata=0x4)
