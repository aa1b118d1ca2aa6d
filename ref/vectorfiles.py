"""Vector files in the shared line format (ref/vectors/README.md).

One JSON object per line (``.jsonl`` or ``.jsonl.gz``): ``datapath``,
``descriptor``, ``a``, ``b``, ``c``, ``scale_a``, ``scale_b``,
``sparse_metadata``, ``expected`` and optional provenance fields. Reading
never stops at a bad line: it yields a :class:`BadLine` naming the problem
and goes on.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcspec.ref.inputs import prepare_dot, resolve_fields
from tcspec.spec.catalog import CATALOG
from tcspec.spec.descriptor import Descriptor

VECTOR_DIR = Path(__file__).resolve().parent / "vectors"
FROZEN_FILE = VECTOR_DIR / "b200_frozen.jsonl"
REFERENCE_DIR = VECTOR_DIR / "reference"

MAX_LINE_CHARS = 1 << 18
"""Longest line read (characters): the widest datapath's line with every field in decimal
is under 5 kB, so a longer line is refused before it is parsed."""
DESCRIPTOR_FIELDS = ("a_format", "b_format", "d_type", "saturate", "scaling", "kind", "scale_vec")


@dataclass
class Record:
    """One checked vector: its resolved descriptor, input words and expected word."""

    line: int
    datapath: str
    descriptor: Descriptor
    words: list[int]
    expected: int
    name: str | None = None
    source: str | None = None
    sensitive_to: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class BadLine:
    """A line that could not be read as a vector, and why."""

    line: int
    problem: str


def parse_record(obj: Any, line: int) -> Record:
    """A :class:`Record` from one decoded JSON line; ``ValueError`` names what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    for key in ("descriptor", "a", "b", "c", "expected"):
        if key not in obj:
            raise ValueError(f"missing field {key!r}")
    fields = obj["descriptor"]
    if not isinstance(fields, dict):
        raise ValueError(f"descriptor must be an object, got {fields!r}")
    unknown = sorted(set(fields) - set(DESCRIPTOR_FIELDS))
    if unknown:
        raise ValueError(f"unknown descriptor field(s) {', '.join(unknown)}")
    if "a_format" not in fields:
        raise ValueError("descriptor has no a_format")
    metadata = obj.get("sparse_metadata")
    desc = resolve_fields(fields, metadata is not None)
    datapath = obj.get("datapath", desc.name)
    if datapath != desc.name:
        hint = "" if datapath in CATALOG else " (not a catalogued name)"
        raise ValueError(f"datapath {datapath!r}{hint} does not match its descriptor, "
                         f"which is {desc.name!r}")
    words = prepare_dot(desc, obj["a"], obj["b"], obj["c"], obj.get("scale_a"),
                        obj.get("scale_b"), metadata)
    expected = obj["expected"]
    width = 16 if desc.d_type == "f16" else 32
    if isinstance(expected, bool) or not isinstance(expected, int) or not (
            0 <= expected < (1 << width)):
        raise ValueError(f"expected must be a {width}-bit word, got {expected!r}")
    return Record(line, datapath, desc, words, expected, obj.get("name"), obj.get("source"),
                  list(obj.get("sensitive_to") or []), obj)


def _open(path: Path) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_vectors(path: str | Path) -> Iterator[Record | BadLine]:
    """Every line of ``path`` as a :class:`Record`, or a :class:`BadLine` saying why not.

    Blank lines are skipped. ``OSError`` (missing file, not gzip) propagates.
    """
    path = Path(path)
    with _open(path) as handle:
        number = 0
        while True:
            number += 1
            try:
                text = handle.readline(MAX_LINE_CHARS + 1)
                if len(text) > MAX_LINE_CHARS:
                    while text and not text.endswith("\n"):
                        text = handle.readline(1 << 20)
                    yield BadLine(number, f"longer than {MAX_LINE_CHARS} characters (no "
                                  "datapath needs more than a few thousand); not parsed")
                    continue
            except (OSError, EOFError, UnicodeDecodeError) as exc:
                yield BadLine(number, f"unreadable: {exc}")
                return
            if not text:
                return
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                yield BadLine(number, f"not JSON ({exc.msg} at column {exc.colno})")
                continue
            except RecursionError:
                yield BadLine(number, "not JSON this reader accepts (nested too deeply)")
                continue
            try:
                yield parse_record(obj, number)
            except (ValueError, TypeError) as exc:
                yield BadLine(number, str(exc))


def frozen_record(name: str) -> Record:
    """The frozen B200 word called ``name`` (``KeyError`` if there is none)."""
    with open(FROZEN_FILE, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            obj = json.loads(text)
            if obj.get("name") == name:
                return parse_record(obj, number)
    raise KeyError(f"no frozen B200 word named {name!r}")


def reference_files() -> list[Path]:
    """The vendored reference-vector files, sorted by name."""
    return sorted(REFERENCE_DIR.glob("*.jsonl.gz"))


def vector_counts() -> tuple[dict[str, int], dict[str, int]]:
    """``(frozen B200 words, reference vectors)`` per datapath name."""
    frozen: dict[str, int] = {}
    with open(FROZEN_FILE, encoding="utf-8") as handle:
        for text in handle:
            if text.strip():
                name = json.loads(text).get("datapath", "?")
                frozen[name] = frozen.get(name, 0) + 1
    reference: dict[str, int] = {}
    index = json.loads((REFERENCE_DIR / "INDEX.json").read_text(encoding="utf-8"))
    for entry in index["files"]:
        reference[entry["datapath"]] = reference.get(entry["datapath"], 0) + entry["cases"]
    return frozen, reference
