"""Width-tracked bit-vector values and the ``ops`` protocol (DESIGN.md, "The spine").

A datapath is a Python function of an :class:`Ops` object and :class:`BV` /
:class:`Bool` values. It never looks at concrete bits: every operation goes
through ``ops``, which checks widths the way SMT-LIB does and hands the work to
a backend (scalar ints, NumPy arrays, Z3 terms, a traced DAG).

Backends implement the ``p_*`` primitives on their own payloads; the public
methods here check widths, coerce Python ints to constants of the partner's
width, and build the derived operations (expanding multiply, leading-zero
count, max, sums, signed shifts) from primitives unless a backend overrides
them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


class SymbolicBranchError(TypeError):
    """A Python ``if`` (or ``and``/``or``/``not``) was applied to a data value."""


class WidthError(ValueError):
    """Operands of a bit-vector operation have incompatible widths."""


class BV:
    """A bit-vector of a fixed ``width`` whose payload belongs to ``ops``."""

    __slots__ = ("node", "ops", "width")

    def __init__(self, ops: Ops, node: Any, width: int) -> None:
        self.ops = ops
        self.node = node
        self.width = width

    def __bool__(self) -> bool:
        raise SymbolicBranchError(
            f"data-dependent branch on a {self.width}-bit value: use ops.ite, not a Python if"
        )

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        raise TypeError("compare bit-vectors with ops.eq, not ==")

    def __ne__(self, other: object) -> bool:  # type: ignore[override]
        raise TypeError("compare bit-vectors with ops.ne, not !=")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"BV[{self.width}]({self.node!r})"

    def __add__(self, other: BV | int) -> BV:
        return self.ops.add(self, other)

    def __radd__(self, other: int) -> BV:
        return self.ops.add(other, self)

    def __sub__(self, other: BV | int) -> BV:
        return self.ops.sub(self, other)

    def __rsub__(self, other: int) -> BV:
        return self.ops.sub(other, self)

    def __mul__(self, other: BV | int) -> BV:
        return self.ops.mul(self, other)

    def __rmul__(self, other: int) -> BV:
        return self.ops.mul(other, self)

    def __neg__(self) -> BV:
        return self.ops.neg(self)

    def __invert__(self) -> BV:
        return self.ops.bvnot(self)

    def __and__(self, other: BV | int) -> BV:
        return self.ops.bvand(self, other)

    def __rand__(self, other: int) -> BV:
        return self.ops.bvand(other, self)

    def __or__(self, other: BV | int) -> BV:
        return self.ops.bvor(self, other)

    def __ror__(self, other: int) -> BV:
        return self.ops.bvor(other, self)

    def __xor__(self, other: BV | int) -> BV:
        return self.ops.bvxor(self, other)

    def __rxor__(self, other: int) -> BV:
        return self.ops.bvxor(other, self)

    def __lshift__(self, amount: BV | int) -> BV:
        return self.ops.shl(self, amount)


class Bool:
    """A boolean whose payload belongs to ``ops`` (the SMT-LIB ``Bool`` sort)."""

    __slots__ = ("node", "ops")

    width = None

    def __init__(self, ops: Ops, node: Any) -> None:
        self.ops = ops
        self.node = node

    def __bool__(self) -> bool:
        raise SymbolicBranchError("data-dependent branch on a boolean value: use ops.ite")

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        raise TypeError("compare booleans with ops.iff, not ==")

    def __ne__(self, other: object) -> bool:  # type: ignore[override]
        raise TypeError("compare booleans with ops.xor_, not !=")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"Bool({self.node!r})"

    def __and__(self, other: Bool) -> Bool:
        return self.ops.and_(self, other)

    def __or__(self, other: Bool) -> Bool:
        return self.ops.or_(self, other)

    def __xor__(self, other: Bool) -> Bool:
        return self.ops.xor_(self, other)

    def __invert__(self) -> Bool:
        return self.ops.not_(self)


def bit_length_of(width: int) -> int:
    """Bits needed to hold every count 0..width (static helper)."""
    return max(1, width.bit_length())


class Ops:
    """The ops protocol: checked public operations over backend primitives.

    Subclasses implement the ``p_*`` methods. Their payload arguments are
    already width-checked; bit-vector payloads denote unsigned integers in
    ``[0, 2**width)``; shift amounts have the width of the shifted value and
    follow SMT-LIB (amounts >= width give 0, or the sign fill for ``ashr``).
    """

    name = "abstract"

    def observe(self, stage: str, **values: Any) -> None:
        """A stage boundary of a datapath and the values it has computed so far.

        A no-op: it builds nothing, so no formula changes. A recording
        backend (``tcspec.explain``) overrides it to show the stages.
        """

    # ------------------------------------------------------------------ values

    def wrap(self, node: Any, width: int) -> BV:
        return BV(self, node, width)

    def wrap_bool(self, node: Any) -> Bool:
        return Bool(self, node)

    def const(self, value: int, width: int) -> BV:
        """The constant ``value`` (negative values are two's complement)."""
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise WidthError(f"bit-vector width must be a positive int, got {width!r}")
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"constant must be an int, got {type(value).__name__}")
        if not -(1 << (width - 1)) <= value < (1 << width):
            raise WidthError(f"constant {value} does not fit in {width} bits")
        return BV(self, self.p_const(value & ((1 << width) - 1), width), width)

    def bool_const(self, value: bool) -> Bool:
        return Bool(self, self.p_bool_const(bool(value)))

    def true(self) -> Bool:
        return self.bool_const(True)

    def false(self) -> Bool:
        return self.bool_const(False)

    def _bv(self, x: BV | int, width: int | None = None) -> BV:
        if isinstance(x, BV):
            if x.ops is not self:
                raise TypeError(f"value belongs to backend {x.ops.name}, not {self.name}")
            return x
        if isinstance(x, int) and not isinstance(x, bool) and width is not None:
            return self.const(x, width)
        raise TypeError(f"expected a bit-vector, got {type(x).__name__}")

    def _pair(self, a: BV | int, b: BV | int, what: str) -> tuple[BV, BV]:
        if isinstance(a, BV):
            a = self._bv(a)
            b = self._bv(b, a.width)
        else:
            b = self._bv(b)
            a = self._bv(a, b.width)
        if a.width != b.width:
            raise WidthError(f"{what}: widths differ ({a.width} vs {b.width})")
        return a, b

    def _bool(self, x: Bool | bool) -> Bool:
        if isinstance(x, Bool):
            if x.ops is not self:
                raise TypeError(f"value belongs to backend {x.ops.name}, not {self.name}")
            return x
        if isinstance(x, bool):
            return self.bool_const(x)
        raise TypeError(f"expected a boolean, got {type(x).__name__}")

    # ------------------------------------------------------- structural ops

    def extract(self, x: BV, hi: int, lo: int) -> BV:
        """Bits ``hi..lo`` of ``x``, both bounds inclusive (SMT-LIB ``extract``)."""
        x = self._bv(x)
        if not (0 <= lo <= hi < x.width):
            raise WidthError(f"extract [{hi}:{lo}] out of range for a {x.width}-bit value")
        if lo == 0 and hi == x.width - 1:
            return x
        return BV(self, self.p_extract(x.node, x.width, hi, lo), hi - lo + 1)

    def bit(self, x: BV, index: int) -> Bool:
        return self.eq(self.extract(x, index, index), 1)

    def concat(self, *parts: BV) -> BV:
        """Concatenation, first argument most significant."""
        if not parts:
            raise WidthError("concat needs at least one value")
        acc = self._bv(parts[0])
        for part in parts[1:]:
            part = self._bv(part)
            acc = BV(self, self.p_concat(acc.node, acc.width, part.node, part.width),
                     acc.width + part.width)
        return acc

    def zext(self, x: BV, width: int) -> BV:
        """Zero-extend ``x`` to ``width`` bits (``width >= x.width``)."""
        x = self._bv(x)
        if width < x.width:
            raise WidthError(f"zext to {width} bits would shrink a {x.width}-bit value")
        if width == x.width:
            return x
        return BV(self, self.p_zext(x.node, x.width, width - x.width), width)

    def sext(self, x: BV, width: int) -> BV:
        """Sign-extend ``x`` to ``width`` bits (``width >= x.width``)."""
        x = self._bv(x)
        if width < x.width:
            raise WidthError(f"sext to {width} bits would shrink a {x.width}-bit value")
        if width == x.width:
            return x
        return BV(self, self.p_sext(x.node, x.width, width - x.width), width)

    # ---------------------------------------------------------- bitwise ops

    def bvnot(self, x: BV) -> BV:
        x = self._bv(x)
        return BV(self, self.p_not(x.node, x.width), x.width)

    def bvand(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "bvand")
        return BV(self, self.p_and(a.node, b.node, a.width), a.width)

    def bvor(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "bvor")
        return BV(self, self.p_or(a.node, b.node, a.width), a.width)

    def bvxor(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "bvxor")
        return BV(self, self.p_xor(a.node, b.node, a.width), a.width)

    # ------------------------------------------------------- arithmetic ops

    def add(self, a: BV | int, b: BV | int) -> BV:
        """Modular addition at the common width."""
        a, b = self._pair(a, b, "add")
        return BV(self, self.p_add(a.node, b.node, a.width), a.width)

    def sub(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "sub")
        return BV(self, self.p_sub(a.node, b.node, a.width), a.width)

    def neg(self, x: BV) -> BV:
        x = self._bv(x)
        return BV(self, self.p_neg(x.node, x.width), x.width)

    def mul(self, a: BV | int, b: BV | int) -> BV:
        """Modular multiplication at the common width."""
        a, b = self._pair(a, b, "mul")
        return BV(self, self.p_mul(a.node, b.node, a.width), a.width)

    # ---------------------------------------------------------------- shifts

    def _shift(self, kind: str, x: BV, amount: BV | int) -> BV:
        x = self._bv(x)
        if isinstance(amount, int) and not isinstance(amount, bool):
            if amount < 0:
                raise WidthError(f"{kind} by a negative static amount {amount}")
            if amount == 0:
                return x
            if amount >= x.width:
                if kind == "ashr":
                    return self.ite(self.sign(x), self.const(-1, x.width), self.const(0, x.width))
                return self.const(0, x.width)
            amount = self.const(amount, x.width)
        amount = self._bv(amount)
        prim = {"shl": self.p_shl, "lshr": self.p_lshr, "ashr": self.p_ashr}[kind]
        if amount.width <= x.width:
            amount = self.zext(amount, x.width)
            return BV(self, prim(x.node, amount.node, x.width), x.width)
        low = self.extract(amount, x.width - 1, 0)
        shifted = BV(self, prim(x.node, low.node, x.width), x.width)
        if kind == "ashr":
            fill = self.ite(self.sign(x), self.const(-1, x.width), self.const(0, x.width))
        else:
            fill = self.const(0, x.width)
        return self.ite(self.ult(amount, x.width), shifted, fill)

    def shl(self, x: BV, amount: BV | int) -> BV:
        """Left shift by an unsigned amount of any width; amounts >= width give 0."""
        return self._shift("shl", x, amount)

    def lshr(self, x: BV, amount: BV | int) -> BV:
        """Logical right shift by an unsigned amount of any width; over-wide gives 0."""
        return self._shift("lshr", x, amount)

    def ashr(self, x: BV, amount: BV | int) -> BV:
        """Arithmetic right shift by an unsigned amount; over-wide gives the sign fill."""
        return self._shift("ashr", x, amount)

    # ------------------------------------------------------------ predicates

    def eq(self, a: BV | int, b: BV | int) -> Bool:
        a, b = self._pair(a, b, "eq")
        return Bool(self, self.p_eq(a.node, b.node, a.width))

    def ne(self, a: BV | int, b: BV | int) -> Bool:
        return self.not_(self.eq(a, b))

    def ult(self, a: BV | int, b: BV | int) -> Bool:
        a, b = self._pair(a, b, "ult")
        return Bool(self, self.p_ult(a.node, b.node, a.width))

    def ule(self, a: BV | int, b: BV | int) -> Bool:
        a, b = self._pair(a, b, "ule")
        return Bool(self, self.p_ule(a.node, b.node, a.width))

    def ugt(self, a: BV | int, b: BV | int) -> Bool:
        return self.ult(b, a)

    def uge(self, a: BV | int, b: BV | int) -> Bool:
        return self.ule(b, a)

    def slt(self, a: BV | int, b: BV | int) -> Bool:
        a, b = self._pair(a, b, "slt")
        return Bool(self, self.p_slt(a.node, b.node, a.width))

    def sle(self, a: BV | int, b: BV | int) -> Bool:
        a, b = self._pair(a, b, "sle")
        return Bool(self, self.p_sle(a.node, b.node, a.width))

    def sgt(self, a: BV | int, b: BV | int) -> Bool:
        return self.slt(b, a)

    def sge(self, a: BV | int, b: BV | int) -> Bool:
        return self.sle(b, a)

    def is_zero(self, x: BV) -> Bool:
        return self.eq(x, 0)

    def sign(self, x: BV) -> Bool:
        """The most significant bit, as a boolean (negative in two's complement)."""
        x = self._bv(x)
        return self.bit(x, x.width - 1)

    # ------------------------------------------------------------- booleans

    def and_(self, *xs: Bool | bool) -> Bool:
        if not xs:
            return self.true()
        acc = self._bool(xs[0])
        for x in xs[1:]:
            acc = Bool(self, self.p_band(acc.node, self._bool(x).node))
        return acc

    def or_(self, *xs: Bool | bool) -> Bool:
        if not xs:
            return self.false()
        acc = self._bool(xs[0])
        for x in xs[1:]:
            acc = Bool(self, self.p_bor(acc.node, self._bool(x).node))
        return acc

    def not_(self, x: Bool | bool) -> Bool:
        return Bool(self, self.p_bnot(self._bool(x).node))

    def xor_(self, a: Bool | bool, b: Bool | bool) -> Bool:
        return Bool(self, self.p_bxor(self._bool(a).node, self._bool(b).node))

    def iff(self, a: Bool | bool, b: Bool | bool) -> Bool:
        return self.not_(self.xor_(a, b))

    def implies(self, a: Bool | bool, b: Bool | bool) -> Bool:
        return self.or_(self.not_(a), b)

    def any_(self, xs: Iterable[Bool]) -> Bool:
        return self.or_(*xs)

    def all_(self, xs: Iterable[Bool]) -> Bool:
        return self.and_(*xs)

    # ------------------------------------------------------------------ ite

    def ite(self, cond: Bool | bool, then: Any, other: Any) -> Any:
        """``then`` where ``cond`` holds, else ``other`` (both BV of one width or both Bool)."""
        cond = self._bool(cond)
        if isinstance(then, Bool) or isinstance(other, Bool):
            then, other = self._bool(then), self._bool(other)
            return Bool(self, self.p_ite(cond.node, then.node, other.node, None))
        then, other = self._pair(then, other, "ite")
        return BV(self, self.p_ite(cond.node, then.node, other.node, then.width), then.width)

    def bool_to_bv(self, b: Bool, width: int = 1) -> BV:
        return self.ite(b, self.const(1, width), self.const(0, width))

    # ------------------------------------------------------ derived operations

    def resize_unsigned(self, x: BV, width: int) -> BV:
        """Zero-extend or truncate ``x`` to ``width`` bits."""
        x = self._bv(x)
        return self.zext(x, width) if width >= x.width else self.extract(x, width - 1, 0)

    def resize_signed(self, x: BV, width: int) -> BV:
        """Sign-extend or truncate ``x`` to ``width`` bits."""
        x = self._bv(x)
        return self.sext(x, width) if width >= x.width else self.extract(x, width - 1, 0)

    def mul_wide(self, a: BV, b: BV) -> BV:
        """Exact unsigned product, ``a.width + b.width`` bits wide."""
        a, b = self._bv(a), self._bv(b)
        width = a.width + b.width
        return self.mul(self.zext(a, width), self.zext(b, width))

    def bitlen(self, x: BV, width: int | None = None) -> BV:
        """Position of the highest set bit plus one (0 for zero), as ``width`` bits.

        Built as a log-depth leading-one search; backends may override.
        """
        x = self._bv(x)
        width = width or bit_length_of(x.width)
        if (1 << width) <= x.width:
            raise WidthError(f"bitlen of a {x.width}-bit value does not fit in {width} bits")
        result = self.const(0, width)
        value = x
        step = 1 << (x.width.bit_length() - 1)
        while step >= 1:
            if step < x.width:
                high = self.lshr(value, step)
                found = self.ne(high, 0)
                value = self.ite(found, high, value)
                step_or_zero = self.ite(found, self.const(step, width), self.const(0, width))
                result = self.add(result, step_or_zero)
            step >>= 1
        return self.add(result, self.bool_to_bv(self.ne(value, 0), width))

    def clz(self, x: BV, width: int | None = None) -> BV:
        """Number of leading zero bits of ``x`` (``x.width`` for zero)."""
        x = self._bv(x)
        width = width or bit_length_of(x.width)
        return self.sub(self.const(x.width, width), self.bitlen(x, width))

    def normalize(self, x: BV) -> tuple[BV, BV]:
        """``(x << clz(x), clz(x))``: the value shifted so its top bit is set."""
        count = self.clz(x)
        return self.shl(x, count), count

    def umax(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "umax")
        return self.ite(self.ult(a, b), b, a)

    def umin(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "umin")
        return self.ite(self.ult(a, b), a, b)

    def smax(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "smax")
        return self.ite(self.slt(a, b), b, a)

    def smin(self, a: BV | int, b: BV | int) -> BV:
        a, b = self._pair(a, b, "smin")
        return self.ite(self.slt(a, b), a, b)

    def smax_all(self, xs: Sequence[BV]) -> BV:
        """Signed maximum of a non-empty list, as a balanced tree."""
        return self._tree(list(xs), self.smax)

    def sum(self, xs: Sequence[BV]) -> BV:
        """Modular sum of a non-empty list of one width, as a balanced tree."""
        return self._tree(list(xs), self.add)

    def _tree(self, xs: list[BV], combine: Any) -> BV:
        if not xs:
            raise ValueError("reduction over an empty list")
        while len(xs) > 1:
            paired = [combine(xs[i], xs[i + 1]) for i in range(0, len(xs) - 1, 2)]
            if len(xs) % 2:
                paired.append(xs[-1])
            xs = paired
        return xs[0]

    def abs_signed(self, x: BV) -> BV:
        """Magnitude of a two's-complement value (the minimum maps to itself)."""
        x = self._bv(x)
        return self.ite(self.sign(x), self.neg(x), x)

    def shift_signed(self, x: BV, k: BV) -> BV:
        """``floor(x * 2**k)`` for unsigned ``x`` and a signed amount ``k``.

        Left shifts keep ``x.width`` bits (the caller sizes ``x``); right
        shifts drop bits, so the result truncates toward zero.
        """
        x, k = self._bv(x), self._bv(k)
        return self.ite(self.sge(k, 0), self.shl(x, k), self.lshr(x, self.neg(k)))

    # --------------------------------------------------- backend primitives

    def p_const(self, value: int, width: int) -> Any:
        raise NotImplementedError

    def p_bool_const(self, value: bool) -> Any:
        raise NotImplementedError

    def p_extract(self, x: Any, width: int, hi: int, lo: int) -> Any:
        raise NotImplementedError

    def p_concat(self, x: Any, wx: int, y: Any, wy: int) -> Any:
        raise NotImplementedError

    def p_zext(self, x: Any, width: int, extra: int) -> Any:
        raise NotImplementedError

    def p_sext(self, x: Any, width: int, extra: int) -> Any:
        raise NotImplementedError

    def p_not(self, x: Any, width: int) -> Any:
        raise NotImplementedError

    def p_and(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_or(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_xor(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_add(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_sub(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_neg(self, x: Any, width: int) -> Any:
        raise NotImplementedError

    def p_mul(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_shl(self, x: Any, amount: Any, width: int) -> Any:
        raise NotImplementedError

    def p_lshr(self, x: Any, amount: Any, width: int) -> Any:
        raise NotImplementedError

    def p_ashr(self, x: Any, amount: Any, width: int) -> Any:
        raise NotImplementedError

    def p_eq(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_ult(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_ule(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_slt(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_sle(self, x: Any, y: Any, width: int) -> Any:
        raise NotImplementedError

    def p_band(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def p_bor(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def p_bnot(self, x: Any) -> Any:
        raise NotImplementedError

    def p_bxor(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def p_ite(self, cond: Any, then: Any, other: Any, width: int | None) -> Any:
        raise NotImplementedError


PRIMITIVES = (
    "const", "bool_const", "extract", "concat", "zext", "sext",
    "not", "and", "or", "xor", "add", "sub", "neg", "mul",
    "shl", "lshr", "ashr", "eq", "ult", "ule", "slt", "sle",
    "band", "bor", "bnot", "bxor", "ite",
)
"""Names of the backend primitives (``p_<name>``), in one place for the docs and tests."""
