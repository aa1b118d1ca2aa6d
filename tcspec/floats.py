"""``matmul``: the bit-exact tensor-core D of float arrays (SEMANTICS.md 8 and 9).

The operands are converted to words by :func:`tcspec.quantization.quantize`
(A's scale blocks along its rows, B's along its columns; arrays already in
the operand format are taken bit for bit), C exactly to the accumulator
format (RNE where it does not fit), the chain of instructions runs through
:func:`tcspec.gemm`, and D comes back as float32 (float16 for an F16 D) in
the inputs' library: NumPy (ml_dtypes arrays are NumPy arrays) or torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tcspec.accumulation import Accumulation, Chain, accumulation_of
from tcspec.chaining import gemm
from tcspec.quantization import ONE_F32, quantize, source_of
from tcspec.ref.kernels import check_jobs
from tcspec.rounding import F16, F32, f32_mul, round_to, with_specials
from tcspec.spec.descriptor import resolve


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _accumulator_words(c: Any, d_type: str, shape: tuple[int, int]) -> np.ndarray:
    """C as accumulator words: float32 (F32 D) or float16 (F16 D) bits as they are, other
    floats rounded once (RNE; overflow to Inf)."""
    src = source_of(c, "C")
    if src.bits.shape != shape:
        raise ValueError(f"C must have shape {shape}, got {src.bits.shape}")
    fmt = F16 if d_type == "f16" else F32
    if src.format is None and src.widths == (fmt.exp_bits, fmt.frac_bits, fmt.bias):
        return src.bits.astype(np.uint32)
    value = src.decoded()
    codes = round_to(value.sign, value.sig, value.exp, fmt, top=value.top, what="C")
    return with_specials(codes, value, fmt, saturate=False, what="C").astype(np.uint32)


def _floats(words: np.ndarray, f16: bool, torch_out: bool) -> Any:
    out = (np.array(words, dtype=np.uint16).view(np.float16) if f16
           else np.array(words, dtype=np.uint32).view(np.float32))
    if torch_out:
        import torch

        return torch.from_numpy(out)
    return out


def matmul(a: Any, b: Any, c: Any = None, *, a_format: str | None = None,
           b_format: str | None = None, d_type: str = "f32", scaling: str | None = None,
           kind: str | None = None, scale_vec: int | None = None, scale_a: Any = None,
           scale_b: Any = None, tensor_scale_a: Any = None, tensor_scale_b: Any = None,
           rounding: str = "rne", saturate: bool | None = None,
           k_order: Sequence[int] | None = None,
           accumulation: str | Accumulation | None = None, epilogue: bool = False,
           jobs: int | None = None) -> Any:
    """The tensor-core ``D = C + A @ B`` of float arrays, bit-exact (SEMANTICS.md 9).

    ``a[M, K]`` and ``b[K, N]``: NumPy float32/float64/float16, ml_dtypes
    (bfloat16, float8_e4m3fn, float8_e5m2, float6_e2m3fn, float6_e3m2fn,
    float4_e2m1fn) or CPU torch tensors. ``a_format``/``b_format`` name the
    operand formats (default: the array's own, when it is one); ``rounding``
    and ``saturate`` go to :func:`tcspec.quantization.quantize`. ``scaling``
    (``"ue8m0"``: OCP MX block scales; ``"ue4m3"``: the two-level NVFP4
    recipe), ``kind`` and ``scale_vec`` are the descriptor fields; block
    scales are computed unless ``scale_a`` (``[M, K/block]``) and ``scale_b``
    (``[N, K/block]``) are given, likewise ``tensor_scale_a``/``_b``.
    ``k_order``, ``accumulation`` and ``jobs`` are :func:`tcspec.gemm`'s.

    Returns D as float32 (float16 for an F16 D) in the inputs' library. With
    ``scaling="ue4m3"`` it returns ``(D, alpha)``: ``alpha`` the F32 product
    of the two per-tensor decode scales (RNE), the factor a kernel's epilogue
    applies; ``epilogue=True`` returns ``alpha * D`` instead (an F32 RNE
    multiply on the CUDA cores, not tensor-core arithmetic).
    """
    jobs = check_jobs(jobs)
    torch_out = _is_torch(a) or _is_torch(b)
    src_a, src_b = source_of(a, "A"), source_of(b, "B")
    if src_a.bits.ndim != 2 or src_b.bits.ndim != 2:
        raise ValueError(f"A and B must be matrices, got shapes {src_a.bits.shape} and "
                         f"{src_b.bits.shape}")
    (m, k), (k_b, n) = src_a.bits.shape, src_b.bits.shape
    if k != k_b:
        raise ValueError(f"A is {m} x {k} but B is {k_b} x {n}: the shapes do not chain "
                         f"(A's columns must equal B's rows)")
    a_format = a_format or src_a.format
    if a_format is None:
        raise ValueError("a_format is needed for a plain float A (e.g. 'tf32', 'e4m3')")
    b_format = b_format or (src_b.format if src_b.format else a_format)
    desc = resolve(a_format, b_format, d_type, scaling=scaling, kind=kind, scale_vec=scale_vec)
    if epilogue and desc.scaling != "ue4m3":
        raise ValueError("epilogue applies the NVFP4 per-tensor scales: it needs "
                         "scaling='ue4m3'")
    pattern = accumulation_of(accumulation)
    f16 = desc.d_type == "f16" and isinstance(pattern, Chain) and not epilogue
    if epilogue and desc.d_type == "f16":
        raise ValueError("epilogue multiplies in F32: it needs an F32 D")
    quantized = []
    for what, x, fmt, scales, tensor, axis in (
            ("A", a, desc.a_format, scale_a, tensor_scale_a, 1),
            ("B", b, desc.b_format, scale_b, tensor_scale_b, 0)):
        try:
            quantized.append(quantize(x, fmt, rounding=rounding, saturate=saturate,
                                      scaling=desc.scaling, block=desc.scale_block, axis=axis,
                                      scales=scales, tensor_scale=tensor))
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
    qa, qb = quantized
    c_words = None if c is None else _accumulator_words(c, desc.d_type, (m, n))
    fields = {key: value for key, value in desc.fields().items() if value is not None}
    d = gemm(qa.words, qb.words, c_words, k_order=k_order, accumulation=pattern,
             scale_a=qa.scales, scale_b=qb.scales, jobs=jobs, **fields)
    if desc.scaling != "ue4m3":
        return _floats(d, f16, torch_out)
    alpha = f32_mul(np.uint32(qa.tensor_scale or ONE_F32), np.uint32(qb.tensor_scale or ONE_F32))
    if epilogue:
        return _floats(f32_mul(d, alpha), False, torch_out)
    return _floats(d, False, torch_out), _floats(alpha.reshape(()), False, torch_out)
