"""``tcspec probe``: the probe queries (:mod:`proofs.probes.probe`) from the command line.

One discriminating search (``--vs``), a separating suite (``--separate``) or
the sensitivity table (``--sensitivity``); probes are written as JSON lines
or CSV.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from tcspec.outputs import atomic_paths, write_texts
from tcspec.proofs.probes.probe import (
    Constraints,
    find_probes,
    fixed_inputs,
    probe_record,
    render_probes,
)
from tcspec.proofs.probes.sensitivity import sensitivity_table
from tcspec.proofs.probes.separate import separating_suite
from tcspec.ref.inputs import LAYOUT_RULE, layout_mistake
from tcspec.smt.progress import Heartbeat
from tcspec.spec.catalog import lookup
from tcspec.words import UsageError, parse_hex_list


def _probe_constraints(args: argparse.Namespace, desc: Any) -> Any:
    exp_range = None
    if args.exp_range:
        lo, sep, hi = args.exp_range.partition(":")
        try:
            exp_range = (int(lo), int(hi))
        except ValueError:
            raise UsageError(f"--exp-range must be LO:HI (ints), got {args.exp_range!r}") from None
        if not sep:
            raise UsageError(f"--exp-range must be LO:HI, got {args.exp_range!r}")
    lists = [parse_hex_list(text, flag, bits) if text else None
             for text, flag, bits in ((args.scale_a, "--scale-a", 8),
                                      (args.scale_b, "--scale-b", 8),
                                      (args.metadata, "--metadata", 32))]
    desc_lists = dict(zip(("scale_a", "scale_b"), lists[:2], strict=True))
    if desc.scaling and not args.raw_containers:
        for role, words in desc_lists.items():
            for i, word in enumerate(words or ()):
                why = layout_mistake(desc.scaling, word)
                if why:
                    raise UsageError(f"--{role.replace('_', '-')}[{i}] = 0x{word:X}: {why}; "
                                     f"word layout: {LAYOUT_RULE} (--raw-containers passes "
                                     "it as the hardware reads it)")
    return Constraints(finite=args.finite, active_lanes=args.active_lanes, c=args.c,
                       exp_range=exp_range, shape=args.shape, fixed=fixed_inputs(desc, *lists))


CONSTRAINT_FLAGS = ("finite", "active_lanes", "c", "exp_range", "shape", "scale_a", "scale_b",
                    "metadata")


def _refuse_constraints(args: argparse.Namespace, mode: str) -> None:
    """``mode`` searches without constraints: a constraint flag given with it is refused,
    not ignored (the verdict would read as if it held under the constraint)."""
    given = [f"--{flag.replace('_', '-')}" for flag in CONSTRAINT_FLAGS
             if getattr(args, flag, None) is not None and getattr(args, flag) is not False]
    if given:
        raise UsageError(f"{mode} takes no input constraints; drop {', '.join(given)}")


def _probe_command(args: argparse.Namespace, desc: Any) -> str:
    """The probe command as a user would type it (the ``source`` of each probe line)."""
    parts = [f"tcspec probe --datapath {desc.name}"]
    if args.separate:
        parts.append(f"--separate {args.separate}")
    else:
        parts.append(f"--model {args.model} --vs {args.vs}")
    for flag in ("active_lanes", "c", "exp_range", "shape", "scale_a", "scale_b", "metadata",
                 "count", "seed"):
        value = getattr(args, flag)
        if value is not None and not (flag == "count" and value == 1):
            parts.append(f"--{flag.replace('_', '-')} {value}")
    parts += [f"--{flag}" for flag in ("finite", "minimize") if getattr(args, flag)]
    return " ".join(parts)


def _out_format(args: argparse.Namespace, out: str) -> str:
    suffix = Path(out).suffix.lstrip(".")
    return suffix if suffix in ("jsonl", "csv") else args.format


def _write_probe_records(args: argparse.Namespace, render: Any, temps: list[Path]) -> None:
    """Each ``--out`` (written to its temporary path) in the format its extension names
    (.jsonl, .csv; else --format); stdout without ``--out``."""
    if not args.out:
        sys.stdout.write(render(args.format))
        return
    for out, temp in zip(args.out, temps, strict=True):
        temp.write_text(render(_out_format(args, out)), encoding="utf-8")


def cmd_probe(args: argparse.Namespace) -> int:
    """``tcspec probe``: ``--vs``, ``--separate`` or ``--sensitivity``, probes written out."""
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    if args.portability:
        return cmd_portability(args)
    if not args.datapath:
        raise UsageError("--datapath is required (except with --portability)")
    if args.vs_datapath:
        return cmd_vs_datapath(args)
    desc = lookup(args.datapath).descriptor
    modes = sum(bool(x) for x in (args.vs, args.separate, args.sensitivity))
    if modes != 1:
        raise UsageError("give exactly one of --vs CANDIDATE, --vs-datapath DATAPATH, "
                         "--separate M1,M2,..., --sensitivity or --portability")
    if args.sensitivity and args.out:
        raise UsageError("--sensitivity prints a table and writes no probes: drop --out")
    constraints = _probe_constraints(args, desc)
    with atomic_paths(args.out or [], force=args.force) as temps:
        status, count = _run_probe(args, desc, constraints, temps)
    for out in args.out or ():
        print(f"wrote {count} probe(s) to {out} ({_out_format(args, out)})")
    return status


def _run_probe(args: argparse.Namespace, desc: Any, constraints: Any,
               temps: list[Path]) -> tuple[int, int]:
    """Solve (a stderr heartbeat at least every 10 s), print, write the probes to ``temps``:
    ``(exit status, probes written)``."""
    with Heartbeat(f"probe {desc.name}") as beat:
        def log(line: str) -> None:
            beat.note(line)
            if args.verbose:
                beat.log(f"  {line}")

        options = {"solver": args.solver, "timeout": args.timeout, "log": log}
        if args.sensitivity:
            table = sensitivity_table(desc, constraints, **options)
        elif args.separate:
            names = [n for n in args.separate.split(",") if n.strip()]
            suite = separating_suite(desc, names, constraints, seed=args.seed,
                                     minimize=args.minimize, **options)
        else:
            report = find_probes(desc, args.model, args.vs, constraints, count=args.count,
                                 minimize=args.minimize, seed=args.seed, **options)
    if args.sensitivity:
        print(table.text())
        return 0, 0
    prose = sys.stdout if args.out else sys.stderr
    command = _probe_command(args, desc)
    if args.separate:
        print(suite.text(), file=prose)
        probes, models = suite.suite, suite.models
        label = f"{desc.name}:separate"
        status = 1 if suite.undecided else 0
    else:
        models = report.models
        print(report.text(desc, models, constraints), file=prose)
        probes = report.probes
        label = f"{desc.name}:{models[0]}-vs-{models[1]}"
        status = 1 if report.status == "unknown" else 0
    if probes:
        records = [probe_record(p, f"{label}:{i}", command) for i, p in enumerate(probes)]
        _write_probe_records(args, lambda fmt: render_probes(records, desc, models, fmt), temps)
    return status, len(probes)


def _stderr_log(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def cmd_vs_datapath(args: argparse.Namespace) -> int:
    """``tcspec probe --datapath X --vs-datapath Y``: a replayed witness, unsat or unknown
    (exit 1 on unknown)."""
    from tcspec.proofs.probes.portability import UNKNOWN, compare, side

    if args.vs or args.separate or args.sensitivity:
        raise UsageError("--vs-datapath takes no --vs, --separate or --sensitivity")
    _refuse_constraints(args, "--vs-datapath")
    if args.out:
        raise UsageError("--vs-datapath prints its verdict and writes no probes: drop --out")
    result = compare(side(args.datapath, args.model), side(args.vs_datapath, args.vs_model),
                     solver=args.solver, timeout=args.timeout, log=_stderr_log)
    print(result.text())
    return 1 if result.status == UNKNOWN else 0


def cmd_portability(args: argparse.Namespace) -> int:
    """``tcspec probe --portability [--report]``: the portability table and fingerprint
    suites (proofs/PORTABILITY.md, ref/vectors/fingerprints/); exit 1 if a pair is unknown."""
    from tcspec.proofs.probes import portability as port

    if args.datapath or args.vs or args.vs_datapath or args.separate or args.sensitivity:
        raise UsageError("--portability takes no --datapath, --vs, --vs-datapath, --separate "
                         "or --sensitivity")
    _refuse_constraints(args, "--portability")
    if args.out:
        raise UsageError("--portability prints its verdict and writes no probes: drop --out")
    keys = [k.strip() for k in (args.formats or "").split(",") if k.strip()]
    started = time.monotonic()
    groups = port.portability(keys or None, solver=args.solver, timeout=args.timeout,
                              log=_stderr_log)
    suites = [port.fingerprint_suite(g, _stderr_log) for g in groups]
    command = "tcspec probe --portability" + (f" --formats {args.formats}" if keys else "")
    records = [port.group_record(g, s) for g, s in zip(groups, suites)]
    print(port.table_markdown(records, command))
    print(f"{time.monotonic() - started:.0f}s in all", file=sys.stderr)
    if args.report:
        root = Path(__file__).resolve().parent.parent
        texts = port.report_files(groups, suites, root / "proofs",
                                  root / "ref" / "vectors" / "fingerprints", command + " --report")
        write_texts(texts, replace=True)
        for path in texts:
            print(f"wrote {path}")
    return 1 if any(v.status == port.UNKNOWN for g in groups for v in g.pairs) else 0

