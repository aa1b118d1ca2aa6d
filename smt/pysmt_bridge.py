"""Traced DAG -> pysmt formulas, so every solver pysmt drives checks the same formula."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcspec.smt.trace import Node, walk


def to_pysmt(roots: Sequence[Node], env: Any = None) -> list[Any]:
    """The pysmt formula of each root, built in ``env`` (default: pysmt's global one).

    Inputs become pysmt symbols of the same name; pysmt symbols are global
    to an environment, so give each formula family its own environment.
    """
    from pysmt.environment import get_env
    from pysmt.typing import BOOL, BVType

    mgr = (env or get_env()).formula_manager
    binary = {
        "and": mgr.BVAnd, "or": mgr.BVOr, "xor": mgr.BVXor,
        "add": mgr.BVAdd, "sub": mgr.BVSub, "mul": mgr.BVMul,
        "shl": mgr.BVLShl, "lshr": mgr.BVLShr, "ashr": mgr.BVAShr,
        "eq": mgr.Equals, "ult": mgr.BVULT, "ule": mgr.BVULE,
        "slt": mgr.BVSLT, "sle": mgr.BVSLE, "concat": mgr.BVConcat,
        "band": mgr.And, "bor": mgr.Or, "bxor": mgr.Xor,
    }
    out: dict[int, Any] = {}
    for node in walk(roots):
        args = [out[a.id] for a in node.args]
        op = node.op
        if op == "const":
            term = mgr.BV(node.value, node.width)
        elif op == "bool_const":
            term = mgr.Bool(node.value)
        elif op == "var":
            sort = BOOL if node.width is None else BVType(node.width)
            term = mgr.Symbol(node.params[0], sort)
        elif op == "extract":
            term = mgr.BVExtract(args[0], node.params[1], node.params[0])
        elif op == "zext":
            term = mgr.BVZExt(args[0], node.params[0])
        elif op == "sext":
            term = mgr.BVSExt(args[0], node.params[0])
        elif op == "not":
            term = mgr.BVNot(args[0])
        elif op == "neg":
            term = mgr.BVNeg(args[0])
        elif op == "bnot":
            term = mgr.Not(args[0])
        elif op == "ite":
            term = mgr.Ite(*args)
        else:
            term = binary[op](*args)
        out[node.id] = term
    return [out[root.id] for root in roots]
