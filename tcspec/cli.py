"""The ``tcspec`` command: list, eval, validate, check, smtlib, export, conform, bench, tour.

Bad input (a non-hex word, wrong K, an unknown format or datapath, a missing
file) prints one line ``tcspec: error: ...`` naming the problem and exits
with status 2; a mismatch against a vector exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcspec.words import (
    EXIT_MISMATCH,
    EXIT_USAGE,
    ProgressLine,
    UsageError,
    describe_word,
    format_words,
    hex_word,
    parse_hex_list,
    parse_hex_word,
)

FIRST_MISMATCHES = 10

FAMILY_LABELS = {"window": "float", "integer": "integer", "block": "block-scaled"}


# ------------------------------------------------------------------ commands


def _list_candidates(as_json: bool) -> int:
    from tcspec.spec.candidates import candidate_table

    rows = candidate_table()
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'candidate':18} applies to\n{'':18} (what it is)")
    for row in rows:
        print(f"{row['name']:18} {row['applies_to']}\n{'':18} ({row['summary']})")
    print(f"\n{len(rows)} models; `window` is an alias of `hardware` on the unscaled datapaths. "
          "Sparse datapaths run a candidate on their active lanes.")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from tcspec.proofs.runner import proof_counts
    from tcspec.ref.vectorfiles import vector_counts
    from tcspec.spec.catalog import CATALOG

    if args.candidates:
        return _list_candidates(args.json)
    frozen, reference = vector_counts()
    proofs = proof_counts()
    rows = []
    for name, entry in CATALOG.items():
        desc = entry.descriptor
        if name in frozen:
            status = "validated: B200 words"
        elif name in reference:
            status = "reference vectors"
        else:
            status = "unvalidated"
        if not desc.validated_shape:
            status = "unvalidated (no B200 word; modelled)"
        rows.append({
            "name": name,
            "family": ("sparse " if desc.sparse else "") + FAMILY_LABELS[desc.family],
            "K": desc.k, "b200_words": frozen.get(name, 0),
            "reference_vectors": reference.get(name, 0), "status": status,
            "hardware_validated_family": entry.hardware_validated,
            "specified": entry.specified,
            "proofs": proofs.get(name, {"proved": 0, "unknown": 0, "refuted": 0}),
        })
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'datapath':28} {'family':19} {'K':>4} {'B200':>5} {'ref':>5}  "
          f"{'status':38} proofs (proved/unknown)")
    for row in rows:
        counts = row["proofs"]
        shown = f"{counts['proved']}/{counts['unknown']}" if any(counts.values()) else "-"
        if counts["refuted"]:
            shown += f" ({counts['refuted']} refuted)"
        print(f"{row['name']:28} {row['family']:19} {row['K']:>4} {row['b200_words']:>5} "
              f"{row['reference_vectors']:>5}  {row['status']:38} {shown}")
    specified = sum(r["specified"] for r in rows)
    print(f"\n{len(rows)} datapaths catalogued, {specified} specified in this build; "
          f"{sum(r['hardware_validated_family'] for r in rows)} are the B200-validated "
          "datapaths of SEMANTICS.md section 6. Proof counts come from proofs/REPORT.json "
          "(`tcspec prove`).")
    return 0


def _descriptor_from_args(args: argparse.Namespace, sparse: bool) -> Any:
    from tcspec.spec.catalog import lookup
    from tcspec.spec.descriptor import resolve

    fields = {k: getattr(args, k) for k in ("a_format", "b_format", "d_type", "scaling", "kind",
                                             "scale_vec") if getattr(args, k) is not None}
    if args.saturate:
        fields["saturate"] = True
    if args.datapath:
        if fields:
            raise UsageError("give either --datapath or descriptor fields (--a-format, ...), "
                             "not both")
        desc = lookup(args.datapath).descriptor
        if desc.sparse != sparse:
            need = "needs --metadata" if desc.sparse else "is dense: drop --metadata"
            raise UsageError(f"{desc.name} {need}")
        return desc
    if "a_format" not in fields:
        raise UsageError("give --datapath NAME (see `tcspec list`) or --a-format FORMAT")
    return resolve(**fields, sparse=sparse)


def _dot_from_args(args: argparse.Namespace) -> tuple[Any, list[int], dict[str, Any]]:
    """The descriptor, the checked input words and the parsed fields of eval's input flags."""
    from tcspec.ref.inputs import prepare_dot
    from tcspec.spec.catalog import is_specified

    metadata: int | list[int] | None = None
    if args.metadata:
        words = parse_hex_list(args.metadata, "--metadata")
        metadata = words[0] if len(words) == 1 else words
    desc = _descriptor_from_args(args, sparse=metadata is not None)
    if not is_specified(desc):
        raise UsageError(f"datapath {desc.name} is not yet specified in this build")
    if args.a is None or args.b is None:
        raise UsageError("give --a and --b (comma-separated hex words)")
    fields = {"a": parse_hex_list(args.a, "--a"), "b": parse_hex_list(args.b, "--b"),
              "c": parse_hex_word(args.c, "--c"),
              "scale_a": parse_hex_list(args.scale_a, "--scale-a", 8) if args.scale_a else None,
              "scale_b": parse_hex_list(args.scale_b, "--scale-b", 8) if args.scale_b else None}
    return desc, prepare_dot(desc, **fields, sparse_metadata=metadata), fields


