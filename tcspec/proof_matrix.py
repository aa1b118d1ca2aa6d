"""``tcspec prove``: the proof matrix (:mod:`proofs.runner`) from the command line.

Long runs stop when asked: Ctrl-C (or SIGTERM) ends the command within seconds at any phase
(formula building, solving, second opinions); what the first pass decided is printed and,
with ``--report``, merged into the report (every row not reached keeps its record); an
interrupt during the second opinions keeps every first-pass verdict.
A ``--k`` whose formula is estimated past :data:`FORMULA_WARN_BYTES` gets a warning with the
estimate before anything is built (:func:`formula_bytes`).
"""

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
    RowsInterruptedError,
    RowSpec,
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

FORMULA_WARN_BYTES = 2 * 10**9
"""A row whose formula is estimated past this many bytes is announced with the estimate."""
ESTIMATE_FROM_K = 1024
"""Rows at a ``--k`` up to this are never estimated (their formulas are small)."""
BYTES_PER_DOT_NODE = 1600
"""Peak memory per node of one traced dot product: measured on ``tf32-ignores-low-bits``
(two dot products, their SMT-LIB text and the solver's copy; 1.04 GB at K=8192)."""
SAMPLE_K = 16
"""A datapath's dot product is traced at about this K and twice it: the difference gives its
nodes per lane (the fixed part, C and the final rounding, cancels out)."""
WARNINGS_SHOWN = 3
"""Rows past the limit named one by one (the largest); the others are counted in one line."""


def _dot_nodes(desc: Any, k: int) -> int:
    """Nodes of one traced dot product of ``desc`` at logical ``k``."""
    from tcspec.proofs.core import dot_inputs, layout_variables, run_dot
    from tcspec.smt.trace import TraceOps

    ops = TraceOps()
    values = {name: ops.variable(name, width) for name, width in layout_variables(desc, k)}
    run_dot(ops, desc, dot_inputs(desc, k, values))
    return len(ops)


