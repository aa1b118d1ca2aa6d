"""Hardware-word lines: observed words of an architecture datapath in the line format of
``ref/vectors/hardware/README.md`` (written by `hw run` and `hw compare --hardware-words`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcspec.hw.table import Harness
from tcspec.spec.arch import ArchDescriptor
from tcspec.words import hex_word


def gpu_label(provenance: dict[str, Any]) -> str:
    """The ``gpu`` of a hardware-word line: the device name without its vendor prefix
    (``NVIDIA H200`` -> ``H200``)."""
    return str(provenance.get("gpu") or "unknown").removeprefix("NVIDIA ").strip()


def arch_line(desc: ArchDescriptor, h: Harness, a: Sequence[int], b: Sequence[int], c: int,
              word: int, provenance: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An observed word of architecture datapath ``desc`` in the line format of
    ``ref/vectors/hardware/README.md``: the datapath by ``arch`` and qualifier, ``gpu``,
    ``provenance`` the device's source (``hardware`` on a GPU) and how it was captured."""
    how = ", ".join(f"{key} {provenance[key]}" for key in ("sm", "driver", "cuda", "tcspec")
                    if key in provenance)
    return {"arch": desc.arch, "instruction": f"{h.instruction}.m{h.m}n{h.n}k{h.k}",
            "mmasim_qualifier": desc.qualifier, "a_format": desc.a_format,
            "b_format": desc.b_format, "c_format": desc.c_format, "d_format": desc.d_type,
            "scale_format": desc.scale_format, "scale_block": desc.scale_block, "k": desc.k,
            "a": [int(x) for x in a], "b": [int(x) for x in b], "c": int(c), "scale_a": None,
            "scale_b": None, "expected": int(word), "expected_hex": hex_word(int(word),
                                                                             desc.d_type),
            "datapath": desc.name, "gpu": gpu_label(provenance),
            "provenance": str(provenance.get("source", "unknown")),
            "source": f"tcspec hw, {h.name} on {provenance.get('gpu', 'unknown')} ({how})",
            "harness": h.name, **extra}
