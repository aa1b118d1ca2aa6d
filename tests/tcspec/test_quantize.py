"""tcspec.quantize against independent quantizers: ml_dtypes casts, torch casts, an exact
nearest-value search over each format's grid (Fractions), and the OCP MX v1.0 section 6.3
properties of the shared exponent (hypothesis inputs, NaN / Inf / saturation edges)."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcspec import quantize
from tcspec.quantization import NVFP4_BLOCK

CASTS = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
         "bf16": ml_dtypes.bfloat16, "f16": np.float16, "e2m3": ml_dtypes.float6_e2m3fn,
         "e3m2": ml_dtypes.float6_e3m2fn, "e2m1": ml_dtypes.float4_e2m1fn}
MAX = {"e4m3": 448.0, "e5m2": 57344.0, "e2m3": 7.5, "e3m2": 28.0, "e2m1": 6.0}
EMAX = {"e4m3": 8, "e5m2": 15, "e2m3": 2, "e3m2": 4, "e2m1": 2}
"""Exponent of each element format's largest normal (``emax_elem`` of OCP MX v1.0)."""
NO_NAN = ("e2m3", "e3m2", "e2m1")
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")
SETTINGS = settings(max_examples=120, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

EDGES32 = [0.0, -0.0, np.inf, -np.inf, np.nan, 448.0, 464.0, 464.00003, 480.0, 57344.0,
           61440.0, 61439.996, 7.25, 7.75, 28.0, 30.0, 6.0, 7.0, 0.25, 0.75, 5.0, 2**-9,
           2**-10, 3 * 2**-11, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, 65520.0, 65519.996]
floats32 = st.one_of(st.floats(width=32), st.sampled_from(EDGES32),
                     st.builds(lambda m, e: float(np.float32(m * 2.0**e)),
                               st.integers(-(2**24), 2**24), st.integers(-160, 20)))


def _cast_words(x: np.ndarray, fmt: str) -> np.ndarray:
    y = x.astype(CASTS[fmt])
    words = y.view(np.uint16 if y.itemsize == 2 else np.uint8).astype(np.uint32)
    return words << np.uint32(16) if fmt == "bf16" else words


def _same(got: np.ndarray, want: np.ndarray, fmt: str) -> None:
    nan = np.isnan(np.asarray(want, dtype=np.uint32).astype(np.uint32).view(np.float32)
                   if fmt == "bf16" else _decode(want, fmt))
    assert (np.isnan(_decode(got, fmt)) == nan).all()
    assert got[~nan].tolist() == want[~nan].tolist()


def _decode(words: np.ndarray, fmt: str) -> np.ndarray:
    words = np.asarray(words, dtype=np.uint32)
    if fmt == "bf16":
        return words.view(np.float32)
    if fmt == "tf32":
        return words.view(np.float32)
    dtype = CASTS[fmt]
    raw = words.astype(np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint8)
    return raw.view(dtype).astype(np.float64)


@pytest.mark.parametrize("fmt", sorted(CASTS))
@SETTINGS
@given(st.lists(floats32, min_size=1, max_size=64))
def test_float32_casts_match_ml_dtypes(fmt, values):
    x = np.array(values, dtype=np.float32)
    if fmt in NO_NAN:
        x = x[~np.isnan(x)]
    _same(quantize(x, fmt).words, _cast_words(x, fmt), fmt)
    if fmt in ("e4m3", "e5m2"):
        clipped = np.clip(x, -MAX[fmt], MAX[fmt])
        _same(quantize(x, fmt, saturate=True).words, _cast_words(clipped, fmt), fmt)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "f16", "e2m1"])
@SETTINGS
@given(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=32))
def test_float64_casts_match_ml_dtypes(fmt, values):
    x = np.array(values, dtype=np.float64)
    _same(quantize(x, fmt).words, _cast_words(x, fmt), fmt)


@SETTINGS
@given(st.lists(floats32, min_size=1, max_size=64))
def test_tf32_and_bf16_match_the_carry_trick_and_truncation(values):
    """RNE to 10 (7) fraction bits is the add-half-minus-one-plus-lsb carry on the F32 bits;
    RZ clears the low 13 (16) bits."""
    x = np.array(values, dtype=np.float32)
    finite = np.isfinite(x)
    bits = x.view(np.uint32).astype(np.uint64)
    for fmt, low in (("tf32", 13), ("bf16", 16)):
        half = (1 << (low - 1)) - 1
        rne = ((bits + half + ((bits >> low) & 1)) >> low << low).astype(np.uint32)
        got = quantize(x, fmt).words
        assert got[finite].tolist() == rne[finite].tolist()
        rz = quantize(x, fmt, rounding="rz").words
        assert rz[finite].tolist() == (bits >> low << low)[finite].astype(np.uint32).tolist()


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "bf16", "f16"])
@SETTINGS
@given(st.lists(floats32, min_size=1, max_size=64))
def test_float32_casts_match_torch(fmt, values):
    """torch casts to float8_e4m3fn saturate (infinity included); the others do not."""
    tch = pytest.importorskip("torch")
    dtype = {"e4m3": tch.float8_e4m3fn, "e5m2": tch.float8_e5m2, "bf16": tch.bfloat16,
             "f16": tch.float16}[fmt]
    x = np.array(values, dtype=np.float32)
    y = tch.from_numpy(x).to(dtype)
    raw = y.view(tch.uint8 if y.element_size() == 1 else tch.int16).numpy()
    want = raw.view(np.uint8 if raw.itemsize == 1 else np.uint16).astype(np.uint32)
    want = want << np.uint32(16) if fmt == "bf16" else want
    got = quantize(tch.from_numpy(x), fmt, saturate=fmt == "e4m3").words
    _same(got, want, fmt)
    assert quantize(y, fmt).words.tolist() == want.tolist()


