"""Replaying vectors through the specification: frozen B200 words and reference files.

Records are grouped by descriptor and run through the NumPy batch lowering,
or, against a candidate model of SEMANTICS.md section 7, through that
model's compiled lowering. A record whose datapath this build does not
specify is counted as *not yet specified*, never as passed; against a
candidate, a record whose datapath it does not apply to is counted as
*skipped*.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcspec.ref.compiled import compiled_model
from tcspec.ref.run import layout_groups, run_rows
from tcspec.ref.vectorfiles import FROZEN_FILE, BadLine, Record, read_vectors, reference_files
from tcspec.spec.candidates import HARDWARE, candidate_named
from tcspec.spec.catalog import input_layout, is_specified
from tcspec.spec.descriptor import Descriptor
from tcspec.words import EXIT_MISMATCH, format_words, hex_word

FIRST_MISMATCHES = 10
"""Mismatches and malformed lines a report prints (the rest are counted)."""
BATCH_ROWS = 4096


@dataclass
class Mismatch:
    record: Record
    got: int


@dataclass
class Tally:
    """Per-datapath counts."""

    cases: int = 0
    passed: int = 0
    mismatched: int = 0
    unspecified: int = 0
    skipped: int = 0


@dataclass
class Report:
    """The outcome of replaying one or more vector files."""

    tallies: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    mismatches: list[Mismatch] = field(default_factory=list)
    bad_lines: list[tuple[str, BadLine]] = field(default_factory=list)
    unspecified_names: list[Record] = field(default_factory=list)
    passed_records: list[Record] = field(default_factory=list)

    @property
    def total(self) -> Tally:
        out = Tally()
        for tally in self.tallies.values():
            out.cases += tally.cases
            out.passed += tally.passed
            out.mismatched += tally.mismatched
            out.unspecified += tally.unspecified
            out.skipped += tally.skipped
        return out

    def merge(self, other: Report) -> None:
        for name, tally in other.tallies.items():
            mine = self.tallies[name]
            mine.cases += tally.cases
            mine.passed += tally.passed
            mine.mismatched += tally.mismatched
            mine.unspecified += tally.unspecified
            mine.skipped += tally.skipped
        self.mismatches += other.mismatches
        self.bad_lines += other.bad_lines
        self.unspecified_names += other.unspecified_names
        self.passed_records += other.passed_records


def evaluate_records(desc: Descriptor, records: Sequence[Record],
                     model: str = HARDWARE) -> np.ndarray:
    """Result words of ``records`` (all with descriptor ``desc``) on the batch lowering,
    or on the compiled lowering of candidate ``model``."""
    if candidate_named(model).name != HARDWARE:
        dot = compiled_model(model, desc)
        return np.array([dot(*r.words) for r in records], dtype=np.uint64)
    width = len(input_layout(desc))
    matrix = np.array([r.words for r in records], dtype=np.uint64).reshape(len(records), width)
    a, b, c, *rest = layout_groups(desc, matrix)
    return run_rows(desc, a, b, c[:, 0], *rest)  # type: ignore[arg-type,index]


def check_records(items: Iterable[Record | BadLine], source: str = "",
                  keep_passed: bool = False,
                  progress: Callable[[int], None] | None = None,
                  model: str = HARDWARE) -> Report:
    """Replay records against ``model``; bad lines are reported and skipped.

    ``progress(cases checked so far)`` is called after each batch.
    """
    candidate = candidate_named(model)
    report = Report()
    groups: dict[Descriptor, list[Record]] = defaultdict(list)

    def flush(desc: Descriptor) -> None:
        batch = groups.pop(desc, [])
        if not batch:
            return
        got = evaluate_records(desc, batch, candidate.name)
        for record, word in zip(batch, got.tolist()):
            tally = report.tallies[record.datapath]
            tally.cases += 1
            if record.matches(word):
                tally.passed += 1
                if keep_passed:
                    report.passed_records.append(record)
            else:
                tally.mismatched += 1
                report.mismatches.append(Mismatch(record, word))
        if progress:
            progress(report.total.cases)

    for item in items:
        if isinstance(item, BadLine):
            report.bad_lines.append((source, item))
            continue
        if not is_specified(item.descriptor):
            tally = report.tallies[item.datapath]
            tally.cases += 1
            tally.unspecified += 1
            report.unspecified_names.append(item)
            continue
        if not candidate.applies(item.descriptor):
            tally = report.tallies[item.datapath]
            tally.cases += 1
            tally.skipped += 1
            continue
        groups[item.descriptor].append(item)
        if sum(len(g) for g in groups.values()) >= BATCH_ROWS:
            for desc in list(groups):
                flush(desc)
    for desc in list(groups):
        flush(desc)
    return report


def check_file(path: str | Path, keep_passed: bool = False,
               progress: Callable[[int], None] | None = None,
               model: str = HARDWARE) -> Report:
    return check_records(read_vectors(path), str(path), keep_passed, progress, model)


def check_files(paths: Sequence[Path],
                progress: Callable[[int, int, Path, Report], None] | None = None,
                jobs: int = 1, model: str = HARDWARE) -> Report:
    """Replay several files (over ``jobs`` processes) against ``model``, calling
    ``progress(i, n, path, file_report)`` after each."""
    report = Report()
    if jobs > 1 and len(paths) > 1:
        from functools import partial

        from tcspec.processes import pool_map

        work = partial(check_file, model=model)
        with contextlib.closing(pool_map(min(jobs, len(paths)), work, paths)) as parts:
            for index, (path, part) in enumerate(zip(paths, parts, strict=True), 1):
                report.merge(part)
                if progress:
                    progress(index, len(paths), path, part)
        return report
    for index, path in enumerate(paths, 1):
        part = check_file(path, model=model)
        report.merge(part)
        if progress:
            progress(index, len(paths), path, part)
    return report


def validate_frozen() -> Report:
    """Replay the 77 frozen B200 words, keeping the passed records for listing."""
    return check_file(FROZEN_FILE, keep_passed=True)


def print_bad_lines(bad_lines: Sequence[tuple[str, BadLine]]) -> None:
    """The first malformed lines, on stderr as ``tcspec: error: ...`` (bad input)."""
    for source, bad in bad_lines[:FIRST_MISMATCHES]:
        print(f"tcspec: error: malformed line {bad.line} of {source}: {bad.problem}",
              file=sys.stderr)
    if len(bad_lines) > FIRST_MISMATCHES:
        print(f"tcspec: error: ... and {len(bad_lines) - FIRST_MISMATCHES} more malformed "
              "lines", file=sys.stderr)


def report_json(report: Any) -> dict[str, Any]:
    """A report as data: tallies per datapath, the first mismatches and malformed lines."""
    def tally(t: Tally) -> dict[str, int]:
        return {"cases": t.cases, "passed": t.passed, "mismatched": t.mismatched,
                "not_specified": t.unspecified, "skipped": t.skipped}

    return {"datapaths": {name: tally(t) for name, t in sorted(report.tallies.items())},
            "total": tally(report.total),
            "mismatches": [{"line": m.record.line, "name": m.record.name,
                            "datapath": m.record.datapath, "expected": m.record.expected,
                            "got": m.got} for m in report.mismatches[:FIRST_MISMATCHES]],
            "malformed": [{"file": source, "line": bad.line, "problem": bad.problem}
                          for source, bad in report.bad_lines[:FIRST_MISMATCHES]],
            "malformed_count": len(report.bad_lines)}


def print_report(report: Any, what: str) -> None:
    """The tallies of ``report``, then its first malformed lines and mismatches."""
    total = report.total
    print(f"{'datapath':28} {'cases':>6} {'passed':>7} {'mismatched':>10} {'not specified':>14}")
    for name in sorted(report.tallies):
        t = report.tallies[name]
        print(f"{name:28} {t.cases:>6} {t.passed:>7} {t.mismatched:>10} {t.unspecified:>14}")
    print(f"{'total':28} {total.cases:>6} {total.passed:>7} {total.mismatched:>10} "
          f"{total.unspecified:>14}")
    print_bad_lines(report.bad_lines)
    if report.mismatches:
        print(f"\nfirst mismatches ({len(report.mismatches)} in all) in {what}:")
    for mismatch in report.mismatches[:FIRST_MISMATCHES]:
        rec = mismatch.record
        label = rec.name or f"line {rec.line}"
        d_type = rec.descriptor.d_type
        print(f"  {label} [{rec.datapath}]: expected {hex_word(rec.expected, d_type)}, "
              f"got {hex_word(mismatch.got, d_type)}")
        raw = rec.raw
        print(f"    a={format_words(raw['a'])} b={format_words(raw['b'])} "
              f"c=0x{raw['c']:X}" + (f" scale_a={raw.get('scale_a')} scale_b={raw.get('scale_b')}"
                                     if raw.get("scale_a") else "")
              + (f" metadata={raw.get('sparse_metadata')}" if raw.get("sparse_metadata") else ""))


def cmd_validate(args: argparse.Namespace) -> int:
    """``tcspec validate``: the frozen B200 words (and ``--reference``: the reference vectors)."""
    frozen = validate_frozen()
    total = frozen.total
    if args.json:
        return _validate_json(args, frozen)
    print(f"B200 frozen words: {total.passed} of {total.cases} pass, "
          f"{total.mismatched} mismatch" + (f", {total.unspecified} not yet specified"
                                            if total.unspecified else ""))
    if args.verbose:
        for rec in frozen.passed_records:
            print(f"  pass  {rec.name} [{rec.datapath}] = "
                  f"{hex_word(rec.expected, rec.descriptor.d_type)}")
    for rec in frozen.unspecified_names:
        print(f"  not yet specified: {rec.name} [{rec.datapath}]")
    for m in frozen.mismatches:
        rec = m.record
        print(f"  MISMATCH {rec.name} [{rec.datapath}]: B200 "
              f"{hex_word(rec.expected, rec.descriptor.d_type)}, spec "
              f"{hex_word(m.got, rec.descriptor.d_type)}")
    failed = bool(frozen.mismatches or frozen.bad_lines)
    if args.reference:
        files = reference_files()
        started = time.monotonic()

        def progress(i: int, n: int, path: Path, part: Any) -> None:
            t = part.total
            pending = f" {t.unspecified:>5} not yet specified" if t.unspecified else ""
            print(f"[{i:>2}/{n}] {path.name:36} {t.passed:>5} pass {t.mismatched:>4} mismatch"
                  f"{pending}  ({time.monotonic() - started:.1f}s)", file=sys.stderr, flush=True)

        report = check_files(files, progress, args.jobs or (os.cpu_count() or 1))
        if report.bad_lines:
            print_bad_lines(report.bad_lines)
        rt = report.total
        pending = f", {rt.unspecified} not yet specified" if rt.unspecified else ""
        print(f"reference vectors: {rt.passed} of {rt.cases} pass, {rt.mismatched} mismatch"
              f"{pending} ({len(files)} files)")
        if report.mismatches or report.bad_lines:
            print_report(report, "the reference vectors")
            failed = True
    return EXIT_MISMATCH if failed else 0


def _validate_json(args: argparse.Namespace, frozen: Report) -> int:
    """``validate --json``: the frozen words' (and reference vectors') reports as one object."""
    import json

    out: dict[str, Any] = {"frozen": report_json(frozen)}
    failed = bool(frozen.mismatches or frozen.bad_lines)
    if args.reference:
        report = check_files(reference_files(), None, args.jobs or (os.cpu_count() or 1))
        out["reference"] = report_json(report)
        failed = failed or bool(report.mismatches or report.bad_lines)
    out["ok"] = not failed
    print(json.dumps(out, indent=1))
    return EXIT_MISMATCH if failed else 0
