"""Float arrays -> tensor-core operand words, exactly on the IEEE bits (SEMANTICS.md 9).

:func:`quantize` rounds NumPy float32/float64/float16, ml_dtypes and (CPU)
torch arrays to one operand format, with no host float arithmetic: the
input's bits are decoded to integers and rounded once
(:func:`tcspec.rounding.round_to`). Three ways to scale:

- none: each element rounded (RNE by default, or RZ);
- ``scaling="ue8m0"``, OCP MX v1.0 (section 6.3): per block of K
  elements, the shared exponent ``X = floor(log2(max |V_i|)) - emax_elem``
  (``emax_elem`` the exponent of the element format's largest normal),
  clamped below at -127; the scale byte is ``X + 127``; each element is
  ``V_i / 2^X`` rounded to the element format, clamped to its largest
  normal. A block holding NaN or an infinity, or with ``X > 127``, gets
  the NaN scale 0xFF (elements 0);
- ``scaling="ue4m3"``, NVIDIA's two-level NVFP4 recipe: a per-tensor F32
  decode scale ``s = RNE(amax / (6 * 448))`` (1.0 when that is 0), a UE4M3
  block scale per 16 elements ``RNE_sat(block_amax / (6 s))``, elements
  ``RNE_sat(V_i / (scale * s))`` in E2M1 (0 under a zero block scale). Each
  quotient is exact before its one rounding. ``s`` is an epilogue factor
  outside the instruction (:func:`tcspec.floats.matmul`).

Scales may be passed instead (``scales=``, and ``tensor_scale=`` for UE4M3).
Arrays already in the requested operand format are taken bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tcspec.rounding import (
    F32,
    Decoded,
    container,
    decode_bits,
    decode_format,
    divide,
    round_to,
    with_specials,
)
from tcspec.spec.formats import FORMATS, FloatFormat, format_named

OPERAND_FORMATS = ("tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
SCALINGS = ("ue8m0", "ue4m3")
MX_BLOCK = 32
"""OCP MX v1.0 block size (K elements per UE8M0 scale)."""
NVFP4_BLOCK = 16
NVFP4_RANGE = (21, 7)
"""``6 * 448 = 21 * 2^7``: E2M1's largest value times UE4M3's, as (significand, exponent)."""
ONE_F32 = 0x3F800000

NUMPY_FLOATS = {np.dtype(np.float32): (8, 23, 127), np.dtype(np.float64): (11, 52, 1023),
                np.dtype(np.float16): (5, 10, 15)}
"""IEEE binary widths (exponent bits, fraction bits, bias) of the NumPy float dtypes."""

ML_DTYPES = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
             "float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1",
             "float8_e8m0fnu": "ue8m0"}
"""ml_dtypes (and torch) dtype names whose bits are a row of the format table."""


@dataclass(frozen=True)
class Quantized:
    """Operand words of one format: ``words`` (``uint32`` containers, the input's shape),
    and for block-scaled operands the scale bytes (``uint8``, one per block, the block
    index last: the ``scale_a``/``scale_b`` layout of :func:`tcspec.gemm`), the block size,
    the K axis, and the F32 decode scale word of a two-level NVFP4 operand."""

    words: np.ndarray
    format: str
    scales: np.ndarray | None = None
    scaling: str | None = None
    block: int | None = None
    axis: int = -1
    tensor_scale: int | None = None


@dataclass(frozen=True)
class Source:
    """An input array as bits: ``bits`` (unsigned), its format name when it is a row of the
    table (``None`` for plain NumPy floats), and the IEEE widths to decode it with."""

    bits: np.ndarray
    format: str | None
    widths: tuple[int, int, int] | None
    library: str

    def decoded(self) -> Decoded:
        if self.format is not None:
            fmt = FORMATS[self.format]
            assert isinstance(fmt, FloatFormat)
            return decode_format(self.bits, fmt)
        assert self.widths is not None
        return decode_bits(self.bits, *self.widths)


def source_of(x: Any, what: str) -> Source:
    """The bits of a NumPy, ml_dtypes or CPU torch array (``ValueError`` for anything else,
    or a torch tensor on another device)."""
    library = "numpy"
    if type(x).__module__.startswith("torch"):
        library = "torch"
        x = _torch_array(x, what)
    array = x if isinstance(x, np.ndarray) else np.asarray(x)
    if not array.dtype.isnative:
        array = array.byteswap().view(array.dtype.newbyteorder("="))
    if array.dtype == np.float16:
        return Source(array.view(np.uint16), "f16", None, library)
    if array.dtype in NUMPY_FLOATS:
        unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize]
        return Source(array.view(unsigned), None, NUMPY_FLOATS[array.dtype], library)
    name = array.dtype.name
    if name in ML_DTYPES:
        bits = array.view(np.uint16 if array.dtype.itemsize == 2 else np.uint8)
        if name == "bfloat16":
            bits = bits.astype(np.uint32) << np.uint32(16)
        return Source(bits, ML_DTYPES[name], None, library)
    if array.dtype.kind in "iub":
        raise ValueError(f"{what} must be a float array, got integers (dtype {array.dtype}): "
                         "matmul and quantize take float values; raw operand words, the "
                         "integer MMAs (s8/u8) included, go to tcspec.mma or tcspec.gemm")
    raise ValueError(f"{what} must be a float array (float32, float64, float16, or an "
                     f"ml_dtypes/torch {', '.join(ML_DTYPES)} array), got dtype {array.dtype}")


def _torch_array(x: Any, what: str) -> np.ndarray:
    """A CPU torch tensor as a NumPy array of the same bits (ml_dtypes for the 8-bit floats
    and bfloat16)."""
    import torch

    if x.device.type != "cpu":
        raise ValueError(f"{what} is a torch tensor on {x.device}; tcspec runs on the CPU: "
                         f"pass {what}.cpu()")
    x = x.detach()
    name = str(x.dtype).removeprefix("torch.")
    if name in ML_DTYPES:
        import ml_dtypes

        raw = x.contiguous().view(torch.uint8 if x.element_size() == 1 else torch.int16)
        return raw.numpy().view(getattr(ml_dtypes, name))
    if x.dtype in (torch.float32, torch.float64, torch.float16):
        return x.numpy()
    raise ValueError(f"{what} must be a float tensor (float32, float64, float16, bfloat16 or "
                     f"a float8 dtype), got {x.dtype}")


def operand_format(name: str) -> FloatFormat:
    """The table row of an operand format (``ValueError`` for any other name)."""
    fmt = format_named(name)
    if not isinstance(fmt, FloatFormat) or fmt.name not in OPERAND_FORMATS:
        raise ValueError(f"format must be one of {', '.join(OPERAND_FORMATS)}, got {name!r}")
    return fmt


def _default_saturate(fmt: FloatFormat, saturate: bool | None) -> bool:
    """A cast saturates only where the format has neither Inf nor NaN (FP6, FP4)."""
    return fmt.specials == "none" if saturate is None else bool(saturate)


def quantize(x: Any, format: str, *, rounding: str = "rne", saturate: bool | None = None,
             scaling: str | None = None, block: int | None = None, axis: int = -1,
             scales: Any = None, tensor_scale: Any = None) -> Quantized:
    """``x`` as operand words of ``format`` (SEMANTICS.md 9.2), optionally block-scaled.

    ``saturate`` (default: only for FP6/FP4) clamps overflow to the largest
    finite value; otherwise it becomes Inf, E4M3's NaN, or a ``ValueError``.
    ``scaling="ue8m0"`` applies OCP MX v1.0 over blocks of ``block``
    (default 32) along ``axis``; ``"ue4m3"`` the two-level NVFP4 recipe
    (E2M1, blocks of 16). ``scales`` (bytes, or an ml_dtypes/torch
    float8_e8m0fnu / float8_e4m3fn array, block index last) and
    ``tensor_scale`` (an F32 value) replace the computed ones. An input
    already in ``format`` is taken bit for bit (its scales: ``scales`` or
    unit).
    """
    fmt = operand_format(format)
    src = source_of(x, "x")
    if scaling is None:
        if scales is not None or tensor_scale is not None:
            raise ValueError("scales given, but scaling is None")
        if src.format == fmt.name:
            return Quantized(src.bits.astype(np.uint32), fmt.name)
        flat = src.bits.reshape(-1)
        sat = _default_saturate(fmt, saturate)
        words = _chunks(lambda part: _elements(_part(src, flat[part]).decoded(), fmt,
                                               rounding, sat, "x"), flat.size)
        return Quantized(words.reshape(src.bits.shape), fmt.name)
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {', '.join(SCALINGS)} or None, "
                         f"got {scaling!r}")
    if scaling == "ue4m3" and fmt.name != "e2m1":
        raise ValueError(f"UE4M3 block scales (NVFP4) take e2m1 elements, got {fmt.name}")
    if scaling == "ue8m0" and tensor_scale is not None:
        raise ValueError("tensor_scale is part of the two-level NVFP4 recipe (UE4M3 scales)")
    if saturate is False:
        raise ValueError("block-scaled conversion clamps to the largest normal (OCP MX v1.0 "
                         "section 6.3): saturate=False does not apply")
    size = block or (MX_BLOCK if scaling == "ue8m0" else NVFP4_BLOCK)
    ndim = np.ndim(src.bits)
    if ndim == 0:
        raise ValueError("x must have at least one dimension to cut into scale blocks")
    axis = axis % ndim
    bits = np.moveaxis(src.bits, axis, -1)
    k = bits.shape[-1]
    if k % size:
        raise ValueError(f"x has {k} elements along axis {axis}, not a multiple of the "
                         f"scale block {size}")
    blocks = bits.reshape(-1, size)
    shape = bits.shape[:-1] + (k // size,)
    word = None if scaling == "ue8m0" else _tensor_scale(tensor_scale)
    if src.format == fmt.name:
        words = blocks.astype(np.uint32)
        given = (_unit_scales(scaling, shape) if scales is None
                 else _given_scales(scales, scaling, shape)).reshape(-1)
    else:
        if scaling == "ue4m3":
            value = _part(src, blocks).decoded()
            if not value.finite.all():
                kind = "NaN" if value.nan.any() else "an infinity"
                raise ValueError(f"x holds {kind}, which e2m1 (NVFP4) cannot represent")
            if tensor_scale is None:
                word = _nvfp4_tensor_scale(_part(src, blocks.reshape(1, -1)))
        given = None if scales is None else _given_scales(scales, scaling, shape).reshape(-1)

        def work(part: slice) -> np.ndarray:
            chunk = _part(src, blocks[part])
            if given is not None:
                mine = given[part]
            elif scaling == "ue8m0":
                mine = _mx_scales(chunk, fmt)
            else:
                mine = _block_scales(chunk, word)  # type: ignore[arg-type]
            elements = _scaled_elements(chunk.decoded(), fmt, rounding, scaling, mine, word)
            return np.concatenate([elements, mine[:, None].astype(np.uint32)], axis=1)

        both = _chunks(work, blocks.shape[0], CHUNK // size)
        words, given = both[:, :size], both[:, size].astype(np.uint8)
    words = np.moveaxis(words.reshape(bits.shape), -1, axis)
    return Quantized(np.ascontiguousarray(words), fmt.name, given.reshape(shape), scaling,
                     size, axis, word)


CHUNK = 1 << 15
"""Elements per piece of a conversion (its integer temporaries stay in the L2 cache)."""


def _chunks(work: Any, count: int, step: int = CHUNK) -> np.ndarray:
    """``work(slice)`` over ``range(count)`` in pieces of ``step``, on every core (NumPy
    releases the GIL), joined along the first axis."""
    from tcspec.ref.kernels import default_jobs

    parts = [slice(lo, min(count, lo + step)) for lo in range(0, count, step)] or [slice(0, 0)]
    if len(parts) == 1 or default_jobs() == 1:
        return np.concatenate([work(part) for part in parts])
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(default_jobs()) as pool:
        return np.concatenate(list(pool.map(work, parts)))


def _part(src: Source, bits: np.ndarray) -> Source:
    return Source(bits, src.format, src.widths, src.library)


def _elements(value: Decoded, fmt: FloatFormat, rounding: str, saturate: bool, what: str
              ) -> np.ndarray:
    codes = round_to(value.sign, value.sig, value.exp, fmt, rounding=rounding,
                     saturate=saturate, what=what, top=value.top)
    codes = with_specials(codes, value, fmt, saturate=saturate, what=what)
    return container(codes, fmt).astype(np.uint32)


def _magnitude_max(src: Source) -> Decoded:
    """The largest magnitude of each block (last axis): the maximum of the sign-cleared
    bits, which order like the magnitudes (NaN above Inf above every finite value)."""
    if src.format is not None:
        fmt = FORMATS[src.format]
        assert isinstance(fmt, FloatFormat)
        sign = 1 << (fmt.exp_bits + fmt.frac_bits + fmt.cleared_bits)
    else:
        assert src.widths is not None
        sign = 1 << (src.widths[0] + src.widths[1])
    top = (src.bits & src.bits.dtype.type(sign - 1)).max(axis=-1)
    return Source(top, src.format, src.widths, src.library).decoded()


def _mx_scales(src: Source, fmt: FloatFormat) -> np.ndarray:
    """OCP MX v1.0 section 6.3 shared exponents of blocks (last axis) as UE8M0 bytes: the
    block maximum's exponent minus ``emax_elem``, clamped below at -127 (an all-zero block:
    -127); NaN (0xFF) for a block holding NaN or an infinity, or above 127."""
    amax = _magnitude_max(src)
    shared = np.maximum(amax.top - fmt.max_raw, -127)
    shared = np.where(amax.sig == 0, -127, shared)
    nan = ~amax.finite | (shared > 127)
    return np.where(nan, 0xFF, shared + 127).astype(np.uint8)


def _nvfp4_tensor_scale(src: Source) -> int:
    """The F32 decode scale word ``RNE(amax / (6 * 448))`` of a whole tensor (1.0 when that
    is zero)."""
    amax = _magnitude_max(src)
    q, exp, sticky = divide(amax.sig, amax.exp, np.uint64(NVFP4_RANGE[0]), NVFP4_RANGE[1])
    return int(round_to(0, q, exp, F32, sticky=sticky)[0]) or ONE_F32


def _block_scales(src: Source, tensor_word: int) -> np.ndarray:
    """UE4M3 bytes ``RNE_sat(block_amax / (6 * s))`` of each block."""
    ue4m3 = FORMATS["ue4m3"]
    assert isinstance(ue4m3, FloatFormat)
    amax = _magnitude_max(src)
    s = decode_format(np.uint32(tensor_word), F32)
    q, exp, sticky = divide(amax.sig, amax.exp, s.sig * np.uint64(3), s.exp + 1)
    return round_to(0, q, exp, ue4m3, saturate=True, sticky=sticky).astype(np.uint8)


def _scaled_elements(value: Decoded, fmt: FloatFormat, rounding: str, scaling: str,
                     scales: np.ndarray, tensor_word: int | None) -> np.ndarray:
    """Elements ``RNE_sat(V / (scale * s))`` of blocks (last axis) under given scales."""
    if scaling == "ue8m0":
        nan = (scales == 0xFF)[..., None]
        if (~value.finite & ~nan).any():
            raise ValueError("x holds NaN or an infinity in a block whose given scale is "
                             "finite")
        shift = np.where(nan, 0, scales.astype(np.int64)[..., None] - 127)
        codes = round_to(value.sign, np.where(nan, np.uint64(0), value.sig), value.exp - shift,
                         fmt, rounding=rounding, saturate=True, top=value.top - shift)
        return container(codes, fmt).astype(np.uint32)
    ue4m3 = FORMATS["ue4m3"]
    assert isinstance(ue4m3, FloatFormat)
    block = decode_format(scales, ue4m3)
    s = decode_format(np.uint32(tensor_word or ONE_F32), F32)
    q, exp, sticky = divide(value.sig, value.exp, (block.sig * s.sig)[..., None],
                            (block.exp + s.exp)[..., None])
    zero = (block.sig == 0)[..., None]
    codes = round_to(value.sign, np.where(zero, 0, q), exp, fmt, rounding=rounding,
                     saturate=True, sticky=sticky)
    return container(codes, fmt).astype(np.uint32)


def _unit_scales(scaling: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.full(shape, 0x7F if scaling == "ue8m0" else 0x38, dtype=np.uint8)


def _given_scales(scales: Any, scaling: str, shape: tuple[int, ...]) -> np.ndarray:
    """Checked scale bytes of ``shape``: raw ``uint8``-range ints, or an ml_dtypes/torch
    float8_e8m0fnu (UE8M0) or float8_e4m3fn (UE4M3, non-negative) array, bit for bit."""
    if type(scales).__module__.startswith("torch"):
        scales = _torch_array(scales, "scales")
    array = scales if isinstance(scales, np.ndarray) else np.asarray(scales)
    name = array.dtype.name
    want = "float8_e8m0fnu" if scaling == "ue8m0" else "float8_e4m3fn"
    if name in ML_DTYPES:
        if name != want:
            raise ValueError(f"{scaling} scales must be raw bytes or {want}, got {name}")
        array = array.view(np.uint8)
    elif array.dtype.kind not in "iu":
        raise ValueError(f"scales must be raw scale bytes or a {want} array, got dtype "
                         f"{array.dtype}")
    if array.shape != shape:
        raise ValueError(f"scales must have shape {shape} (one per block, block index last), "
                         f"got {array.shape}")
    if array.size and (array.min() < 0 or array.max() > 0xFF):
        raise ValueError("scales hold values outside [0, 0xFF]")
    array = array.astype(np.uint8)
    nan = array == 0xFF if scaling == "ue8m0" else (array & 0x7F) == 0x7F
    if nan.any():
        raise ValueError(f"scales hold a non-finite (NaN) {scaling} scale 0x"
                         f"{int(array[nan][0]):02X}")
    if scaling == "ue4m3" and (array & 0x80).any():
        raise ValueError("ue4m3 scales must be non-negative (bit 7 set)")
    return array


def _tensor_scale(value: Any) -> int:
    """The F32 word of a per-tensor scale (1.0 when None); ``ValueError`` unless finite and
    positive."""
    if value is None:
        return ONE_F32
    src = source_of(np.asarray(value, dtype=np.float64) if isinstance(value, (int, float))
                    else value, "tensor_scale")
    decoded = src.decoded()
    if np.size(src.bits) != 1 or not bool(decoded.finite.all()):
        raise ValueError(f"tensor_scale must be one finite F32 value, got {value!r}")
    if int(decoded.sign.reshape(-1)[0]) or int(decoded.sig.reshape(-1)[0]) == 0:
        raise ValueError(f"tensor_scale must be positive, got {value!r}")
    word = round_to(decoded.sign, decoded.sig, decoded.exp, F32, top=decoded.top)
    return int(word.reshape(-1)[0])
