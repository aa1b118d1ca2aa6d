"""Datapath names: the catalog, their syntactic fields, and the input-word layout.

Names follow SEMANTICS.md section 6 (tcgen05: ``dense-<f>``, ``sparse-<f>``,
``i8-<a>-<b>-<wrap|saturate>``, ``dense-mx-<f>``, ``dense-mx-<a>-<b>``,
``sparse-mx-<f>``, ``dense-mxf4``, ``dense-nvfp4``, ``dense-mxf4nvf4-2x``,
``dense-mxf4nvf4-4x``, ``dense-mxf4nvf4-4x-ue4m3`` and their ``sparse-``
siblings, ``mixed-<a>-<b>-<f32|f16>``) and section 10.1 (architecture names
``<arch>-<instruction>-<shape>[-block<S>]-<A>-<B>-c<C bits>-d<D bits>[-<scale>]``).

:func:`parse` turns a name into a :class:`Datapath` record of its syntactic
fields (and the counts the input-word layout needs); :func:`names` lists the
catalog (the 282 datapaths, built here from the tables of sections 6, 10.5 and
11); :func:`layout` and :func:`output_width` give the shared input interface.
Rule parameters of the other architectures (window widths, split steps,
groups) are the family modules' business, not this module's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# ------------------------------------------------------------------ tcgen05 tables (2-6)

FLOAT_FORMATS = ("tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
"""The unscaled float operand formats of section 2, in section 6's order."""

F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
"""The kind::f8f6f4 (and MXF8F6F4) element formats."""

INT_FORMATS = ("u8", "s8")

DENSE_K_BY_KIND = {"tf32": 8, "f16": 16, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64,
                   "mxf4nvf4": 64, "nvfp4": 64}
"""Dense K per instruction kind (sections 2, 3, 4)."""

# The E2M1 K=64 block-scaled families: name suffix -> (kind, scaling, scale_vec, block).
E2M1_BLOCK_FAMILIES = {
    "mxf4": ("mxf4", "ue8m0", 2, 32),
    "mxf4nvf4-2x": ("mxf4nvf4", "ue8m0", 2, 32),
    "mxf4nvf4-4x": ("mxf4nvf4", "ue8m0", 4, 16),
    "nvfp4": ("nvfp4", "ue4m3", 4, 16),
    "mxf4nvf4-4x-ue4m3": ("mxf4nvf4", "ue4m3", 4, 16),
}

# Sparse selection (section 5): kind -> (chunk size, kept selection).
ONE_OF_TWO = "1-of-2"
TWO_OF_FOUR = "2-of-4"
PAIRS_OF_EIGHT = "2-pairs-of-8"
SPARSE_CHUNK = {"tf32": (2, ONE_OF_TWO), "f16": (4, TWO_OF_FOUR), "f8f6f4": (4, TWO_OF_FOUR),
                "mxf8f6f4": (4, TWO_OF_FOUR), "mxf4": (8, PAIRS_OF_EIGHT),
                "mxf4nvf4": (8, PAIRS_OF_EIGHT), "nvfp4": (8, PAIRS_OF_EIGHT)}

# Registry keys of the families (which module computes a datapath).
WINDOW = "window"  # section 2
INTEGER = "integer"  # section 3
BLOCK = "block"  # section 4
SPARSE = "sparse"  # section 5 (dense rules of the sibling afterwards)
FUSED_DOT = "fused-dot"  # section 10.3
FUSED_DOT_BLOCK = "fused-dot-block"  # section 10.6
FMA_CHAIN = "fma-chain"  # section 11.1
CDNA3_RD = "cdna3-rd"  # section 11.2
PAIRWISE_TREE = "pairwise-tree"  # section 11.4
FAMILIES = (WINDOW, INTEGER, BLOCK, SPARSE, FUSED_DOT, FUSED_DOT_BLOCK, FMA_CHAIN, CDNA3_RD,
            PAIRWISE_TREE)

_BITS_FORMAT = {16: "f16", 32: "f32", 64: "f64"}
_FORMAT_BITS = {"f16": 16, "f32": 32, "f64": 64, "s32": 32}


