"""Compiled C batch kernels (ref/kernels.py): every primitive, and whole datapaths.

Primitives are traced at widths up to 64 bits (over-wide shift amounts, sign
fills, 1- and 64-bit edges) and the kernel's words are compared with the
traced DAG evaluated on the scalar semantics. Datapath kernels are held to
the compiled scalar lowering on random raw cases (row counts that leave a
partial block), edge-heavy cases and the reference vectors: a few datapaths
in the default suite, all under ``-m full``.
"""

from __future__ import annotations

import json
import os
import random
from array import array

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcspec import api
from tcspec.conformance import random_cases, reference_cases
from tcspec.ref import kernels, run
from tcspec.ref.compiled import compiled_dot
from tcspec.smt.trace import TraceOps, evaluate, walk
from tcspec.spec.algorithms import c_exempt
from tcspec.spec.catalog import CATALOG
from tcspec.strategies import dot_words
from tests.lowerings import SPECIFIED
from tests.smt.test_backends import ALL, BINARY, SHIFTS, UNARY, _cases

pytestmark = pytest.mark.skipif(kernels.compiler() is None, reason="no C compiler")

KERNEL_WIDTHS = (1, 2, 7, 8, 32, 63, 64)
DEFAULT_DATAPATHS = ("dense-tf32", "i8-s8-s8-wrap", "mixed-e2m1-e4m3-f16", "sparse-tf32",
                     "sm_89-mma-m16n8k32-e4m3-e5m2-c16-d16")


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory):
    """Kernels built here go to a private cache, not the user's."""
    patch = pytest.MonkeyPatch()
    patch.setenv("TCSPEC_CACHE_DIR", str(tmp_path_factory.mktemp("kernels")))
    yield
    patch.undo()


def _word(ops, name, value_width):
    """A ``value_width``-bit input fed as two 32-bit columns."""
    low, high = ops.variable(f"{name}_lo", 32), ops.variable(f"{name}_hi", 32)
    return ops.extract(ops.concat(high, low), value_width - 1, 0), [low.node, high.node]


def _fold32(ops, value, rotation):
    """The 64-bit-extended value folded to 32 bits (low ^ high), rotated left."""
    wide = ops.zext(value, 64) if value.width < 64 else value
    word = ops.bvxor(ops.extract(wide, 31, 0), ops.extract(wide, 63, 32))
    if rotation:
        word = ops.concat(ops.extract(word, 31 - rotation, 0), ops.extract(word, 31, 32 - rotation))
    return word


def _configs(name):
    """``(width, y_width, cases)`` for each width the kernel can hold (every node <= 64 bits)."""
    out = []
    for width in KERNEL_WIDTHS:
        cases = _cases(name, width)
        y_widths = sorted({c[2] for c in cases}) if name in SHIFTS else [width]
        for y_width in (w for w in y_widths if w <= 64):
            chosen = [c for c in cases if name not in SHIFTS or c[2] == y_width]
            out.append((width, y_width, chosen))
    return out


def _primitive_dag(name):
    ops = TraceOps()
    inputs, rows, total = [], [], None
    for index, (width, y_width, cases) in enumerate(_configs(name)):
        x, x_nodes = _word(ops, f"x{index}", width)
        if name in UNARY:
            result, y_nodes = UNARY[name](ops, x), []
        else:
            y, y_nodes = _word(ops, f"y{index}", y_width)
            result = BINARY[name](ops, x, y)
        if any((node.width or 0) > 64 for node in walk([result.node])):
            continue
        inputs += x_nodes + y_nodes
        folded = _fold32(ops, result, (7 * index) % 32)
        total = folded if total is None else ops.bvxor(total, folded)
        rows.append((cases, bool(y_nodes)))
    return inputs, (total.node if total is not None else None), rows


def _primitive_columns(rows, count):
    columns = []
    for cases, binary in rows:
        picked = [cases[i % len(cases)] for i in range(count)]
        for position in range(2 if binary else 1):
            values = [c[position] for c in picked]
            columns.append(np.array([v & 0xFFFFFFFF for v in values], dtype=np.uint32))
            columns.append(np.array([(v >> 32) & 0xFFFFFFFF for v in values], dtype=np.uint32))
    return columns


@pytest.mark.parametrize("name", ALL)
def test_primitive_kernels_match_traced_evaluation(name):
    inputs, output, rows = _primitive_dag(name)
    if not rows:
        pytest.skip(f"{name} is wider than 64 bits at every width")
    count = max(len(cases) for cases, _ in rows) + 37
    columns = _primitive_columns(rows, count)
    source = kernels.kernel_source(inputs, output, block=8, segment=5, remat=1)
    kernel = kernels.load_source(source, len(inputs), f"test-{name}")
    got = kernel(columns, count)
    names = [node.params[0] for node in inputs]
    for row in range(count):
        values = {n: int(col[row]) for n, col in zip(names, columns)}
        assert int(got[row]) == evaluate([output], values)[0], (name, row, values)


