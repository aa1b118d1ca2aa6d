"""Vector files in the shared line format (ref/vectors/README.md).

One JSON object per line (``.jsonl`` or ``.jsonl.gz``): ``datapath``,
``descriptor``, ``a``, ``b``, ``c``, ``scale_a``, ``scale_b``,
``sparse_metadata``, ``expected`` and optional provenance fields. A line in the
architecture format (``arch``, ``instruction``, ``mmasim_qualifier`` or the formats,
``k``; ref/vectors/arch/README.md) names an architecture datapath instead of a
descriptor. Reading never stops at a bad line: it yields a :class:`BadLine` naming the
problem and goes on.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcspec.ref.inputs import prepare_dot, resolve_fields
from tcspec.spec.arch import ARCH_NAMES, ArchDescriptor, arch_name, shape_of
from tcspec.spec.catalog import ARCH_CATALOG, CATALOG, AnyDescriptor, output_width
from tcspec.spec.formats import FORMATS, FloatFormat

VECTOR_DIR = Path(__file__).resolve().parent / "vectors"
FROZEN_FILE = VECTOR_DIR / "b200_frozen.jsonl"
REFERENCE_DIR = VECTOR_DIR / "reference"
ARCH_DIR = VECTOR_DIR / "arch"
HARDWARE_DIR = VECTOR_DIR / "hardware"

_BY_QUALIFIER = {(d.descriptor.arch, d.descriptor.qualifier): d.descriptor  # type: ignore[union-attr]
                 for d in ARCH_CATALOG.values()}
INSTRUCTION_PREFIXES = (("mma.sync.block_scale", "mma_block_scale"), ("mma.sync", "mma"),
                        ("wgmma", "wgmma"), ("v_mfma", "mfma"), ("mfma", "mfma"))
"""Architecture-line ``instruction`` spellings -> the instruction of canonical names."""

MAX_LINE_CHARS = 1 << 18
"""Longest line read (characters): the widest datapath's line with every field in decimal
is under 5 kB, so a longer line is refused before it is parsed."""
DESCRIPTOR_FIELDS = ("a_format", "b_format", "d_type", "saturate", "scaling", "kind", "scale_vec")


@dataclass
class Record:
    """One checked vector: its resolved descriptor, input words and expected word."""

    line: int
    datapath: str
    descriptor: AnyDescriptor
    words: list[int]
    expected: int
    name: str | None = None
    source: str | None = None
    sensitive_to: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    def matches(self, word: int) -> bool:
        """Whether ``word`` is the expected word; NaN by class where the datapath's source
        returns the host's NaN (``nan_canonical`` False: FP64, AMD)."""
        if word == self.expected:
            return True
        if getattr(self.descriptor, "nan_canonical", True):
            return False
        return is_nan_word(self.descriptor.d_type, word) and is_nan_word(
            self.descriptor.d_type, self.expected)


def is_nan_word(d_type: str, word: int) -> bool:
    """Whether ``word`` is a NaN of the float format ``d_type``."""
    fmt = FORMATS[d_type]
    if not isinstance(fmt, FloatFormat):
        return False
    exp = (word >> fmt.frac_bits) & fmt.exp_max_field
    frac = word & ((1 << fmt.frac_bits) - 1)
    if fmt.specials == "ieee":
        return exp == fmt.exp_max_field and frac != 0
    return fmt.specials == "max_nan" and exp == fmt.exp_max_field and frac == (
        1 << fmt.frac_bits) - 1


def arch_descriptor(obj: dict[str, Any]) -> ArchDescriptor:
    """The architecture datapath an architecture-format line names: by ``arch`` and MMA-Sim's
    qualifier, else by the canonical name its fields spell; ``ValueError`` otherwise."""
    arch = obj.get("arch")
    if arch not in ARCH_NAMES:
        raise ValueError(f"unknown arch {arch!r} (known: {', '.join(ARCH_NAMES)})")
    qualifier = obj.get("mmasim_qualifier") or obj.get("qualifier")
    if (arch, qualifier) in _BY_QUALIFIER:
        return _BY_QUALIFIER[(arch, qualifier)]
    instruction = str(obj.get("instruction", ""))
    token = next((t for p, t in INSTRUCTION_PREFIXES if instruction.startswith(p)), None)
    if token is None:
        raise ValueError(f"unknown instruction {instruction!r} on {arch}")
    try:
        name = arch_name(arch, token, shape_of(arch, qualifier or instruction),
                         obj["a_format"], obj["b_format"], obj["c_format"], obj["d_format"],
                         obj.get("scale_format"), obj.get("scale_block"))
    except KeyError as exc:
        raise ValueError(f"architecture line has no {exc.args[0]!r} field") from None
    if name not in ARCH_CATALOG:
        raise ValueError(f"no catalogued datapath {name!r} (arch {arch}, instruction "
                         f"{instruction!r}, qualifier {qualifier!r})")
    return ARCH_CATALOG[name].descriptor  # type: ignore[return-value]


