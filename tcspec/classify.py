"""Which candidate models survive observed hardware words (SEMANTICS.md section 7).

Each line of an observed file holds inputs and the word the hardware
returned (``expected``, the shared line format of ref/vectors/README.md).
Every candidate runs on every line it applies to (its compiled lowering);
a candidate survives a datapath family when it agrees with every such line,
and is otherwise ruled out by the first line it gets wrong. Lines a
candidate does not apply to are skipped for it and counted. No solver.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcspec.ref.compiled import compiled_model
from tcspec.ref.vectorfiles import BadLine, Record, existing_file, read_vectors
from tcspec.smt.progress import Heartbeat
from tcspec.spec.candidates import CANDIDATES, candidate_named
from tcspec.spec.catalog import is_specified
from tcspec.spec.descriptor import Descriptor
from tcspec.words import EXIT_USAGE, UsageError


def family_of(desc: Descriptor) -> str:
    """The instruction family a datapath belongs to (dense and sparse together).

    Unscaled paths by operand kind (``tf32``, ``bf16``, ``f16``, ``f8f6f4``
    with the mixed pairs), block-scaled paths by ``kind`` and scale format, architecture
    datapaths (SEMANTICS.md section 10) by architecture and instruction.
    """
    if desc.family == "arch":
        return f"{desc.arch} {desc.instruction}"  # type: ignore[attr-defined]
    if desc.family == "window":
        return desc.a_format if desc.kind in ("tf32", "f16") else "f8f6f4"
    if desc.family == "integer":
        return "i8"
    if desc.kind == "mxf4nvf4":
        return f"mxf4nvf4-{desc.scaling}"
    return desc.kind


@dataclass
class Verdict:
    """One candidate on one family: lines checked, skipped, and the lines that rule it out."""

    candidate: str
    checked: int = 0
    skipped: int = 0
    against: list[tuple[Record, int]] = field(default_factory=list)

    @property
    def survives(self) -> bool:
        return self.checked > 0 and not self.against

    @property
    def applies(self) -> bool:
        return self.checked > 0


@dataclass
class FamilyReport:
    family: str
    datapaths: set[str] = field(default_factory=set)
    lines: int = 0
    verdicts: dict[str, Verdict] = field(default_factory=dict)


@dataclass
class Classification:
    """Per-family verdicts, and the lines that could not be used."""

    families: dict[str, FamilyReport] = field(default_factory=dict)
    bad_lines: list[BadLine] = field(default_factory=list)
    unspecified: list[Record] = field(default_factory=list)

    def survivors(self) -> list[str]:
        """Candidates that agree with every line of the file they apply to (and apply to one)."""
        names: list[str] = []
        for family in self.families.values():
            for name in family.verdicts:
                if name not in names:
                    names.append(name)
        return [n for n in names
                if all(f.verdicts[n].survives or not f.verdicts[n].applies
                       for f in self.families.values() if n in f.verdicts)
                and any(f.verdicts[n].applies for f in self.families.values()
                        if n in f.verdicts)]


def resolve_candidates(names: Sequence[str] | None) -> list[str]:
    """Canonical candidate names (default: every registered candidate); unknown: ValueError."""
    if not names:
        return list(CANDIDATES)
    out = []
    for name in names:
        canonical = candidate_named(name).name
        if canonical not in out:
            out.append(canonical)
    return out


def classify_records(items: Iterable[Record | BadLine], candidates: Sequence[str]
                     ) -> Classification:
    """Run every candidate on every record it applies to; keep the lines that rule it out."""
    result = Classification()
    for item in items:
        if isinstance(item, BadLine):
            result.bad_lines.append(item)
            continue
        desc = item.descriptor
        if not is_specified(desc):
            result.unspecified.append(item)
            continue
        key = family_of(desc)
        family = result.families.setdefault(key, FamilyReport(key))
        family.datapaths.add(desc.name)
        family.lines += 1
        for name in candidates:
            verdict = family.verdicts.setdefault(name, Verdict(name))
            if not CANDIDATES[name].applies(desc):
                verdict.skipped += 1
                continue
            verdict.checked += 1
            word = compiled_model(name, desc)(*item.words)
            if not item.matches(word):
                verdict.against.append((item, word))
    return result


def classify_file(path: str | Path, candidates: Sequence[str] | None = None) -> Classification:
    """:func:`classify_records` over one observed file (``OSError`` if it cannot be read)."""
    path = existing_file(path, "observed-words file")
    return classify_records(read_vectors(path), resolve_candidates(candidates))


def line_label(record: Record) -> str:
    return f"line {record.line}" + (f" ({record.name})" if record.name else "")


def _verdict_text(verdict: Verdict, d_type: str, show_all: bool) -> list[str]:
    digits = 4 if d_type == "f16" else 8
    shown = verdict.against if show_all else verdict.against[:1]
    lines = []
    for record, word in shown:
        lines.append(f"    {verdict.candidate:18} ruled out by {line_label(record)} "
                     f"[{record.datapath}]: observed 0x{record.expected:0{digits}X}, model "
                     f"0x{word:0{digits}X}")
    if not show_all and len(verdict.against) > 1:
        lines[-1] += f"  ({len(verdict.against)} of {verdict.checked} lines disagree)"
    return lines


def classification_text(result: Classification, show_all: bool = False) -> str:
    """Per family: survivors, the first line ruling out each other candidate, skips."""
    lines = []
    for family in result.families.values():
        d_type = "f32"
        lines.append(f"family {family.family} ({', '.join(sorted(family.datapaths))}): "
                     f"{family.lines} lines")
        alive = [v for v in family.verdicts.values() if v.survives]
        out = [v for v in family.verdicts.values() if v.against]
        idle = [v for v in family.verdicts.values() if not v.applies]
        lines.append("  survive: " + (", ".join(f"{v.candidate} ({v.checked} line(s)"
                                                + (f", {v.skipped} skipped" if v.skipped else "")
                                                + ")" for v in alive) or "none"))
        if out:
            lines.append("  ruled out:")
            for verdict in out:
                d_type = verdict.against[0][0].descriptor.d_type
                lines += _verdict_text(verdict, d_type, show_all)
        if idle:
            lines.append("  does not apply here: " + ", ".join(v.candidate for v in idle))
    survivors = result.survivors()
    lines.append(f"whole file: {', '.join(survivors) or 'no candidate'} agree(s) with every "
                 "line it applies to")
    against: dict[str, list[Record]] = {}
    for family in result.families.values():
        for name, verdict in family.verdicts.items():
            against.setdefault(name, []).extend(record for record, _ in verdict.against)
    for name, records in against.items():
        if records:
            shown = ", ".join(line_label(r) for r in records[:3])
            more = f", ... ({len(records)} lines)" if len(records) > 3 else ""
            lines.append(f"  {name} is ruled out by {shown}{more}")
    skipped = {}
    for family in result.families.values():
        for name, verdict in family.verdicts.items():
            skipped[name] = skipped.get(name, 0) + verdict.skipped
    counted = ", ".join(f"{n} {k}" for n, k in skipped.items() if k)
    if counted:
        lines.append(f"lines skipped (candidate does not apply): {counted}")
    if result.unspecified:
        lines.append(f"{len(result.unspecified)} line(s) on datapaths not specified here")
    return "\n".join(lines)


def classification_json(result: Classification) -> dict[str, Any]:
    """The verdicts as data: per family, each candidate's counts and the lines against it."""
    families = {}
    for family in result.families.values():
        families[family.family] = {
            "datapaths": sorted(family.datapaths), "lines": family.lines,
            "candidates": {name: {"survives": v.survives, "applies": v.applies,
                                  "checked": v.checked, "skipped": v.skipped,
                                  "ruled_out_by": [{"line": r.line, "name": r.name,
                                                    "observed": r.expected, "model": word}
                                                   for r, word in v.against[:10]],
                                  "disagreeing_lines": len(v.against)}
                           for name, v in family.verdicts.items()}}
    return {"families": families, "survivors": result.survivors(),
            "unspecified_lines": len(result.unspecified),
            "malformed": [{"line": b.line, "problem": b.problem} for b in result.bad_lines[:10]],
            "malformed_count": len(result.bad_lines)}