def cmd_eval(args: argparse.Namespace) -> int:
    from tcspec.ref.compiled import compiled_dot

    desc, inputs, fields = _dot_from_args(args)
    a, b, c, scale_a, scale_b = (fields[k] for k in ("a", "b", "c", "scale_a", "scale_b"))
    result = compiled_dot(desc)(*inputs)
    if args.json:
        words = inputs[len(inputs) - desc.metadata_words:] if desc.sparse else None
        print(json.dumps({"datapath": desc.name, "descriptor": desc.fields(), "a": a, "b": b,
                          "c": c, "scale_a": scale_a, "scale_b": scale_b,
                          "sparse_metadata": words, "expected": result,
                          "expected_hex": hex_word(result, desc.d_type),
                          "source": "tcspec specification"}))
        return 0
    print(f"{desc.name}  K={desc.k}  ({desc.d_type.upper()} D)")
    print(f"D = {hex_word(result, desc.d_type)}  ({describe_word(result, desc.d_type)})")
    return 0


def _print_report(report: Any, what: str) -> None:
    total = report.total
    print(f"{'datapath':28} {'cases':>6} {'passed':>7} {'mismatched':>10} {'not specified':>14}")
    for name in sorted(report.tallies):
        t = report.tallies[name]
        print(f"{name:28} {t.cases:>6} {t.passed:>7} {t.mismatched:>10} {t.unspecified:>14}")
    print(f"{'total':28} {total.cases:>6} {total.passed:>7} {total.mismatched:>10} "
          f"{total.unspecified:>14}")
    for source, bad in report.bad_lines[:FIRST_MISMATCHES]:
        print(f"malformed line {bad.line} of {source}: {bad.problem}")
    if len(report.bad_lines) > FIRST_MISMATCHES:
        print(f"... and {len(report.bad_lines) - FIRST_MISMATCHES} more malformed lines")
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
    from tcspec.ref.vectorfiles import reference_files
    from tcspec.validate import check_files, validate_frozen

    frozen = validate_frozen()
    total = frozen.total
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
        rt = report.total
        pending = f", {rt.unspecified} not yet specified" if rt.unspecified else ""
        print(f"reference vectors: {rt.passed} of {rt.cases} pass, {rt.mismatched} mismatch"
              f"{pending} ({len(files)} files)")
        if report.mismatches or report.bad_lines:
            _print_report(report, "the reference vectors")
            failed = True
    return EXIT_MISMATCH if failed else 0


