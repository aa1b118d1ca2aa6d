"""Primitive conformance: every backend computes every primitive like the scalar backend.

Over-wide shift amounts, sign extension, inclusive extract bounds and edge
widths (1 bit, 63/64/65 bits, 100 bits) included. The traced DAG is checked
three ways: evaluated directly, printed as SMT-LIB2 and re-parsed by Z3, and
converted to pysmt and simplified.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import z3
from pysmt.environment import Environment
from pysmt.typing import BVType

from tcspec.ref.batch import NUMPY
from tcspec.smt.pysmt_bridge import to_pysmt
from tcspec.smt.smtlib import script
from tcspec.smt.trace import TraceOps, evaluate
from tcspec.smt.z3_backend import Z3Ops, concrete_value
from tcspec.spec.scalar import SCALAR

WIDTHS = (1, 2, 7, 8, 32, 63, 64, 65, 100)

# (name, arity, builder(ops, x, y) -> value, operand widths from w)
UNARY = {
    "not": lambda o, x: o.bvnot(x),
    "neg": lambda o, x: o.neg(x),
    "extract_low": lambda o, x: o.extract(x, 0, 0),
    "extract_high": lambda o, x: o.extract(x, x.width - 1, x.width - 1),
    "extract_all": lambda o, x: o.extract(x, x.width - 1, 0),
    "extract_mid": lambda o, x: o.extract(x, min(x.width - 1, max(1, x.width // 2)),
                                          min(1, x.width - 1)),
    "zext": lambda o, x: o.zext(x, x.width + 5),
    "sext": lambda o, x: o.sext(x, x.width + 5),
    "sext_to_128": lambda o, x: o.sext(x, 128),
    "bitlen": lambda o, x: o.bitlen(x),
    "clz": lambda o, x: o.clz(x),
    "abs": lambda o, x: o.abs_signed(x),
}
BINARY = {
    "and": lambda o, x, y: o.bvand(x, y),
    "or": lambda o, x, y: o.bvor(x, y),
    "xor": lambda o, x, y: o.bvxor(x, y),
    "add": lambda o, x, y: o.add(x, y),
    "sub": lambda o, x, y: o.sub(x, y),
    "mul": lambda o, x, y: o.mul(x, y),
    "mul_wide": lambda o, x, y: o.mul_wide(x, y),
    "concat": lambda o, x, y: o.concat(x, y),
    "shl": lambda o, x, y: o.shl(x, y),
    "lshr": lambda o, x, y: o.lshr(x, y),
    "ashr": lambda o, x, y: o.ashr(x, y),
    "eq": lambda o, x, y: o.bool_to_bv(o.eq(x, y)),
    "ult": lambda o, x, y: o.bool_to_bv(o.ult(x, y)),
    "ule": lambda o, x, y: o.bool_to_bv(o.ule(x, y)),
    "slt": lambda o, x, y: o.bool_to_bv(o.slt(x, y)),
    "sle": lambda o, x, y: o.bool_to_bv(o.sle(x, y)),
    "smax": lambda o, x, y: o.smax(x, y),
    "umin": lambda o, x, y: o.umin(x, y),
    "ite_on_sign": lambda o, x, y: o.ite(o.sign(x), x, y),
    "bool_logic": lambda o, x, y: o.bool_to_bv(o.or_(o.and_(o.ult(x, y), o.not_(o.eq(x, 0))),
                                                     o.xor_(o.sign(y), o.sign(x)))),
}
SHIFTS = ("shl", "lshr", "ashr")


def _edge_values(width: int) -> list[int]:
    top = (1 << width) - 1
    values = {0, 1, top, top >> 1, 1 << (width - 1), ((1 << (width - 1)) + 1) & top}
    rng = random.Random(width)
    values.update(rng.getrandbits(width) for _ in range(4))
    return sorted(values)


def _shift_amounts(width: int, amount_width: int) -> list[int]:
    top = (1 << amount_width) - 1
    candidates = {0, 1, width - 1, width, width + 1, 2 * width, top, top >> 1}
    return sorted(a for a in candidates if 0 <= a <= top)


def _cases(name: str, width: int) -> list[tuple[int, ...]]:
    if name in UNARY:
        return [(x,) for x in _edge_values(width)]
    if name in SHIFTS:
        out = []
        for amount_width in sorted({width, max(1, width // 2), width + 3}):
            out += [(x, a, amount_width) for x in _edge_values(width)[:5]
                    for a in _shift_amounts(width, amount_width)]
        return out
    values = _edge_values(width)
    return [(x, y) for x in values[:6] for y in values[-6:]]


def _apply(ops, name, width, case, make):
    if name in UNARY:
        return UNARY[name](ops, make(ops, "x", case[0], width))
    y_width = case[2] if len(case) == 3 else width
    return BINARY[name](ops, make(ops, "x", case[0], width), make(ops, "y", case[1], y_width))


def _scalar(name, width, case):
    result = _apply(SCALAR, name, width, case, lambda o, _n, v, w: o.const(v, w))
    return result.node, result.width


ALL = sorted(UNARY) + sorted(BINARY)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ALL)
def test_numpy_matches_scalar(name, width):
    cases = _cases(name, width)
    expected = [_scalar(name, width, c)[0] for c in cases]
    columns = list(zip(*cases))

    def make(ops, label, _value, w):
        col = columns[0] if label == "x" else columns[1]
        return ops.input(np.array([int(v) for v in col], dtype=object), w)

    if name in SHIFTS:
        for amount_width in {c[2] for c in cases}:
            subset = [c for c in cases if c[2] == amount_width]
            sub_cols = list(zip(*subset))
            x = NUMPY.input(np.array(sub_cols[0], dtype=object), width)
            y = NUMPY.input(np.array(sub_cols[1], dtype=object), amount_width)
            got = NUMPY.values(BINARY[name](NUMPY, x, y), len(subset)).tolist()
            want = [_scalar(name, width, c)[0] for c in subset]
            assert [int(g) for g in got] == want, (name, width, amount_width)
        return
    got = NUMPY.values(_apply(NUMPY, name, width, cases[0], make), len(cases)).tolist()
    assert [int(g) for g in got] == expected


@pytest.mark.parametrize("width", (1, 8, 33, 64, 65))
@pytest.mark.parametrize("name", ALL)
def test_z3_matches_scalar(name, width):
    ops = Z3Ops()
    for case in _cases(name, width)[:12]:
        want, out_width = _scalar(name, width, case)
        got = _apply(ops, name, width, case, lambda o, _n, v, w: o.const(v, w))
        assert got.width == out_width
        assert concrete_value(got.node) == want, (name, width, case)


@pytest.mark.parametrize("width", (1, 8, 33, 64, 65))
@pytest.mark.parametrize("name", ALL)
def test_traced_dag_matches_scalar_three_ways(name, width):
    """Evaluated, via SMT-LIB2 re-parsed by Z3, and via pysmt."""
    for case in _cases(name, width)[:6]:
        want, _ = _scalar(name, width, case)
        ops = TraceOps()
        result = _apply(ops, name, width, case, lambda o, n, _v, w: o.variable(n, w))
        inputs = {"x": case[0]} | ({"y": case[1]} if len(case) > 1 else {})
        assert evaluate([result.node], inputs) == [want]

        text = script(list(ops.inputs.values()), [("out", result.node)])
        (equation,) = z3.parse_smt2_string(
            text + f"(declare-fun check () (_ BitVec {result.width}))(assert (= check out))")
        pairs = [(z3.BitVec(n, node.width), z3.BitVecVal(inputs[n], node.width))
                 for n, node in ops.inputs.items()]
        assert concrete_value(z3.substitute(equation.arg(1), *pairs)) == want

        env = Environment()
        (formula,) = to_pysmt([result.node], env)
        mgr = env.formula_manager
        subs = {mgr.Symbol(n, BVType(node.width)): mgr.BV(inputs[n], node.width)
                for n, node in ops.inputs.items()}
        simplified = env.simplifier.simplify(env.substituter.substitute(formula, subs))
        assert simplified.is_constant() and simplified.constant_value() == want


def test_constant_operands_fold_away_in_the_trace():
    ops = TraceOps()
    x = ops.variable("x", 8)
    static = ops.add(ops.const(3, 8), ops.const(4, 8))
    assert static.node.op == "const" and static.node.value == 7
    assert ops.ite(ops.true(), x, static).node is x.node
    assert ops.add(x, 1).node is ops.add(x, 1).node, "equal subterms are one node"


def test_numpy_wide_fallback_keeps_every_bit():
    """A 100-bit product and shift: no silent uint64 overflow."""
    a = NUMPY.input(np.array([(1 << 63) + 5, 3], dtype=object), 64)
    wide = NUMPY.mul_wide(a, a)
    assert [int(v) for v in NUMPY.values(wide, 2)] == [((1 << 63) + 5) ** 2, 9]
    shifted = NUMPY.shl(NUMPY.zext(a, 100), NUMPY.const(36, 7))
    assert [int(v) for v in NUMPY.values(shifted, 2)] == [
        (((1 << 63) + 5) << 36) & ((1 << 100) - 1), 3 << 36]