def cmd_classify(args: argparse.Namespace) -> int:
    """``tcspec classify``: which candidate models survive observed words."""
    if getattr(args, "arch", False):
        return cmd_classify_arch(args)
    names = [n.strip() for n in (args.candidates or "").split(",") if n.strip()]
    if args.candidates is not None and not names:
        raise UsageError(f"--candidates {args.candidates!r} names no model: give M1,M2,... "
                         "or leave it out for every candidate")
    try:
        with Heartbeat(f"classify {args.file}"):
            result = classify_file(args.file, names or None)
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc}") from None
    for bad in result.bad_lines[:10]:
        print(f"tcspec: error: malformed line {bad.line} of {args.file}: {bad.problem}",
              file=sys.stderr)
    if len(result.bad_lines) > 10:
        print(f"tcspec: error: ... and {len(result.bad_lines) - 10} more malformed lines",
              file=sys.stderr)
    if not result.families:
        parts = [f"{len(result.bad_lines)} malformed"] if result.bad_lines else []
        if result.unspecified:
            parts.append(f"{len(result.unspecified)} on datapaths not specified here")
        found = f" ({', '.join(parts)})" if parts else ""
        raise UsageError(f"no usable line in {args.file}{found}: no verdict")
    if args.json:
        print(json.dumps(classification_json(result), indent=1))
    else:
        print(classification_text(result, args.all))
    return EXIT_USAGE if result.bad_lines else 0


def cmd_classify_arch(args: argparse.Namespace) -> int:
    """``tcspec classify --arch OBSERVED.jsonl``: the datapaths consistent with the words."""
    from tcspec.proofs.probes.portability import classification_text, classify_observed

    try:
        verdicts, bad = classify_observed(args.file)
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc}") from None
    if not verdicts:
        problem = f" (line {bad[0][0]}: {bad[0][1]})" if bad else ""
        raise UsageError(f"no usable observed lines in {args.file}{problem}")
    print(classification_text(verdicts, bad))
    return 0
