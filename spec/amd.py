"""AMD CDNA datapaths and the FMA-chain rows of every vendor (SEMANTICS.md section 11).

Each row is an instruction as MMA-Sim (microsoft/MMA-Sim @c785138) spells its qualifier:

- ``fma-chain`` (:mod:`spec.fma_chain`): NVIDIA ``mma m8n8k4.f64`` (sm_80, sm_89, sm_90,
  sm_100, sm_120) and sm_90 ``m16n8k{4,8,16}.f64``; AMD f64 (CDNA2, CDNA3) and every f32
  instruction that is not xf32 (CDNA1/2/3);
- ``cdna3-rd`` (:mod:`spec.cdna3`): CDNA3 xf32, f16, bf16 and the fnuz FP8 pairs;
- ``pairwise-tree`` (:mod:`spec.pairwise`): CDNA1/CDNA2 f16 and bf16, read from MMA-Sim's
  code, which fails on them: no vector backs these rows (section 11.4, unvalidated).

Every row returns the host's NaN in the model, so ``nan_canonical`` is False.
"""

from __future__ import annotations

import re

from tcspec.spec.arch import ArchDescriptor, shape_of
from tcspec.spec.cdna3 import cdna3_params
from tcspec.spec.fma_chain import FmaChainParams
from tcspec.spec.pairwise import pairwise_params

_CDNA12_F32 = ["f32_32x32x2f32", "f32_32x32x1f32", "f32_16x16x4f32", "f32_16x16x1f32",
               "f32_4x4x1f32"]
_FP8 = {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}

MFMA_QUALIFIERS: dict[str, list[str]] = {
    "cdna1": _CDNA12_F32,
    "cdna2": ["f64_16x16x4f64", "f64_4x4x4f64", *_CDNA12_F32],
    "cdna3": (["f64_16x16x4_f64", "f64_4x4x4_4b_f64", "f32_32x32x1_2b_f32",
               "f32_16x16x1_4b_f32", "f32_4x4x1_16b_f32", "f32_32x32x2_f32", "f32_16x16x4_f32",
               "f32_16x16x8_xf32", "f32_32x32x4_xf32"]
              + [f"f32_{s}_{t}" for t in ("f16", "bf16")
                 for s in ("32x32x4_2b", "16x16x4_4b", "4x4x4_16b", "32x32x8", "16x16x16")]
              + [f"f32_{s}_{a}_{b}" for s in ("16x16x32", "32x32x16")
                 for a in _FP8 for b in _FP8]),
}
"""``v_mfma`` qualifiers ``D_MxNxK[_blocks]_A[_B]`` per architecture (MMA-Sim's spelling)."""

F64_MMA_QUALIFIERS: dict[str, list[str]] = {
    **{arch: ["m8n8k4.f64.f64.f64.f64"] for arch in ("sm_80", "sm_89", "sm_100", "sm_120")},
    "sm_90": [f"{shape}.f64.f64.f64.f64" for shape in ("m8n8k4", "m16n8k4", "m16n8k8",
                                                        "m16n8k16")],
}
"""NVIDIA ``mma.sync`` FP64 qualifiers (FMA chains)."""

_TREES = [f"f32_{s}f16" for s in ("32x32x8", "32x32x4", "16x16x16", "16x16x4", "4x4x4")] + [
    f"f32_{s}bf16" for s in ("32x32x4", "32x32x2", "16x16x8", "16x16x2", "4x4x2")]
TREE_QUALIFIERS: dict[str, list[str]] = {
    "cdna1": _TREES,
    "cdna2": [f"f32_{s}bf16_1k" for s in ("32x32x8", "32x32x4", "16x16x16", "16x16x4",
                                          "4x4x4")] + _TREES,
}
"""CDNA1/CDNA2 f16/bf16 qualifiers (pairwise trees; MMA-Sim cannot run them)."""

_AMD_K = re.compile(r"\d+x\d+x(\d+)")


def _mfma(arch: str, qualifier: str) -> ArchDescriptor:
    shape = shape_of(arch, qualifier)
    match = _AMD_K.match(shape)
    assert match is not None
    k = int(match[1])
    d_format = qualifier.split("_")[0]
    parts = qualifier.split(shape, 1)[1].lstrip("_").split("_")
    if parts[0] in _FP8:
        a, b = _FP8[parts[0]], _FP8[parts[1]]
    else:
        a = b = parts[0]
    if a in ("f32", "f64"):
        return ArchDescriptor(arch, "mfma", shape, a, b, d_format, d_format, k, "fma-chain",
                              FmaChainParams(steps=k), qualifier=qualifier,
                              nan_canonical=False)
    return ArchDescriptor(arch, "mfma", shape, a, b, d_format, d_format, k, "cdna3-rd",
                          cdna3_params(a, b, k), qualifier=qualifier, nan_canonical=False)


def _f64_mma(arch: str, qualifier: str) -> ArchDescriptor:
    shape = qualifier.split(".")[0]
    k = int(shape.split("k")[1])
    return ArchDescriptor(arch, "mma", shape, "f64", "f64", "f64", "f64", k, "fma-chain",
                          FmaChainParams(steps=k), qualifier=qualifier, nan_canonical=False)


def _tree(arch: str, qualifier: str) -> ArchDescriptor:
    one_k = qualifier.endswith("_1k")
    shape = shape_of(arch, qualifier)
    match = _AMD_K.match(shape)
    assert match is not None
    k = int(match[1])
    operand = qualifier.removesuffix("_1k").split(shape, 1)[1]
    return ArchDescriptor(arch, "mfma", shape + ("_1k" if one_k else ""), operand, operand,
                          "f32", "f32", k, "pairwise-tree",
                          pairwise_params(arch, operand, k, one_k), qualifier=qualifier,
                          nan_canonical=False)


DATAPATHS: list[ArchDescriptor] = (
    [_f64_mma(arch, q) for arch, qualifiers in F64_MMA_QUALIFIERS.items() for q in qualifiers]
    + [_mfma(arch, q) for arch, qualifiers in MFMA_QUALIFIERS.items() for q in qualifiers]
    + [_tree(arch, q) for arch, qualifiers in TREE_QUALIFIERS.items() for q in qualifiers]
)
"""The 47 FMA-chain and CDNA3 datapaths with MMA-Sim vectors, then the 25 unvalidated
CDNA1/CDNA2 pairwise trees."""
