"""NumPy batch backend: one lane per dot product (DESIGN.md, "Backends").

Bit-vectors up to 64 bits are ``uint64`` arrays; wider ones fall back
explicitly to ``object`` arrays of Python ints, so no width silently
overflows. Constants are one-element arrays that broadcast against the batch.
``ite`` is ``np.where``: both branches are computed, as in every backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tcspec.spec.bitvec import BV, Bool, Ops

NATIVE_WIDTH = 64

_U64 = np.uint64


def _is_wide(width: int) -> bool:
    return width > NATIVE_WIDTH


def _mask(width: int) -> Any:
    return (1 << width) - 1 if _is_wide(width) else _U64((1 << width) - 1)


def _represent(x: Any, width: int) -> np.ndarray:
    """``x`` as the array type used for ``width`` (uint64, or object when wide)."""
    if _is_wide(width):
        return x if x.dtype == object else x.astype(object)
    return x if x.dtype == np.uint64 else x.astype(np.uint64)


class NumpyOps(Ops):
    """Many dot products at once, lane-wise over NumPy arrays."""

    name = "numpy"

    def input(self, values: Any, width: int) -> BV:
        """Wrap an array of unsigned values (each in ``[0, 2**width)``) as a bit-vector."""
        array = np.asarray(values)
        if array.dtype == object or _is_wide(width):
            array = np.asarray([int(v) for v in array.ravel()], dtype=object).reshape(array.shape)
        return BV(self, _represent(array, width), width)

    def p_const(self, value: int, width: int) -> np.ndarray:
        if _is_wide(width):
            return np.array([value], dtype=object)
        return np.array([value], dtype=np.uint64)

    def p_bool_const(self, value: bool) -> np.ndarray:
        return np.array([value], dtype=bool)

    def p_extract(self, x: np.ndarray, width: int, hi: int, lo: int) -> np.ndarray:
        out = hi - lo + 1
        if _is_wide(width):
            return _represent((x >> lo) & ((1 << out) - 1), out)
        return (x >> _U64(lo)) & _mask(out)

    def p_concat(self, x: np.ndarray, wx: int, y: np.ndarray, wy: int) -> np.ndarray:
        width = wx + wy
        x, y = _represent(x, width), _represent(y, width)
        if _is_wide(width):
            return (x << wy) | y
        return (x << _U64(wy)) | y

    def p_zext(self, x: np.ndarray, width: int, extra: int) -> np.ndarray:
        return _represent(x, width + extra)

    def p_sext(self, x: np.ndarray, width: int, extra: int) -> np.ndarray:
        out = width + extra
        x = _represent(x, out)
        high = ((1 << out) - 1) ^ ((1 << width) - 1)
        if _is_wide(out):
            negative = ((x >> (width - 1)) & 1) == 1
            return np.where(negative, x | high, x)
        negative = ((x >> _U64(width - 1)) & _U64(1)) == 1
        return np.where(negative, x | _U64(high), x)

    def p_not(self, x: np.ndarray, width: int) -> np.ndarray:
        return x ^ _mask(width)

    def p_and(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return x & y

    def p_or(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return x | y

    def p_xor(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return x ^ y

    def p_add(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return (x + y) & _mask(width)

    def p_sub(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return (x - y) & _mask(width)

    def p_neg(self, x: np.ndarray, width: int) -> np.ndarray:
        if _is_wide(width):
            return (-x) & _mask(width)
        return (_U64(0) - x) & _mask(width)

    def p_mul(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return (x * y) & _mask(width)

    def _shift_amount(self, amount: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(in_range, clipped)``: lanes whose amount is below ``width``, and safe amounts."""
        in_range = amount < width
        if _is_wide(width):
            return in_range, np.where(in_range, amount, 0)
        return in_range, np.minimum(amount, _U64(width - 1))

    def p_shl(self, x: np.ndarray, amount: np.ndarray, width: int) -> np.ndarray:
        in_range, clipped = self._shift_amount(amount, width)
        shifted = (x << clipped) & _mask(width)
        return np.where(in_range, shifted, 0)

    def p_lshr(self, x: np.ndarray, amount: np.ndarray, width: int) -> np.ndarray:
        in_range, clipped = self._shift_amount(amount, width)
        shifted = x >> clipped
        return np.where(in_range, shifted, 0)

    def p_ashr(self, x: np.ndarray, amount: np.ndarray, width: int) -> np.ndarray:
        logical = self.p_lshr(x, amount, width)
        ones = np.zeros_like(x) | _mask(width)
        fill = ones ^ self.p_lshr(ones, amount, width)
        negative = self._negative(x, width)
        return np.where(negative, logical | fill, logical)

    def _negative(self, x: np.ndarray, width: int) -> np.ndarray:
        if _is_wide(width):
            return np.asarray(((x >> (width - 1)) & 1) == 1, dtype=bool)
        return ((x >> _U64(width - 1)) & _U64(1)) == 1

    def _biased(self, x: np.ndarray, width: int) -> np.ndarray:
        """Signed order as unsigned order: flip the sign bit."""
        return x ^ (1 << (width - 1) if _is_wide(width) else _U64(1 << (width - 1)))

    def p_eq(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return np.asarray(x == y, dtype=bool)

    def p_ult(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return np.asarray(x < y, dtype=bool)

    def p_ule(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return np.asarray(x <= y, dtype=bool)

    def p_slt(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return np.asarray(self._biased(x, width) < self._biased(y, width), dtype=bool)

    def p_sle(self, x: np.ndarray, y: np.ndarray, width: int) -> np.ndarray:
        return np.asarray(self._biased(x, width) <= self._biased(y, width), dtype=bool)

    def p_band(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x & y

    def p_bor(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x | y

    def p_bnot(self, x: np.ndarray) -> np.ndarray:
        return ~x

    def p_bxor(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x ^ y

    def p_ite(self, cond: np.ndarray, then: np.ndarray, other: np.ndarray,
              width: int | None) -> np.ndarray:
        return np.where(cond, then, other)

    def values(self, x: BV, lanes: int) -> np.ndarray:
        """The unsigned values of ``x`` for ``lanes`` lanes (``uint64``, or object when wide)."""
        x = self._bv(x)
        return np.broadcast_to(x.node, (lanes,)).copy()

    def truths(self, x: Bool, lanes: int) -> np.ndarray:
        """The boolean values of ``x`` for ``lanes`` lanes."""
        x = self._bool(x)
        return np.broadcast_to(x.node, (lanes,)).copy()


NUMPY = NumpyOps()