def test_formats_without_nan_or_inf_refuse_them():
    with pytest.raises(ValueError, match="NaN, which e2m1 cannot represent"):
        quantize(np.array([1.0, np.nan]), "e2m1")
    with pytest.raises(ValueError, match="overflows e3m2"):
        quantize(np.array([100.0]), "e3m2", saturate=False)
    with pytest.raises(ValueError, match="infinity"):
        quantize(np.array([np.inf]), "e2m3", saturate=False)
    assert quantize(np.array([np.inf, -100.0]), "e2m1").words.tolist() == [0x7, 0xF]
    with pytest.raises(ValueError, match="format must be one of"):
        quantize(np.ones(2), "f32")
    with pytest.raises(ValueError, match="rounding must be"):
        quantize(np.ones(2), "e4m3", rounding="up")
    with pytest.raises(ValueError, match="must be a float array"):
        quantize(np.ones(2, dtype=np.int32), "e4m3")


def test_inputs_in_the_format_are_taken_bit_for_bit():
    raw = np.arange(256, dtype=np.uint8)
    assert quantize(raw.view(ml_dtypes.float8_e4m3fn), "e4m3").words.tolist() == raw.tolist()
    nibbles = np.arange(16, dtype=np.uint8)
    got = quantize(nibbles.view(ml_dtypes.float4_e2m1fn), "e2m1").words
    assert got.tolist() == nibbles.tolist()
    half = np.arange(0, 65536, 257, dtype=np.uint16)
    got = quantize(half.view(ml_dtypes.bfloat16), "bf16").words
    assert got.tolist() == (half.astype(np.uint32) << 16).tolist()


# --- OCP MX v1.0 section 6.3 -------------------------------------------------------------

blocks32 = st.lists(st.one_of(floats32.filter(np.isfinite), st.just(0.0)),
                    min_size=32, max_size=32)


@pytest.mark.parametrize("fmt", sorted(EMAX))
@SETTINGS
@given(blocks32)
def test_mx_shared_exponent_and_elements_follow_the_ocp_rules(fmt, values):
    """X = floor(log2(max|V_i|)) - emax_elem (clamped at -127); P_i = V_i / 2^X rounded to the
    element format with clamping to its largest normal; the largest element then lies in
    [2^emax_elem, max normal] unless the block is all zero."""
    x = np.array(values, dtype=np.float32)
    q = quantize(x, fmt, scaling="ue8m0")
    (scale,) = q.scales.tolist()
    amax = float(np.max(np.abs(x)))
    if amax == 0:
        assert scale == 0 and (_decode(q.words, fmt) == 0).all()
        return
    expected = max(np.frexp(amax)[1] - 1 - EMAX[fmt], -127)
    assert scale == expected + 127
    scaled = np.clip(x.astype(np.float64) * 2.0 ** -expected, -MAX[fmt], MAX[fmt])
    assert q.words.tolist() == _cast_words(scaled, fmt).tolist()
    elements = np.abs(_decode(q.words, fmt))
    if expected > -127:
        assert 2.0 ** EMAX[fmt] <= elements.max() <= MAX[fmt]
    assert (elements <= MAX[fmt]).all()


def test_mx_special_blocks_and_layout():
    x = np.zeros((2, 64), dtype=np.float32)
    x[0, 3] = np.nan
    x[1, 40] = np.inf
    x[1, 0] = 3.0
    q = quantize(x, "e4m3", scaling="ue8m0")
    assert q.scales.tolist() == [[0xFF, 0x00], [0x7F + 1 - 8, 0xFF]]
    assert not q.words[0, :32].any()
    b = quantize(x.T.copy(), "e4m3", scaling="ue8m0", axis=0)
    assert b.scales.tolist() == q.scales.tolist() and b.words.T.tolist() == q.words.tolist()
    big = quantize(np.full(32, 2.0**1000), "e4m3", scaling="ue8m0")
    assert big.scales.tolist() == [0xFF]
    with pytest.raises(ValueError, match="not a multiple of the scale block 32"):
        quantize(np.ones(48), "e4m3", scaling="ue8m0")
    with pytest.raises(ValueError, match="saturate=False does not apply"):
        quantize(np.ones(32), "e4m3", scaling="ue8m0", saturate=False)


