"""Decoders of the format table against the independent oracle decoder (SEMANTICS.md section 1)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcspec.ref import oracle
from tcspec.spec.formats import FORMATS, FloatFormat, decode_float, decode_int, format_named
from tcspec.spec.scalar import SCALAR

ORACLE_FORMATS = ("tf32", "bf16", "f16", "f32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def _spec_decode(name: str, word: int):
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    d = decode_float(SCALAR, fmt, SCALAR.const(word, 32))
    if SCALAR.value(SCALAR.bool_to_bv(d.is_nan)):
        return oracle.NAN, None
    negative = SCALAR.value(SCALAR.bool_to_bv(d.negative))
    if SCALAR.value(SCALAR.bool_to_bv(d.is_inf)):
        return (oracle.NEG_INF if negative else oracle.POS_INF), None
    raw = SCALAR.signed_value(d.raw)
    value = Fraction(SCALAR.value(d.mag)) * Fraction(2) ** (raw - fmt.frac_bits)
    return (-value if negative else value), raw


def _check(name: str, word: int) -> None:
    value, raw = _spec_decode(name, word)
    want_value, want_raw = oracle.decode(name, word)
    assert value == want_value, (name, hex(word))
    if raw is not None:
        assert raw == want_raw, (name, hex(word))


@pytest.mark.parametrize("name", ["f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
def test_every_narrow_container_word_decodes_like_the_oracle(name):
    fmt = FORMATS[name]
    for word in range(1 << fmt.container_bits):
        _check(name, word | (0xA5A5A5A5 << fmt.container_bits & 0xFFFFFFFF))


@settings(max_examples=300, deadline=None)
@given(word=st.integers(0, (1 << 32) - 1), name=st.sampled_from(["tf32", "bf16", "f32"]))
def test_wide_words_decode_like_the_oracle(word, name):
    _check(name, word)


def test_tf32_clears_before_classifying():
    """A NaN whose payload is only in bits 12..0 is an infinity to TF32, a NaN to F32."""
    assert _spec_decode("tf32", 0x7F800001)[0] == oracle.POS_INF
    assert _spec_decode("f32", 0x7F800001)[0] == oracle.NAN
    assert _spec_decode("bf16", 0xFF80FFFF)[0] == oracle.NEG_INF
    assert _spec_decode("tf32", 0x7F802000)[0] == oracle.NAN


def test_subnormals_use_the_raw_exponent_one_minus_bias():
    assert _spec_decode("f32", 1) == (Fraction(1, 2**149), -126)
    assert _spec_decode("e4m3", 0x01) == (Fraction(1, 2**9), -6)
    assert _spec_decode("e2m1", 0x1) == (Fraction(1, 2), 0)


def test_e4m3_has_nan_only_at_all_ones_and_no_infinity():
    assert _spec_decode("e4m3", 0x7F)[0] == oracle.NAN
    assert _spec_decode("e4m3", 0xFF)[0] == oracle.NAN
    assert _spec_decode("e4m3", 0x7E)[0] == 448
    assert _spec_decode("e4m3", 0x78)[0] == 256


def _scale(name: str, byte: int):
    fmt = FORMATS[name]
    d = decode_float(SCALAR, fmt, SCALAR.const(byte, 8))
    nan = SCALAR.value(SCALAR.bool_to_bv(d.is_nan))
    return nan, SCALAR.value(d.mag), SCALAR.signed_value(d.raw)


def test_ue8m0_is_a_pure_power_of_two_and_zero_byte_is_not_zero():
    assert _scale("ue8m0", 0x00) == (0, 1, -127)
    assert _scale("ue8m0", 0x7F) == (0, 1, 0)
    assert _scale("ue8m0", 0xFE) == (0, 1, 127)
    assert _scale("ue8m0", 0xFF)[0] == 1


def test_ue4m3_ignores_bit_7_and_has_nan_at_0x7f():
    assert _scale("ue4m3", 0x38) == (0, 8, 0)
    assert _scale("ue4m3", 0xB8) == (0, 8, 0)
    assert _scale("ue4m3", 0x00) == (0, 0, -6)
    assert _scale("ue4m3", 0x01) == (0, 1, -6)
    assert _scale("ue4m3", 0x7F)[0] == 1
    assert _scale("ue4m3", 0xFF)[0] == 1
    assert _scale("ue4m3", 0x7E) == (0, 14, 8)


def test_integer_formats_read_the_low_byte():
    for name, byte, want in [("u8", 0xFF, 255), ("s8", 0xFF, -1), ("s8", 0x80, -128),
                             ("u8", 0x80, 128), ("s8", 0x7F, 127)]:
        fmt = FORMATS[name]
        value = decode_int(SCALAR, fmt, SCALAR.const(0xABCDE00 | byte, 32))
        assert SCALAR.signed_value(value) == want


def test_unknown_format_names_are_refused_with_the_known_list():
    with pytest.raises(ValueError, match=r"unknown format 'fp64'.*tf32"):
        format_named("fp64")
    assert format_named("fp8").name == "e4m3"
    assert format_named("fp4").name == "e2m1"