def cmd_check(args: argparse.Namespace) -> int:
    from tcspec.spec.candidates import candidate_named
    from tcspec.validate import check_file

    candidate = candidate_named(args.model or "hardware")
    if args.dask:
        return _check_on_dask(args)
    status = 0
    for name in args.files:
        path = Path(name)
        if path.is_dir():
            from tcspec.campaign import check_columns

            if args.model:
                raise UsageError(f"--model applies to vector line files, not to the "
                                 f"columnar directory {name}")
            report = check_columns(path, args.jobs or (os.cpu_count() or 1), FIRST_MISMATCHES,
                                   ProgressLine(name))
        elif not path.is_file():
            raise UsageError(f"no such vector file: {name}")
        else:
            try:
                report = check_file(path, progress=ProgressLine(name), model=candidate.name)
            except (OSError, EOFError) as exc:
                raise UsageError(f"cannot read {name}: {exc}") from None
        total = report.total
        if total.cases and total.skipped == total.cases:
            raise UsageError(f"model {candidate.name!r} applies to none of the {total.cases} "
                             f"lines of {name} (it applies to {candidate.applies_to})")
        print(f"== {name}" + (f" against model {candidate.name}" if args.model else ""))
        if not report.total.cases and not report.bad_lines:
            print(f"no vector lines in {name}")
            status = status or EXIT_USAGE
            continue
        _print_report(report, name)
        if total.skipped:
            print(f"{total.skipped} line(s) skipped: model {candidate.name!r} does not apply to "
                  f"their datapath (it applies to {candidate.applies_to})")
        if report.mismatches:
            status = EXIT_MISMATCH
        elif report.bad_lines and status == 0:
            status = EXIT_USAGE
    return status


def _check_on_dask(args: argparse.Namespace) -> int:
    from tcspec.campaign import check_on_dask

    if args.model:
        raise UsageError("--model and --dask cannot be combined")
    for name in args.files:
        if not Path(name).exists():
            raise UsageError(f"no such vector file: {name}")
    report = check_on_dask(args.files, args.dask, FIRST_MISMATCHES,
                           ProgressLine(f"dask {args.dask}"))
    print(f"== {', '.join(args.files)} on Dask {args.dask}")
    _print_report(report, "the files")
    if report.mismatches:
        return EXIT_MISMATCH
    return EXIT_USAGE if report.bad_lines or not report.total.cases else 0


def cmd_gen(args: argparse.Namespace) -> int:
    from tcspec.campaign import generate_file, parse_mix

    if args.jobs is not None and args.dask:
        raise UsageError("--jobs and --dask cannot be combined")
    path = generate_file(args.datapath, args.cases, args.out, mix=parse_mix(args.mix),
                         seed=args.seed, file_format=args.format,
                         progress=ProgressLine(args.out, verb="written"),
                         jobs=(os.cpu_count() or 1) if args.jobs is None else args.jobs,
                         dask=args.dask)
    print(f"wrote {path}: {args.cases} cases of {args.datapath} ({args.format}, mix {args.mix}, "
          f"seed {args.seed})")
    return 0


def cmd_smtlib(args: argparse.Namespace) -> int:
    from tcspec.export import select, smtlib_text, write_text
    from tcspec.smt.formula import traced

    descs = select([args.datapath])
    text = smtlib_text(descs, "script")
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}: {len(text)} bytes, {traced(descs[0]).node_count} DAG nodes")
    else:
        sys.stdout.write(text)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from tcspec.export import select, smtlib_text, write_c, write_text

    started = time.monotonic()
    descs = select(args.datapath, args.all)
    if args.lang == "c":
        if args.form is not None:
            raise UsageError("--form applies to --lang smtlib only")
        if not args.output:
            raise UsageError("--lang c writes tcspec_tcgen05.h and tcspec_tcgen05.c: give -o DIR")
        for path, size in write_c(descs, args.output).items():
            print(f"wrote {path}: {size} bytes")
    else:
        text = smtlib_text(descs, args.form or "library")
        if not args.output:
            sys.stdout.write(text)
            return 0
        write_text(args.output, text)
        print(f"wrote {args.output}: {len(text.encode())} bytes")
    print(f"{len(descs)} datapath(s) exported in {time.monotonic() - started:.1f}s")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from tcspec.bench import run_benchmarks
    from tcspec.spec.catalog import CATALOG

    if args.rows < 1:
        raise UsageError(f"--rows must be at least 1, got {args.rows}")
    if args.all and args.datapath:
        raise UsageError("give --all or --datapath, not both")
    names = list(CATALOG) if args.all else args.datapath or None
    if args.json and args.markdown:
        raise UsageError("give --json or --markdown, not both")
    run_benchmarks(names, args.rows, args.scalar_seconds, args.json, args.markdown)
    return 0


