"""The catalog of named datapaths and the one entry point that builds any of them.

Names follow SEMANTICS.md sections 6 and 10. :func:`build_dot` is the single source
every lowering runs: give it an ``ops`` backend, a resolved descriptor and
the input bit-vectors, and it returns the result word. The catalog holds the 110
tcgen05 datapaths (``arch`` ``sm_100``, :data:`TCGEN05`) and the architecture datapaths
of section 10 (:class:`spec.arch.ArchDescriptor`, one algorithm family each).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tcspec.spec.algorithms import ALGORITHMS, ARCH_DATAPATHS, algorithm_of, build_arch_dot
from tcspec.spec.arch import ARCH_NAMES, TCGEN05_ARCH, ArchDescriptor
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import block_scaled_dot, rules_for
from tcspec.spec.descriptor import F8F6F4, Descriptor, resolve
from tcspec.spec.formats import FORMATS, FloatFormat, IntFormat
from tcspec.spec.inputs import DotInputs
from tcspec.spec.integer import integer_dot
from tcspec.spec.sparse import chunk_selectors, metadata_legality, select_active
from tcspec.spec.window import dense_window_dot

__all__ = ["CATALOG", "DotInputs", "build_dot", "input_layout", "inputs_from", "lookup"]

HARDWARE_VALIDATED = (
    [f"dense-{f}" for f in ("tf32", "bf16", "f16", *F8F6F4)]
    + [f"i8-{a}-{b}-{m}" for a in ("u8", "s8") for b in ("u8", "s8") for m in ("wrap", "saturate")]
    + [f"dense-mx-{f}" for f in F8F6F4]
    + ["dense-mxf4", "dense-mxf4nvf4-2x", "dense-mxf4nvf4-4x",
       "dense-nvfp4", "dense-mxf4nvf4-4x-ue4m3"]
    + [f"sparse-{f}" for f in ("tf32", "bf16", "f16", *F8F6F4)]
    + ["sparse-nvfp4"] + [f"sparse-mx-{f}" for f in F8F6F4]
    + ["sparse-mxf4", "sparse-mxf4nvf4-2x", "sparse-mxf4nvf4-4x", "sparse-mxf4nvf4-4x-ue4m3"]
    + ["mixed-e4m3-e2m1-f32", "mixed-e2m1-e4m3-f16"]
)
"""The 46 datapaths SEMANTICS.md section 6 reports as validated on B200 hardware."""


def _catalog_descriptors() -> list[Descriptor]:
    fields: list[dict[str, object]] = []
    fields += [{"a_format": f} for f in ("tf32", "bf16", "f16", *F8F6F4)]
    fields += [{"a_format": a, "b_format": b, "d_type": "s32", "saturate": s}
               for a in ("u8", "s8") for b in ("u8", "s8") for s in (False, True)]
    fields += [{"a_format": f, "scaling": "ue8m0", "kind": "mxf8f6f4"} for f in F8F6F4]
    fields += [{"a_format": "e2m1", "scaling": "ue8m0", "kind": "mxf4"},
               {"a_format": "e2m1", "scaling": "ue8m0", "kind": "mxf4nvf4", "scale_vec": 2},
               {"a_format": "e2m1", "scaling": "ue8m0", "kind": "mxf4nvf4", "scale_vec": 4},
               {"a_format": "e2m1", "scaling": "ue4m3"},
               {"a_format": "e2m1", "scaling": "ue4m3", "kind": "mxf4nvf4"}]
    dense = [resolve(**f) for f in fields]  # type: ignore[arg-type]
    sparse = [resolve(**f, sparse=True) for f in fields  # type: ignore[arg-type]
              if f.get("d_type") != "s32"]
    mixed = [resolve(a, b, d) for a in F8F6F4 for b in F8F6F4 for d in ("f32", "f16")
             if not (a == b and d == "f32")]
    extras = [resolve("f16", "f16", "f16")]
    extras += [resolve(a, b, scaling="ue8m0", kind="mxf8f6f4")
               for a in F8F6F4 for b in F8F6F4 if a != b]
    return dense + sparse + mixed + extras


AnyDescriptor = Descriptor | ArchDescriptor

EVIDENCE_HARDWARE = "hardware words ({gpu})"
EVIDENCE_REFERENCE = "reference model"
EVIDENCE_PUBLISHED = "published model only"
EVIDENCE_NONE = "ours only"


@dataclass(frozen=True)
class Datapath:
    """A catalogued datapath: its canonical name and resolved descriptor."""

    name: str
    descriptor: AnyDescriptor

    @property
    def hardware_validated(self) -> bool:
        """Listed among the 46 B200-validated datapaths of SEMANTICS.md section 6."""
        return self.name in HARDWARE_VALIDATED

    @property
    def specified(self) -> bool:
        return is_specified(self.descriptor)

    @property
    def arch(self) -> str:
        """``sm_70`` ... ``sm_120``, ``cdna1`` .. ``cdna3``; the tcgen05 paths are ``sm_100``."""
        return getattr(self.descriptor, "arch", TCGEN05_ARCH)

    @property
    def instruction(self) -> str:
        return getattr(self.descriptor, "instruction", "tcgen05")

    @property
    def is_tcgen05(self) -> bool:
        return not isinstance(self.descriptor, ArchDescriptor)


TCGEN05: dict[str, Datapath] = {d.name: Datapath(d.name, d) for d in _catalog_descriptors()}
"""The 110 tcgen05.mma datapaths of sections 2-6 (B200)."""

ARCH_CATALOG: dict[str, Datapath] = {d.name: Datapath(d.name, d) for d in ARCH_DATAPATHS}
"""The architecture datapaths of section 10."""

CATALOG: dict[str, Datapath] = {**TCGEN05, **ARCH_CATALOG}
"""Every datapath: tcgen05 first, then the architectures of section 10."""


def datapaths_of(arch: str) -> list[Datapath]:
    """The catalogued datapaths of ``arch`` (``sm_100`` includes tcgen05);
    ``ValueError`` naming the known architectures."""
    if arch not in ARCH_NAMES:
        raise ValueError(f"unknown architecture {arch!r} (known: {', '.join(ARCH_NAMES)})")
    return [d for d in CATALOG.values() if d.arch == arch]


def lookup(name: str) -> Datapath:
    """The datapath called ``name``; short aliases drop ``dense-`` (``tf32``, ``mx-e4m3``)."""
    if isinstance(name, str):
        key = name.strip().lower()
        for candidate in (key, f"dense-{key}"):
            if candidate in CATALOG:
                return CATALOG[candidate]
    from tcspec.spec.names import did_you_mean

    known = [*CATALOG, *(n[len("dense-"):] for n in CATALOG if n.startswith("dense-"))]
    raise ValueError(f"unknown datapath {name!r}{did_you_mean(name, known)} "
                     "(see `tcspec list` for the canonical names)")


def descriptor_of(datapath: str | dict[str, object] | AnyDescriptor) -> AnyDescriptor:
    """A resolved descriptor from a canonical name, a descriptor dict or a descriptor."""
    if isinstance(datapath, (Descriptor, ArchDescriptor)):
        return datapath
    if isinstance(datapath, str):
        return lookup(datapath).descriptor
    if isinstance(datapath, dict):
        return resolve(**datapath)  # type: ignore[arg-type]
    raise ValueError(f"datapath must be a name or a descriptor dict, got {datapath!r}")


@dataclass(frozen=True)
class InputSpec:
    """One input of a datapath formula: its name, width and where it goes."""

    name: str
    width: int
    role: str
    index: int


def check_logical_k(desc: Descriptor, k: int) -> None:
    """``ValueError`` unless ``k`` lanes split into whole scale blocks and sparse chunks.

    Any K other than ``desc.k`` is a model of the datapath, not the
    instruction (the spec functions are K-generic).
    """
    step = logical_k_step(desc)
    if k <= 0 or k % step:
        raise ValueError(f"K={k} is impossible for {desc.name}: the logical K must be a "
                         f"positive multiple of {step}")


def logical_k_step(desc: Descriptor) -> int:
    """The smallest logical K of ``desc``'s arithmetic: a scale block, a sparse chunk."""
    if isinstance(desc, ArchDescriptor):
        return desc.k_step
    step = desc.scale_block or 1
    if desc.sparse:
        step *= 2
        step = max(step, desc.sparse_chunk[0])  # type: ignore[index]
    return step


