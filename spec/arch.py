"""Architecture datapaths: descriptors and canonical names (SEMANTICS.md section 10).

An :class:`ArchDescriptor` names one instruction of one architecture (``sm_70`` ...
``sm_120``, ``cdna1`` .. ``cdna3``) with its A, B, C and D formats, K, scale format and
block, the algorithm family that computes it (a key of
:data:`spec.algorithms.ALGORITHMS`) and that family's parameter value. It answers the
attributes the lowerings read from a tcgen05 :class:`spec.descriptor.Descriptor`
(``family`` is ``"arch"``), so every lowering takes it unchanged.

Canonical name: ``<arch>-<instruction>-<shape>[-block<B>]-<A>-<B>-c<C bits>-d<D bits>
[-<scale format>]``, e.g. ``sm_70-mma-m8n8k4-f16-f16-c16-d32``,
``sm_120-mma_block_scale-m16n8k64-block16-e2m1-e2m1-c32-d32-ue4m3``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from tcspec.spec.formats import FORMATS, FloatFormat

ARCHES = ("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120",
          "cdna1", "cdna2", "cdna3")
"""Architectures of the catalog, oldest first per vendor."""

TCGEN05_ARCH = "sm_100"
"""The architecture of the tcgen05 datapaths of sections 2-6 (B200)."""

ARCH_NAMES = {"sm_70": "Volta", "sm_75": "Turing", "sm_80": "Ampere", "sm_89": "Ada Lovelace",
              "sm_90": "Hopper", "sm_100": "Blackwell", "sm_120": "RTX Blackwell",
              "cdna1": "CDNA1", "cdna2": "CDNA2", "cdna3": "CDNA3"}

INSTRUCTIONS = ("mma", "wgmma", "mma_block_scale", "mfma")


def format_bits(name: str) -> int:
    """Container width of an IEEE C/D format (16, 32, 64)."""
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    return fmt.container_bits


def arch_name(arch: str, instruction: str, shape: str, a_format: str, b_format: str,
              c_format: str, d_format: str, scale_format: str | None = None,
              scale_block: int | None = None) -> str:
    """The canonical name of an architecture datapath (module docstring)."""
    parts = [arch, instruction, shape.replace(".", "-")]
    if scale_format is not None:
        parts.append(f"block{scale_block}")
    parts += [a_format, b_format, f"c{format_bits(c_format)}", f"d{format_bits(d_format)}"]
    if scale_format is not None:
        parts.append(scale_format)
    return "-".join(parts)


@dataclass(frozen=True)
class ArchDescriptor:
    """One architecture datapath: instruction, formats, K, algorithm and its parameters.

    ``params`` is the algorithm family's own frozen parameter value
    (:class:`spec.fused_dot.FusedDotParams` for ``fused-dot``). ``nan_canonical`` is False
    where the published model returns the host's NaN (FP64, AMD): the spec then returns one
    canonical word and ``check`` compares NaN by class. ``qualifier`` is MMA-Sim's spelling.
    """

    arch: str
    instruction: str
    shape: str
    a_format: str
    b_format: str
    c_format: str
    d_type: str
    k: int
    algorithm: str
    params: Any
    scale_format: str | None = None
    scale_block: int | None = None
    qualifier: str = ""
    nan_canonical: bool = True

    def __post_init__(self) -> None:
        if self.arch not in ARCHES:
            raise ValueError(f"unknown architecture {self.arch!r} (known: {', '.join(ARCHES)})")
        if self.instruction not in INSTRUCTIONS:
            raise ValueError(f"unknown instruction {self.instruction!r}")
        if self.scale_format is not None and (not self.scale_block or self.k % self.scale_block):
            raise ValueError(f"K={self.k} does not split into scale blocks of {self.scale_block}")

    saturate = False
    sparse = False
    sparse_chunk = None
    metadata_words = 0
    validated_shape = False

    @property
    def family(self) -> str:
        return "arch"

    @property
    def kind(self) -> str:
        return self.algorithm

    @property
    def scaling(self) -> str | None:
        return self.scale_format

    @property
    def dense_k(self) -> int:
        return self.k

    @property
    def scale_count(self) -> int:
        """Scale bytes each operand needs per dot product."""
        return self.k // self.scale_block if self.scale_format else 0  # type: ignore[operator]

    @property
    def scale_vec(self) -> int | None:
        return self.scale_count or None

    @property
    def k_step(self) -> int:
        """The smallest logical K of the arithmetic: one chained step, a scale block."""
        steps = getattr(self.params, "steps", 1)
        return max(self.k // steps, self.scale_block or 1)

    @property
    def operand_bits(self) -> int:
        """Width of the A, B and C input words: 64 where a format is F64, else 32."""
        return max(32, *(format_bits(f) if isinstance(FORMATS[f], FloatFormat) else 32
                         for f in (self.a_format, self.b_format, self.c_format)))

    @property
    def name(self) -> str:
        return arch_name(self.arch, self.instruction, self.shape, self.a_format, self.b_format,
                         self.c_format, self.d_type, self.scale_format, self.scale_block)

    def fields(self) -> dict[str, object]:
        """Every field, the parameters as a dict (for exports and listings)."""
        out = {k: v for k, v in asdict(self).items() if k != "params"}
        out["params"] = asdict(self.params) if is_dataclass(self.params) else self.params
        return out


_AMD_SHAPE = re.compile(r"\d+x\d+x\d+(?:_\d+b)?")


def shape_of(arch: str, qualifier: str) -> str:
    """The shape token of a qualifier: NVIDIA its first field (``m16n8k16``), AMD the
    ``MxNxK`` with its block count (``32x32x4_2b`` of ``f32_32x32x4_2b_f16``)."""
    if arch.startswith("cdna"):
        match = _AMD_SHAPE.search(qualifier)
        if match is None:
            raise ValueError(f"no MxNxK shape in {qualifier!r}")
        return match[0]
    return qualifier.split(".")[0]