@dataclass(frozen=True)
class Datapath:
    """The syntactic fields of one datapath name, and the layout counts that follow.

    tcgen05 names have ``arch == "sm_100"``, ``instruction == "tcgen05"``,
    ``shape is None`` and a ``kind`` (``tf32``, ``f16``, ``f8f6f4``, ``i8``,
    ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``, ``nvfp4``). Architecture names have
    ``kind is None`` and the fields of their name (section 10.1).

    ``c_format``/``d_format``: ``f32``, ``f16``, ``f64`` or ``s32``. ``dense_k``
    is the physical K of the instruction; ``k`` the number of A (and B) words
    (the logical K: twice ``dense_k`` when sparse). ``block`` is the scale block
    size in physical K and ``n_scales = dense_k // block`` the scale bytes per
    operand. Sparse: ``chunk`` elements per metadata nibble, ``selection``
    (:data:`ONE_OF_TWO`, :data:`TWO_OF_FOUR`, :data:`PAIRS_OF_EIGHT`),
    ``meta_words`` 32-bit metadata words, ``dense_name`` the dense sibling
    whose rules run on the compacted lanes.
    """

    name: str
    family: str
    arch: str
    instruction: str
    shape: str | None
    kind: str | None
    a_format: str
    b_format: str
    c_format: str
    d_format: str
    int_mode: str | None = None
    scaling: str | None = None
    scale_vec: int | None = None
    block: int | None = None
    sparse: bool = False
    dense_k: int = 0
    k: int = 0
    n_scales: int = 0
    chunk: int | None = None
    selection: str | None = None
    meta_words: int = 0
    dense_name: str | None = None

    @property
    def word_bits(self) -> int:
        """Width of the A, B and C words: 64 where A, B or C is F64, else 32."""
        return 64 if "f64" in (self.a_format, self.b_format, self.c_format) else 32

    @property
    def c_bits(self) -> int:
        """Container width of the C format (the ``c<bits>`` of an architecture name)."""
        return _FORMAT_BITS[self.c_format]

    @property
    def d_bits(self) -> int:
        """Container width of the D format (the ``d<bits>`` of an architecture name)."""
        return _FORMAT_BITS[self.d_format]

    @property
    def output_bits(self) -> int:
        """Width of the D word."""
        return self.d_bits


# ------------------------------------------------------------------ the catalog


def _tcgen05_names() -> list[str]:
    """Section 6's names, with the mixed family (25 pairs x 2 D types, less the 5 dense)
    and the MXF8F6F4 pairs of different formats."""
    out = [f"dense-{f}" for f in FLOAT_FORMATS]
    out += [f"i8-{a}-{b}-{mode}" for a in INT_FORMATS for b in INT_FORMATS
            for mode in ("wrap", "saturate")]
    out += [f"dense-mx-{f}" for f in F8F6F4]
    out += ["dense-mxf4", "dense-mxf4nvf4-2x", "dense-mxf4nvf4-4x", "dense-nvfp4",
            "dense-mxf4nvf4-4x-ue4m3"]
    out += [f"sparse-{f}" for f in FLOAT_FORMATS]
    out += [f"sparse-mx-{f}" for f in F8F6F4]
    out += ["sparse-mxf4", "sparse-mxf4nvf4-2x", "sparse-mxf4nvf4-4x", "sparse-nvfp4",
            "sparse-mxf4nvf4-4x-ue4m3"]
    out += [f"mixed-{a}-{b}-{d}" for a in F8F6F4 for b in F8F6F4 for d in ("f32", "f16")
            if not (a == b and d == "f32")]
    out.append("mixed-f16-f16-f16")
    out += [f"dense-mx-{a}-{b}" for a in F8F6F4 for b in F8F6F4 if a != b]
    return out


_AMPERE = [("m16n8k8", "f16", (32, 16)), ("m16n8k8", "bf16", (32,)),
           ("m16n8k16", "f16", (32, 16)), ("m16n8k16", "bf16", (32,)),
           ("m16n8k4", "tf32", (32,)), ("m16n8k8", "tf32", (32,))]
"""Ampere's eight `mma` qualifiers (10.5): shape, A=B format, C=D bits."""

