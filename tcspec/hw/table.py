"""The instruction table: every harness, keyed by (target, instruction, shape, formats, scale).

Each row is one PTX instruction form that a target can build. The PTX text
(:mod:`tcspec.hw.ptx`) and the operand images (:mod:`tcspec.hw.pack`) are
generated from the row and its :mod:`tcspec.hw.layouts` placements; nothing
is written per datapath. :func:`catalog_datapath` is the one mapping from a
row, run on a GPU architecture, to a catalogued datapath: the architecture
datapath of that arch, instruction, shape and formats (SEMANTICS.md section
10) where the catalog has one, else the Blackwell ``tcgen05`` datapath of the
same operand formats (section 6), the *fallback*, whose K may exceed the
row's (the row's cases then run with the upper lanes +0).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tcspec.hw import layouts
from tcspec.hw.layouts import Placement
from tcspec.spec.arch import ARCHES, ArchDescriptor, arch_name
from tcspec.spec.catalog import ARCH_CATALOG, CATALOG
from tcspec.spec.descriptor import F8F6F4, Descriptor, resolve

MMA, WGMMA, TCGEN05 = "mma.sync", "wgmma.mma_async", "tcgen05.mma"

TARGETS = ("sm_70", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a")
"""One PTX file per target; the ``a`` targets run only on exactly that architecture."""

WIDTH = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "e2m3": 8, "e3m2": 8,
         "e2m1": 8, "s8": 8, "u8": 8, "f32": 32, "s32": 32, "f64": 64}
"""Bits per element in an operand image (FP6/FP4 in 8-bit containers under f8f6f4)."""

TCGEN05_FORMAT = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4,
                  "e2m1": 5, "u8": 0, "s8": 1}
"""A/B format codes of the tcgen05 instruction descriptor (PTX ISA 8.8)."""
TCGEN05_D = {"f16": 0, "f32": 1, "s32": 2}


@dataclass(frozen=True)
class Harness:
    """One instruction form: where it builds, its shape and operand formats."""

    target: str
    instruction: str
    shape: tuple[int, int, int]
    a_format: str
    b_format: str
    c_format: str
    d_format: str
    kind: str | None = None  # the mma.sync / tcgen05 .kind qualifier where it is not implied
    scale: str | None = None  # "scale_vec::NX stype" of a block-scaled form
    saturate: bool = False

    @property
    def m(self) -> int:
        return self.shape[0]

    @property
    def n(self) -> int:
        return self.shape[1]

    @property
    def k(self) -> int:
        return self.shape[2]

    @property
    def name(self) -> str:
        """``sm_90a/wgmma.mma_async.m64n8k16.f32.f16.f16.f32`` (target/instruction.shape.types)."""
        m, n, k = self.shape
        types = f"{self.d_format}.{self.a_format}.{self.b_format}.{self.c_format}"
        extra = "".join(f".{part}" for part in (self.kind, self.scale) if part)
        extra = extra.replace(" ", ".")
        sat = ".satfinite" if self.saturate else ""
        return f"{self.target}/{self.instruction}.m{m}n{n}k{k}.{types}{extra}{sat}"

    @property
    def entry(self) -> str:
        """The PTX entry name (an identifier)."""
        return "tc_" + "".join(ch if ch.isalnum() else "_" for ch in self.name)

    @property
    def threads(self) -> int:
        return 32 if self.instruction == MMA else 128

    @property
    def groups(self) -> int:
        """Independent MMAs one warp instruction computes (4 for m8n8k4)."""
        return 4 if self.shape == (8, 8, 4) and self.a_format == "f16" else 1

    @property
    def diagonal(self) -> int:
        """Independent dot products one instruction carries on its tile diagonals."""
        return self.groups * min(self.m, self.n)

    @property
    def packed(self) -> bool:
        """Whether the host packs operands for this row (False: PTX is built and assembled,
        but its scale / FP64 layout is not transcribed, so no words run through it)."""
        return self.scale is None and self.a_format != "f64"

    def placements(self) -> dict[str, Placement]:
        """``{"a", "b", "c", "d"}`` placements of one tile (see :mod:`tcspec.hw.layouts`)."""
        return _placements(self)

    def runs_on(self, sm: int) -> bool:
        """Whether a GPU of compute capability ``sm`` (e.g. 90) runs this row's PTX."""
        base = int(self.target[3:].rstrip("a"))
        return sm == base if self.target.endswith("a") else sm >= base

    def tcgen05_idesc(self) -> int:
        """The 32-bit instruction descriptor (PTX ISA 8.8, tcgen05 "Instruction descriptor"):
        D format bits 4-5, A bits 7-9, B bits 10-12, K-major A and B, N >> 3 at bit 17,
        M >> 4 at bit 24, saturate bit 3."""
        return (TCGEN05_D[self.d_format] << 4 | TCGEN05_FORMAT[self.a_format] << 7
                | TCGEN05_FORMAT[self.b_format] << 10 | (self.n >> 3) << 17
                | (self.m >> 4) << 24 | int(self.saturate) << 3)


