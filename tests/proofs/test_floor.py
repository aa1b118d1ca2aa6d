"""The shared truncation statements (proofs/floor.py): exactly the floor, toward zero.

Checked on every small case against Python's integers, free results
included, so no wrapped result can match; the register is wide enough for
the case an earlier, narrower statement let through.
"""

from __future__ import annotations

from fractions import Fraction

from tcspec.proofs import floor
from tcspec.spec.formats import EXP_WIDTH
from tcspec.spec.scalar import SCALAR


def test_floor_shift_is_the_floor_for_every_small_case() -> None:
    """The left-shift statement of ``result = floor(value 2^shift)`` accepts exactly the floor
    (free results included: nothing may wrap into a false match)."""
    for value in range(16):
        for shift in range(-6, 6):
            expected = value << shift if shift >= 0 else value >> -shift
            for result in range(64):
                holds = floor.floor_shift_holds(SCALAR, SCALAR.const(value, 4),
                                                SCALAR.const(shift % 4096, EXP_WIDTH),
                                                SCALAR.const(result, 6)).node
                assert bool(holds) == (result == expected), (value, shift, result)


def test_truncates_is_toward_zero_for_both_signs() -> None:
    shift = SCALAR.const(-2 % 4096, EXP_WIDTH)
    for x in range(-32, 32):
        expected = int(Fraction(x, 4))
        for units in range(-16, 16):
            holds = floor.truncates(SCALAR, SCALAR.const(x % 64, 6), shift,
                                    SCALAR.const(units % 32, 5)).node
            assert bool(holds) == (units == expected), (x, units)


def test_a_wrapped_result_does_not_pass() -> None:
    """floor(5 / 8) = 0: 32 (which wraps to a match in a register of 8 bits) is refused."""
    holds = floor.floor_shift_holds(SCALAR, SCALAR.const(5, 4), SCALAR.const(-3 % 4096, EXP_WIDTH),
                                    SCALAR.const(32, 6)).node
    assert not holds


def test_nearest_shift_is_within_half_for_every_small_case() -> None:
    """``|result - value 2^shift| <= 1/2`` is accepted exactly (both neighbours at a tie)."""
    for value in range(16):
        for shift in (*range(-7, 4), 12, 13, 14, 20):
            exact = Fraction(value) * Fraction(2) ** shift
            for result in range(64):
                holds = floor.nearest_shift_holds(SCALAR, SCALAR.const(value, 4),
                                                  SCALAR.const(shift % 4096, EXP_WIDTH),
                                                  SCALAR.const(result, 6)).node
                assert bool(holds) == (abs(result - exact) <= Fraction(1, 2)), (value, shift,
                                                                               result)
