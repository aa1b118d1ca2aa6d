"""The hardware constants the properties are about, written from SEMANTICS.md (never read
from ``spec/``, so a breaker of a spec constant moves the datapath and not the statement).
"""

from __future__ import annotations

from tcspec.spec.descriptor import Descriptor

CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
"""Section 2.2: the canonical NaN word of an F32 and an F16 D."""

PRODUCT_GROUP = {"nvfp4": 4, "mxf4": 16, "mxf8f6f4": 1}
"""Section 4: products summed exactly in aligned groups of 4 (NVFP4), 16 (MXF4 and
MXF4NVF4 with UE8M0), one by one (MXF8F6F4)."""

C_DOMINANT_GROUP = {"nvfp4": 16, "mxf4": 16, "mxf8f6f4": 1}
"""Section 4: the C-dominant path sums each K=16 block exactly (NVFP4, MXF4 family); MXF8F6F4
truncates products one by one on both paths."""

PRODUCT_WINDOW = {"nvfp4": 39, "mxf4": 39, "mxf8f6f4": 25}
"""Section 4: the product path's quantum is at least ``P - 39`` (FP4 families) or
``max(P, rC) - 25`` (MXF8F6F4)."""

C_WINDOW = {"nvfp4": 35, "mxf4": 35, "mxf8f6f4": 25}
"""Section 4: the C-dominant quantum is ``rC - 35`` (NVFP4, MXF4 family); MXF8F6F4 is the
section-2 window with 25 fraction bits over products and C (``max(P, rC) - 25``)."""

SCALE_WINDOW = {"nvfp4": 35, "mxf4": 35, "mxf8f6f4": None}
"""Section 4: the scale-anchored floor ``S - 35`` of the product path's quantum (FP4
families); MXF8F6F4 has none."""

GROUP_C_MERGE = {"nvfp4": False, "mxf4": True, "mxf8f6f4": False}
"""Section 4 (model): the MXF4 family truncates a group whose max product raw is at most
``rC`` first to ``2^max(q, rC - 35)``."""

SUBNORMAL_FLOOR = {"nvfp4": None, "mxf4": -174, "mxf8f6f4": None}
"""Section 4 (model): the MXF4 family's subnormal group floor, ``2^-174``."""

SCALE_BLOCK = {("mxf8f6f4", 1): 32, ("nvfp4", 4): 16, ("mxf4", 2): 32, ("mxf4", 4): 16}
"""Section 4: the K lanes one scale byte covers, by family and scale_vec."""


def block_family(desc: Descriptor) -> str:
    """Section 4's three families: MXF8F6F4, NVFP4 (UE4M3 scales), the MXF4 family."""
    if desc.kind == "mxf8f6f4":
        return "mxf8f6f4"
    return "nvfp4" if desc.scaling == "ue4m3" else "mxf4"


def product_group(desc: Descriptor) -> int:
    return PRODUCT_GROUP[block_family(desc)]


def c_dominant_group(desc: Descriptor) -> int:
    return C_DOMINANT_GROUP[block_family(desc)]


def c_window(desc: Descriptor) -> int:
    return C_WINDOW[block_family(desc)]


def product_window(desc: Descriptor) -> int:
    return PRODUCT_WINDOW[block_family(desc)]


def window_bound(desc: Descriptor) -> int:
    """The most any nonzero term of a chosen block path lies above its quantum (section 4:
    the larger of the product and the C window)."""
    return max(product_window(desc), c_window(desc))


def scale_block(desc: Descriptor) -> int:
    """Lanes per scale byte, of the compacted K for sparse paths (section 5)."""
    return SCALE_BLOCK[(block_family(desc), desc.scale_vec)]


# ------------------------------------------------ architecture datapaths (issue 20)
# Written from ARCHITECTURES.md sections 1-3 and SEMANTICS.md sections 10-11, by the
# descriptor's own fields (arch, instruction, formats, K), never from its ``params``.

ARCH_WINDOW_BITS = {"sm_70": 23, "sm_75": 24, "sm_80": 24, "sm_89": 24, "sm_90": 25,
                    "sm_100": 25, "sm_120": 25}
"""ARCHITECTURES.md section 2, column F: fraction bits of the NVIDIA fused dot-add window."""