@functools.cache
def _placements(h: Harness) -> dict[str, Placement]:
    wa, wb, wd = WIDTH[h.a_format], WIDTH[h.b_format], WIDTH[h.d_format]
    if h.instruction == MMA and h.groups == 4:
        out = {"a": layouts.m8n8k4_a(), "b": layouts.m8n8k4_b(), "d": layouts.m8n8k4_cd()}
    elif h.instruction == MMA:
        out = {"a": layouts.mma_a(16, h.k, wa), "b": layouts.mma_b(h.k, wb),
               "d": layouts.mma_cd(wd)}
    elif h.instruction == WGMMA:
        out = {"a": layouts.wgmma_a(h.k, wa),
               "b": layouts.k_major_smem(h.n, h.k, wb, True, "PTX ISA 8.8, wgmma B "
                                         "K-major, no swizzle"),
               "d": layouts.wgmma_d(wd)}
    else:
        out = {"a": layouts.k_major_smem(h.m, h.k, wa, False, "PTX ISA 8.8, tcgen05 "
                                         "A K-major, no swizzle"),
               "b": layouts.k_major_smem(h.n, h.k, wb, True, "PTX ISA 8.8, tcgen05 "
                                         "B K-major, no swizzle"),
               "d": layouts.tmem(h.m, h.n, wd)}
    out["c"] = out["d"]
    return out


def _rows() -> list[Harness]:
    rows: list[Harness] = []

    def add(targets: tuple[str, ...], *args: object, **kw: object) -> None:
        rows.extend(Harness(t, *args, **kw) for t in targets)  # type: ignore[arg-type]

    mma_targets = ("sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a")
    add(("sm_70", "sm_80", "sm_89", "sm_90a"), MMA, (8, 8, 4), "f16", "f16", "f16", "f16")
    for k in (8, 16):
        for d in ("f32", "f16"):
            add(mma_targets, MMA, (16, 8, k), "f16", "f16", d, d)
        add(mma_targets, MMA, (16, 8, k), "bf16", "bf16", "f32", "f32")
    for k in (4, 8):
        add(mma_targets, MMA, (16, 8, k), "tf32", "tf32", "f32", "f32")
    for a in ("u8", "s8"):
        for b in ("u8", "s8"):
            for sat in (False, True):
                add(mma_targets, MMA, (16, 8, 32), a, b, "s32", "s32", saturate=sat)
    add(mma_targets, MMA, (8, 8, 4), "f64", "f64", "f64", "f64")
    fp8 = ("e4m3", "e5m2")
    for k in (16, 32):
        for a in fp8:
            for b in fp8:
                for d in ("f32", "f16"):
                    add(mma_targets[1:], MMA, (16, 8, k), a, b, d, d)
    for k in (4, 8, 16):
        add(("sm_90a", "sm_100a", "sm_103a", "sm_120a"), MMA, (16, 8, k), "f64", "f64", "f64",
            "f64")
    for a in F8F6F4:
        for b in F8F6F4:
            for d in ("f32", "f16"):
                add(("sm_120a",), MMA, (16, 8, 32), a, b, d, d, kind="kind::f8f6f4")
            add(("sm_120a",), MMA, (16, 8, 32), a, b, "f32", "f32",
                kind="kind::mxf8f6f4", scale="scale_vec::1X ue8m0")
    add(("sm_120a",), MMA, (16, 8, 64), "e2m1", "e2m1", "f32", "f32",
        kind="kind::mxf4", scale="scale_vec::2X ue8m0")
    for vec, stype in (("2X", "ue8m0"), ("4X", "ue4m3")):  # ptxas 12.9 refuses 4X with ue8m0
        add(("sm_120a",), MMA, (16, 8, 64), "e2m1", "e2m1", "f32", "f32",
            kind="kind::mxf4nvf4", scale=f"scale_vec::{vec} {stype}")
    # wgmma: tf32, bf16 and f16 with F32 D, f16 and fp8 also with F16 D, integer with S32
    add(("sm_90a",), WGMMA, (64, 8, 8), "tf32", "tf32", "f32", "f32")
    add(("sm_90a",), WGMMA, (64, 8, 16), "bf16", "bf16", "f32", "f32")
    for d in ("f32", "f16"):
        add(("sm_90a",), WGMMA, (64, 8, 16), "f16", "f16", d, d)
        for a in fp8:
            for b in fp8:
                add(("sm_90a",), WGMMA, (64, 8, 32), a, b, d, d)
    for a in ("u8", "s8"):
        for b in ("u8", "s8"):
            add(("sm_90a",), WGMMA, (64, 8, 32), a, b, "s32", "s32")
    blackwell = ("sm_100a", "sm_103a")
    add(blackwell, TCGEN05, (128, 16, 8), "tf32", "tf32", "f32", "f32")
    add(blackwell, TCGEN05, (128, 16, 16), "bf16", "bf16", "f32", "f32")
    for d in ("f32", "f16"):
        add(blackwell, TCGEN05, (128, 16, 16), "f16", "f16", d, d)
        for a in F8F6F4:
            for b in F8F6F4:
                add(blackwell, TCGEN05, (128, 16, 32), a, b, d, d)
    for a in ("u8", "s8"):
        for b in ("u8", "s8"):
            for sat in (False, True):
                add(("sm_100a",), TCGEN05, (128, 16, 32), a, b, "s32", "s32", saturate=sat)
    for a in F8F6F4:
        for b in F8F6F4:
            add(blackwell, TCGEN05, (128, 16, 32), a, b, "f32", "f32",
                kind="kind::mxf8f6f4", scale="scale_vec::1X ue8m0")
    add(blackwell, TCGEN05, (128, 16, 64), "e2m1", "e2m1", "f32", "f32",
        kind="kind::mxf4", scale="scale_vec::2X ue8m0")
    for vec, stype in (("2X", "ue8m0"), ("4X", "ue8m0"), ("4X", "ue4m3")):
        add(blackwell, TCGEN05, (128, 16, 64), "e2m1", "e2m1", "f32", "f32",
            kind="kind::mxf4nvf4", scale=f"scale_vec::{vec} {stype}")
    return rows


