"""Vectors computed by tcspec's own specification: provenance ``ours``.

For datapaths with neither a B200 word nor a reference vector (the mixed
MXF8F6F4 pairs and f16 x f16 -> F16 D), a few lines in the shared vector
format whose expected word is ``mma_dot`` itself. They say nothing about
hardware; they pin the exports and other lowerings to the executable
specification. Half the lines are raw random words, half finite (the top
exponent bit of every A, B and C element cleared) with scale bytes near 1.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tcspec.api import mma_dot
from tcspec.ref.inputs import prepare_dot
from tcspec.ref.run import run_scalar
from tcspec.ref.vectorfiles import VECTOR_DIR, arch_vector_counts, vector_counts
from tcspec.spec.arch import ArchDescriptor
from tcspec.spec.catalog import CATALOG
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat

OURS_DIR = VECTOR_DIR / "ours"
SOURCE = "tcspec specification"

UNIT_SCALES = {"ue8m0": range(0x7C, 0x83), "ue4m3": range(0x30, 0x41)}
"""Scale bytes near 1.0 for the finite lines."""


def _finite(word: int, fmt: str) -> int:
    """``word`` with its element's top exponent bit cleared: never Inf or NaN."""
    spec = FORMATS.get(fmt)
    if not isinstance(spec, FloatFormat):
        return word
    return word & ~(1 << (spec.container_bits - 2))


def spec_vector(desc: Descriptor, rng: random.Random, finite: bool) -> dict[str, Any]:
    """One vector line for ``desc``, its ``expected`` word computed by ``mma_dot``."""
    a = [rng.getrandbits(32) for _ in range(desc.k)]
    b = [rng.getrandbits(32) for _ in range(desc.k)]
    c = rng.getrandbits(16 if desc.d_type == "f16" else 32)
    scale_a = scale_b = metadata = None
    if finite:
        a = [_finite(w, desc.a_format) for w in a]
        b = [_finite(w, desc.b_format) for w in b]
        c = _finite(c, desc.d_type)
    if desc.scaling:
        choices = UNIT_SCALES[desc.scaling] if finite else range(256)
        scale_a = [rng.choice(choices) for _ in range(desc.scale_count)]
        scale_b = [rng.choice(choices) for _ in range(desc.scale_count)]
    if desc.sparse:
        metadata = [0x4E4E4E4E if desc.kind == "tf32" else 0x94E894E8] * desc.metadata_words
    fields = {k: v for k, v in desc.fields().items() if v is not None}
    expected = mma_dot(a, b, c, scale_a=scale_a, scale_b=scale_b, sparse_metadata=metadata,
                       **fields)  # type: ignore[arg-type]
    return {"datapath": desc.name, "descriptor": fields, "a": a, "b": b, "c": c,
            "scale_a": scale_a, "scale_b": scale_b, "sparse_metadata": metadata,
            "expected": expected, "source": SOURCE, "provenance": "ours"}


def arch_spec_vector(desc: ArchDescriptor, rng: random.Random, finite: bool
                     ) -> dict[str, Any]:
    """One line in the architecture line format (ref/vectors/arch/README.md) for an
    unvectored architecture datapath (the CDNA1/CDNA2 trees), ``expected`` from the spec."""
    bits = desc.operand_bits
    a = [rng.getrandbits(bits) for _ in range(desc.k)]
    b = [rng.getrandbits(bits) for _ in range(desc.k)]
    c = rng.getrandbits(bits)
    if finite:
        a = [_finite(w, desc.a_format) for w in a]
        b = [_finite(w, desc.b_format) for w in b]
        c = _finite(c, desc.c_format)
    expected = run_scalar(desc, prepare_dot(desc, a, b, c))  # type: ignore[arg-type]
    return {"datapath": desc.name, "arch": desc.arch,
            "instruction": f"v_{desc.instruction}_{desc.qualifier}"
            if desc.instruction == "mfma" else desc.qualifier,
            "mmasim_qualifier": desc.qualifier, "a_format": desc.a_format,
            "b_format": desc.b_format, "c_format": desc.c_format, "d_format": desc.d_type,
            "k": desc.k, "a": a, "b": b, "c": c, "expected": expected, "source": SOURCE,
            "provenance": "ours"}


def unvectored() -> list[str]:
    """Catalogued datapaths with neither a B200 word, a reference vector nor an
    architecture (MMA-Sim) vector."""
    frozen, reference = vector_counts()
    arch = arch_vector_counts()
    return [name for name in CATALOG
            if name not in frozen and name not in reference and name not in arch]


def write_ours(count: int = 4, seed: int = 2026) -> list[Path]:
    """Write ``OURS_DIR/<name>.jsonl`` (``count`` lines) for every unvectored datapath."""
    OURS_DIR.mkdir(exist_ok=True)
    paths = []
    for name in unvectored():
        rng = random.Random(f"{seed}-{name}")
        desc = CATALOG[name].descriptor
        make = arch_spec_vector if isinstance(desc, ArchDescriptor) else spec_vector
        lines = [make(desc, rng, finite=i % 2 == 1) for i in range(count)]  # type: ignore[arg-type]
        path = OURS_DIR / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths
