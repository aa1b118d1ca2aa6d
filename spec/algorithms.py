"""The algorithm families of the architecture datapaths, and those datapaths
(SEMANTICS.md section 10).

A family is one module and one registration line here: a function
``(ops, ArchDescriptor, DotInputs) -> result word`` written once over ``ops``.
:func:`spec.catalog.build_dot` dispatches an ``arch`` descriptor to its family, so every
lowering (scalar, compiled, NumPy, C kernels, Z3/SMT-LIB, the exports) runs it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcspec.spec import amd, cdna3, fma_chain, fused_dot, nvidia, pairwise
from tcspec.spec.arch import ArchDescriptor, format_bits
from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.inputs import DotInputs

Build = Callable[[Ops, Any, DotInputs], BV]


@dataclass(frozen=True)
class Algorithm:
    """A family: its name, its definition and a one-line summary. ``wide``: it needs values
    wider than 64 bits, so the C kernels and the C export exempt it."""

    name: str
    build: Build
    summary: str
    wide: bool = False


ALGORITHMS: dict[str, Algorithm] = {}


def register(algorithm: Algorithm) -> Algorithm:
    ALGORITHMS[algorithm.name] = algorithm
    return algorithm


register(Algorithm("fused-dot", fused_dot.fused_dot,
                   "NVIDIA fused dot-add: one window of F bits, split-K steps, D rounding"))
register(Algorithm("fused-dot-block", fused_dot.fused_dot_block,
                   "NVIDIA block-scale fused dot-add: scaled window (K=32) or chunk terms (K=64)"))
register(Algorithm("fma-chain", fma_chain.fma_chain_dot,
                   "FP64/F32 FMA chain: one IEEE RNE fma per product, in K order"))
register(Algorithm("cdna3-rd", cdna3.cdna3_rd_dot,
                   "CDNA3 fused dot: round-down groups of 4/8/16, F32 RNE between groups"))
register(Algorithm("pairwise-tree", pairwise.pairwise_tree_dot,
                   "CDNA1/2 f16/bf16: F32 RNE pairwise trees per group (unvalidated)"))

ARCH_DATAPATHS: list[ArchDescriptor] = [*nvidia.DATAPATHS, *amd.DATAPATHS]


def algorithm_of(desc: ArchDescriptor) -> Algorithm:
    """The registered family of ``desc``; ``NotImplementedError`` when it has none yet."""
    try:
        return ALGORITHMS[desc.algorithm]
    except KeyError:
        raise NotImplementedError(f"datapath {desc.name}: algorithm {desc.algorithm!r} is "
                                  "not yet specified") from None


def build_arch_dot(ops: Ops, desc: ArchDescriptor, inputs: DotInputs) -> BV:
    """The result word of an architecture datapath (its family's definition)."""
    return algorithm_of(desc).build(ops, desc, inputs)


def c_exempt(desc: Any) -> bool:
    """Whether the C kernels and the C export exempt ``desc``: 64-bit words, or a family
    that needs values wider than 64 bits (section 10)."""
    if not isinstance(desc, ArchDescriptor):
        return False
    family = ALGORITHMS.get(desc.algorithm)
    return desc.operand_bits > 32 or format_bits(desc.d_type) > 32 or bool(family and family.wide)