_FP8_PAIRS_DESC = [("e5m2", "e5m2"), ("e5m2", "e4m3"), ("e4m3", "e5m2"), ("e4m3", "e4m3")]
_FP8_PAIRS_ASC = [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")]


def _nvidia_names() -> list[str]:
    """Section 10.5's datapaths and the FP64 `mma` chains of 11.1."""
    def mma(arch: str, shape: str, a: str, b: str, c: int, d: int, instr: str = "mma") -> str:
        return f"{arch}-{instr}-{shape}-{a}-{b}-c{c}-d{d}"

    def ampere(arch: str) -> list[str]:
        return [mma(arch, shape, f, f, bits, bits) for shape, f, bits_list in _AMPERE
                for bits in bits_list]

    def fp8(arch: str) -> list[str]:
        return [mma(arch, f"m16n8k{k}", a, b, bits, bits) for k in (16, 32) for bits in (32, 16)
                for a, b in _FP8_PAIRS_DESC]

    out = [mma("sm_70", "m8n8k4", "f16", "f16", c, d) for c, d in ((32, 32), (16, 32), (16, 16))]
    out += [mma("sm_75", "m16n8k8", "f16", "f16", b, b) for b in (32, 16)]
    out += [mma("sm_75", "m8n8k4", "f16", "f16", c, d) for c, d in ((32, 32), (16, 32), (16, 16))]
    out += ampere("sm_80")
    out += ampere("sm_89") + fp8("sm_89")
    out += ampere("sm_90") + ampere("sm_100")
    out += ampere("sm_120") + fp8("sm_120")
    out += [mma("sm_90", "m64n8k8", "tf32", "tf32", 32, 32, "wgmma"),
            mma("sm_90", "m64n8k16", "f16", "f16", 32, 32, "wgmma"),
            mma("sm_90", "m64n8k16", "f16", "f16", 16, 16, "wgmma"),
            mma("sm_90", "m64n8k16", "bf16", "bf16", 32, 32, "wgmma")]
    out += [mma("sm_90", "m64n8k32", a, b, bits, bits, "wgmma") for bits in (32, 16)
            for a, b in _FP8_PAIRS_ASC]
    out += [f"sm_120-mma_block_scale-m16n8k32-block32-{a}-{b}-c32-d32-ue8m0"
            for a, b in _FP8_PAIRS_DESC]
    out += [f"sm_120-mma_block_scale-m16n8k64-block{blk}-e2m1-e2m1-c32-d32-{s}"
            for blk in (16, 32) for s in ("ue8m0", "ue4m3")]
    out += [mma(arch, "m8n8k4", "f64", "f64", 64, 64)
            for arch in ("sm_80", "sm_89", "sm_100", "sm_120", "sm_90")]
    out += [mma("sm_90", f"m16n8k{k}", "f64", "f64", 64, 64) for k in (4, 8, 16)]
    return out


def _amd_names() -> list[str]:
    """Section 11's CDNA `v_mfma` datapaths (11.1 chains, 11.2 fused dots, 11.4 trees)."""
    def mfma(arch: str, shape: str, a: str, b: str | None = None) -> str:
        c = 64 if a == "f64" else 32
        return f"{arch}-mfma-{shape}-{a}-{b or a}-c{c}-d{c}"

    cdna12_f32 = ("32x32x2", "32x32x1", "16x16x4", "16x16x1", "4x4x1")
    out = [mfma("cdna1", s, "f32") for s in cdna12_f32]
    out += [mfma("cdna2", s, "f64") for s in ("16x16x4", "4x4x4")]
    out += [mfma("cdna2", s, "f32") for s in cdna12_f32]
    out += [mfma("cdna3", s, "f64") for s in ("16x16x4", "4x4x4_4b")]
    out += [mfma("cdna3", s, "f32")
            for s in ("32x32x1_2b", "16x16x1_4b", "4x4x1_16b", "32x32x2", "16x16x4")]
    out += [mfma("cdna3", s, "xf32") for s in ("16x16x8", "32x32x4")]
    cdna3_half = ("32x32x4_2b", "16x16x4_4b", "4x4x4_16b", "32x32x8", "16x16x16")
    out += [mfma("cdna3", s, f) for f in ("f16", "bf16") for s in cdna3_half]
    fnuz = ["e4m3fnuz", "e5m2fnuz"]
    out += [mfma("cdna3", s, a, b) for s in ("16x16x32", "32x32x16") for a in fnuz for b in fnuz]
    f16_shapes = ("32x32x8", "32x32x4", "16x16x16", "16x16x4", "4x4x4")
    bf16_shapes = ("32x32x4", "32x32x2", "16x16x8", "16x16x2", "4x4x2")
    out += [mfma("cdna1", s, "f16") for s in f16_shapes]
    out += [mfma("cdna1", s, "bf16") for s in bf16_shapes]
    out += [mfma("cdna2", f"{s}_1k", "bf16") for s in f16_shapes]
    out += [mfma("cdna2", s, "f16") for s in f16_shapes]
    out += [mfma("cdna2", s, "bf16") for s in bf16_shapes]
    return out


@cache
def _catalog() -> tuple[str, ...]:
    all_names = _tcgen05_names() + _nvidia_names() + _amd_names()
    if len(set(all_names)) != len(all_names):  # pragma: no cover - static tables
        raise AssertionError("duplicate datapath names in the catalog")
    return tuple(all_names)


def names() -> list[str]:
    """Every datapath name this rule book specifies (the 282 of NAMES.txt)."""
    return list(_catalog())


# ------------------------------------------------------------------ parsing


def _tcgen05(name: str) -> Datapath:
    """Fields of a section-6 name (ValueError when the syntax is not one of section 6's)."""
    base = dict(name=name, arch="sm_100", instruction="tcgen05", shape=None)
    parts = name.split("-")
    head = parts[0]
    if head == "i8":
        if (len(parts) != 4 or parts[1] not in INT_FORMATS or parts[2] not in INT_FORMATS
                or parts[3] not in ("wrap", "saturate")):
            raise ValueError(f"unknown datapath name {name!r}")
        return Datapath(**base, family=INTEGER, kind="i8", a_format=parts[1],
                        b_format=parts[2], c_format="s32", d_format="s32", int_mode=parts[3],
                        dense_k=32, k=32)
    if head == "mixed":
        if len(parts) != 4 or parts[3] not in ("f32", "f16"):
            raise ValueError(f"unknown datapath name {name!r}")
        a, b, d = parts[1:]
        if a == b == d == "f16":
            kind = "f16"
        elif a in F8F6F4 and b in F8F6F4:
            kind = "f8f6f4"
        else:
            raise ValueError(f"unknown datapath name {name!r}")
        return Datapath(**base, family=WINDOW, kind=kind, a_format=a, b_format=b,
                        c_format=d, d_format=d, dense_k=DENSE_K_BY_KIND[kind],
                        k=DENSE_K_BY_KIND[kind])
    if head not in ("dense", "sparse"):
        raise ValueError(f"unknown datapath name {name!r}")
    sparse = head == "sparse"
    rest = "-".join(parts[1:])
    fields: dict = {}
    if rest in FLOAT_FORMATS:
        kind = {"tf32": "tf32", "bf16": "f16", "f16": "f16"}.get(rest, "f8f6f4")
        fields = dict(family=WINDOW, kind=kind, a_format=rest, b_format=rest)
    elif rest.startswith("mx-"):
        fmts = rest[3:].split("-")
        if not (1 <= len(fmts) <= 2 and all(f in F8F6F4 for f in fmts)) or (
                len(fmts) == 2 and (sparse or fmts[0] == fmts[1])):
            raise ValueError(f"unknown datapath name {name!r}")
        fields = dict(family=BLOCK, kind="mxf8f6f4", a_format=fmts[0], b_format=fmts[-1],
                      scaling="ue8m0", scale_vec=1, block=32)
    elif rest in E2M1_BLOCK_FAMILIES:
        kind, scaling, vec, block = E2M1_BLOCK_FAMILIES[rest]
        fields = dict(family=BLOCK, kind=kind, a_format="e2m1", b_format="e2m1",
                      scaling=scaling, scale_vec=vec, block=block)
    else:
        raise ValueError(f"unknown datapath name {name!r}")
    dense_k = DENSE_K_BY_KIND[fields["kind"]]
    n_scales = dense_k // fields["block"] if fields.get("block") else 0
    extra: dict = {}
    if sparse:
        chunk, selection = SPARSE_CHUNK[fields["kind"]]
        chunks = 2 * dense_k // chunk
        extra = dict(family=SPARSE, sparse=True, chunk=chunk, selection=selection,
                     meta_words=-(-chunks // 8), dense_name="dense-" + rest)
    fields.update(extra)
    return Datapath(**base, **fields, c_format="f32", d_format="f32", dense_k=dense_k,
                    k=2 * dense_k if sparse else dense_k, n_scales=n_scales)


_ARCH_RE = re.compile(
    r"^(?P<arch>sm_\d+|cdna\d)-(?P<instr>mma_block_scale|wgmma|mma|mfma)-(?P<shape>[0-9a-z_]+)"
    r"(?:-block(?P<block>\d+))?-(?P<a>[0-9a-z]+)-(?P<b>[0-9a-z]+)-c(?P<c>\d+)-d(?P<d>\d+)"
    r"(?:-(?P<scale>ue8m0|ue4m3))?$"
)
_NV_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")
_AMD_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)(?:_[0-9a-z]+)?$")


def _arch_family(arch: str, instr: str, a: str) -> str:
    """The algorithm family (10.1) of an architecture datapath, from its name's fields."""
    if a in ("f64", "f32"):
        return FMA_CHAIN
    if instr == "mma_block_scale":
        return FUSED_DOT_BLOCK
    if arch.startswith("sm_"):
        return FUSED_DOT
    if arch == "cdna3":
        return CDNA3_RD
    return PAIRWISE_TREE


def _architecture(name: str) -> Datapath:
    """Fields of a section-10.1 name (ValueError when it does not parse)."""
    match = _ARCH_RE.match(name)
    if not match:
        raise ValueError(f"unknown datapath name {name!r}")
    g = match.groupdict()
    shape_re = _AMD_SHAPE if g["arch"].startswith("cdna") else _NV_SHAPE
    shape = shape_re.match(g["shape"])
    if not shape:
        raise ValueError(f"unknown datapath name {name!r}: shape {g['shape']!r}")
    k = int(shape.group(3))
    c_bits, d_bits = int(g["c"]), int(g["d"])
    if c_bits not in _BITS_FORMAT or d_bits not in _BITS_FORMAT:
        raise ValueError(f"unknown datapath name {name!r}")
    block = int(g["block"]) if g["block"] else None
    if (block is None) != (g["scale"] is None) or (block is not None and k % block):
        raise ValueError(f"unknown datapath name {name!r}")
    return Datapath(name=name, family=_arch_family(g["arch"], g["instr"], g["a"]),
                    arch=g["arch"], instruction=g["instr"], shape=g["shape"], kind=None,
                    a_format=g["a"], b_format=g["b"], c_format=_BITS_FORMAT[c_bits],
                    d_format=_BITS_FORMAT[d_bits], scaling=g["scale"], block=block,
                    dense_k=k, k=k, n_scales=k // block if block else 0)


@cache
def parse(name: str) -> Datapath:
    """The record of datapath ``name``; ValueError naming an unknown name."""
    if not isinstance(name, str):
        raise ValueError(f"a datapath name must be a str, got {type(name).__name__}")
    if name not in set(_catalog()):
        raise ValueError(f"unknown datapath name {name!r}")
    if name.startswith(("sm_", "cdna")):
        return _architecture(name)
    return _tcgen05(name)


def layout(name: str) -> list[tuple[str, int]]:
    """The datapath's input words at its instruction K, in order, as (name, width).

    ``a0..a{K-1}``, ``b0..b{K-1}`` (K the logical K), ``c``; then block-scaled
    ``scale_a0..``, ``scale_b0..`` (8 bits, one per scale block of the
    physical K); then sparse ``meta0..`` (32 bits, one per 8 chunks).
    """
    rec = parse(name)
    w = rec.word_bits
    out = [(f"a{i}", w) for i in range(rec.k)]
    out += [(f"b{i}", w) for i in range(rec.k)]
    out.append(("c", w))
    out += [(f"scale_a{i}", 8) for i in range(rec.n_scales)]
    out += [(f"scale_b{i}", 8) for i in range(rec.n_scales)]
    out += [(f"meta{i}", 32) for i in range(rec.meta_words)]
    return out


def output_width(name: str) -> int:
    """Width of the D word (32 for F32 and S32 D, 16 for F16 D, 64 for F64 D)."""
    return parse(name).output_bits