HARNESSES: tuple[Harness, ...] = tuple(_rows())


def harnesses_for(target: str) -> list[Harness]:
    """The rows one target builds (its PTX file holds exactly these)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (known: {', '.join(TARGETS)})")
    return [h for h in HARNESSES if h.target == target]


def harness_named(name: str) -> Harness:
    for h in HARNESSES:
        if h.name == name:
            return h
    raise ValueError(f"no harness named {name!r} (see `tcspec hw list`)")


def descriptor_of(h: Harness) -> Descriptor | None:
    """The Blackwell ``tcgen05`` descriptor with ``h``'s operand formats, or None (a row with
    no packed layout). Campaign cases and self-test words are drawn from it; the words a
    row is compared with come from :func:`datapath_descriptor`."""
    if not h.packed:
        return None
    integer = h.d_format == "s32"
    desc = resolve(h.a_format, h.b_format, h.d_format, saturate=h.saturate) if integer \
        else resolve(h.a_format, h.b_format, h.d_format)
    return desc if desc.name in CATALOG else None


ARCH_INSTRUCTION = {MMA: "mma", WGMMA: "wgmma"}


def run_arch(h: Harness, sm: int | None = None) -> str:
    """The architecture whose arithmetic ``h`` runs: ``sm_<sm>`` of the GPU it runs on, or
    its own target's (``sm_90a`` -> ``sm_90``) when ``sm`` is None."""
    return f"sm_{sm}" if sm is not None else h.target.rstrip("a")


def arch_datapath(h: Harness, sm: int | None = None) -> ArchDescriptor | None:
    """The architecture datapath (section 10) of ``h`` run on ``sm``, or None: an arch the
    catalog does not list (``sm_103``, ``sm_86``), ``tcgen05`` rows, integer rows, the
    ``kind::f8f6f4`` forms (the catalog's rows are the plain ones), formats the
    architecture's table lacks."""
    arch = run_arch(h, sm)
    instruction = ARCH_INSTRUCTION.get(h.instruction)
    if arch not in ARCHES or instruction is None or h.d_format == "s32":
        return None
    shape = f"m{h.m}n{h.n}k{h.k}"
    if h.scale is not None:
        vec, scale_format = h.scale.removeprefix("scale_vec::").split()
        name = arch_name(arch, "mma_block_scale", shape, h.a_format, h.b_format, h.c_format,
                         h.d_format, scale_format, h.k // int(vec.rstrip("X")))
    elif h.kind is not None:
        return None
    else:
        name = arch_name(arch, instruction, shape, h.a_format, h.b_format, h.c_format,
                         h.d_format)
    entry = ARCH_CATALOG.get(name)
    return entry.descriptor if entry is not None else None  # type: ignore[return-value]


def datapath_descriptor(h: Harness, sm: int | None = None
                        ) -> ArchDescriptor | Descriptor | None:
    """The descriptor of :func:`catalog_datapath`: the architecture datapath, else the
    ``tcgen05`` fallback (None for a row without a packed layout)."""
    return arch_datapath(h, sm) or descriptor_of(h)


def catalog_datapath(h: Harness, sm: int | None = None) -> str | None:
    """The catalogued datapath whose words ``h`` produces on GPU architecture ``sm`` (default:
    its target's), or None (module docstring). The single mapping from rows to datapaths."""
    desc = datapath_descriptor(h, sm)
    return None if desc is None else desc.name


def datapath_source(h: Harness, sm: int | None = None) -> str:
    """``"architecture"``, ``"tcgen05 fallback"`` or ``"none"``: where
    :func:`catalog_datapath` found ``h``'s datapath."""
    if arch_datapath(h, sm) is not None:
        return "architecture"
    return "tcgen05 fallback" if descriptor_of(h) is not None else "none"
