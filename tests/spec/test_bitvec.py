"""The ops protocol itself: width checking, coercion and loud data-dependent branches."""

from __future__ import annotations

import pytest

from tcspec.ref.batch import NUMPY
from tcspec.smt.trace import TraceOps
from tcspec.smt.z3_backend import Z3Ops
from tcspec.spec.bitvec import SymbolicBranchError, WidthError
from tcspec.spec.scalar import SCALAR, ScalarOps

BACKENDS = [SCALAR, NUMPY, Z3Ops(), TraceOps()]


@pytest.mark.parametrize("ops", BACKENDS, ids=lambda o: o.name)
def test_python_if_on_a_value_fails_loudly(ops):
    x = ops.const(3, 8)
    with pytest.raises(SymbolicBranchError, match=r"ops\.ite"):
        if x:
            pass
    with pytest.raises(SymbolicBranchError):
        if ops.eq(x, 3):
            pass
    with pytest.raises(SymbolicBranchError):
        _ = ops.ult(x, 4) and True


@pytest.mark.parametrize("ops", BACKENDS, ids=lambda o: o.name)
def test_equality_operator_is_refused(ops):
    with pytest.raises(TypeError, match=r"ops\.eq"):
        _ = ops.const(1, 4) == ops.const(1, 4)


@pytest.mark.parametrize("ops", BACKENDS, ids=lambda o: o.name)
def test_widths_are_checked_on_every_operation(ops):
    a, b = ops.const(1, 8), ops.const(1, 9)
    for op in (ops.add, ops.sub, ops.mul, ops.bvand, ops.bvor, ops.bvxor, ops.eq, ops.ult,
               ops.slt, ops.sle, ops.ule):
        with pytest.raises(WidthError, match="widths differ"):
            op(a, b)
    with pytest.raises(WidthError):
        ops.ite(ops.true(), a, b)
    with pytest.raises(WidthError, match="out of range"):
        ops.extract(a, 8, 0)
    with pytest.raises(WidthError):
        ops.extract(a, 2, 3)
    with pytest.raises(WidthError, match="shrink"):
        ops.zext(b, 8)
    with pytest.raises(WidthError, match="shrink"):
        ops.sext(b, 8)


def test_int_operands_take_the_partner_width_and_must_fit():
    ops = ScalarOps()
    x = ops.const(250, 8)
    assert ops.value(x + 10) == 4
    assert ops.value(10 + x) == 4
    assert ops.value(ops.add(x, -1)) == 249
    with pytest.raises(WidthError, match="does not fit"):
        ops.add(x, 256)
    with pytest.raises(WidthError, match="does not fit"):
        ops.const(-129, 8)
    with pytest.raises(TypeError):
        ops.add(1, 2)


def test_values_from_another_backend_are_refused():
    with pytest.raises(TypeError, match="backend"):
        SCALAR.add(NUMPY.const(1, 4), 1)


def test_negative_static_shift_is_refused():
    with pytest.raises(WidthError, match="negative"):
        SCALAR.shl(SCALAR.const(1, 4), -1)


def test_derived_operations_on_the_scalar_backend():
    ops = SCALAR
    assert ops.value(ops.bitlen(ops.const(0, 40))) == 0
    assert ops.value(ops.bitlen(ops.const(1 << 39, 40))) == 40
    assert ops.value(ops.clz(ops.const(1, 40))) == 39
    shifted, count = ops.normalize(ops.const(0b101, 8))
    assert (ops.value(shifted), ops.value(count)) == (0b10100000, 5)
    assert ops.value(ops.smax(ops.const(-3, 8), ops.const(2, 8))) == 2
    assert ops.signed_value(ops.smin(ops.const(-3, 8), ops.const(2, 8))) == -3
    assert ops.value(ops.umax(ops.const(0x80, 8), ops.const(2, 8))) == 0x80
    assert ops.value(ops.mul_wide(ops.const(255, 8), ops.const(255, 8))) == 65025
    assert ops.value(ops.sum([ops.const(i, 8) for i in range(10)])) == 45
    assert ops.value(ops.shift_signed(ops.const(0b1100, 8), ops.const(-2, 6))) == 0b11
    assert ops.value(ops.shift_signed(ops.const(0b1100, 8), ops.const(2, 6))) == 0b110000


def test_default_bitlen_matches_the_scalar_override():
    generic = TraceOps()
    for width in (1, 2, 3, 7, 8, 9, 31, 33, 64, 70):
        for value in {0, 1, (1 << width) - 1, 1 << (width - 1), (1 << width) // 3}:
            traced = generic.bitlen(generic.const(value, width))
            assert traced.node.value == value.bit_length(), (width, value)
