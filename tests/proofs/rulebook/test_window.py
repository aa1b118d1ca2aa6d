"""Section 2 (window.py) against the B200 words and the reference-model vectors."""

from __future__ import annotations

import pytest

from tcspec.proofs.rulebook import Result, layout, reference_dot
from tcspec.proofs.rulebook.fields import decode
from tcspec.proofs.rulebook.names import parse
from tcspec.spec.scalar import SCALAR

from .vectors import FROZEN, evaluate, family_files, read_lines, sample

FROZEN_LINES = [line for line in read_lines(FROZEN) if parse(line["datapath"]).family == "window"]
FILES = family_files("window")


def test_frozen_b200_words() -> None:
    assert len(FROZEN_LINES) == 46
    bad = [(line["name"], hex(evaluate(line)), hex(line["expected"]))
           for line in FROZEN_LINES if evaluate(line) != line["expected"]]
    assert not bad


def test_files_cover_the_family() -> None:
    assert len(FILES) == 53  # 8 dense + the 45 mixed pairs


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_sample(path) -> None:
    lines = read_lines(path)
    for line in sample(lines, 12, seed=len(lines)):
        assert evaluate(line) == line["expected"], line


@pytest.mark.full
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reference_full(path) -> None:
    for number, line in enumerate(read_lines(path), 1):
        assert evaluate(line) == line["expected"], (path.name, number)


def _words(name: str, values: dict[str, int]) -> dict:
    return {n: SCALAR.const(values.get(n, 0), w) for n, w in layout(name)}


def test_sensitive_lines_all_match() -> None:
    """Every reference line marked sensitive to the -133 clamp (floor133) matches."""
    count = 0
    for path in FILES:
        for line in read_lines(path):
            if line.get("sensitive_to"):
                count += 1
                assert evaluate(line) == line["expected"], line
    assert count > 0


def test_f16_f16_f16_specials_and_sum() -> None:
    name = "mixed-f16-f16-f16"
    one, two = 0x3C00, 0x4000
    result = reference_dot(SCALAR, name, _words(name, {"a0": one, "b0": two, "c": one}))
    assert isinstance(result, Result) and result.defined.node
    assert result.word.width == 16 and result.word.node == 0x4200  # 1*2 + 1 = 3
    nan = reference_dot(SCALAR, name, _words(name, {"a0": 0x7C00, "b0": 0}))
    assert nan.word.node == 0x7FFF
    inf = reference_dot(SCALAR, name, _words(name, {"a0": 0xFC00, "b0": one}))
    assert inf.word.node == 0xFC00
    neg_zero = reference_dot(SCALAR, name, _words(name, {"a0": 0x8000, "b0": one, "c": 0x8000}))
    assert neg_zero.word.node == 0x0000


@pytest.mark.parametrize("name", ["dense-tf32", "dense-bf16"])
def test_clamp_at_minus_133(name: str) -> None:
    """2^-70 * 2^-70 - 2^-70 * 2^-90: R = -140 is clamped to -133, q = -158, and -2^-160
    truncates to 0 units, so D = 2^-140 (0x200); without the clamp D would be 0x1FF."""
    p70, n90 = 0x1C800000, 0x92800000
    word = reference_dot(SCALAR, name, _words(name, {"a0": p70, "b0": p70, "a1": p70,
                                                    "b1": n90})).word.node
    assert word == 0x200


def test_decoder_on_formats() -> None:
    d = decode(SCALAR, SCALAR.const(0x7F, 32), "e4m3")
    assert d.nan.node and not d.inf.node
    d = decode(SCALAR, SCALAR.const(0x7F801FFF, 32), "tf32")  # payload only in cleared bits
    assert d.inf.node and not d.nan.node
    d = decode(SCALAR, SCALAR.const(0xFFFFFF80, 32), "e2m1")  # bits above the container
    assert d.zero.node