def test_over_wide_dags_are_refused():
    ops = TraceOps()
    x = ops.variable("x", 32)
    with pytest.raises(ValueError, match="64 bits"):
        wide = ops.zext(x, 40)
        kernels.kernel_source([x.node], ops.extract(ops.mul_wide(wide, wide), 31, 0).node)


def _agree_on(name, cases):
    desc = CATALOG[name].descriptor
    kernel = kernels.kernel_for(desc)
    matrix = np.array(cases, dtype=np.uint32).reshape(len(cases), -1)
    got = kernel([matrix[:, i] for i in range(matrix.shape[1])], len(cases)).tolist()
    dot = compiled_dot(desc)
    want = [dot(*words) for words in cases]
    assert got == want, f"{name}: kernel and compiled scalar lowering differ"


def _datapath(name, examples):
    desc = CATALOG[name].descriptor
    _agree_on(name, random_cases(desc, 203, seed=7))
    vectors, expected = reference_cases(desc)
    if vectors:
        _agree_on(name, vectors)
        assert compiled_dot(desc)(*vectors[0]) == expected[0]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.lists(dot_words(desc, "edge"), min_size=1, max_size=40))
    def check(cases):
        _agree_on(name, cases)

    check()


@pytest.mark.parametrize("name", DEFAULT_DATAPATHS)
def test_datapath_kernel_agrees(name):
    _datapath(name, 3)


@pytest.mark.full
@pytest.mark.parametrize("name", SPECIFIED)
def test_datapath_kernel_agrees_full(name):
    if c_exempt(CATALOG[name].descriptor):
        pytest.skip(f"{name}: the C kernels exempt 64-bit datapaths (SEMANTICS.md 11.1)")
    _datapath(name, 15)


def test_kernel_is_loaded_from_the_cache(monkeypatch):
    desc = CATALOG["i8-s8-s8-wrap"].descriptor
    for name in ("_LOADED", "_BY_DESCRIPTOR"):
        monkeypatch.setattr(kernels, name, {})
    first = kernels.kernel_for(desc)
    kernels._LOADED.clear()
    kernels._BY_DESCRIPTOR.clear()
    again = kernels.kernel_for(desc, build=False)
    assert again is not None and not again.compiled and again.path == first.path
    assert again.path.parent == kernels.cache_dir()


