"""``tcspec prove``: the proof matrix (:mod:`proofs.runner`) from the command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcspec.outputs import atomic_paths, write_text
from tcspec.proofs.core import AUTO, InternalError, Row, Settings
from tcspec.proofs.runner import (
    REPORT_JSON,
    REPORT_MD,
    describe_row,
    previous_rows,
    report_texts,
    run_rows,
    select_rows,
    summary_counts,
)
from tcspec.smt.progress import Heartbeat
from tcspec.smt.solve import SOLVERS
from tcspec.words import EXIT_MISMATCH, UsageError

EXIT_INTERNAL = 3

MUTANTS_MD = REPORT_MD.with_name("MUTANTS.md")


def prove_mutants(args: argparse.Namespace) -> int:
    """``tcspec prove --mutants``: each breaker in a scratch copy, then the kill table."""
    from tcspec.proofs.mutants import breaker_named, kill_table, run_all

    for name in args.mutant or ():
        breaker_named(name)
    started = time.monotonic()

    def progress(v: Any) -> None:
        print(f"{v.breaker}: {'ok' if v.ok else 'NOT OK ' + v.error} ({v.seconds:.0f}s, "
              f"{time.monotonic() - started:.0f}s in all)", file=sys.stderr, flush=True)

    with Heartbeat("prove --mutants"):
        verdicts = run_all(args.mutant, args.timeout, progress)
    table = kill_table(verdicts)
    print(table)
    if args.report:
        text = ("# Breakers of the specification and of the rule book\n\n"
                "`tcspec prove --mutants --report`, "
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                f"{time.monotonic() - started:.0f} s, {args.timeout:g} s per query.\n\n"
                f"{table}\n")
        write_text(MUTANTS_MD, text, replace=True)
        print(f"wrote {MUTANTS_MD}")
    return 0 if all(v.ok for v in verdicts) else EXIT_MISMATCH


def prove_arch(args: argparse.Namespace, settings: Settings) -> int:
    """``tcspec prove --arch A``: that architecture's matrix (:mod:`proofs.arch`)."""
    from tcspec.proofs.arch import (
        INTERNAL,
        progress_line,
        run_arch,
        select_arch_rows,
        write_arch_report,
    )

    if args.budget <= 0:
        raise UsageError("--budget must be positive seconds")
    try:
        rows = select_arch_rows(args.arch, args.datapath, args.property)
    except (KeyError, ValueError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    print(f"{args.arch}: {len(rows)} row(s); {settings.solver}, {settings.timeout:g} s per "
          f"query, budget {args.budget:g} s", file=sys.stderr, flush=True)
    started = time.monotonic()
    results = run_arch(rows, settings, args.budget,
                       lambda r, d, t: progress_line(r, d, t, started))
    seconds = time.monotonic() - started
    print_rows(results, seconds)
    if args.report:
        subset = "-".join(filter(None, [args.property, args.datapath]))
        json_path, md_path = write_arch_report(args.arch, results, settings, seconds,
                                               args.budget, subset)
        print(f"wrote {json_path} and {md_path}")
    if any(r.detail.startswith(INTERNAL) for r in results):
        return EXIT_INTERNAL
    return 0 if all(r.result in ("proved", "witness") for r in results) else EXIT_MISMATCH


def print_rows(results: Sequence[Row], seconds: float,
               passes: dict[str, float] | None = None) -> None:
    """Each row's verdict, detail and words, then the counts (and each pass's time)."""
    for row in results:
        print(describe_row(row))
        if row.detail:
            print(f"    {row.detail}")
        if row.words:
            print("    words: " + ", ".join(f"{k}=0x{v:X}" for k, v in row.words.items()))
    counts = ", ".join(f"{v} {k}" for k, v in sorted(summary_counts(results).items()))
    split = (f" (first pass {passes['first_pass_seconds']:.0f}s, second opinions "
             f"{passes['second_pass_seconds']:.0f}s)" if passes else "")
    cached = sum(bool(getattr(r, "from_cache", False)) for r in results)
    if cached:
        split += f"; {cached} from the cache (unchanged key)"
    print(f"{len(results)} row(s) in {seconds:.0f}s{split}: {counts}")


def cmd_prove(args: argparse.Namespace) -> int:
    """``tcspec prove``: decide the selected rows, print them (``--report``: REPORT.*)."""
    if args.timeout <= 0 or args.second_timeout <= 0:
        raise UsageError("--timeout and --second-timeout must be positive seconds")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    second = None if args.second_solver == "none" else args.second_solver
    if second is not None and second not in (*SOLVERS, AUTO):
        raise UsageError(f"unknown --second-solver {second!r} (auto, z3, cvc5, bitwuzla or none)")
    if args.mutants or args.mutant:
        return prove_mutants(args)
    if args.arch:
        return prove_arch(args, Settings(args.solver, args.timeout, second,
                                         args.second_timeout, 1))
    if args.report and args.fast:
        raise UsageError("--fast rows are the tests' small-K subset, not rows of the proof "
                         "matrix; --report records the matrix")
    rows = select_rows(args.property, args.datapath, args.k, fast=args.fast,
                       every=args.all_properties)
    with (atomic_paths([REPORT_JSON, REPORT_MD], replace=True) if args.report
          else contextlib.nullcontext()) as temps:
        status = _prove_rows(args, rows, second, temps)
    if args.report:
        print(f"wrote {REPORT_JSON} and {REPORT_MD}", file=sys.stderr if args.json else sys.stdout)
    return status


def _previous_report(args: argparse.Namespace) -> dict[str, Any] | None:
    """The committed report a row selection (--property, --datapath, --k) merges into;
    None when every row of the matrix was decided (the report is replaced)."""
    if not (args.property or args.datapath or args.k) or not REPORT_JSON.is_file():
        return None
    try:
        previous = json.loads(REPORT_JSON.read_text(encoding="utf-8"))
        problem = None if isinstance(previous, dict) and isinstance(previous.get("rows"), list) \
            and "run" in previous else "no rows and run"
    except (OSError, ValueError) as exc:
        problem = str(exc)
    if problem:
        raise UsageError(f"{REPORT_JSON} cannot be read to merge the re-decided rows into "
                         f"({problem}); run the whole matrix with --report")
    return previous


def _prove_rows(args: argparse.Namespace, rows: Any, second: str | None,
                temps: list[Path] | None) -> int:
    """Decide ``rows`` with a stderr line per row and a heartbeat between; the report goes
    to ``temps`` (moved onto REPORT.* when the command succeeds)."""
    settings = Settings(args.solver, args.timeout, second, args.second_timeout, args.jobs)
    print(f"{len(rows)} row(s); {settings.solver}, {settings.timeout:g} s per query, "
          f"{settings.jobs} job(s)", file=sys.stderr, flush=True)
    started = time.monotonic()

    with Heartbeat("prove") as beat:
        beat.note(f"{len(rows)} row(s) started")

        def progress(row: Any, done: int, total: int) -> None:
            beat.note(f"{done}/{total} rows decided")
            beat.log(f"[{done}/{total}] {describe_row(row)} ({time.monotonic() - started:.0f}s)")

        def second_progress(row: Any, done: int, total: int) -> None:
            beat.note(f"second opinions: {done}/{total} rows")
            beat.log(f"[second {done}/{total}] {describe_row(row)} "
                     f"({time.monotonic() - started:.0f}s)")

        passes: dict[str, float] = {}
        try:
            results = run_rows(rows, settings, progress, second_progress, passes,
                               {} if args.no_cache else previous_rows())
        except InternalError as exc:
            print(f"tcspec: error: internal error in prove (not a verdict): {exc}",
                  file=sys.stderr)
            if temps is not None:
                raise SystemExit(EXIT_INTERNAL) from None
            return EXIT_INTERNAL
    seconds = time.monotonic() - started
    if temps is not None:
        texts = report_texts(results, settings, seconds, _previous_report(args), passes)
        for temp, text in zip(temps, texts, strict=True):
            temp.write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=1))
    else:
        print_rows(results, seconds, passes)
    return 0 if all(r.result in ("proved", "witness") for r in results) else EXIT_MISMATCH
