"""Z3 backend: each primitive becomes the Z3 bit-vector term of the same name."""

from __future__ import annotations

from typing import Any

import z3

from tcspec.spec.bitvec import BV, Bool, Ops


class Z3Ops(Ops):
    """Builds Z3 terms; inputs are declared with :meth:`variable`."""

    name = "z3"

    def __init__(self, ctx: z3.Context | None = None) -> None:
        self.ctx = ctx or z3.main_ctx()

    def variable(self, name: str, width: int) -> BV:
        return BV(self, z3.BitVec(name, width, self.ctx), width)

    def bool_variable(self, name: str) -> Bool:
        return Bool(self, z3.Bool(name, self.ctx))

    def p_const(self, value: int, width: int) -> Any:
        return z3.BitVecVal(value, width, self.ctx)

    def p_bool_const(self, value: bool) -> Any:
        return z3.BoolVal(value, self.ctx)

    def p_extract(self, x: Any, width: int, hi: int, lo: int) -> Any:
        return z3.Extract(hi, lo, x)

    def p_concat(self, x: Any, wx: int, y: Any, wy: int) -> Any:
        return z3.Concat(x, y)

    def p_zext(self, x: Any, width: int, extra: int) -> Any:
        return z3.ZeroExt(extra, x)

    def p_sext(self, x: Any, width: int, extra: int) -> Any:
        return z3.SignExt(extra, x)

    def p_not(self, x: Any, width: int) -> Any:
        return ~x

    def p_and(self, x: Any, y: Any, width: int) -> Any:
        return x & y

    def p_or(self, x: Any, y: Any, width: int) -> Any:
        return x | y

    def p_xor(self, x: Any, y: Any, width: int) -> Any:
        return x ^ y

    def p_add(self, x: Any, y: Any, width: int) -> Any:
        return x + y

    def p_sub(self, x: Any, y: Any, width: int) -> Any:
        return x - y

    def p_neg(self, x: Any, width: int) -> Any:
        return -x

    def p_mul(self, x: Any, y: Any, width: int) -> Any:
        return x * y

    def p_shl(self, x: Any, amount: Any, width: int) -> Any:
        return x << amount

    def p_lshr(self, x: Any, amount: Any, width: int) -> Any:
        return z3.LShR(x, amount)

    def p_ashr(self, x: Any, amount: Any, width: int) -> Any:
        return x >> amount

    def p_eq(self, x: Any, y: Any, width: int) -> Any:
        return x == y

    def p_ult(self, x: Any, y: Any, width: int) -> Any:
        return z3.ULT(x, y)

    def p_ule(self, x: Any, y: Any, width: int) -> Any:
        return z3.ULE(x, y)

    def p_slt(self, x: Any, y: Any, width: int) -> Any:
        return x < y

    def p_sle(self, x: Any, y: Any, width: int) -> Any:
        return x <= y

    def p_band(self, x: Any, y: Any) -> Any:
        return z3.And(x, y)

    def p_bor(self, x: Any, y: Any) -> Any:
        return z3.Or(x, y)

    def p_bnot(self, x: Any) -> Any:
        return z3.Not(x)

    def p_bxor(self, x: Any, y: Any) -> Any:
        return z3.Xor(x, y)

    def p_ite(self, cond: Any, then: Any, other: Any, width: int | None) -> Any:
        return z3.If(cond, then, other)


def concrete_value(term: Any) -> int:
    """The unsigned value of a Z3 term that simplifies to a bit-vector constant."""
    simplified = z3.simplify(term)
    if not z3.is_bv_value(simplified):
        raise ValueError(f"term did not simplify to a constant: {str(simplified)[:200]}")
    return simplified.as_long()