def test_fast_path_threshold_and_fallback(monkeypatch, capsys, tmp_path):
    desc = CATALOG["i8-s8-s8-wrap"].descriptor
    for name in ("_FAILED", "_LOADED", "_BY_DESCRIPTOR", "_SEEN"):
        monkeypatch.setattr(kernels, name, {})
    monkeypatch.setenv("TCSPEC_CACHE_DIR", str(tmp_path))
    assert kernels.fast_kernel(desc, kernels.CACHED_MIN_ROWS - 1) is None
    assert kernels.fast_kernel(desc, kernels.COMPILE_MIN_ROWS // 2) is None
    assert not list(tmp_path.iterdir())
    assert kernels.fast_kernel(desc, kernels.COMPILE_MIN_ROWS // 2) is not None
    assert list(tmp_path.glob("kernel-*.so"))
    for name in ("_LOADED", "_BY_DESCRIPTOR", "_SEEN"):
        monkeypatch.setattr(kernels, name, {})
    monkeypatch.setattr(kernels, "compiler", lambda: None)
    monkeypatch.setattr(kernels, "_warned", False)
    columns = [np.array(c, dtype=np.uint64) for c in zip(*random_cases(desc, 3000, seed=1))]
    for _ in range(2):
        got = run.run_batch(desc, columns, 3000)
    assert got.tolist() == run.run_numpy(desc, columns, 3000).tolist()
    err = capsys.readouterr().err
    assert err.count("running on NumPy") == 1 and "no C compiler" in err


def test_kernels_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("TCSPEC_KERNELS", "off")
    assert kernels.fast_kernel(CATALOG["dense-tf32"].descriptor, 10**9) is None


def test_run_batch_uses_the_kernel_when_always(monkeypatch):
    desc = CATALOG["dense-tf32"].descriptor
    monkeypatch.setenv("TCSPEC_KERNELS", "always")
    assert kernels.fast_kernel(desc, 1) is not None
    rng = random.Random(3)
    cases = [[rng.getrandbits(32) for _ in range(17)] for _ in range(50)]
    columns = [np.array(c, dtype=np.uint64) for c in zip(*cases)]
    assert run.run_batch(desc, columns, 50).tolist() == run.run_numpy(desc, columns, 50).tolist()


def test_mma_dot_switches_to_the_kernel_and_keeps_its_checks(monkeypatch):
    desc = CATALOG["dense-tf32"].descriptor
    monkeypatch.setenv("TCSPEC_KERNELS", "always")
    monkeypatch.setattr(api, "_RECHECK_CALLS", 1)
    monkeypatch.setattr(api, "_DOT_RUNNERS", {})
    rng = random.Random(5)
    dot = compiled_dot(desc)
    for _ in range(20):
        a = [rng.getrandbits(32) for _ in range(8)]
        b = tuple(rng.getrandbits(32) for _ in range(8))
        assert api.mma_dot(a, b, 0x3F800000, a_format="tf32") == dot(*a, *b, 0x3F800000)
    assert api._DOT_RUNNERS[desc][2]
    with pytest.raises(ValueError, match=r"A\[1\] must be an int raw word, got True"):
        api.mma_dot([0, True] + [0] * 6, [0] * 8, a_format="tf32")
    with pytest.raises(ValueError, match=r"B\[7\] = 4294967296 is out of range"):
        api.mma_dot([0] * 8, [0] * 7 + [1 << 32], a_format="tf32")
    monkeypatch.setenv("TCSPEC_KERNELS", "off")
    scaled = api.mma_dot([0x22] * 64, [0x22] * 64, 0, a_format="e2m1", scaling="ue4m3",
                         kind="mxf4nvf4", scale_a=[0x38] * 4, scale_b=[0x38] * 4)
    assert scaled == api.mma_dot([0x22] * 64, [0x22] * 64, 0, a_format="e2m1",
                                 scaling="ue4m3", kind="mxf4nvf4", unit_scales=True)


def test_bench_json_reports_every_lowering(capsys):
    from tcspec.cli import main

    assert main(["bench", "--datapath", "i8-s8-s8-wrap", "--rows", "64", "--scalar-seconds",
                 "0.02", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    for lowering in ("scalar", "compiled", "mma_dot", "numpy", "kernel"):
        assert row[lowering] > 0
    assert row["kernel_agrees"] is True and row["load_s"] is not None


def test_datapaths_with_one_dag_share_one_cached_kernel():
    first = kernels.kernel_for(CATALOG["dense-mxf4"].descriptor)
    twin = CATALOG["dense-mxf4nvf4-2x"].descriptor
    assert kernels.kernel_for(twin).path == first.path
    kernels.forget_loaded()
    again = kernels.kernel_for(twin, build=False)
    assert again is not None and again.path == first.path


def test_a_changed_cache_folder_is_looked_up_again(monkeypatch, tmp_path):
    """A kernel in use from one cache folder is not returned for another: after
    ``forget_loaded`` the lookup without building finds what was built in the new one."""
    desc = CATALOG["i8-s8-s8-wrap"].descriptor
    for name in ("_LOADED", "_BY_DESCRIPTOR"):
        monkeypatch.setattr(kernels, name, {})
    monkeypatch.setenv("TCSPEC_CACHE_DIR", str(tmp_path / "one"))
    first = kernels.kernel_for(desc)
    monkeypatch.setenv("TCSPEC_CACHE_DIR", str(tmp_path / "two"))
    second = kernels.kernel_for(desc)
    assert second.path.parent == tmp_path / "two" and second.path != first.path
    kernels.forget_loaded()
    again = kernels.kernel_for(desc, build=False)
    assert again is not None and again.path == second.path



@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_corrupt_cache_entry_is_rebuilt_and_said_once(damage, monkeypatch, capsys, tmp_path):
    """A damaged ``.so`` (cut short: it does not load; one bit flipped: it may load, but its
    bytes differ from the digest recorded at build time) is removed and built again, with
    one stderr line; the next process loads the healed entry silently."""
    desc = CATALOG["i8-s8-s8-wrap"].descriptor
    for name in ("_LOADED", "_BY_DESCRIPTOR"):
        monkeypatch.setattr(kernels, name, {})
    monkeypatch.setattr(kernels, "_HEALED", set())
    monkeypatch.setenv("TCSPEC_CACHE_DIR", str(tmp_path))
    path = kernels.kernel_for(desc).path
    good = path.read_bytes()
    data = bytearray(good)
    if damage == "truncate":
        del data[100:]
    else:
        data[len(data) // 2] ^= 1
    damaged = path.with_name("damaged")
    damaged.write_bytes(bytes(data))
    os.replace(damaged, path)  # a new file: this process still maps the old one
    capsys.readouterr()
    kernels.forget_loaded()
    healed = kernels.kernel_for(desc, build=False)
    assert healed is None and not path.exists()
    healed = kernels.kernel_for(desc)
    assert healed is not None and healed.compiled and len(path.read_bytes()) == len(good)
    kernels.forget_loaded()
    again = kernels.kernel_for(desc, build=False)
    assert again is not None and not again.compiled
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"kernel cache entry {path.name} was corrupt" in err
    words = [*range(1, desc.k + 1), *range(desc.k, 0, -1), 7]
    assert again.dot(array("I", words)) == compiled_dot(desc)(*words)
