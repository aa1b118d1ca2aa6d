"""The NVIDIA architecture datapaths and their parameters (SEMANTICS.md section 10).

Each row is an instruction as MMA-Sim (microsoft/MMA-Sim @c785138) spells its qualifier;
:func:`fused_dot_params` derives the row's parameters from the architecture's rules:

- window fraction bits ``F``: Volta 23, Turing / Ampere / Ada 24, Hopper and both
  Blackwells 25; Ada ``mma`` fp8 and Hopper ``wgmma`` fp8 13;
- split-K (Ampere, Ada): the instructions whose K holds 256 operand bits (tf32 K=8,
  f16/bf16 K=16, fp8 K=32) run as two chained half-K steps, D-format rounding between;
- output: F16 D round to nearest even; F32 D truncation to 23 bits, or to 13 bits in
  F32's range (``f32_e8m13``) where ``F`` is 13;
- block scale (RTX Blackwell): K=32 one window (F = 25) over scaled products; K=64 one
  term per 16-element chunk (F = 35).
"""

from __future__ import annotations

from tcspec.spec.arch import ArchDescriptor
from tcspec.spec.fused_dot import FusedDotParams

WINDOW_BITS = {"sm_70": 23, "sm_75": 24, "sm_80": 24, "sm_89": 24, "sm_90": 25,
               "sm_100": 25, "sm_120": 25}
FP8_WINDOW_BITS = 13
"""``F`` of Ada ``mma`` and Hopper ``wgmma`` on fp8 operands (their F32 D is e8m13)."""
FP8_NARROW = {("sm_89", "mma"), ("sm_90", "wgmma")}
SPLIT_K_ARCHES = ("sm_80", "sm_89")
SPLIT_K_OPERAND_BITS = 256
CHUNK_WINDOW = 35
FP8 = ("e4m3", "e5m2")
OPERAND_BITS = {"tf32": 32, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8, "e2m1": 4}

_F16_32 = ["m16n8k8.f32.f16.f16.f32", "m16n8k8.f16.f16.f16.f16", "m16n8k8.f32.bf16.bf16.f32",
           "m16n8k16.f32.f16.f16.f32", "m16n8k16.f16.f16.f16.f16",
           "m16n8k16.f32.bf16.bf16.f32", "m16n8k4.f32.tf32.tf32.f32",
           "m16n8k8.f32.tf32.tf32.f32"]
_FP8_PAIRS = [(a, b) for a in ("e5m2", "e4m3") for b in ("e5m2", "e4m3")]
_FP8_MMA = [f"m16n8k{k}.{d}.{a}.{b}.{d}" for k in (16, 32) for d in ("f32", "f16")
            for a, b in _FP8_PAIRS]
_M8N8K4 = ["m8n8k4.f32.f16.f16.f32", "m8n8k4.f32.f16.f16.f16", "m8n8k4.f16.f16.f16.f16"]

MMA_QUALIFIERS: dict[str, list[str]] = {
    "sm_70": _M8N8K4,
    "sm_75": ["m16n8k8.f32.f16.f16.f32", "m16n8k8.f16.f16.f16.f16", *_M8N8K4],
    "sm_80": _F16_32,
    "sm_89": _F16_32 + _FP8_MMA,
    "sm_90": _F16_32,
    "sm_100": _F16_32,
    "sm_120": _F16_32 + _FP8_MMA,
}
"""``mma.sync`` qualifiers ``shape.D.A.B.C`` per architecture (fused dot-add only)."""

WGMMA_QUALIFIERS = (["m64n8k8.f32.tf32.tf32", "m64n8k16.f32.f16.f16", "m64n8k16.f16.f16.f16",
                     "m64n8k16.f32.bf16.bf16"]
                    + [f"m64n8k32.{d}.{a}.{b}" for d in ("f32", "f16")
                       for a, b in [(x, y) for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2")]])
"""Hopper ``wgmma`` qualifiers ``shape.D.A.B`` (C in the D format; N does not matter)."""

BLOCK_SCALE_QUALIFIERS = ([f"m16n8k32.block32.f32.{a}.{b}.f32.ue8m0" for a, b in _FP8_PAIRS]
                          + [f"m16n8k64.block{n}.f32.e2m1.e2m1.f32.{s}" for n in (16, 32)
                             for s in ("ue8m0", "ue4m3")])
"""RTX Blackwell ``mma.sync.block_scale`` qualifiers ``shape.block.D.A.B.C.scale``."""


def fused_dot_params(arch: str, instruction: str, a_format: str, d_format: str, k: int
                     ) -> FusedDotParams:
    """The parameters of an unscaled NVIDIA fused dot-add (module docstring's rules)."""
    narrow = a_format in FP8 and (arch, instruction) in FP8_NARROW
    window = FP8_WINDOW_BITS if narrow else WINDOW_BITS[arch]
    split = (instruction == "mma" and arch in SPLIT_K_ARCHES
             and k * OPERAND_BITS[a_format] == SPLIT_K_OPERAND_BITS)
    if d_format == "f16":
        output = "f16-rne"
    else:
        output = "f32_e8m13-rz" if narrow else "f32-rz"
    return FusedDotParams(window=window, steps=2 if split else 1, output=output)


def _shape_k(shape: str) -> int:
    return int(shape.split("k")[1])


def _mma(arch: str, qualifier: str) -> ArchDescriptor:
    shape, d, a, b, c = qualifier.split(".")
    k = _shape_k(shape)
    return ArchDescriptor(arch, "mma", shape, a, b, c, d, k, "fused-dot",
                          fused_dot_params(arch, "mma", a, d, k), qualifier=qualifier)


def _wgmma(qualifier: str) -> ArchDescriptor:
    shape, d, a, b = qualifier.split(".")
    k = _shape_k(shape)
    return ArchDescriptor("sm_90", "wgmma", shape, a, b, d, d, k, "fused-dot",
                          fused_dot_params("sm_90", "wgmma", a, d, k), qualifier=qualifier)


def _block_scale(qualifier: str) -> ArchDescriptor:
    shape, block, d, a, b, c, scale = qualifier.split(".")
    k = _shape_k(shape)
    chunked = k == 64
    params = FusedDotParams(window=CHUNK_WINDOW if chunked else WINDOW_BITS["sm_120"],
                            chunk=16 if chunked else None)
    return ArchDescriptor("sm_120", "mma_block_scale", shape, a, b, c, d, k, "fused-dot-block",
                          params, scale_format=scale, scale_block=int(block[len("block"):]),
                          qualifier=qualifier)


DATAPATHS: list[ArchDescriptor] = (
    [_mma(arch, q) for arch, qualifiers in MMA_QUALIFIERS.items() for q in qualifiers]
    + [_wgmma(q) for q in WGMMA_QUALIFIERS]
    + [_block_scale(q) for q in BLOCK_SCALE_QUALIFIERS]
)
"""Every NVIDIA fused dot-add datapath with MMA-Sim vectors (FP64 ``m8n8k4``/``m16n8k*`` are
FMA chains: :mod:`spec.amd`'s sibling table registers them with ``fma-chain``)."""
