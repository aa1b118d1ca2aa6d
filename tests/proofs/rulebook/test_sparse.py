"""Section 5 (sparse.py) against the reference-model vectors, and the selector rules."""

from __future__ import annotations

import random

import pytest

from tcspec.proofs.rulebook import layout, reference_dot
from tcspec.proofs.rulebook.names import parse
from tcspec.proofs.rulebook.sparse import LEGAL_SELECTORS
from tcspec.spec.scalar import SCALAR

from .vectors import FROZEN, evaluate, family_files, read_lines, sample, words_of

FILES = family_files("sparse")
UNSCALED = [p for p in FILES if parse(p.name[: -len(".jsonl.gz")]).scaling is None]
SCALED = [p for p in FILES if p not in UNSCALED]
FROZEN_LINES = [line for line in read_lines(FROZEN) if parse(line["datapath"]).family == "sparse"]


def test_files_cover_the_family() -> None:
    assert len(UNSCALED) == 8 and len(SCALED) == 10


@pytest.mark.parametrize("path", UNSCALED, ids=lambda p: p.name)
def test_reference_sample(path) -> None:
    lines = read_lines(path)
    for line in sample(lines, 15, seed=len(lines)):
        result = reference_dot(SCALAR, line["datapath"], words_of(line))
        assert result.defined.node
        assert result.word.node == line["expected"], line


@pytest.mark.full
@pytest.mark.parametrize("path", UNSCALED, ids=lambda p: p.name)
def test_reference_full(path) -> None:
    for number, line in enumerate(read_lines(path), 1):
        assert evaluate(line) == line["expected"], (path.name, number)


def _block_or_skip(name: str) -> None:
    dense = parse(parse(name).dense_name)
    words = {n: SCALAR.const(0, w) for n, w in layout(dense.name)}
    try:
        reference_dot(SCALAR, dense.name, words)
    except NotImplementedError as exc:
        assert dense.name in str(exc) and "block" in str(exc)
        with pytest.raises(NotImplementedError, match=dense.name):
            reference_dot(SCALAR, name, {n: SCALAR.const(0, w) for n, w in layout(name)})
        pytest.skip(f"{dense.name}: block module not written yet")


def test_frozen_b200_words() -> None:
    """The five sparse B200 words are block-scaled: they run once block.py exists."""
    assert len(FROZEN_LINES) == 5
    _block_or_skip(FROZEN_LINES[0]["datapath"])
    for line in FROZEN_LINES:
        assert evaluate(line) == line["expected"], line["name"]


@pytest.mark.parametrize("path", SCALED, ids=lambda p: p.name)
def test_block_scaled_reference_sample(path) -> None:
    lines = read_lines(path)
    _block_or_skip(lines[0]["datapath"])
    for line in sample(lines, 8, seed=len(lines)):
        assert evaluate(line) == line["expected"], line


def _words(name: str, values: dict[str, int]) -> dict:
    return {n: SCALAR.const(values.get(n, 0), w) for n, w in layout(name)}


@pytest.mark.parametrize("name", ["sparse-tf32", "sparse-bf16", "sparse-e4m3"])
def test_illegal_selectors_are_undefined(name: str) -> None:
    rec = parse(name)
    allowed = (0x4, 0xE) if rec.chunk == 2 else LEGAL_SELECTORS
    for sel in range(16):
        meta = {f"meta{i}": int(f"{0x4:x}" * 7 + f"{sel:x}", 16) for i in range(rec.meta_words)}
        result = reference_dot(SCALAR, name, _words(name, meta))
        assert bool(result.defined.node) == (sel in allowed), sel


ONE = {"tf32": 0x3F800000, "bf16": 0x3F800000, "f16": 0x3C00, "e4m3": 0x38}
NAN = {"tf32": 0x7FC00000, "bf16": 0x7FC00000, "f16": 0x7E00, "e4m3": 0x7F}


@pytest.mark.parametrize("fmt", ["tf32", "bf16", "f16", "e4m3"])
def test_disabled_lanes_do_not_exist(fmt: str) -> None:
    """Kept lanes hold 1 * 1, disabled ones NaN: D counts the kept lanes (section 5)."""
    name = f"sparse-{fmt}"
    rec = parse(name)
    rng = random.Random(5)
    for _ in range(10):
        sels = [rng.choice((0x4, 0xE) if rec.chunk == 2 else LEGAL_SELECTORS)
                for _ in range(rec.k // rec.chunk)]
        values: dict[str, int] = {}
        for j, sel in enumerate(sels):
            if rec.chunk == 2:
                kept = {1 if sel == 0xE else 0}
            else:
                kept = {sel & 3, sel >> 2}
            for pos in range(rec.chunk):
                word = ONE[fmt] if pos in kept else NAN[fmt]
                values[f"a{j * rec.chunk + pos}"] = word
                values[f"b{j * rec.chunk + pos}"] = word
        for i in range(rec.meta_words):
            nibbles = sels[8 * i: 8 * i + 8]
            values[f"meta{i}"] = sum(s << (4 * n) for n, s in enumerate(nibbles))
        word = reference_dot(SCALAR, name, _words(name, values)).word.node
        assert word == {8: 0x41000000, 16: 0x41800000, 32: 0x42000000}[rec.dense_k]