def _parse_arch_record(obj: dict[str, Any], line: int) -> Record:
    desc = arch_descriptor(obj)
    for key in ("a", "b", "c", "expected"):
        if key not in obj:
            raise ValueError(f"missing field {key!r}")
    if obj.get("k") not in (None, desc.k):
        raise ValueError(f"k={obj.get('k')!r} but {desc.name} has K={desc.k}")
    words = prepare_dot(desc, obj["a"], obj["b"], obj["c"], obj.get("scale_a"),
                        obj.get("scale_b"))
    expected = _expected(obj["expected"], output_width(desc))
    cross_check(obj, desc, expected)
    source = obj.get("source") or obj.get("provenance")
    name = obj.get("name") or (f"{obj['mode']}#{obj['case_index']}" if "mode" in obj
                               and "case_index" in obj else None)
    return Record(line, desc.name, desc, words, expected, name, source, [], obj)


def _parse_named_arch_record(obj: dict[str, Any], fields: dict[str, Any], line: int) -> Record:
    """A shared-format line (``datapath`` + ``descriptor``) of an architecture datapath, as
    ``tcspec probe`` and ``eval --json`` write them: the name decides, the fields must agree."""
    name = obj.get("datapath")
    if name not in ARCH_CATALOG:
        raise ValueError(f"datapath {name!r} is not a catalogued architecture datapath")
    desc = ARCH_CATALOG[name].descriptor
    if fields != desc.fields():
        raise ValueError(f"descriptor does not match {name}'s: {desc.fields()}")
    words = prepare_dot(desc, obj["a"], obj["b"], obj["c"], obj.get("scale_a"),
                        obj.get("scale_b"))
    expected = _expected(obj["expected"], output_width(desc))
    cross_check(obj, desc, expected)
    return Record(line, name, desc, words, expected, obj.get("name"), obj.get("source"), [], obj)


def _expected(expected: Any, width: int) -> int:
    if isinstance(expected, bool) or not isinstance(expected, int) or not (
            0 <= expected < (1 << width)):
        raise ValueError(f"expected must be a {width}-bit word, got {expected!r}")
    return expected


def cross_check(obj: dict[str, Any], desc: AnyDescriptor, expected: int) -> None:
    """The optional restating fields must agree with what the line computes: ``K`` (or
    ``k``) is the datapath's logical K, ``expected_hex`` is ``expected``, and
    ``descriptor_resolved`` resolves to the same datapath as ``descriptor``. An edited
    copy that disagrees is refused (ValueError), never silently ignored."""
    for key in ("K", "k"):
        k = obj.get(key)
        if k is not None and (isinstance(k, bool) or k != desc.k):
            raise ValueError(f"{key}={k!r} but {desc.name} has K={desc.k}")
    text = obj.get("expected_hex")
    if text is not None:
        try:
            word = int(text, 16) if isinstance(text, str) and text[:2].lower() == "0x" else None
        except ValueError:
            word = None
        if word is None:
            raise ValueError(f"expected_hex must be a 0x-prefixed hex word, got {text!r}")
        if word != expected:
            raise ValueError(f"expected_hex {text} is not expected {expected} "
                             f"(0x{expected:X}): one of the two was edited")
    resolved = obj.get("descriptor_resolved")
    if resolved is not None:
        if not isinstance(resolved, dict) or set(resolved) - set(DESCRIPTOR_FIELDS):
            raise ValueError(f"descriptor_resolved must be an object of descriptor fields, "
                             f"got {resolved!r}")
        try:
            other = resolve_fields(resolved, desc.sparse)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"descriptor_resolved does not resolve: {exc}") from None
        if other != desc:
            raise ValueError(f"descriptor_resolved names {other.name}, but descriptor names "
                             f"{desc.name}")


