"""Reading ``ref/vectors/arch/`` lines of the section-11 families (FMA chains, CDNA3) into
the rule book's names and input words, and comparing D words (NaN by class where the
model returns the host's NaN: ``ref/vectors/arch/README.md``)."""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

from tcspec.proofs.rulebook import layout, names, reference_dot
from tcspec.proofs.rulebook.names import parse
from tcspec.spec.scalar import SCALAR

from .vectors import VECTORS, read_lines

ARCH = VECTORS / "arch"
OURS_CDNA3 = ARCH / "ours__cdna3-rules.jsonl"
BITS = {"f16": 16, "f32": 32, "f64": 64}
CANONICAL_NAN = {32: 0x7FFFFFFF, 64: 0x7FFFFFFFFFFFFFFF}
_AMD_SHAPE = re.compile(r"^f(?:32|64)_(\d+x\d+x\d+(?:_\d+b)?)")


def arch_name(line: dict) -> str:
    """The section-10.1 name a line spells: NVIDIA ``m8n8k4.f64...`` qualifiers and the
    AMD ``f32_32x32x1_2b_f32`` / ``f32_32x32x2f32`` / ``f64_4x4x4_4b_f64`` ones."""
    qualifier = line["mmasim_qualifier"]
    if line["arch"].startswith("sm_"):
        instr, shape = "mma", qualifier.split(".")[0]
    else:
        match = _AMD_SHAPE.match(qualifier)
        assert match, qualifier
        instr, shape = "mfma", match.group(1)
    return (f"{line['arch']}-{instr}-{shape}-{line['a_format']}-{line['b_format']}"
            f"-c{BITS[line['c_format']]}-d{BITS[line['d_format']]}")


def words_of(name: str, line: dict) -> dict:
    values = {f"a{i}": w for i, w in enumerate(line["a"])}
    values.update({f"b{i}": w for i, w in enumerate(line["b"])})
    values["c"] = line["c"]
    return {n: SCALAR.const(values[n], w) for n, w in layout(name)}


def evaluate(name: str, line: dict) -> int:
    return reference_dot(SCALAR, name, words_of(name, line)).word.node


def is_nan(word: int, bits: int) -> bool:
    e = {16: 5, 32: 8, 64: 11}[bits]
    f = bits - 1 - e
    return (word >> f) & ((1 << e) - 1) == (1 << e) - 1 and word & ((1 << f) - 1) != 0


def agrees(name: str, line: dict, got: int) -> bool:
    """Word for word, except that an expected NaN (the host's) asks for the canonical NaN."""
    bits = parse(name).output_bits
    if line["expected_class"] == "nan" or is_nan(line["expected"], bits):
        return got == CANONICAL_NAN[bits]
    return got == line["expected"]


def family_names(family: str) -> list[str]:
    return [n for n in names() if parse(n).family == family]


@cache
def lines_of(path: Path) -> tuple[str, list[dict]]:
    lines = read_lines(path)
    spelled = {arch_name(line) for line in lines}
    assert len(spelled) == 1, (path.name, spelled)
    return spelled.pop(), lines


def family_files(family: str) -> list[Path]:
    """The MMA-Sim files whose datapath is of ``family`` (by the name the lines spell)."""
    out = []
    for path in sorted(ARCH.glob("*.jsonl.gz")):
        if not path.name.startswith(("sm_", "cdna")):
            continue
        first = read_lines(path)[0]
        name = arch_name(first)
        if name in names() and parse(name).family == family:
            out.append(path)
    return out


def stratified(lines: list[dict], per_mode: int, seed: int) -> list[dict]:
    """``per_mode`` lines of every generation mode of a file."""
    by_mode: dict[str, list[dict]] = {}
    for line in lines:
        by_mode.setdefault(line["mode"], []).append(line)
    rng = random.Random(seed)
    out = []
    for mode in sorted(by_mode):
        group = by_mode[mode]
        out += rng.sample(group, min(per_mode, len(group)))
    return out


def mismatches(path: Path, lines: list[dict]) -> list[tuple]:
    name, _ = lines_of(path)
    out = []
    for line in lines:
        got = evaluate(name, line)
        if not agrees(name, line, got):
            out.append((line["case_index"], line["mode"], hex(got), line["expected_hex"]))
    return out
