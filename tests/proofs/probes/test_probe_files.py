"""The committed B200 experiment files (ref/vectors/probes/): every line still separates.

Each probe line carries the word every model predicts. Replayed on the
scalar and the compiled lowerings of today's candidates, each prediction
must hold, and the
models a file is meant to separate must give different words on some line
(a stale file, after a change to a candidate, fails here).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tcspec.proofs.probes.probe import replay, resolve_models
from tcspec.ref.compiled import compiled_model
from tcspec.ref.vectorfiles import VECTOR_DIR, parse_record

PROBES = VECTOR_DIR / "probes"
FILES = sorted(PROBES.glob("*.jsonl"))
UNSEPARATED = {"mixed-e4m3-e4m3-f16.suite.jsonl": {frozenset({"hardware", "mma-sim"})}}
"""Pairs a file leaves together, as its README row says (proved equal on every input)."""


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_probe_files_exist():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_probe_replays_and_every_pair_is_separated(path):
    lines = _lines(path)
    models = list(lines[0]["predicted"])
    separated = set()
    for number, obj in enumerate(lines, 1):
        record = parse_record({**obj, "expected": 0}, number)
        predicted = {name: int(word) for name, word in obj["predicted"].items()}
        got = replay(record.descriptor, resolve_models(record.descriptor, models), record.words)
        compiled = {m: compiled_model(m, record.descriptor)(*record.words) for m in models}
        assert got == predicted == compiled, (path.name, number)
        separated |= {frozenset(pair) for pair in itertools.combinations(models, 2)
                      if predicted[pair[0]] != predicted[pair[1]]}
    every = {frozenset(p) for p in itertools.combinations(models, 2)}
    assert separated == every - UNSEPARATED.get(path.name, set())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_csv_twin_has_the_same_probes(path):
    rows = path.with_suffix(".csv").read_text().splitlines()
    assert len(rows) == 1 + len(_lines(path))
    header = rows[0].split(",")
    assert all(f"d_{model}" in header for model in _lines(path)[0]["predicted"])