def formula_bytes(spec: RowSpec, sampled: dict[str, tuple[int, int, float]] | None = None
                  ) -> int:
    """Estimated peak memory of deciding ``spec``: the nodes of one dot product at the row's
    K (traced at about :data:`SAMPLE_K` lanes and twice that, extrapolated linearly, within
    about 1% at K=1024) times :data:`BYTES_PER_DOT_NODE` (a rough figure, within a factor of
    about 2 for the rows that compare two dot products). ``sampled`` caches each datapath's
    (K, nodes, nodes per lane)."""
    from tcspec.spec.catalog import logical_k_step

    sampled = {} if sampled is None else sampled
    name = spec.desc.name
    if name not in sampled:
        step = logical_k_step(spec.desc)
        k = step * max(1, -(-SAMPLE_K // step))
        nodes = _dot_nodes(spec.desc, k)
        sampled[name] = (k, nodes, (_dot_nodes(spec.desc, 2 * k) - nodes) / k)
    k, nodes, per_lane = sampled[name]
    return int(max(nodes, nodes + per_lane * (spec.k - k)) * BYTES_PER_DOT_NODE)


def _available_bytes() -> int | None:
    """Memory this machine has available (``/proc/meminfo``), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gigabytes(count: float) -> str:
    return f"{count / 1e9:.1f} GB"


def warn_formula_sizes(rows: Sequence[RowSpec]) -> None:
    """On stderr, before anything is built: the rows past :data:`ESTIMATE_FROM_K` whose
    formula is estimated (:func:`formula_bytes`) past :data:`FORMULA_WARN_BYTES`, the
    :data:`WARNINGS_SHOWN` largest by name and the others counted."""
    sampled: dict[str, tuple[int, int, float]] = {}
    large = sorted(((formula_bytes(spec, sampled), n, spec) for n, spec in enumerate(rows)
                    if spec.k > ESTIMATE_FROM_K), key=lambda item: (-item[0], item[1]))
    large = [item for item in large if item[0] > FORMULA_WARN_BYTES]
    if not large:
        return
    available = _available_bytes()
    room = f"; this machine has {_gigabytes(available)} available" if available else ""
    for needed, _, spec in large[:WARNINGS_SHOWN]:
        print(f"tcspec: warning: {spec.prop.name} on {spec.desc.name} at K={spec.k} builds a "
              f"formula of about {_gigabytes(needed)} (a rough estimate{room}); it may take "
              "minutes to build, and Ctrl-C stops it", file=sys.stderr, flush=True)
    if len(large) > WARNINGS_SHOWN:
        print(f"tcspec: warning: {len(large) - WARNINGS_SHOWN} more row(s) past "
              f"{_gigabytes(FORMULA_WARN_BYTES)} (up to {_gigabytes(large[WARNINGS_SHOWN][0])})",
              file=sys.stderr, flush=True)


def report_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    """Where ``--report`` writes: the package's ``proofs/REPORT.*``, or ``DIR/REPORT.*``."""
    if args.report is True:
        return REPORT_JSON, REPORT_MD
    directory = Path(args.report)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--report {args.report}: not a directory")
    if not directory.parent.is_dir():
        raise UsageError(f"--report {args.report}: no such directory {directory.parent}")
    return directory / REPORT_JSON.name, directory / REPORT_MD.name


@contextlib.contextmanager
def _report_directory(args: argparse.Namespace) -> Any:
    """``--report DIR``: create DIR when missing, and remove it again if it stays empty."""
    directory = None if args.report in (None, True) else Path(args.report)
    made = directory is not None and not directory.exists()
    if made:
        assert directory is not None
        try:
            directory.mkdir()
        except OSError as exc:
            raise UsageError(f"--report {args.report}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        if made:
            assert directory is not None
            with contextlib.suppress(OSError):
                directory.rmdir()


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
        target = MUTANTS_MD if args.report is True else \
            report_paths(args)[0].with_name(MUTANTS_MD.name)
        with _report_directory(args):
            write_text(target, text, replace=True)
        print(f"wrote {target}")
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
    if args.report not in (None, True):
        raise UsageError("--report DIR is for the proof matrix and --mutants; --arch --report "
                         "writes proofs/arch/REPORT-<arch>.*")
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
    """``tcspec prove``: decide the selected rows, print them (``--report``: REPORT.*, or
    ``--report DIR``: DIR/REPORT.*)."""
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
    targets = report_paths(args) if args.report else None
    if args.k is not None:
        with Heartbeat("prove: estimating formula sizes"):
            warn_formula_sizes(rows)
    interrupted: RowsInterruptedError | None = None
    with _report_directory(args), (atomic_paths(list(targets), replace=True) if targets
                                   else contextlib.nullcontext()) as temps:
        status, interrupted = _prove_rows(args, rows, second, temps, targets)
    if targets:
        print(f"wrote {targets[0]} and {targets[1]}",
              file=sys.stderr if args.json else sys.stdout)
    if interrupted is not None:
        raise interrupted
    return status


def _merge_base(targets: tuple[Path, Path] | None) -> tuple[Path, Path]:
    """The report a run merges into and reuses rows of: the target's own report when it
    exists, else the package's committed one."""
    if targets is not None and targets[0].is_file():
        return targets
    return REPORT_JSON, REPORT_MD


def _previous_report(args: argparse.Namespace, base: Path, every_row: bool = False
                     ) -> dict[str, Any] | None:
    """The committed report a row selection (--property, --datapath, --k) merges into, or
    an interrupted run (``every_row``: the rows it decided replace theirs, every other row
    keeps its record); None when every row of the matrix was decided (the report is
    replaced)."""
    selection = every_row or args.property or args.datapath or args.k
    if not selection or not base.is_file():
        return None
    try:
        previous = json.loads(base.read_text(encoding="utf-8"))
        problem = None if isinstance(previous, dict) and isinstance(previous.get("rows"), list) \
            and "run" in previous else "no rows and run"
    except (OSError, ValueError) as exc:
        problem = str(exc)
    if problem:
        raise UsageError(f"{base} cannot be read to merge the re-decided rows into "
                         f"({problem}); run the whole matrix with --report")
    return previous


def _stopped(error: RowsInterruptedError, total: int) -> None:
    """What an interrupt kept, on stderr."""
    if error.second_pass:
        print("tcspec: interrupted during the second opinions: every first-pass verdict is "
              "kept (rows below; --second-solver none skips the second opinions)",
              file=sys.stderr, flush=True)
    else:
        shown = " (below; --report keeps them, every other row as it was)" \
            if error.rows else ""
        print(f"tcspec: interrupted in the first pass: {len(error.rows)} of {total} row(s) "
              f"decided{shown}", file=sys.stderr, flush=True)


def _prove_rows(args: argparse.Namespace, rows: Any, second: str | None,
                temps: list[Path] | None, targets: tuple[Path, Path] | None
                ) -> tuple[int, RowsInterruptedError | None]:
    """Decide ``rows`` with a stderr line per row and a heartbeat between; the report goes
    to ``temps`` (moved onto ``targets`` when the command succeeds). An interrupt during
    the second opinions still prints and writes the first-pass verdicts, then is returned
    to be raised once the report is in place; so is one in the first pass, whose decided
    rows are merged into the report like a row selection's (with none decided it is raised
    at once and the report is untouched)."""
    settings = Settings(args.solver, args.timeout, second, args.second_timeout, args.jobs)
    print(f"{len(rows)} row(s); {settings.solver}, {settings.timeout:g} s per query, "
          f"{settings.jobs} job(s)" + (f"; then second opinions by {second} (up to "
                                      f"{settings.second_timeout:g} s per proved query; "
                                      "--second-solver none skips them)" if second else ""),
          file=sys.stderr, flush=True)
    started = time.monotonic()
    first = "first pass " if second else ""
    base_json, base_md = _merge_base(targets)

    with Heartbeat("prove") as beat:
        beat.note(f"{len(rows)} row(s) started")

        def progress(row: Any, done: int, total: int) -> None:
            beat.note(f"{first}{done}/{total} rows decided")
            beat.log(f"[{first}{done}/{total}] {describe_row(row)} "
                     f"({time.monotonic() - started:.0f}s)")
            if second and done == total:
                beat.note(f"first pass done ({total} rows); second opinions by {second}: "
                          f"0/{total} rows")
                beat.log(f"first pass done in {time.monotonic() - started:.0f}s; second "
                         f"opinions by {second} now (Ctrl-C keeps the first-pass verdicts)")

        def second_progress(row: Any, done: int, total: int) -> None:
            beat.note(f"second opinions by {second}: {done}/{total} rows")
            beat.log(f"[second {done}/{total}] {describe_row(row)} "
                     f"({time.monotonic() - started:.0f}s)")

        passes: dict[str, float] = {}
        interrupted = None
        try:
            results = run_rows(rows, settings, progress, second_progress, passes,
                               {} if args.no_cache else previous_rows(base_json))
        except RowsInterruptedError as exc:
            interrupted, results = exc, exc.rows
        except InternalError as exc:
            print(f"tcspec: error: internal error in prove (not a verdict): {exc}",
                  file=sys.stderr)
            if temps is not None:
                raise SystemExit(EXIT_INTERNAL) from None
            return EXIT_INTERNAL, None
    seconds = time.monotonic() - started
    if interrupted is not None:
        _stopped(interrupted, len(rows))
    partial = interrupted is not None and not interrupted.second_pass
    if partial and (temps is None or not results):
        if results:
            _print_results(args, results, seconds, passes)
        raise interrupted
    if temps is not None:
        previous_md = base_md.read_text(encoding="utf-8") if base_md.is_file() else None
        texts = report_texts(results, settings, seconds,
                             _previous_report(args, base_json, every_row=partial),
                             passes, previous_md)
        for temp, text in zip(temps, texts, strict=True):
            temp.write_text(text, encoding="utf-8")
    _print_results(args, results, seconds, passes)
    return (0 if all(r.result in ("proved", "witness") for r in results)
            else EXIT_MISMATCH), interrupted


def _print_results(args: argparse.Namespace, results: Sequence[Row], seconds: float,
                   passes: dict[str, float]) -> None:
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=1))
    else:
        print_rows(results, seconds, passes or None)
