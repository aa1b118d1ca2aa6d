"""tcspec.matmul (tcspec/floats.py): float arrays in, the bit-exact D out."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tcspec import gemm, matmul, quantize
from tcspec.rounding import f32_mul


def _floats(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("fields", [{"a_format": "tf32"}, {"a_format": "bf16"},
                                    {"a_format": "e4m3", "b_format": "e2m1"},
                                    {"a_format": "e5m2", "scaling": "ue8m0"},
                                    {"a_format": "e2m1", "d_type": "f16"}])
def test_matmul_is_gemm_of_the_quantized_words(fields):
    a, b, c = _floats((3, 64), 1), _floats((64, 5), 2), _floats((3, 5), 3)
    d_type = fields.get("d_type", "f32")
    scaling = fields.get("scaling")
    block = 32 if scaling else None
    qa = quantize(a, fields["a_format"], scaling=scaling, block=block, axis=1)
    qb = quantize(b, fields.get("b_format", fields["a_format"]), scaling=scaling, block=block,
                  axis=0)
    c_words = (c.astype(np.float16).view(np.uint16).astype(np.uint32) if d_type == "f16"
               else c.view(np.uint32))
    want = gemm(qa.words, qb.words, c_words, scale_a=qa.scales, scale_b=qb.scales, **fields)
    got = matmul(a, b, c.astype(np.float16) if d_type == "f16" else c, **fields)
    assert got.dtype == (np.float16 if d_type == "f16" else np.float32)
    assert got.view(np.uint16 if d_type == "f16" else np.uint32).tolist() == want.tolist()


def test_nvfp4_returns_the_tensor_scale_or_applies_it_in_the_epilogue():
    a, b = _floats((2, 128), 4) * 100, _floats((128, 3), 5)
    d, alpha = matmul(a, b, a_format="e2m1", scaling="ue4m3")
    qa = quantize(a, "e2m1", scaling="ue4m3", axis=1)
    qb = quantize(b, "e2m1", scaling="ue4m3", axis=0)
    want = gemm(qa.words, qb.words, scale_a=qa.scales, scale_b=qb.scales, a_format="e2m1",
                scaling="ue4m3")
    assert d.view(np.uint32).tolist() == want.tolist()
    assert int(alpha.view(np.uint32)) == int(f32_mul(np.uint32(qa.tensor_scale),
                                                     np.uint32(qb.tensor_scale)))
    scaled = matmul(a, b, a_format="e2m1", scaling="ue4m3", epilogue=True)
    assert scaled.view(np.uint32).tolist() == f32_mul(want, alpha.view(np.uint32)).tolist()
    with pytest.raises(ValueError, match="epilogue"):
        matmul(a, b, a_format="e4m3", epilogue=True)


def test_inputs_in_a_tensor_core_format_are_taken_bit_for_bit():
    raw = np.random.default_rng(6).integers(0, 256, (4, 32), dtype=np.uint64).astype(np.uint8)
    raw[raw & 0x7F == 0x7F] = 0
    a = raw.view(ml_dtypes.float8_e4m3fn)
    b = raw.T.copy().view(ml_dtypes.float8_e4m3fn)
    got = matmul(a, b)
    want = gemm(raw.astype(np.uint32), raw.T.astype(np.uint32), a_format="e4m3")
    assert got.view(np.uint32).tolist() == want.tolist()


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    a, b = _floats((2, 32), 7), _floats((32, 2), 8)
    got = matmul(torch.from_numpy(a), torch.from_numpy(b).to(torch.float8_e4m3fn),
                 a_format="e4m3")
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    want = matmul(a, b.astype(ml_dtypes.float8_e4m3fn), a_format="e4m3")
    assert got.numpy().view(np.uint32).tolist() == want.view(np.uint32).tolist()
    with pytest.raises(ValueError, match="torch tensor on meta"):
        matmul(torch.zeros((2, 32), device="meta"), torch.from_numpy(b), a_format="e4m3")


def test_bad_input_is_a_value_error_naming_the_problem():
    a, b = np.ones((2, 32)), np.ones((32, 2))
    with pytest.raises(ValueError, match="A: x holds NaN, which e2m1 cannot represent"):
        matmul(np.full((2, 32), np.nan), b, a_format="e2m1")
    with pytest.raises(ValueError, match="non-finite"):
        matmul(a, b, a_format="e4m3", scaling="ue8m0", scale_a=np.full((2, 1), 0xFF))
    with pytest.raises(ValueError, match="do not chain"):
        matmul(a, np.ones((31, 2)), a_format="e4m3")
    with pytest.raises(ValueError, match="a_format is needed"):
        matmul(a, b)
    with pytest.raises(ValueError, match="tensor_scale must be one finite"):
        matmul(a, b, a_format="e2m1", scaling="ue4m3", tensor_scale_a=float("nan"))