# --- NVFP4 two-level recipe ---------------------------------------------------------------

def _grid(dtype) -> list[tuple[Fraction, int]]:
    """Every finite non-negative value of a small format with its code."""
    raw = np.arange(256, dtype=np.uint8)
    values = raw.view(dtype).astype(np.float64)
    return [(Fraction(float(v)), int(c)) for v, c in zip(values, raw)
            if np.isfinite(v) and v >= 0]


E2M1 = [(v, c) for v, c in _grid(ml_dtypes.float4_e2m1fn) if c < 8]
UE4M3 = [(v, c) for v, c in _grid(ml_dtypes.float8_e4m3fn) if c < 0x7F]


def _nearest(value: Fraction, grid: list[tuple[Fraction, int]]) -> int:
    """The code nearest to ``value`` (ties to the even code), clamped to the largest."""
    if value >= grid[-1][0]:
        return grid[-1][1]
    best = min(grid, key=lambda vc: (abs(vc[0] - value), vc[1] & 1))
    return best[1]


def _f32_nearest(value: Fraction, word: int) -> bool:
    """``word`` is an F32 value nearest to ``value`` (exactly, neighbours compared)."""
    def f(w):
        return Fraction(float(np.uint32(w).view(np.float32)))
    here = abs(f(word) - value)
    return here <= abs(f(word + 1) - value) and here <= abs(f(word - 1) - value)


@SETTINGS
@given(st.lists(st.one_of(floats32.filter(lambda v: np.isfinite(v) and abs(v) < 1e30),
                          st.just(0.0)), min_size=32, max_size=32))
def test_nvfp4_two_level_recipe_is_exact_nearest_rounding(values):
    x = np.array(values, dtype=np.float32)
    q = quantize(x, "e2m1", scaling="ue4m3")
    amax = Fraction(float(np.max(np.abs(x))))
    s = Fraction(float(np.uint32(q.tensor_scale).view(np.float32)))
    if amax / 2688 <= Fraction(2) ** -150:
        assert q.tensor_scale == 0x3F800000
    else:
        assert _f32_nearest(amax / 2688, q.tensor_scale)
    for blk in range(2):
        part = x[blk * NVFP4_BLOCK:(blk + 1) * NVFP4_BLOCK]
        block_amax = Fraction(float(np.max(np.abs(part))))
        code = int(q.scales[blk])
        assert code == _nearest(block_amax / (6 * s), UE4M3)
        scale = Fraction(float(np.uint8(code).view(ml_dtypes.float8_e4m3fn)))
        for value, word in zip(part, q.words[blk * NVFP4_BLOCK:(blk + 1) * NVFP4_BLOCK]):
            magnitude = 0 if scale == 0 else _nearest(abs(Fraction(float(value))) /
                                                      (scale * s), E2M1)
            assert int(word) & 7 == magnitude


def test_given_scales_and_their_errors():
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 32)
    scales = np.array([[0x38, 0x40]], dtype=np.uint8)
    q = quantize(x, "e2m1", scaling="ue4m3", scales=scales, tensor_scale=0.5)
    assert q.tensor_scale == 0x3F000000 and q.scales.tolist() == scales.tolist()
    want = quantize((x / np.repeat([1.0, 2.0], 16) / 0.5).astype(np.float32), "e2m1")
    assert q.words.tolist() == want.words.tolist()
    same = quantize(x, "e2m1", scaling="ue4m3", scales=scales.view(ml_dtypes.float8_e4m3fn),
                    tensor_scale=np.float32(0.5))
    assert same.words.tolist() == q.words.tolist()
    wide = np.concatenate([x, x], axis=1)
    mx = quantize(wide, "e4m3", scaling="ue8m0", scales=np.array([[0x80, 0x7E]]))
    assert mx.words.tolist() == quantize(wide * np.repeat([0.5, 2.0], 32).astype(np.float32),
                                         "e4m3").words.tolist()
    with pytest.raises(ValueError, match="non-finite"):
        quantize(x, "e2m1", scaling="ue4m3", scales=np.array([[0x7F, 0x38]]))
    with pytest.raises(ValueError, match="non-finite"):
        quantize(wide, "e4m3", scaling="ue8m0", scales=np.array([[0xFF, 0x7F]]))
    with pytest.raises(ValueError, match="tensor_scale must be one finite"):
        quantize(x, "e2m1", scaling="ue4m3", tensor_scale=float("inf"))
    with pytest.raises(ValueError, match=r"shape \(1, 2\)"):
        quantize(x, "e2m1", scaling="ue4m3", scales=np.array([0x38, 0x38]))
    with pytest.raises(ValueError, match="take e2m1 elements"):
        quantize(x, "e4m3", scaling="ue4m3")
    with pytest.raises(ValueError, match="NaN, which e2m1"):
        quantize(np.full(16, np.nan), "e2m1", scaling="ue4m3")