def cmd_conform(args: argparse.Namespace) -> int:
    from tcspec.conformance import run_conformance
    from tcspec.spec.catalog import CATALOG, lookup

    names = [lookup(n).name for n in args.datapath] if args.datapath else list(CATALOG)
    if args.cases < 0:
        raise UsageError(f"--cases must be at least 0, got {args.cases}")
    good = run_conformance(names, args.cases, args.seed, args.reference,
                           lambda line: print(line, flush=True))
    return 0 if good else EXIT_MISMATCH


def cmd_explain(args: argparse.Namespace) -> int:
    from tcspec.explain import compare, explain, vector_line
    from tcspec.svg import alignment_svg

    if args.line:
        if args.a or args.b or args.datapath or args.a_format:
            raise UsageError("give either --line FILE:N or the input flags, not both")
        desc, words = vector_line(args.line)
    else:
        desc, words, _ = _dot_from_args(args)
    shown = compare(desc, words, args.vs) if args.vs else explain(desc, words)
    if args.svg:
        hardware = shown.left if args.vs else shown
        if hardware.alignment is None:
            raise UsageError(f"{desc.name} has no window to picture (integer sums are exact)")
        picture = alignment_svg(hardware.alignment, f"{desc.name}: {hardware.model}")
        try:
            Path(args.svg).write_text(picture, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.svg}: {exc.strerror or exc}") from None
    print(json.dumps(shown.data(), indent=1) if args.json else shown.text())
    if args.svg and not args.json:
        print(f"wrote {args.svg}")
    return 0


def cmd_prove(args: argparse.Namespace) -> int:
    from tcspec.proofs.core import AUTO, Settings
    from tcspec.proofs.runner import (
        REPORT_JSON,
        REPORT_MD,
        describe_row,
        run_rows,
        select_rows,
        summary_counts,
        write_report,
    )
    from tcspec.smt.solve import SOLVERS

    if args.timeout <= 0 or args.second_timeout <= 0:
        raise UsageError("--timeout and --second-timeout must be positive seconds")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    second = None if args.second_solver == "none" else args.second_solver
    if second is not None and second not in (*SOLVERS, AUTO):
        raise UsageError(f"unknown --second-solver {second!r} (auto, z3, cvc5, bitwuzla or none)")
    rows = select_rows(args.property, args.datapath, args.k, fast=args.fast)
    if args.report:
        for path in (REPORT_JSON, REPORT_MD):
            try:
                with open(path, "a", encoding="utf-8"):
                    pass
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    settings = Settings(args.solver, args.timeout, second, args.second_timeout, args.jobs)
    print(f"{len(rows)} row(s); {settings.solver}, {settings.timeout:g} s per query, "
          f"{settings.jobs} job(s)", file=sys.stderr, flush=True)
    started = time.monotonic()

    def progress(row: Any, done: int, total: int) -> None:
        print(f"[{done}/{total}] {describe_row(row)} ({time.monotonic() - started:.0f}s)",
              file=sys.stderr, flush=True)

    results = run_rows(rows, settings, progress)
    seconds = time.monotonic() - started
    if args.report:
        write_report(results, settings, seconds)
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=1))
    else:
        for row in results:
            print(describe_row(row))
            if row.detail:
                print(f"    {row.detail}")
            if row.words:
                print("    words: " + ", ".join(f"{k}=0x{v:X}" for k, v in row.words.items()))
        counts = ", ".join(f"{v} {k}" for k, v in sorted(summary_counts(results).items()))
        print(f"{len(results)} row(s) in {seconds:.0f}s: {counts}")
        if args.report:
            print("wrote proofs/REPORT.json and proofs/REPORT.md")
    return 0 if all(r.result in ("proved", "witness") for r in results) else EXIT_MISMATCH


