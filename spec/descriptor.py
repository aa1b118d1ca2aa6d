"""Instruction descriptors: defaults, legality and canonical names (SEMANTICS.md sections 2-6).

:func:`resolve` turns the keyword fields of ``mma_dot`` into a
:class:`Descriptor` with every default spelled out, or raises ``ValueError``
naming the rule that refuses it. Exactly the combinations of SEMANTICS.md
are accepted; the f16 x f16 -> F16 D datapath is accepted but flagged as
unvalidated.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tcspec.spec.formats import ALIASES, ARCH_ONLY_FORMATS, FORMATS, IntFormat

F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
D_TYPES = ("f32", "f16", "s32")
SCALINGS = ("ue8m0", "ue4m3")
SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4", "nvfp4")
UNSCALED_KINDS = ("tf32", "f16", "f8f6f4", "i8")

DENSE_K = {"tf32": 8, "f16": 16, "f8f6f4": 32, "i8": 32,
           "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64, "nvfp4": 64}
"""Dense K per instruction kind (SEMANTICS.md sections 2-4)."""

SPARSE_CHUNKS = {"tf32": (2, "one"), "f16": (4, "two"), "f8f6f4": (4, "two"),
                 "mxf8f6f4": (4, "two"), "mxf4": (8, "pairs"), "mxf4nvf4": (8, "pairs"),
                 "nvfp4": (8, "pairs")}
"""Sparse chunk size and selection rule per kind (SEMANTICS.md section 5)."""


@dataclass(frozen=True)
class Descriptor:
    """A fully resolved descriptor: one datapath of the catalog (or a modelled extra)."""

    a_format: str
    b_format: str
    d_type: str
    saturate: bool
    scaling: str | None
    kind: str
    scale_vec: int | None
    sparse: bool

    @property
    def family(self) -> str:
        """``window`` (unscaled float), ``integer`` or ``block`` (block-scaled)."""
        if self.kind == "i8":
            return "integer"
        return "block" if self.scaling else "window"

    @property
    def dense_k(self) -> int:
        return DENSE_K[self.kind]

    @property
    def k(self) -> int:
        """Logical K: the number of A and B words a dot product takes."""
        return self.dense_k * (2 if self.sparse else 1)

    @property
    def scale_block(self) -> int | None:
        """Physical (compacted) K covered by one scale byte."""
        return self.dense_k // self.scale_vec if self.scaling else None

    @property
    def scale_count(self) -> int:
        """Scale bytes each operand needs per dot product."""
        return self.scale_vec if self.scaling else 0

    @property
    def sparse_chunk(self) -> tuple[int, str] | None:
        return SPARSE_CHUNKS[self.kind] if self.sparse else None

    @property
    def metadata_words(self) -> int:
        """32-bit metadata words covering every chunk (8 selectors per word)."""
        if not self.sparse:
            return 0
        chunks = self.k // SPARSE_CHUNKS[self.kind][0]
        return -(-chunks // 8)

    @property
    def name(self) -> str:
        """The canonical datapath name (SEMANTICS.md section 6)."""
        prefix = "sparse" if self.sparse else "dense"
        a, b = self.a_format, self.b_format
        if self.family == "integer":
            return f"i8-{a}-{b}-{'saturate' if self.saturate else 'wrap'}"
        if self.family == "window":
            if a == b and self.d_type == "f32":
                return f"{prefix}-{a}"
            return f"{'sparse-' if self.sparse else ''}mixed-{a}-{b}-{self.d_type}"
        if self.kind == "mxf8f6f4":
            return f"{prefix}-mx-{a}" if a == b else f"{prefix}-mx-{a}-{b}"
        if self.kind == "mxf4":
            return f"{prefix}-mxf4"
        if self.kind == "nvfp4":
            return f"{prefix}-nvfp4"
        suffix = "-ue4m3" if self.scaling == "ue4m3" else ""
        return f"{prefix}-mxf4nvf4-{self.scale_vec}x{suffix}"

    @property
    def validated_shape(self) -> bool:
        """False for modelled datapaths no B200 word covers (f16 x f16 -> F16 D)."""
        return not (self.kind == "f16" and self.d_type == "f16")

    def fields(self) -> dict[str, object]:
        """The keyword fields of ``mma_dot`` with every default spelled out."""
        fields = asdict(self)
        del fields["sparse"]
        return fields


def _format_name(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a format name, got {value!r}")
    key = ALIASES.get(value.lower(), value.lower())
    excluded = ("f32", "ue8m0", "ue4m3", *ARCH_ONLY_FORMATS)
    if key not in FORMATS or key in excluded:
        operand = sorted(n for n in FORMATS if n not in excluded)
        from tcspec.spec.names import did_you_mean

        raise ValueError(f"unknown {field} {value!r}{did_you_mean(value, [*operand, *ALIASES])} "
                         f"(operand formats: {', '.join(operand)})")
    return key


def _unscaled_kind(a: str, b: str, d_type: str | None) -> str:
    if isinstance(FORMATS[a], IntFormat) or isinstance(FORMATS[b], IntFormat):
        if not (isinstance(FORMATS[a], IntFormat) and isinstance(FORMATS[b], IntFormat)):
            raise ValueError(f"kind::i8 needs integer A and B (u8/s8), got a_format={a!r}, "
                             f"b_format={b!r}")
        return "i8"
    if a == "tf32" or b == "tf32":
        if a != b:
            raise ValueError(f"tf32 A requires tf32 B and F32 D, got a_format={a!r}, "
                             f"b_format={b!r}")
        return "tf32"
    if a in ("bf16", "f16") or b in ("bf16", "f16"):
        if a != b:
            raise ValueError("kind::f16 needs matching A and B formats (bf16/bf16 or f16/f16), "
                             f"got a_format={a!r}, b_format={b!r}")
        return "f16"
    return "f8f6f4"


def resolve(a_format: str, b_format: str | None = None, d_type: str | None = None,
            saturate: bool = False, scaling: str | None = None, kind: str | None = None,
            scale_vec: int | None = None, sparse: bool = False) -> Descriptor:
    """Apply the defaults of SEMANTICS.md section 6 and check legality.

    ``ValueError`` names the refused combination and the rule.
    """
    a = _format_name("a_format", a_format)
    b = a if b_format is None else _format_name("b_format", b_format)
    if d_type is not None and d_type not in D_TYPES:
        raise ValueError(f"unknown d_type {d_type!r} (known: {', '.join(D_TYPES)})")
    if not isinstance(saturate, bool):
        raise ValueError(f"saturate must be true or false, got {saturate!r}")
    if scaling is not None and scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r} (known: {', '.join(SCALINGS)}, or none)")
    if kind is not None and kind not in SCALED_KINDS + UNSCALED_KINDS:
        known = ", ".join(SCALED_KINDS + UNSCALED_KINDS)
        raise ValueError(f"unknown kind {kind!r} (known: {known}, or none)")
    if scale_vec is not None and scale_vec not in (1, 2, 4):
        raise ValueError(f"scale_vec must be 1, 2 or 4, got {scale_vec!r}")

    if scaling is None:
        if kind in SCALED_KINDS:
            raise ValueError(f"kind={kind!r} is block-scaled and needs scaling='ue8m0' or 'ue4m3'")
        if scale_vec is not None:
            raise ValueError(f"scale_vec={scale_vec} applies only to block-scaled datapaths "
                             "(scaling='ue8m0' or 'ue4m3')")
        resolved_kind = _unscaled_kind(a, b, d_type)
        if kind is not None and kind != resolved_kind:
            raise ValueError(f"kind={kind!r} does not match formats {a}/{b} "
                             f"(they are kind::{resolved_kind})")
        default_d = "s32" if resolved_kind == "i8" else "f32"
        d = d_type or default_d
        if resolved_kind == "i8":
            if sparse:
                raise ValueError("sparse kind::i8 is not specified (SEMANTICS.md section 5 "
                                 "covers float and block-scaled datapaths only)")
            if d != "s32":
                raise ValueError(f"kind::i8 accumulates in S32: d_type must be 's32', got {d!r}")
            return Descriptor(a, b, d, saturate, None, "i8", None, sparse)
        if saturate:
            raise ValueError("saturate applies only to integer (kind::i8) datapaths")
        if d == "s32":
            raise ValueError(f"d_type='s32' needs integer formats (u8/s8), got {a}/{b}")
        if resolved_kind == "tf32" and d != "f32":
            raise ValueError(f"tf32 A requires tf32 B and F32 D, got d_type={d!r}")
        if resolved_kind == "f16" and d == "f16" and a != "f16":
            raise ValueError(f"kind::f16 gives F16 D only for f16 x f16 inputs, got {a}/{b}")
        return Descriptor(a, b, d, False, None, resolved_kind, None, sparse)

    if saturate:
        raise ValueError("saturate applies only to integer (kind::i8) datapaths")
    if d_type not in (None, "f32"):
        raise ValueError(f"block-scaled datapaths accumulate to F32: d_type must be 'f32', "
                         f"got {d_type!r}")
    for field, fmt in (("a_format", a), ("b_format", b)):
        if fmt not in F8F6F4:
            raise ValueError(f"block-scaled {field} must be one of {', '.join(F8F6F4)}, "
                             f"got {fmt!r}")
    fp4 = a == "e2m1" and b == "e2m1"
    if scaling == "ue4m3":
        if not fp4:
            raise ValueError(f"UE4M3 scaling (NVFP4) needs e2m1 A and B, got {a}/{b}")
        if kind not in (None, "nvfp4", "mxf4nvf4"):
            raise ValueError(f"UE4M3 scaling is kind::mxf4nvf4 (NVFP4), not kind={kind!r}")
        if scale_vec not in (None, 4):
            raise ValueError(f"UE4M3 scaling needs scale_vec=4 (blocks of 16), got {scale_vec}")
        return Descriptor(a, b, "f32", False, scaling, kind or "nvfp4", 4, sparse)

    if kind is None:
        if fp4:
            raise ValueError("e2m1 A and B with UE8M0 scaling is ambiguous: give "
                             "kind='mxf8f6f4' (K=32), 'mxf4' or 'mxf4nvf4' (K=64)")
        kind = "mxf8f6f4"
    if kind == "nvfp4":
        raise ValueError("kind='nvfp4' uses UE4M3 scales, not scaling='ue8m0'")
    if kind == "mxf8f6f4":
        if scale_vec not in (None, 1):
            raise ValueError(f"kind::mxf8f6f4 has one scale per 32 K (scale_vec=1), "
                             f"got scale_vec={scale_vec}")
        return Descriptor(a, b, "f32", False, scaling, kind, 1, sparse)
    if not fp4:
        raise ValueError(f"kind::{kind} needs e2m1 A and B, got {a}/{b}")
    if kind == "mxf4":
        if scale_vec not in (None, 2):
            raise ValueError(f"kind::mxf4 needs scale_vec=2 (blocks of 32), got {scale_vec}")
        return Descriptor(a, b, "f32", False, scaling, kind, 2, sparse)
    if scale_vec == 1:
        raise ValueError("kind::mxf4nvf4 with UE8M0 needs scale_vec=2 or 4, got 1")
    return Descriptor(a, b, "f32", False, scaling, kind, scale_vec or 2, sparse)