def input_layout(desc: Descriptor, k: int | None = None) -> list[InputSpec]:
    """Every input word of ``desc``'s formula: A and B lanes, C, scales, metadata.

    ``k`` (default the instruction's logical K) gives the layout of the same
    arithmetic on another K: one scale byte per block, one metadata word per
    8 chunks.
    """
    k = desc.k if k is None else k
    check_logical_k(desc, k)
    physical = k // 2 if desc.sparse else k
    scales = physical // desc.scale_block if desc.scaling else 0  # type: ignore[operator]
    chunks = k // desc.sparse_chunk[0] if desc.sparse else 0  # type: ignore[index]
    bits = operand_bits(desc)
    specs = [InputSpec(f"a{i}", bits, "a", i) for i in range(k)]
    specs += [InputSpec(f"b{i}", bits, "b", i) for i in range(k)]
    specs.append(InputSpec("c", bits, "c", 0))
    specs += [InputSpec(f"scale_a{i}", 8, "scale_a", i) for i in range(scales)]
    specs += [InputSpec(f"scale_b{i}", 8, "scale_b", i) for i in range(scales)]
    specs += [InputSpec(f"meta{i}", 32, "metadata", i) for i in range(-(-chunks // 8))]
    return specs


def inputs_from(layout: Sequence[InputSpec], values: Sequence[BV]) -> DotInputs:
    """Group bit-vectors listed in ``layout`` order into :class:`DotInputs`."""
    groups: dict[str, list[BV]] = {"a": [], "b": [], "c": [], "scale_a": [], "scale_b": [],
                                   "metadata": []}
    for spec, value in zip(layout, values, strict=True):
        groups[spec.role].append(value)
    return DotInputs(groups["a"], groups["b"], groups["c"][0], groups["scale_a"],
                     groups["scale_b"], groups["metadata"])


def operand_bits(desc: AnyDescriptor) -> int:
    """Width of the A, B and C input words (32; 64 for F64 architecture datapaths)."""
    return getattr(desc, "operand_bits", 32)


def output_width(desc: AnyDescriptor) -> int:
    """Width of the D word: the container of the D format (S32: 32)."""
    fmt = FORMATS.get(desc.d_type)
    return fmt.container_bits if isinstance(fmt, FloatFormat) else 32


def is_specified(desc: AnyDescriptor) -> bool:
    """Whether this build of tcspec specifies ``desc``'s datapath."""
    if isinstance(desc, ArchDescriptor):
        return desc.algorithm in ALGORITHMS
    return desc.family in ("window", "integer", "block")


def metadata_legal(ops: Ops, desc: Descriptor, inputs: DotInputs) -> Bool:
    """The legality predicate of a sparse datapath's metadata (true for dense ones)."""
    if not desc.sparse:
        return ops.true()
    size, rule = desc.sparse_chunk  # type: ignore[misc]
    return metadata_legality(ops, rule, inputs.metadata, len(inputs.a) // size)


def compact_sparse(ops: Ops, desc: Descriptor, inputs: DotInputs
                   ) -> tuple[Descriptor, DotInputs]:
    """A sparse datapath's dense sibling and its active operands (SEMANTICS.md section 5).

    The metadata selects the active lanes of A and B, compacted in logical
    order; C and the scales pass through.
    """
    size, rule = desc.sparse_chunk  # type: ignore[misc]
    selectors = chunk_selectors(ops, inputs.metadata, len(inputs.a) // size)
    dense = dataclasses.replace(desc, sparse=False)
    a = select_active(ops, rule, inputs.a, selectors)
    b = select_active(ops, rule, inputs.b, selectors)
    ops.observe("sparse", rule=rule, selectors=selectors, a=a, b=b)
    return dense, DotInputs(a, b, inputs.c, inputs.scale_a, inputs.scale_b)


def build_dot(ops: Ops, desc: Descriptor, inputs: DotInputs, *, any_k: bool = False) -> BV:
    """The result word of ``desc``'s datapath on ``inputs``: the single source.

    A sparse datapath selects its active operands from the logical-K lanes
    (SEMANTICS.md section 5) and runs its dense sibling on them. With
    ``any_k`` the same arithmetic runs on any logical K that
    :func:`check_logical_k` accepts (a model of the datapath).
    """
    if isinstance(desc, ArchDescriptor):
        algorithm_of(desc)
    elif not is_specified(desc):
        raise NotImplementedError(f"datapath {desc.name} is not yet specified")
    if len(inputs.b) != len(inputs.a) or (len(inputs.a) != desc.k and not any_k):
        raise ValueError(f"{desc.name} takes K={desc.k}, got {len(inputs.a)} A and "
                         f"{len(inputs.b)} B lanes")
    if any_k:
        check_logical_k(desc, len(inputs.a))
    if isinstance(desc, ArchDescriptor):
        return build_arch_dot(ops, desc, inputs)
    if desc.sparse:
        return build_dot(ops, *compact_sparse(ops, desc, inputs), any_k=any_k)
    if desc.family == "integer":
        fa, fb = FORMATS[desc.a_format], FORMATS[desc.b_format]
        assert isinstance(fa, IntFormat) and isinstance(fb, IntFormat)
        return integer_dot(ops, fa, fb, inputs.a, inputs.b, inputs.c, saturate=desc.saturate)
    if desc.family == "block":
        fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling])
        assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
        assert isinstance(fs, FloatFormat) and desc.scale_block is not None
        return block_scaled_dot(ops, fa, fb, fs, inputs.a, inputs.b, inputs.c, inputs.scale_a,
                                inputs.scale_b, block=desc.scale_block,
                                rules=rules_for(desc.kind, desc.scaling))
    assert isinstance(FORMATS[desc.a_format], FloatFormat)
    return dense_window_dot(ops, desc.a_format, desc.b_format, desc.d_type,
                            inputs.a, inputs.b, inputs.c)


def chained_dot(ops: Ops, desc: AnyDescriptor, inputs: DotInputs,
                order: Sequence[int] | None = None,
                build: Callable[[Ops, AnyDescriptor, DotInputs], BV] | None = None) -> BV:
    """D of ``len(inputs.a) // desc.k`` instructions over consecutive K slices (and their
    scale bytes), taken in ``order`` (default: ascending), the D of one the C of the next
    (SEMANTICS.md section 8, ARCHITECTURES.md section 0). ``build`` runs one instruction
    (default: :func:`build_dot`)."""
    run = build or build_dot
    k, per = desc.k, desc.scale_count
    acc = inputs.c
    for step in range(len(inputs.a) // k) if order is None else order:
        lanes = slice(step * k, (step + 1) * k)
        scales = slice(step * per, (step + 1) * per)
        c = ops.resize_unsigned(acc, inputs.c.width)
        acc = run(ops, desc, DotInputs(inputs.a[lanes], inputs.b[lanes], c,
                                       inputs.scale_a[scales], inputs.scale_b[scales], []))
    return acc
