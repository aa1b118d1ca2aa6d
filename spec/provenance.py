"""What an exported artifact is and where it came from: descriptor, input layout, versions.

Every export (SMT-LIB library and script, C reference) opens each datapath
with these lines, so a function cut out of a generated file still names the
rules it implements: the descriptor of SEMANTICS.md section 6, the input
words in :func:`spec.catalog.input_layout` order, the tcspec version and the
SHA-256 of the SEMANTICS.md it was generated against.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import itertools
import json
from pathlib import Path

from tcspec.spec.catalog import input_layout
from tcspec.spec.descriptor import Descriptor

SEMANTICS_FILE = Path(__file__).with_name("SEMANTICS.md")
"""``docs/SEMANTICS.md``: a link in the repository, a copy in an installed package."""

ROLE_LABELS = {"a": "A words", "b": "B words", "c": "C word", "scale_a": "A scale bytes",
               "scale_b": "B scale bytes", "metadata": "sparse metadata words"}

D_LABELS = {"f32": "F32 word", "f16": "F16 word (16 bits)", "f64": "F64 word (64 bits)",
            "s32": "S32 word (two's complement)"}


@functools.cache
def tcspec_version() -> str:
    """The installed distribution's version, or ``unknown`` when run from a bare tree."""
    try:
        return importlib.metadata.version("tcspec")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def semantics_sha256() -> str:
    """SHA-256 (hex) of the SEMANTICS.md this build implements, or ``unavailable``."""
    try:
        return hashlib.sha256(SEMANTICS_FILE.read_bytes()).hexdigest()
    except OSError:
        return "unavailable"


def layout_summary(desc: Descriptor) -> str:
    """The inputs in layout order, one group per role: ``a0..a7 A words (32 bits), ...``."""
    groups = []
    for role, specs in itertools.groupby(input_layout(desc), key=lambda s: s.role):
        specs = list(specs)
        names = specs[0].name if len(specs) == 1 else f"{specs[0].name}..{specs[-1].name}"
        groups.append(f"{names} {ROLE_LABELS[role]} ({specs[0].width} bits)")
    return ", ".join(groups)


def header_lines(desc: Descriptor) -> list[str]:
    """Comment lines naming ``desc``'s datapath, inputs, result and provenance."""
    fields = {**desc.fields(), "sparse": desc.sparse}
    return [f"tcspec datapath {desc.name}: {json.dumps(fields)}",
            f"inputs in order: {layout_summary(desc)}",
            f"result: the D {D_LABELS[desc.d_type]}",
            f"tcspec {tcspec_version()}; docs/SEMANTICS.md sha256 {semantics_sha256()}"]
