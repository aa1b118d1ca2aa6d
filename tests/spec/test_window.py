"""The unscaled window datapath (spec/window.py, SEMANTICS.md section 2).

Checked against the independent rational oracle (ref/oracle.py), on hand
cases that pin single rules, and on the F16-D rounding boundary.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tcspec import mma_dot
from tcspec.ref import oracle
from tcspec.ref.compiled import compiled_dot
from tcspec.spec.catalog import CATALOG
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tcspec.spec.window import WINDOW_CLAMP, default_clamp, window_dot
from tcspec.strategies import dot_words

WINDOW_DATAPATHS = [n for n, e in CATALOG.items()
                    if e.descriptor.family == "window" and not e.descriptor.sparse]

ONE, NEG_ONE = 0x3F800000, 0xBF800000
P2_M13, N2_M13 = 0x39000000, 0xB9000000


def tf32(a, b, c):
    return mma_dot(a, b, c, a_format="tf32")


@pytest.mark.parametrize("category", ["raw", "finite", "edge"])
@pytest.mark.parametrize("name", WINDOW_DATAPATHS)
def test_specification_agrees_with_the_rational_oracle(name, category):
    desc = CATALOG[name].descriptor
    dot = compiled_dot(desc)
    fa, fb = FORMATS[desc.a_format], FORMATS[desc.b_format]
    clamp = default_clamp(fa, fb)  # type: ignore[arg-type]

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(words=dot_words(desc, category))
    def check(words):
        k = desc.k
        a, b, c = words[:k], words[k:2 * k], words[2 * k]
        want = oracle.window_model(a, b, c, a_format=desc.a_format, b_format=desc.b_format,
                                   d_type=desc.d_type, clamp=clamp)
        assert dot(*words) == want

    check()


def test_products_below_the_window_are_truncated_toward_zero():
    assert tf32([P2_M13] * 8, [P2_M13] * 8, ONE) == ONE
    assert tf32([N2_M13] * 8, [P2_M13] * 8, ONE) == ONE
    assert tf32([N2_M13] * 8, [P2_M13] * 8, NEG_ONE) == NEG_ONE
    assert oracle.exact_model([N2_M13] * 8, [P2_M13] * 8, ONE, a_format="tf32") == 0x3F7FFFFE


def test_the_window_follows_the_largest_raw_exponent_not_c():
    """A large product moves the window: C = 1.0 then falls below it and truncates."""
    big = 0x4B800000  # 2^24
    assert tf32([big] + [0] * 7, [ONE] + [0] * 7, ONE) == 0x4B800000
    assert tf32([big] + [0] * 7, [0x40000000] + [0] * 7, ONE) == 0x4C000000


def test_overflow_is_infinity_not_max_finite():
    huge = 0x7F000000  # 2^127
    assert tf32([huge, huge] + [0] * 6, [0x40000000, 0x40000000] + [0] * 6, 0) == 0x7F800000
    assert tf32([huge, huge] + [0] * 6, [0xC0000000, 0xC0000000] + [0] * 6, 0) == 0xFF800000


def test_specials_are_canonical():
    inf, ninf, nan = 0x7F800000, 0xFF800000, 0x7FC00001
    zeros = [0] * 7
    assert tf32([inf] + zeros, [0] + zeros, 0) == 0x7FFFFFFF
    assert tf32([inf] + zeros, [ONE] + zeros, 0) == inf
    assert tf32([inf] + zeros, [NEG_ONE] + zeros, 0) == ninf
    assert tf32([inf] + zeros, [ONE] + zeros, ninf) == 0x7FFFFFFF
    assert tf32([0] * 8, [0] * 8, nan) == 0x7FFFFFFF
    assert tf32([0] * 8, [0] * 8, 0x80000000) == 0, "-0 + products of zero is +0"


def test_the_minus_133_clamp_moves_the_window_for_tf32_bf16():
    """P = 2^-134 and a product -2^-159: unclamped, q = -159 keeps the -1 unit and the
    F32 subnormal truncates to 0x7FFF; clamped at R = -133, q = -158 drops it: 0x8000."""
    a = [0x1E000000, 0x97800000] + [0] * 6  # 2^-67, -2^-80
    b = [0x1E000000, 0x18000000] + [0] * 6  # 2^-67, 2^-79
    tf32_fmt, f32 = FORMATS["tf32"], FORMATS["f32"]

    def run(clamp):
        return SCALAR.value(window_dot(SCALAR, tf32_fmt, tf32_fmt, f32,
                                       [SCALAR.const(w, 32) for w in a],
                                       [SCALAR.const(w, 32) for w in b],
                                       SCALAR.const(0, 32), clamp=clamp))

    assert run(WINDOW_CLAMP) == 0x8000 == tf32(a, b, 0)
    assert run(None) == 0x7FFF
    assert oracle.window_model(a, b, 0, a_format="tf32", clamp=-133) == 0x8000
    assert oracle.window_model(a, b, 0, a_format="tf32") == 0x7FFF
    assert default_clamp(FORMATS["bf16"], FORMATS["bf16"]) == WINDOW_CLAMP
    assert default_clamp(FORMATS["e4m3"], FORMATS["e5m2"]) is None


def test_an_unbounded_window_is_exact_truncation():
    """With a window wider than any exponent spread, the window rule is exact-rz."""
    tf32_fmt, f32 = FORMATS["tf32"], FORMATS["f32"]
    cases = [([0x4B800001, 0x33800000, 0x00800000], [ONE, 0xB3000000, 0x3F800000], 0x3F800000),
             ([0x7F000000, 0x00002000, 0x2F800000], [0x3F000000, 0x3F800000, 0xAF800000], 0x1)]
    for a, b, c in cases:
        a += [0] * 5
        b += [0] * 5
        got = window_dot(SCALAR, tf32_fmt, tf32_fmt, f32, [SCALAR.const(w, 32) for w in a],
                         [SCALAR.const(w, 32) for w in b], SCALAR.const(c, 32), window=600)
        assert SCALAR.value(got) == oracle.exact_model(a, b, c, a_format="tf32", rounding="rz")


# ------------------------------------------------------- F16 destination


def f16_dot(a_format, b_format, pairs, c):
    a = [p[0] for p in pairs] + [0] * (32 - len(pairs))
    b = [p[1] for p in pairs] + [0] * (32 - len(pairs))
    got = mma_dot(a, b, c, a_format=a_format, b_format=b_format, d_type="f16")
    assert got == oracle.window_model(a, b, c, a_format=a_format, b_format=b_format,
                                      d_type="f16")
    return got


E4M3_2M6, E4M3_2M5, E4M3_4 = 0x08, 0x10, 0x48


def test_f16_ties_round_to_even():
    one = 0x3C00
    assert f16_dot("e4m3", "e4m3", [(E4M3_2M6, E4M3_2M5)], one) == 0x3C00
    assert f16_dot("e4m3", "e4m3", [(E4M3_2M6, E4M3_2M5)] * 3, one) == 0x3C02
    assert f16_dot("e4m3", "e4m3", [(E4M3_2M6, E4M3_2M5)] * 2, one) == 0x3C01


def test_f16_rounding_carry_into_infinity():
    max_f16 = 0x7BFF  # 65504
    assert f16_dot("e4m3", "e4m3", [(E4M3_4, E4M3_4)], max_f16) == 0x7C00
    assert f16_dot("e4m3", "e4m3", [(E4M3_4 | 0x80, E4M3_4)], max_f16 | 0x8000) == 0xFC00
    assert f16_dot("e4m3", "e4m3", [(0x40, E4M3_4)], max_f16) == max_f16


def test_f16_negative_results_that_round_to_zero_are_plus_zero():
    assert f16_dot("e5m2", "e4m3", [(0x01, 0x01)], 0x8001) == 0x0000
    assert f16_dot("e5m2", "e4m3", [(0x81, 0x01)], 0x0000) == 0x0000
    assert f16_dot("e5m2", "e4m3", [(0x81, 0x01)] * 2, 0x0000) == 0x8001
    assert f16_dot("e5m2", "e4m3", [(0x81, 0x01)] * 3, 0x0000) == 0x8002, "-1.5 units: even"


def test_f16_subnormal_rounding_up_to_the_smallest_normal():
    """0x03FF (largest subnormal) plus half an ulp ties to even: 0x0400."""
    assert f16_dot("e5m2", "e4m3", [(0x01, 0x01)], 0x03FF) == 0x0400
