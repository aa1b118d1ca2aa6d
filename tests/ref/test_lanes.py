"""Narrow lanes and lazy masks (ref/lanes.py) in the C kernels.

Random DAGs mix every primitive at widths 1-64 and read their values both
whole and through narrow extracts, so values live in lanes narrower than
their width, carry bits above it, and are masked only where a consumer
needs them. The kernel's words are held to the traced DAG evaluated on the
scalar semantics; the facts themselves are checked on small DAGs.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tcspec.ref import kernels
from tcspec.ref.lanes import analyse
from tcspec.smt.formula import traced
from tcspec.smt.trace import TraceOps, evaluate
from tcspec.spec.catalog import lookup
from tests.ref.test_kernels import _private_cache  # noqa: F401  (kernels go to a private cache)

pytestmark = pytest.mark.skipif(kernels.compiler() is None, reason="no C compiler")

INPUTS = 12


def _resize(ops, rng, value, width):
    if value.width == width:
        return value
    if value.width > width:
        low = rng.randrange(value.width - width + 1)
        return ops.extract(value, low + width - 1, low)
    return ops.sext(value, width) if rng.random() < 0.5 else ops.zext(value, width)


def _random_dag(seed: int, steps: int = 160):
    """Inputs and one 32-bit output folding every value of a random DAG."""
    rng = random.Random(seed)
    ops = TraceOps()
    inputs = [ops.variable(f"w{i}", 32) for i in range(INPUTS)]
    pool = list(inputs)
    for _ in range(steps):
        kind = rng.choice(["binary", "binary", "shift", "extract", "extend", "concat", "ite",
                           "unary", "wide"])
        x = rng.choice(pool)
        width = rng.choice([1, 3, 8, 13, 24, 31, 32, 33, 39, 48, 57, 63, 64])
        if kind == "binary":
            op = rng.choice(["add", "sub", "mul", "bvand", "bvor", "bvxor"])
            a, b = _resize(ops, rng, x, width), _resize(ops, rng, rng.choice(pool), width)
            value = getattr(ops, op)(a, b)
        elif kind == "shift":
            op = rng.choice(["shl", "lshr", "ashr"])
            source = rng.choice(pool)
            amount = _resize(ops, rng, ops.extract(source, min(6, source.width - 1), 0), width)
            value = getattr(ops, op)(_resize(ops, rng, x, width), amount)
        elif kind == "extract":
            hi = rng.randrange(x.width)
            value = ops.extract(x, hi, rng.randrange(hi + 1))
        elif kind == "extend":
            target = rng.randrange(x.width, 65)
            value = ops.sext(x, target) if rng.random() < 0.5 else ops.zext(x, target)
        elif kind == "concat":
            y = rng.choice(pool)
            if x.width + y.width > 64:
                continue
            value = ops.concat(x, y)
        elif kind == "ite":
            y = _resize(ops, rng, rng.choice(pool), x.width)
            test = rng.choice(["eq", "ult", "ule", "slt", "sle"])
            value = ops.ite(getattr(ops, test)(x, y), x, y)
        elif kind == "unary":
            value = rng.choice([ops.bvnot, ops.neg])(_resize(ops, rng, x, width))
        else:
            a = _resize(ops, rng, x, rng.choice([8, 16, 24, 32]))
            b = _resize(ops, rng, rng.choice(pool), a.width)
            value = ops.mul(ops.zext(a, 64), ops.zext(b, 64))
        pool.append(value)
    total = None
    for value in pool[INPUTS:]:
        if rng.random() < 0.5 and value.width > 1:
            hi = rng.randrange(min(value.width, 32))
            part = ops.zext(ops.extract(value, hi, 0), 32)
        else:
            wide = ops.zext(value, 64) if value.width < 64 else value
            part = ops.bvxor(ops.extract(wide, 31, 0), ops.extract(wide, 63, 32))
        total = part if total is None else ops.add(ops.bvxor(total, part), ops.const(1, 32))
    return [v.node for v in inputs], total.node


def _columns(rng: np.random.Generator, rows: int) -> list[np.ndarray]:
    edges = np.array([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 31, 32, 33, 63, 64],
                     dtype=np.uint32)
    columns = []
    for _ in range(INPUTS):
        col = rng.integers(0, 1 << 32, size=rows, dtype=np.uint64).astype(np.uint32)
        pick = rng.random(rows) < 0.3
        col[pick] = rng.choice(edges, size=int(pick.sum()))
        columns.append(col)
    return columns


@pytest.mark.parametrize("seed", range(6))
def test_random_dags_match_traced_evaluation(seed):
    inputs, output = _random_dag(seed)
    source = kernels.kernel_source(inputs, output, block=8, segment=17, remat=1)
    kernel = kernels.load_source(source, len(inputs), f"lanes-{seed}")
    rows = 203
    columns = _columns(np.random.default_rng(seed), rows)
    got = kernel(columns, rows)
    names = [node.params[0] for node in inputs]
    for row in range(rows):
        values = {name: int(col[row]) for name, col in zip(names, columns)}
        assert int(got[row]) == evaluate([output], values)[0], (seed, row)


def test_low_bits_of_a_wide_sum_live_in_a_narrow_lane():
    ops = TraceOps()
    x, y = ops.variable("x", 32), ops.variable("y", 32)
    total = ops.add(ops.sext(x, 48), ops.sext(y, 48))
    facts = analyse(ops.extract(total, 31, 0).node)
    assert facts.lane[total.node.id] == 32 and total.node.id not in facts.masked
    whole = analyse(ops.extract(total, 47, 16).node)
    assert whole.lane[total.node.id] == 64


def test_masks_only_where_a_consumer_reads_above_the_width():
    ops = TraceOps()
    x, y = ops.variable("x", 16), ops.variable("y", 16)
    total = ops.add(x, y)
    assert total.node.id not in analyse(ops.zext(ops.extract(total, 7, 0), 32).node).masked
    compared = ops.ite(ops.ult(total, x), total, x)
    assert total.node.id in analyse(ops.zext(compared, 32).node).masked


def test_sign_bit_known_zero_makes_sext_a_zext():
    ops = TraceOps()
    x = ops.variable("x", 8)
    widened = ops.sext(ops.zext(x, 9), 18)
    assert analyse(ops.zext(widened, 32).node).sext_mode[widened.node.id] == "zext"
    signed = ops.sext(x, 18)
    assert analyse(ops.zext(signed, 32).node).sext_mode[signed.node.id] == "shift"


def test_integer_wrap_sum_uses_only_narrow_lanes():
    """i8 wrap: every product and the sum feed only the low 32 bits of D."""
    formula = traced(lookup("i8-s8-s8-wrap").descriptor)
    facts = analyse(formula.output)
    assert set(facts.lane.values()) == {32}