def _probe_constraints(args: argparse.Namespace, desc: Any) -> Any:
    from tcspec.proofs.probe import Constraints, fixed_inputs

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
    return Constraints(finite=args.finite, active_lanes=args.active_lanes, c=args.c,
                       exp_range=exp_range, shape=args.shape, fixed=fixed_inputs(desc, *lists))


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


def _write_probe_records(args: argparse.Namespace, render: Any, count: int) -> None:
    """Each ``--out`` in the format its extension names (.jsonl, .csv; else --format)."""
    if not args.out:
        sys.stdout.write(render(args.format))
        return
    for out in args.out:
        suffix = Path(out).suffix.lstrip(".")
        fmt = suffix if suffix in ("jsonl", "csv") else args.format
        try:
            Path(out).write_text(render(fmt), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
        print(f"wrote {count} probe(s) to {out} ({fmt})")


def cmd_probe(args: argparse.Namespace) -> int:
    from tcspec.proofs.probe import find_probes, probe_record, render_probes
    from tcspec.proofs.sensitivity import sensitivity_table
    from tcspec.proofs.separate import separating_suite
    from tcspec.spec.catalog import lookup

    desc = lookup(args.datapath).descriptor
    modes = sum(bool(x) for x in (args.vs, args.separate, args.sensitivity))
    if modes != 1:
        raise UsageError("give exactly one of --vs CANDIDATE, --separate M1,M2,... "
                         "or --sensitivity")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    constraints = _probe_constraints(args, desc)
    log = (lambda line: print(f"  {line}", file=sys.stderr, flush=True)) if args.verbose \
        else (lambda line: None)
    options = {"solver": args.solver, "timeout": args.timeout, "log": log}
    if args.sensitivity:
        print(sensitivity_table(desc, constraints, **options).text())
        return 0
    command = _probe_command(args, desc)
    if args.separate:
        names = [n for n in args.separate.split(",") if n.strip()]
        suite = separating_suite(desc, names, constraints, seed=args.seed,
                                 minimize=args.minimize, **options)
        print(suite.text())
        probes, models = suite.suite, suite.models
        label = f"{desc.name}:separate"
        status = 1 if suite.undecided else 0
    else:
        report = find_probes(desc, args.model, args.vs, constraints, count=args.count,
                             minimize=args.minimize, seed=args.seed, **options)
        models = report.models
        print(report.text(desc, models, constraints))
        probes = report.probes
        label = f"{desc.name}:{models[0]}-vs-{models[1]}"
        status = 1 if report.status == "unknown" else 0
    if probes:
        records = [probe_record(p, f"{label}:{i}", command) for i, p in enumerate(probes)]
        _write_probe_records(args, lambda fmt: render_probes(records, desc, models, fmt),
                             len(records))
    return status


def cmd_classify(args: argparse.Namespace) -> int:
    from tcspec.classify import classification_text, classify_file

    names = [n for n in (args.candidates or "").split(",") if n.strip()]
    try:
        result = classify_file(args.file, names or None)
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc}") from None
    if not result.families and not result.bad_lines:
        raise UsageError(f"no vector lines in {args.file}")
    print(classification_text(result, args.all))
    return 0


def cmd_tour(args: argparse.Namespace) -> int:
    from tcspec.tour import tour

    tour()
    return 0


# ------------------------------------------------------------------- parser


