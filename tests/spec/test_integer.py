"""Integer datapaths kind::i8 (spec/integer.py, SEMANTICS.md section 3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcspec import mma_dot

MAX, MIN = 0x7FFFFFFF, 0x80000000


def i8(a, b, c, a_format="s8", b_format="s8", saturate=False):
    a = a + [0] * (32 - len(a))
    b = b + [0] * (32 - len(b))
    return mma_dot(a, b, c, a_format=a_format, b_format=b_format, d_type="s32",
                   saturate=saturate)


def test_saturation_at_the_top():
    assert i8([1], [1], MAX, saturate=True) == MAX
    assert i8([1], [1], MAX) == MIN, "wraps mod 2^32"
    assert i8([0x7F] * 32, [0x7F] * 32, MAX - 32 * 127 * 127, saturate=True) == MAX
    assert i8([0x7F] * 32, [0x7F] * 32, MAX - 32 * 127 * 127 - 1, saturate=True) == MAX - 1


def test_saturation_at_the_bottom():
    assert i8([0xFF], [1], MIN, saturate=True) == MIN
    assert i8([0xFF], [1], MIN) == MAX
    assert i8([0x80] * 32, [0x7F] * 32, MIN + 32 * 128 * 127, saturate=True) == MIN
    assert i8([0x80] * 32, [0x7F] * 32, 0, saturate=True) == (-32 * 128 * 127) & 0xFFFFFFFF


def test_saturation_is_applied_once_after_the_exact_sum():
    """Passing beyond the top then coming back is not clamped on the way."""
    assert i8([0x7F, 0x81], [0x7F, 0x7F], MAX, saturate=True) == MAX
    assert i8([0x7F, 0x81], [0x7F, 0x7F], MAX - 1, saturate=True) == MAX - 1


def test_signedness_is_per_operand_and_reads_only_the_low_byte():
    assert i8([0xFF], [0xFF], 0, "u8", "u8") == 255 * 255
    assert i8([0xFF], [0xFF], 0, "s8", "u8") == (-255) & 0xFFFFFFFF
    assert i8([0xFF], [0xFF], 0, "u8", "s8") == (-255) & 0xFFFFFFFF
    assert i8([0xFF], [0xFF], 0, "s8", "s8") == 1
    assert i8([0x12345601], [0xABCDEF02], 0, "u8", "u8") == 2


@settings(max_examples=200, deadline=None)
@given(a=st.lists(st.integers(0, 255), min_size=32, max_size=32),
       b=st.lists(st.integers(0, 255), min_size=32, max_size=32),
       c=st.integers(0, (1 << 32) - 1), fa=st.sampled_from(["u8", "s8"]),
       fb=st.sampled_from(["u8", "s8"]), saturate=st.booleans())
def test_matches_plain_integer_arithmetic(a, b, c, fa, fb, saturate):
    def value(x, fmt):
        return x - 256 if fmt == "s8" and x >= 128 else x

    exact = sum(value(x, fa) * value(y, fb) for x, y in zip(a, b))
    exact += c - (1 << 32) if c >> 31 else c
    want = max(-(1 << 31), min((1 << 31) - 1, exact)) if saturate else exact
    assert i8(a, b, c, fa, fb, saturate) == want & 0xFFFFFFFF


@pytest.mark.parametrize("bad", [{"d_type": "f32"}, {"b_format": "e4m3"}])
def test_integer_descriptor_errors(bad):
    with pytest.raises(ValueError, match="i8"):
        mma_dot([0] * 32, [0] * 32, 0, a_format="s8", **{"d_type": "s32", **bad})
