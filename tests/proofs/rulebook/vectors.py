"""Reading vector lines into the rule book's input words (shared by the rule-book tests)."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path

from tcspec.proofs.rulebook import layout, names, reference_dot
from tcspec.proofs.rulebook.names import parse
from tcspec.spec.scalar import SCALAR

ROOT = Path(__file__).resolve().parents[3]
VECTORS = ROOT / "ref" / "vectors"
FROZEN = VECTORS / "b200_frozen.jsonl"
REFERENCE = VECTORS / "reference"


def read_lines(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def words_of(line: dict) -> dict:
    """The layout's words of a tcgen05 vector line (first n scale bytes, first w meta words)."""
    name = line["datapath"]
    rec = parse(name)
    values: dict[str, int] = {}
    for i, w in enumerate(line["a"]):
        values[f"a{i}"] = w
    for i, w in enumerate(line["b"]):
        values[f"b{i}"] = w
    values["c"] = line["c"]
    for side in ("a", "b"):
        scales = line.get(f"scale_{side}") or []
        for i in range(rec.n_scales):
            values[f"scale_{side}{i}"] = scales[i]
    meta = line.get("sparse_metadata") or []
    for i in range(rec.meta_words):
        values[f"meta{i}"] = meta[i]
    return {n: SCALAR.const(values[n], width) for n, width in layout(name)}


def evaluate(line: dict) -> int:
    return reference_dot(SCALAR, line["datapath"], words_of(line)).word.node


def sample(lines: list[dict], count: int, seed: int) -> Iterator[dict]:
    if count >= len(lines):
        yield from lines
        return
    yield from random.Random(seed).sample(lines, count)


def family_files(family: str) -> list[Path]:
    """Reference files whose datapath is of ``family`` (by the rule book's own names)."""
    out = []
    for path in sorted(REFERENCE.glob("*.jsonl.gz")):
        name = path.name[: -len(".jsonl.gz")]
        if name in names() and parse(name).family == family:
            out.append(path)
    return out
