"""The strided, chained kernel entry point (``tcspec_kernel_gemm``) against the compiled scalar
lowering: row-major rows (random and edge cases, partial blocks, 1/2/4/8-byte elements,
broadcast operands, threads) and [M, K] x [K, N] chains in any K order, scales and metadata
included; ``run_rows``/``run_chain`` on their NumPy fallback too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcspec.conformance import random_cases
from tcspec.ref import kernels, run
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.kernels import Operand
from tcspec.spec.catalog import CATALOG, input_layout
from tcspec.strategies import dot_words
from tests.lowerings import SPECIFIED
from tests.ref.test_kernels import _private_cache  # noqa: F401 - the module's kernel cache

pytestmark = pytest.mark.skipif(kernels.compiler() is None, reason="no C compiler")

DEFAULT = ("dense-tf32", "dense-nvfp4", "sparse-tf32", "mixed-e2m1-e4m3-f16", "i8-s8-s8-wrap")


def _rows_agree(name, cases, dtype=np.uint32, jobs=1):
    desc = CATALOG[name].descriptor
    kernel = kernels.kernel_for(desc)
    matrix = np.ascontiguousarray(np.array(cases, dtype=np.uint64).reshape(len(cases), -1),
                                  dtype=dtype)
    groups = run.layout_groups(desc, matrix)
    groups[3:5] = [None if g is None else g.astype(np.uint8) for g in groups[3:5]]
    ops = run.row_operands(groups)
    out = np.full((1, len(cases)), 0xDEADBEEF, dtype=np.uint32)
    kernel.gemm(ops, out, [0], jobs)
    dot = compiled_dot(desc)
    assert out[0].tolist() == [dot(*words) for words in cases], name


@pytest.mark.parametrize("name", DEFAULT)
def test_rows_agree_with_the_compiled_lowering(name):
    desc = CATALOG[name].descriptor
    cases = random_cases(desc, 203, seed=11)
    _rows_agree(name, cases)
    _rows_agree(name, cases, np.uint64, jobs=2)

    @settings(max_examples=3, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.lists(dot_words(desc, "edge"), min_size=1, max_size=40))
    def check(cases):
        _rows_agree(name, cases)

    check()


@pytest.mark.full
@pytest.mark.parametrize("name", SPECIFIED)
def test_rows_agree_full(name):
    desc = CATALOG[name].descriptor
    _rows_agree(name, random_cases(desc, 300, seed=12))
    _rows_agree(name, random_cases(desc, 77, seed=13), np.uint64, jobs=3)


def _chain_inputs(desc, m, n, steps, seed):
    rng = np.random.default_rng(seed)
    k, sc = desc.k, desc.scale_count
    a = rng.integers(0, 1 << 32, (m, k * steps), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, (k * steps, n), dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 1 << 32, (m, n), dtype=np.uint64).astype(np.uint32)
    sa = rng.integers(0, 256, (m, sc * steps), dtype=np.uint64).astype(np.uint8) if sc else None
    sb = rng.integers(0, 256, (n, sc * steps), dtype=np.uint64).astype(np.uint8) if sc else None
    meta = None
    if desc.sparse:
        layout = input_layout(desc)
        where = [j for j, spec in enumerate(layout) if spec.role == "metadata"]
        words = np.array(random_cases(desc, m * steps, seed), dtype=np.uint32)[:, where]
        meta = words.reshape(m, steps, len(where))
    return a, b, c, sa, sb, meta


def _scalar_chain(desc, a, b, c, sa, sb, meta, order):
    dot = compiled_dot(desc)
    k, sc = desc.k, desc.scale_count
    m, n = a.shape[0], b.shape[1]
    d = np.zeros((m, n), dtype=np.uint32) if c is None else c.copy()
    for i in range(m):
        for j in range(n):
            word = int(d[i, j])
            for s in order:
                words = a[i, s * k:(s + 1) * k].tolist() + b[s * k:(s + 1) * k, j].tolist()
                words.append(word)
                if sc:
                    words += sa[i, s * sc:(s + 1) * sc].tolist()
                    words += sb[j, s * sc:(s + 1) * sc].tolist()
                if meta is not None:
                    words += meta[i, s].tolist()
                word = dot(*words)
            d[i, j] = word
    return d


@pytest.mark.parametrize("name", DEFAULT)
def test_chains_agree_with_repeated_scalar_instructions(name, monkeypatch):
    desc = CATALOG[name].descriptor
    a, b, c, sa, sb, meta = _chain_inputs(desc, 3, 37, 3, seed=5)
    order = [2, 0, 1]
    want = _scalar_chain(desc, a, b, c, sa, sb, meta, order)
    monkeypatch.setenv("TCSPEC_KERNELS", "always")
    assert run.run_chain(desc, a, b, c, order, sa, sb, meta, jobs=2).tolist() == want.tolist()
    wide = run.run_chain(desc, a.astype(np.uint64), np.asfortranarray(b), c.T.copy().T, order,
                         sa, sb, meta, jobs=1)
    assert wide.tolist() == want.tolist()
    zero = _scalar_chain(desc, a, b, None, sa, sb, meta, [1])
    assert run.run_chain(desc, a, b, None, [1], sa, sb, meta).tolist() == zero.tolist()
    monkeypatch.setenv("TCSPEC_KERNELS", "off")
    assert run.run_chain(desc, a, b, c, order, sa, sb, meta).tolist() == want.tolist()


def test_broadcast_operands_and_rows_fallback(monkeypatch):
    desc = CATALOG["dense-nvfp4"].descriptor
    cases = np.array(random_cases(desc, 50, seed=3), dtype=np.uint32)
    a, b = cases[:, :64], cases[:, 64:128]
    scales = np.array([0x38, 0x30, 0x41, 0x39], dtype=np.uint8)
    dot = compiled_dot(desc)
    rows = [(a[i].tolist(), b[i].tolist()) for i in range(50)]
    want = [dot(*x, *y, 0x3F800000, *scales.tolist(), *scales.tolist()) for x, y in rows]
    for mode in ("always", "off"):
        monkeypatch.setenv("TCSPEC_KERNELS", mode)
        got = run.run_rows(desc, a, b, np.uint32(0x3F800000), scales, scales, jobs=2)
        assert got.tolist() == want, mode
    monkeypatch.setenv("TCSPEC_KERNELS", "always")
    unit = [dot(*x, *y, 7, *[0x38] * 8) for x, y in rows]
    assert run.run_rows(desc, a, b, np.full(50, 7, np.uint32)).tolist() == unit


def test_gemm_entry_point_refuses_bad_calls():
    desc = CATALOG["dense-tf32"].descriptor
    kernel = kernels.kernel_for(desc)
    with pytest.raises(ValueError, match="6 operand groups"):
        kernel.gemm([Operand(None)], np.zeros((1, 1), np.uint32), [0])
    with pytest.raises(ValueError, match="uint32 matrix"):
        kernel.gemm([Operand(None)] * 6, np.zeros(3, np.uint32), [0])