ARCH_FP8_WINDOW_BITS = 13
"""Section 2: F of Ada ``mma`` and Hopper ``wgmma`` on e4m3/e5m2 operands."""

ARCH_FP8_NARROW = (("sm_89", "mma"), ("sm_90", "wgmma"))

ARCH_SPLIT_K = ("sm_80", "sm_89")
"""Section 1.5: split-K into two chained half-K steps on Ampere and Ada only, for the
instructions whose K holds 256 operand bits (tf32 K=8, f16/bf16 K=16, fp8 K=32)."""

ARCH_OPERAND_BITS = {"tf32": 32, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8}

ARCH_ZERO_EXPONENT = -126
"""Section 1.1: a zero factor or zero C has exponent -126 whatever the format."""

ARCH_D_FRACTION_BITS = {"f32": 23, "e8m13": 13, "f16": 10}
"""Section 1.4: fraction bits the D (or the e8m13 accumulator) keeps."""

ARCH_CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
"""Section 1.2: the NVIDIA fused dot-add NaN words."""

CDNA3_GROUP = {"xf32": 4, "f16": 8, "bf16": 8, "e4m3fnuz": 16, "e5m2fnuz": 16}
"""Section 3.2: products per CDNA3 group (f16/bf16: ``min(8, K)``)."""

CDNA3_PRODUCT_BITS, CDNA3_SUM_BITS, CDNA3_C_BITS = 24, 31, 24
"""Section 3.2: products RZ at 24 bits below P, the sum RD at 31 and C RD at 24 below M."""


def arch_window_bits(desc: Descriptor) -> int:
    """F of an NVIDIA fused dot-add (section 2)."""
    if (desc.arch, desc.instruction) in ARCH_FP8_NARROW and desc.a_format in ("e4m3", "e5m2"):
        return ARCH_FP8_WINDOW_BITS
    return ARCH_WINDOW_BITS[desc.arch]


def instruction_k(desc: Descriptor) -> int:
    """The instruction's K from its shape (``m16n8k16``: 16; AMD ``32x32x8``: 8), which a
    model of the datapath at another logical K keeps."""
    shape = desc.shape
    if "x" in shape:
        return int(shape.split("_")[0].split("x")[2])
    return int(shape.split("k")[1])


def arch_steps(desc: Descriptor) -> int:
    """Chained steps of an NVIDIA fused dot-add at the instruction's K (section 1.5)."""
    split = (desc.instruction == "mma" and desc.arch in ARCH_SPLIT_K
             and instruction_k(desc) * ARCH_OPERAND_BITS.get(desc.a_format, 0) == 256)
    return 2 if split else 1


def arch_d_fraction_bits(desc: Descriptor) -> int:
    """13 for the e8m13 accumulator (fp8 on Ada mma / Hopper wgmma with an F32 D)."""
    if desc.d_type == "f32" and arch_window_bits(desc) == ARCH_FP8_WINDOW_BITS:
        return ARCH_D_FRACTION_BITS["e8m13"]
    return ARCH_D_FRACTION_BITS[desc.d_type]


def cdna3_group(desc: Descriptor, k: int | None = None) -> int:
    k = desc.k if k is None else k
    size = CDNA3_GROUP[desc.a_format]
    return min(size, k) if desc.a_format in ("f16", "bf16") else size


# ------------------------------------------------------------------ sparse (section 5)

SPARSE_RULE = {"tf32": "one", "f16": "two", "f8f6f4": "two", "mxf8f6f4": "two",
               "nvfp4": "pairs", "mxf4": "pairs", "mxf4nvf4": "pairs"}
"""Section 5, by instruction kind: tf32 keeps one of 2; bf16, f16, f8f6f4 and MXF8F6F4 keep
two of 4; the FP4 families keep two adjacent pairs of 8."""

SPARSE_CHUNK = {"one": 2, "two": 4, "pairs": 8}
SPARSE_KEPT = {"one": 1, "two": 2, "pairs": 4}
"""Section 5: logical lanes per chunk (one selector nibble) and how many of them it keeps."""

SPARSE_LEGAL = {"one": (0x4, 0xE), "two": (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE),
                "pairs": (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE)}
"""Section 5: the legal selectors; anything else is an error."""
