"""Scalar backend: bit-vectors as Python ints in ``[0, 2**width)``, booleans as bools.

These primitives are also the reference semantics of the ``ops`` protocol:
the tracer folds constants with them and the conformance tests compare every
other backend against them.
"""

from __future__ import annotations

from tcspec.spec.bitvec import BV, Bool, Ops, bit_length_of


def _mask(width: int) -> int:
    return (1 << width) - 1


def _signed(x: int, width: int) -> int:
    return x - (1 << width) if x >> (width - 1) else x


class ScalarOps(Ops):
    """One dot product at a time, on Python ints."""

    name = "scalar"

    def p_const(self, value: int, width: int) -> int:
        return value

    def p_bool_const(self, value: bool) -> bool:
        return value

    def p_extract(self, x: int, width: int, hi: int, lo: int) -> int:
        return (x >> lo) & _mask(hi - lo + 1)

    def p_concat(self, x: int, wx: int, y: int, wy: int) -> int:
        return (x << wy) | y

    def p_zext(self, x: int, width: int, extra: int) -> int:
        return x

    def p_sext(self, x: int, width: int, extra: int) -> int:
        return _signed(x, width) & _mask(width + extra)

    def p_not(self, x: int, width: int) -> int:
        return x ^ _mask(width)

    def p_and(self, x: int, y: int, width: int) -> int:
        return x & y

    def p_or(self, x: int, y: int, width: int) -> int:
        return x | y

    def p_xor(self, x: int, y: int, width: int) -> int:
        return x ^ y

    def p_add(self, x: int, y: int, width: int) -> int:
        return (x + y) & _mask(width)

    def p_sub(self, x: int, y: int, width: int) -> int:
        return (x - y) & _mask(width)

    def p_neg(self, x: int, width: int) -> int:
        return -x & _mask(width)

    def p_mul(self, x: int, y: int, width: int) -> int:
        return (x * y) & _mask(width)

    def p_shl(self, x: int, amount: int, width: int) -> int:
        return (x << amount) & _mask(width) if amount < width else 0

    def p_lshr(self, x: int, amount: int, width: int) -> int:
        return x >> amount if amount < width else 0

    def p_ashr(self, x: int, amount: int, width: int) -> int:
        return (_signed(x, width) >> min(amount, width)) & _mask(width)

    def p_eq(self, x: int, y: int, width: int) -> bool:
        return x == y

    def p_ult(self, x: int, y: int, width: int) -> bool:
        return x < y

    def p_ule(self, x: int, y: int, width: int) -> bool:
        return x <= y

    def p_slt(self, x: int, y: int, width: int) -> bool:
        return _signed(x, width) < _signed(y, width)

    def p_sle(self, x: int, y: int, width: int) -> bool:
        return _signed(x, width) <= _signed(y, width)

    def p_band(self, x: bool, y: bool) -> bool:
        return x and y

    def p_bor(self, x: bool, y: bool) -> bool:
        return x or y

    def p_bnot(self, x: bool) -> bool:
        return not x

    def p_bxor(self, x: bool, y: bool) -> bool:
        return x != y

    def p_ite(self, cond: bool, then: int, other: int, width: int | None) -> int:
        return then if cond else other

    def bitlen(self, x: BV, width: int | None = None) -> BV:
        x = self._bv(x)
        return self.const(x.node.bit_length(), width or bit_length_of(x.width))

    def value(self, x: BV) -> int:
        """The concrete unsigned value of ``x``."""
        return self._bv(x).node

    def truth(self, x: Bool) -> bool:
        """The concrete value of a boolean."""
        return bool(self._bool(x).node)

    def signed_value(self, x: BV) -> int:
        """The concrete two's-complement value of ``x``."""
        x = self._bv(x)
        return _signed(x.node, x.width)


SCALAR = ScalarOps()