def _add_dot_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    """The input flags of one dot product (eval, explain)."""
    p.add_argument("--datapath", help="canonical name (e.g. dense-tf32) or alias (tf32)")
    p.add_argument("--a-format")
    p.add_argument("--b-format")
    p.add_argument("--d-type", choices=("f32", "f16", "s32"))
    p.add_argument("--saturate", action="store_true")
    p.add_argument("--scaling", choices=("ue8m0", "ue4m3"))
    p.add_argument("--kind")
    p.add_argument("--scale-vec", type=int, choices=(1, 2, 4))
    p.add_argument("--a", required=required, help="comma-separated hex A words (logical K)")
    p.add_argument("--b", required=required, help="comma-separated hex B words")
    p.add_argument("--c", default="0x0", help="hex C word (default +0)")
    p.add_argument("--scale-a", help="comma-separated hex scale bytes for A")
    p.add_argument("--scale-b", help="comma-separated hex scale bytes for B")
    p.add_argument("--metadata", help="hex sparse metadata word(s); makes the datapath sparse "
                   "(one word is reused for every group of 8 chunks)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcspec", description="Executable, formal specification of tcgen05.mma arithmetic.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="every catalogued datapath and its validation status")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--candidates", action="store_true",
                   help="the candidate models of SEMANTICS.md section 7 and where they apply")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("eval", help="one dot product from hex words")
    _add_dot_arguments(p, required=True)
    p.add_argument("--json", action="store_true", help="print a vector line")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("explain", help="every stage of one dot product, as the spec runs it")
    _add_dot_arguments(p, required=False)
    p.add_argument("--line", metavar="FILE:N", help="explain line N of a vector file instead")
    p.add_argument("--vs", metavar="MODEL", help="side by side with a candidate model "
                   "(SEMANTICS.md section 7; `tcspec list --candidates`)")
    p.add_argument("--svg", metavar="FILE", help="also draw the bit-alignment picture")
    p.add_argument("--json", action="store_true", help="the stages as data")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("validate", help="replay the frozen B200 words (and reference vectors)")
    p.add_argument("--reference", action="store_true", help="also replay the reference vectors")
    p.add_argument("--verbose", action="store_true", help="list every passing B200 word")
    p.add_argument("--jobs", type=int, help="processes for the reference files "
                   "(default: the cores)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("check", help="replay vector files (shared line format, or columnar "
                       "directories from `tcspec gen --format npy-dir`)")
    p.add_argument("files", nargs="+", metavar="FILE.jsonl[.gz]|DIR")
    p.add_argument("--jobs", type=int, help="processes for a columnar directory "
                   "(default: the cores)")
    p.add_argument("--dask", metavar="ADDRESS", help="split the check across the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")
    p.add_argument("--model", metavar="NAME",
                   help="check against a candidate model of SEMANTICS.md section 7 "
                        "(default: hardware; see `tcspec list --candidates`)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("gen", help="generate cases with expected words from the specification")
    p.add_argument("--datapath", required=True)
    p.add_argument("--cases", type=int, required=True)
    p.add_argument("--mix", default="raw,finite,edge",
                   help="case categories, row by row in turn (default raw,finite,edge)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="FILE.jsonl[.gz], or a directory for npy-dir")
    p.add_argument("--format", choices=("jsonl", "npy-dir"), default="jsonl")
    p.add_argument("--jobs", type=int, help="processes, a chunk of rows each "
                   "(default: the cores; the file is the same for any count)")
    p.add_argument("--dask", metavar="ADDRESS", help="generate the chunks on the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")
    p.set_defaults(func=cmd_gen)

    p = sub.add_parser("smtlib", help="a self-contained SMT-LIB2 script for a datapath")
    p.add_argument("--datapath", required=True)
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_smtlib)

    p = sub.add_parser("export", help="the specification as an SMT-LIB function library or C99")
    p.add_argument("--lang", required=True, choices=("smtlib", "c"))
    p.add_argument("--datapath", action="append", help="repeatable canonical name")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--form", choices=("library", "script"),
                   help="smtlib: define-fun library (default) or one datapath's script")
    p.add_argument("-o", "--output", help="smtlib: a file (default stdout); c: a directory")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("bench", help="throughput of every lowering side by side (dots/s), "
                       "kernel compile and cache-load times")
    p.add_argument("--datapath", action="append", help="repeatable; default: a representative set")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--rows", type=int, default=20000, help="batch size for the NumPy backend")
    p.add_argument("--scalar-seconds", type=float, default=1.0,
                   help="time budget per scalar measurement")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--markdown", action="store_true", help="the README's throughput table")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("conform", help="every lowering on the same inputs (one-source check)")
    p.add_argument("--datapath", action="append", help="repeatable; default: every datapath")
    p.add_argument("--cases", type=int, default=200, help="random cases per datapath")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--reference", action="store_true",
                   help="also run every reference vector through every lowering")
    p.set_defaults(func=cmd_conform)

    p = sub.add_parser("probe", help="solver-made inputs on which candidate models differ")
    p.add_argument("--datapath", required=True, help="canonical name (e.g. dense-tf32)")
    p.add_argument("--model", default="hardware", help="first model (default: hardware)")
    p.add_argument("--vs", metavar="CANDIDATE", help="the model to tell apart from --model")
    p.add_argument("--separate", metavar="M1,M2,...",
                   help="a small suite separating every pair of these models")
    p.add_argument("--sensitivity", action="store_true",
                   help="which rule constants of the hardware model the inputs can observe")
    p.add_argument("--finite", action="store_true", help="no Inf or NaN inputs")
    p.add_argument("--active-lanes", type=int, metavar="N",
                   help="at most N lanes with a nonzero product")
    p.add_argument("--c", choices=("zero", "nonzero"), help="C zero or nonzero")
    p.add_argument("--exp-range", metavar="LO:HI",
                   help="raw exponents of nonzero A, B and C within LO..HI")
    p.add_argument("--shape", choices=("one-lane", "c-only", "cancel"),
                   help="probe ladder shape: one active lane, no active lane, or lanes 0 and 1 "
                        "cancelling exactly above every other term")
    p.add_argument("--scale-a", help="fix the A scale bytes (hex; one is reused)")
    p.add_argument("--scale-b", help="fix the B scale bytes (hex; one is reused)")
    p.add_argument("--metadata", help="fix the sparse metadata words (hex; one is reused)")
    p.add_argument("--count", type=int, default=1, help="probes with pairwise different inputs")
    p.add_argument("--minimize", action="store_true",
                   help="fewest active lanes first, then the smallest exponent spread")
    p.add_argument("--seed", type=int, help="diversify: random sign/low bits and lane choice")
    p.add_argument("--out", action="append",
                   help="write the probes here (repeatable; .jsonl/.csv pick the format; "
                        "default: stdout)")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per solver call")
    p.add_argument("--verbose", action="store_true", help="log every solver call to stderr")
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("classify", help="which candidate models survive observed words")
    p.add_argument("file", metavar="OBSERVED.jsonl", help="lines with inputs and `expected`")
    p.add_argument("--candidates", metavar="M1,M2,...", help="default: every candidate")
    p.add_argument("--all", action="store_true", help="list every line that rules a model out")
    p.set_defaults(func=cmd_classify)

    p = sub.add_parser("tour", help="a short guided tour of the arithmetic")
    p.set_defaults(func=cmd_tour)

    p = sub.add_parser("prove", help="prove properties for all inputs (the proof matrix)")
    p.add_argument("--property", help="one property family row kind (default: all)")
    p.add_argument("--datapath", help="one datapath (default: each property's required ones)")
    p.add_argument("--k", type=int, help="logical K of the query (default: the hardware K; "
                   "any other K is a model of the datapath)")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per query (120)")
    p.add_argument("--second-solver", default="auto",
                   help="re-run proved queries with this solver: auto (cvc5, then z3), z3, "
                   "cvc5 or none")
    p.add_argument("--second-timeout", type=float, default=30.0,
                   help="seconds per query for the second solver (30)")
    p.add_argument("--jobs", type=int, default=1, help="rows decided in parallel")
    p.add_argument("--fast", action="store_true", help="the small-K subset the tests run")
    p.add_argument("--report", action="store_true",
                   help="write proofs/REPORT.json and proofs/REPORT.md")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=cmd_prove)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ValueError) as exc:
        print(f"tcspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("tcspec: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