def existing_file(path: str | Path, what: str) -> Path:
    """``path`` when it is a file; else ValueError saying what it is instead (missing, a
    directory, something else), ``what`` naming the file the caller wanted."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        raise ValueError(f"{path} is a directory; give the {what} itself (.jsonl or .jsonl.gz)")
    if path.exists():
        raise ValueError(f"{path} is not a regular file; give the {what} itself")
    raise ValueError(f"no such {what}: {path}")


def json_line_problem(exc: json.JSONDecodeError, text: str) -> str:
    """Why ``text``, one line of a JSON-lines file, is not JSON: the decoder's message and
    the column within the line (the decoder's own line and column count the trailing
    newline, so a line cut short read as ``line 2 column 1``)."""
    end = len(text.rstrip("\r\n"))
    if exc.pos >= end:
        return f"not JSON ({exc.msg} at the end of the line, column {end + 1}: cut short?)"
    return f"not JSON ({exc.msg} at column {exc.pos + 1})"


@dataclass
class BadLine:
    """A line that could not be read as a vector, and why."""

    line: int
    problem: str


def parse_record(obj: Any, line: int) -> Record:
    """A :class:`Record` from one decoded JSON line; ``ValueError`` names what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    if "descriptor" not in obj and "arch" in obj:
        return _parse_arch_record(obj, line)
    for key in ("descriptor", "a", "b", "c", "expected"):
        if key not in obj:
            raise ValueError(f"missing field {key!r}")
    fields = obj["descriptor"]
    if not isinstance(fields, dict):
        raise ValueError(f"descriptor must be an object, got {fields!r}")
    if "arch" in fields:
        return _parse_named_arch_record(obj, fields, line)
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
    expected = _expected(obj["expected"], output_width(desc))
    cross_check(obj, desc, expected)
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
                yield BadLine(number, json_line_problem(exc, text))
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


def arch_vector_counts() -> dict[str, int]:
    """Published-model (MMA-Sim) vectors per architecture datapath in ``ARCH_DIR``."""
    index_path = ARCH_DIR / "INDEX.json"
    if not index_path.exists():
        return {}
    counts = {entry["file"]: entry["count"]
              for entry in json.loads(index_path.read_text(encoding="utf-8"))["files"]}
    return {name: counts[path.name] for name, path in arch_vector_files().items()}


def hardware_word_files() -> list[Path]:
    """The files of hardware words of architectures other than B200 tcgen05 (``HARDWARE_DIR``)."""
    return sorted(HARDWARE_DIR.glob("*.jsonl")) if HARDWARE_DIR.is_dir() else []


def hardware_counts(paths: list[Path] | None = None) -> dict[str, dict[str, int]]:
    """Hardware words per datapath and GPU (the ``gpu`` field) in the hardware files;
    malformed lines are left out (``tcspec check`` names them)."""
    counts: dict[str, dict[str, int]] = {}
    for path in hardware_word_files() if paths is None else paths:
        for record in read_vectors(path):
            if isinstance(record, Record):
                gpu = str(record.raw.get("gpu") or path.stem.upper())
                per = counts.setdefault(record.datapath, {})
                per[gpu] = per.get(gpu, 0) + 1
    return counts


def arch_vector_files() -> dict[str, Path]:
    """The published-model vector file of each architecture datapath in ``ARCH_DIR``."""
    return dict(_arch_vector_files())


@functools.cache
def _arch_vector_files() -> dict[str, Path]:
    index_path = ARCH_DIR / "INDEX.json"
    if not index_path.exists():
        return {}
    files: dict[str, Path] = {}
    for entry in json.loads(index_path.read_text(encoding="utf-8"))["files"]:
        combination = entry["combination"]
        try:
            desc = arch_descriptor({**combination, "mmasim_qualifier": combination["qualifier"]})
        except (ValueError, KeyError):
            continue
        if (ARCH_DIR / entry["file"]).exists():
            files[desc.name] = ARCH_DIR / entry["file"]
    return files
