"""Section 3 (integer.py) against the B200 words and the reference-model vectors."""

from __future__ import annotations

import pytest

from tcspec.proofs.rulebook import layout, reference_dot
from tcspec.proofs.rulebook.names import parse
from tcspec.spec.scalar import SCALAR

from .vectors import FROZEN, evaluate, family_files, read_lines, sample

FROZEN_LINES = [line for line in read_lines(FROZEN) if parse(line["datapath"]).family == "integer"]
FILES = family_files("integer")


def test_frozen_b200_words() -> None:
    assert len(FROZEN_LINES) == 8
    for line in FROZEN_LINES:
        assert evaluate(line) == line["expected"], line["name"]


def test_files_cover_the_family() -> None:
    assert len(FILES) == 8


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_sample(path) -> None:
    lines = read_lines(path)
    for line in sample(lines, 40, seed=len(lines)):
        assert evaluate(line) == line["expected"], line


@pytest.mark.full
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_full(path) -> None:
    for number, line in enumerate(read_lines(path), 1):
        assert evaluate(line) == line["expected"], (path.name, number)


def _dot(name: str, a: int, b: int, c: int) -> int:
    words = {n: SCALAR.const(0, w) for n, w in layout(name)}
    words.update({f"a{i}": SCALAR.const(a, 32) for i in range(32)})
    words.update({f"b{i}": SCALAR.const(b, 32) for i in range(32)})
    words["c"] = SCALAR.const(c, 32)
    return reference_dot(SCALAR, name, words).word.node


def test_saturate_once_after_the_sum() -> None:
    # C = S32 max, products 32 * (-128 * 1) bring it back in range: no early clamp.
    assert _dot("i8-s8-u8-saturate", 0x80, 1, 0x7FFFFFFF) == 0x7FFFFFFF - 4096
    assert _dot("i8-u8-u8-saturate", 0xFF, 0xFF, 0x7FFFFFFF) == 0x7FFFFFFF
    assert _dot("i8-u8-u8-wrap", 0xFF, 0xFF, 0x7FFFFFFF) == (0x7FFFFFFF + 32 * 65025) % 2**32
    assert _dot("i8-s8-s8-saturate", 0x80, 0x7F, 0x80000000) == 0x80000000
    assert _dot("i8-s8-s8-wrap", 0x80, 0x7F, 0x80000000) == (-(2**31) - 32 * 128 * 127) % 2**32


def test_high_bits_ignored() -> None:
    assert _dot("i8-s8-s8-wrap", 0xFFFFFF01, 0x12345602, 0) == 64
