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

SCALE_BLOCK = {("mxf8f6f4", 1): 32, ("nvfp4", 4): 16, ("mxf4", 2): 32, ("mxf4", 4): 16}
"""Section 4: the K lanes one scale byte covers, by family and scale_vec."""


def block_family(desc: Descriptor) -> str:
    """Section 4's three families: MXF8F6F4, NVFP4 (UE4M3 scales), the MXF4 family."""
    if desc.kind == "mxf8f6f4":
        return "mxf8f6f4"
    return "nvfp4" if desc.scaling == "ue4m3" else "mxf4"


def product_group(desc: Descriptor) -> int:
    return PRODUCT_GROUP[block_family(desc)]


def scale_block(desc: Descriptor) -> int:
    """Lanes per scale byte, of the compacted K for sparse paths (section 5)."""
    return SCALE_BLOCK[(block_family(desc), desc.scale_vec)]
