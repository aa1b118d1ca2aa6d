"""The SMT-LIB reader of ``tcspec equiv``: each operator's value against the SMT-LIB
FixedSizeBitVectors definition (computed here with Python ints), z3's own evaluation of
the same text, and the refusals that name their line."""

from __future__ import annotations

import random

import pytest
import z3

from tcspec.smt.read_smtlib import SmtlibError, read_functions
from tcspec.smt.trace import TraceOps
from tcspec.spec.scalar import SCALAR

OPERATORS = [
    ("(bvadd x y)", lambda x, y: (x + y) % 256),
    ("(bvsub x y)", lambda x, y: (x - y) % 256),
    ("(bvmul x y)", lambda x, y: (x * y) % 256),
    ("(bvneg x)", lambda x, y: -x % 256),
    ("(bvnot x)", lambda x, y: x ^ 0xFF),
    ("(bvnand x y)", lambda x, y: (x & y) ^ 0xFF),
    ("(bvxnor x y)", lambda x, y: (x ^ y) ^ 0xFF),
    ("(bvshl x y)", lambda x, y: (x << y) % 256 if y < 8 else 0),
    ("(bvlshr x y)", lambda x, y: x >> y if y < 8 else 0),
    ("(bvashr x y)", lambda x, y: ((x - 256 * (x >> 7)) >> min(y, 8)) % 256),
    ("((_ rotate_left 3) x)", lambda x, y: ((x << 3) | (x >> 5)) % 256),
    ("((_ rotate_right 3) x)", lambda x, y: ((x >> 3) | (x << 5)) % 256),
    ("((_ extract 7 0) (concat x y))", lambda x, y: y),
    ("((_ extract 11 4) ((_ sign_extend 8) x))", lambda x, y: ((x >> 4) | (0xF0 if x >> 7 else 0))),
    ("((_ extract 7 0) ((_ repeat 2) x))", lambda x, y: x),
    ("(ite (bvslt x y) #x01 #x00)", lambda x, y: int((x - 256 * (x >> 7)) < (y - 256 * (y >> 7)))),
    ("(ite (bvuge x y) #x01 #x00)", lambda x, y: int(x >= y)),
    ("(ite (distinct x y #x00) #x01 #x00)", lambda x, y: int(x != y and x != 0 and y != 0)),
    ("(concat #b0000000 (bvcomp x y))", lambda x, y: int(x == y)),
    ("(let ((x y) (y x)) (bvsub x y))", lambda x, y: (y - x) % 256),
    ("(helper x (_ bv5 8))", lambda x, y: (x + 5) % 256),
]


def _function(body: str) -> str:
    return ("(set-logic QF_BV) ; a comment\n"
            "(define-fun helper ((p (_ BitVec 8)) (q (_ BitVec 8))) (_ BitVec 8) (bvadd p q))\n"
            f"(define-fun impl ((x (_ BitVec 8)) (y (_ BitVec 8))) (_ BitVec 8)\n  {body})\n")


@pytest.mark.parametrize(("body", "expected"), OPERATORS, ids=[b for b, _ in OPERATORS])
def test_each_operator_means_what_smtlib_says(body, expected):
    text = _function(body)
    fn = read_functions(text)["impl"]
    rng = random.Random(body)
    cases = [(0, 0), (255, 1), (128, 7), (1, 8), (200, 255)]
    cases += [(rng.randrange(256), rng.randrange(256)) for _ in range(40)]
    for x, y in cases:
        words = {"x": SCALAR.const(x, 8), "y": SCALAR.const(y, 8)}
        got = int(fn(SCALAR, words).node)
        assert got == expected(x, y), (body, x, y)
        z3_value = z3.simplify(z3.parse_smt2_string(
            text + f"(declare-const o (_ BitVec 8))(assert (= o (impl (_ bv{x} 8) "
                   f"(_ bv{y} 8))))")[0].arg(1)).as_long()
        assert got == z3_value


def test_a_definition_traces_into_one_dag():
    fn = read_functions(_function("(bvadd (helper x y) #x01)"))["impl"]
    ops = TraceOps()
    out = fn(ops, {"x": ops.variable("x", 8), "y": ops.variable("y", 8)})
    assert out.width == 8 and len(ops) > 3


@pytest.mark.parametrize(("text", "message"), [
    ("(declare-fun f () (_ BitVec 8))", "line 1: declare-fun is not allowed"),
    ("(set-logic QF_BV)\n(assert true)", "line 2: assert is not allowed"),
    ("(define-fun f ((x (_ BitVec 8))) (_ BitVec 8)\n (bvudiv x x))",
     "line 2: bvudiv (division) is not supported"),
    ("(define-fun f ((x (_ BitVec 8))) (_ BitVec 8) (bvadd x z))", "unknown symbol z"),
    ("(define-fun f ((x (_ BitVec 8))) (_ BitVec 8) (bvadd x x)", "'(' is never closed"),
    ("(define-fun f ((x Int)) (_ BitVec 8) x)", "sort Int is not Bool"),
    ("(define-fun f ((x (_ BitVec 8))) (_ BitVec 8) (bvadd x #x001))", "bvadd on widths"),
    ("(define-fun f ((x (_ BitVec 8))) (_ BitVec 4) x)", "declared (_ BitVec 4) but its body"),
])
def test_what_it_refuses_names_the_line(text, message):
    with pytest.raises(SmtlibError, match=message.replace("(", r"\(").replace(")", r"\)")):
        table = read_functions(text)
        fn = next(iter(table.values()))
        fn(SCALAR, {name: SCALAR.const(0, 8) for name, _ in fn.params})
