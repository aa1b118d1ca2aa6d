"""`tcspec hw run`: every runnable line of vector, probe or campaign files through the GPU.

Inputs are the shared JSON line format (``expected`` optional, so probe files
read as they are) or columnar campaign directories (``tcspec gen --format
npy-dir``). Each line's datapath is matched to the instruction rows this GPU
executes (:func:`choose`: same operand formats and K, packed layout; tcgen05
first, then wgmma, then mma.sync); each row used is self-tested first
(:mod:`tcspec.hw.selftest`) and refused if it fails. The output is the shared
line format with the observed word in ``expected`` and ``provenance``
``{"source": "hardware", ...}``, so ``tcspec classify`` and ``tcspec check``
read it as frozen words. A line no row can run is counted and named, never
dropped silently.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcspec.hw.device import Device
from tcspec.hw.lines import arch_line
from tcspec.hw.table import (
    HARNESSES,
    MMA,
    TCGEN05,
    WGMMA,
    Harness,
    datapath_descriptor,
    descriptor_of,
)
from tcspec.outputs import atomic_file
from tcspec.ref.inputs import prepare_dot, resolve_fields
from tcspec.ref.vectorfiles import DESCRIPTOR_FIELDS, json_line_problem
from tcspec.spec.arch import ArchDescriptor
from tcspec.spec.descriptor import Descriptor
from tcspec.words import UsageError, hex_word

INSTRUCTIONS = {"tcgen05": TCGEN05, "wgmma": WGMMA, "mma": MMA}
PREFERENCE = (TCGEN05, WGMMA, MMA)
BATCH_CASES = 1 << 18
"""Cases packed and launched at a time."""


@dataclass
class Line:
    """One input case: where it came from, its descriptor and its words."""

    label: str
    desc: Descriptor
    a: list[int]
    b: list[int]
    c: int
    raw: dict[str, Any]


@dataclass
class Unreadable:
    label: str
    problem: str


def _json_lines(path: Path) -> Iterator[Line | Unreadable]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            label = f"{path.name}:{number}"
            try:
                obj = json.loads(text)
                fields = obj["descriptor"]
                unknown = sorted(set(fields) - set(DESCRIPTOR_FIELDS))
                if unknown:
                    raise ValueError(f"unknown descriptor field(s) {', '.join(unknown)}")
                meta = obj.get("sparse_metadata")
                desc = resolve_fields(fields, meta is not None)
                prepare_dot(desc, obj["a"], obj["b"], obj["c"], obj.get("scale_a"),
                            obj.get("scale_b"), meta)
            except json.JSONDecodeError as exc:
                yield Unreadable(label, json_line_problem(exc, text))
                continue
            except (ValueError, TypeError, KeyError) as exc:
                yield Unreadable(label, f"{type(exc).__name__}: {exc}")
                continue
            if obj.get("name"):
                label += f" ({obj['name']})"
            yield Line(label, desc, list(obj["a"]), list(obj["b"]), int(obj["c"]), obj)


def _columns(path: Path) -> Iterator[Line | Unreadable]:
    from tcspec.campaign import open_columns

    info = open_columns(path)
    cols = {name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            for name in info.shapes}
    for row in range(info.cases):
        raw = {"scale_a": cols["scale_a"][row].tolist() if "scale_a" in cols else None,
               "scale_b": cols["scale_b"][row].tolist() if "scale_b" in cols else None,
               "sparse_metadata": cols["metadata"][row].tolist() if "metadata" in cols
               else None, "name": f"{path.name} row {row}"}
        yield Line(f"{path.name} row {row}", info.desc, cols["a"][row].tolist(),
                   cols["b"][row].tolist(), int(cols["c"][row]), raw)


def check_inputs(paths: Sequence[str | Path]) -> None:
    """Each input must be a readable file or a columnar directory: checked before the
    device is opened, so a typo costs no GPU start-up."""
    from tcspec.campaign import open_columns

    for path in map(Path, paths):
        if path.is_dir():
            open_columns(path)
        elif not path.is_file():
            raise UsageError(f"no such vector, probe or campaign file: {path}")
        else:
            try:
                with path.open("rb"):
                    pass
            except OSError as exc:
                raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_lines(path: str | Path) -> Iterator[Line | Unreadable]:
    """Every case of a JSON line file (``.jsonl[.gz]``) or a columnar directory."""
    path = Path(path)
    if path.is_dir():
        yield from _columns(path)
    elif path.is_file():
        yield from _json_lines(path)
    else:
        raise UsageError(f"no such vector, probe or campaign file: {path}")


def choose(desc: Descriptor, sm: int, instruction: str | None = None) -> Harness | None:
    """The preferred packed row that runs ``desc`` at its own K on ``sm``, or None."""
    rows = [h for h in HARNESSES if h.packed and h.runs_on(sm) and h.k == desc.k
            and descriptor_of(h) == desc and (instruction is None or h.instruction == instruction)]
    rows.sort(key=lambda h: (PREFERENCE.index(h.instruction), not h.target.endswith("a"),
                             -int(h.target[3:].rstrip("a"))))
    return rows[0] if rows else None


def why_not(desc: Descriptor, sm: int, instruction: str | None) -> str:
    if desc.sparse or desc.scaling:
        return (f"{desc.name}: no packed {'sparse' if desc.sparse else 'block-scaled'} "
                "harness yet")
    which = f" with {instruction}" if instruction else ""
    return f"{desc.name}: no instruction on sm_{sm}{which} takes these formats at K={desc.k}"


class ProgressBar:
    """``[#####.....] done/total cases (s)`` on stderr, at most every ``every`` seconds."""

    def __init__(self, total: int, label: str, every: float = 1.0) -> None:
        self.total, self.label, self.every = max(total, 1), label, every
        self.started = self.last = time.monotonic()

    def __call__(self, done: int, final: bool = False) -> None:
        now = time.monotonic()
        if final or now - self.last >= self.every:
            self.last = now
            filled = 30 * done // self.total
            print(f"\r  {self.label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} "
                  f"({now - self.started:.1f}s)", end="\n" if final else "", file=sys.stderr,
                  flush=True)


def run_cases(device: Device, h: Harness, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              progress: ProgressBar | None = None) -> np.ndarray:
    """D words of cases ``a[n, K]``, ``b[n, K]``, ``c[n]`` on ``device``, in batches of
    :data:`BATCH_CASES` (one launch each, many diagonals per launch)."""
    from tcspec.hw.selftest import run_diagonal

    out = np.zeros(a.shape[0], dtype=np.uint32)
    for start in range(0, a.shape[0], BATCH_CASES):
        stop = min(start + BATCH_CASES, a.shape[0])
        out[start:stop] = run_diagonal(device, h, a[start:stop], b[start:stop], c[start:stop])
        if progress:
            progress(stop)
    return out


@dataclass
class RunReport:
    ran: dict[str, int]
    not_run: dict[str, list[str]]
    unreadable: list[Unreadable]
    refused: dict[str, list[str]]


def output_line(line: Line, h: Harness, word: int, device: Device) -> dict[str, Any]:
    """The observed line: the inputs, the D word in ``expected``, and its provenance. Where
    the row computes an architecture datapath on this device (``catalog_datapath(h, sm)``),
    the line names that datapath (:func:`arch_line`), not the input line's."""
    raw = line.raw
    desc = datapath_descriptor(h, device.sm)
    if isinstance(desc, ArchDescriptor):
        return arch_line(desc, h, line.a, line.b, line.c, word, device.provenance,
                         name=raw.get("name") or line.label, input=line.label,
                         input_datapath=line.desc.name)
    return {"datapath": line.desc.name, "descriptor": line.desc.fields(), "a": line.a,
            "b": line.b, "c": line.c, "scale_a": raw.get("scale_a"), "scale_b": raw.get("scale_b"),
            "sparse_metadata": raw.get("sparse_metadata"), "expected": word,
            "expected_hex": hex_word(word, line.desc.d_type), "name": raw.get("name") or line.label,
            "input": line.label, "harness": h.name, "provenance": device.provenance}


def run_files(device: Device, paths: Sequence[str | Path], out: str | Path,
              instruction: str | None = None, check_layouts: bool = True,
              force: bool = False) -> RunReport:
    """Run every runnable line of ``paths`` on ``device``; write the observed lines to ``out``."""
    from tcspec.hw.selftest import selftest

    groups: dict[Harness, list[Line]] = defaultdict(list)
    report = RunReport({}, defaultdict(list), [], defaultdict(list))
    for path in paths:
        for item in read_lines(path):
            if isinstance(item, Unreadable):
                report.unreadable.append(item)
                continue
            h = choose(item.desc, device.sm, instruction)
            if h is None:
                report.not_run[why_not(item.desc, device.sm, instruction)].append(item.label)
            else:
                groups[h].append(item)
    with atomic_file(out, force=force) as handle:
        for h, lines in groups.items():
            if check_layouts:
                result = selftest(device, h)
                if not result.passed:
                    report.refused[f"{h.name}: self-test failed ({result.failures[0]})"] = [
                        line.label for line in lines]
                    continue
            a = np.array([line.a for line in lines], dtype=np.uint64)
            b = np.array([line.b for line in lines], dtype=np.uint64)
            c = np.array([line.c for line in lines], dtype=np.uint64)
            words = run_cases(device, h, a, b, c, ProgressBar(len(lines), h.name))
            for line, word in zip(lines, words.tolist()):
                handle.write(json.dumps(output_line(line, h, word, device)) + "\n")
            report.ran[h.name] = len(lines)
    return report


def report_text(report: RunReport, out: str) -> str:
    lines = [f"wrote {out}: {sum(report.ran.values())} observed line(s)"]
    lines += [f"  {count:8} on {name}" for name, count in report.ran.items()]
    for title, table in (("not run", report.not_run), ("refused", report.refused)):
        for reason, labels in table.items():
            shown = ", ".join(labels[:3]) + (f", ... ({len(labels)} lines)" if len(labels) > 3
                                              else "")
            lines.append(f"  {title}: {len(labels)} line(s): {reason}: {shown}")
    for bad in report.unreadable[:10]:
        lines.append(f"  unreadable: {bad.label}: {bad.problem}")
    if len(report.unreadable) > 10:
        lines.append(f"  ... {len(report.unreadable)} unreadable lines in all")
    return "\n".join(lines)


def open_device(ordinal: int, arch: str) -> Device:
    """The CUDA device ``ordinal``; ``--arch sm_NN`` must match it (``auto``: whatever it is)."""
    from tcspec.hw.device import CudaDevice

    device = CudaDevice(ordinal)
    if arch != "auto" and arch.rstrip("a") != f"sm_{device.sm}":
        raise UsageError(f"--arch {arch} but device {ordinal} is sm_{device.sm}")
    return device


def cmd_hw(args: argparse.Namespace) -> int:
    """``tcspec hw``: run, selftest, list, ptx, compare."""
    if args.hw_command == "list":
        return _cmd_list(args)
    if args.hw_command == "ptx":
        return _cmd_ptx(args)
    if args.hw_command == "compare":
        from tcspec.hw.campaign import compare_dir

        return compare_dir(args.directory, args.markdown, args.hardware_words, args.gpu,
                           args.words_per_harness, args.force)
    if args.hw_command == "run":
        from tcspec.outputs import check_targets

        check_targets([args.out], force=args.force)
        check_inputs(args.files)
    device = open_device(args.device, args.arch)
    if args.hw_command == "selftest":
        return _cmd_selftest(device, args)
    instruction = INSTRUCTIONS[args.instruction] if args.instruction else None
    report = run_files(device, args.files, args.out, instruction, not args.no_selftest,
                       args.force)
    print(report_text(report, args.out))
    return 0 if report.ran else 1


def _cmd_selftest(device: Device, args: argparse.Namespace) -> int:
    from tcspec.hw.selftest import selftest

    rows = [h for h in HARNESSES if h.packed and h.runs_on(device.sm) and descriptor_of(h)]
    if args.instruction:
        rows = [h for h in rows if h.instruction == INSTRUCTIONS[args.instruction]]
    failed = 0
    for h in rows:
        result = selftest(device, h)
        failed += not result.passed
        verdict = "pass" if result.passed else "FAIL"
        print(f"{verdict} {h.name}: {result.elements} elements"
              + "".join(f"\n    {f}" for f in result.failures))
    print(f"{len(rows) - failed} of {len(rows)} harnesses pass on {device.provenance['gpu']} "
          f"(sm_{device.sm})")
    return 1 if failed else 0


def check_target(target: str | None) -> None:
    """``--target`` must name a PTX target of the table (a typo lists nothing otherwise)."""
    from tcspec.hw.table import TARGETS

    if target is not None and target not in TARGETS:
        raise UsageError(f"--target {target!r} is not a PTX target of the table (known: "
                         f"{', '.join(TARGETS)})")


def _cmd_list(args: argparse.Namespace) -> int:
    from tcspec.hw.table import catalog_datapath, datapath_source

    check_target(args.target)
    sm = None
    if args.arch:
        digits = args.arch.removeprefix("sm_").rstrip("a")
        if not args.arch.startswith("sm_") or not digits.isdigit():
            raise UsageError(f"--arch {args.arch!r} is not an sm_NN architecture")
        sm = int(digits)
    counts: dict[str, int] = defaultdict(int)
    for h in HARNESSES:
        if (args.target and h.target != args.target) or (sm is not None and not h.runs_on(sm)):
            continue
        source = datapath_source(h, sm)
        counts[source] += 1
        datapath = catalog_datapath(h, sm) or "no datapath"
        packed = "" if h.packed else ", PTX only"
        print(f"{h.name:72} {h.diagonal:4} cases/instr  {datapath} ({source}{packed})")
    where = f" on {args.arch}" if args.arch else " on their own targets"
    print(f"\n{sum(counts.values())} rows{where}: {counts['architecture']} architecture "
          f"datapaths, {counts['tcgen05 fallback']} tcgen05 fallbacks (no architecture "
          f"datapath; K may exceed the row's, upper lanes +0), {counts['none']} with none")
    return 0


def _cmd_ptx(args: argparse.Namespace) -> int:
    from tcspec.hw.ptx import module
    from tcspec.hw.table import TARGETS

    check_target(args.target)
    directory = Path(args.output)
    directory.mkdir(parents=True, exist_ok=True)
    for target in [args.target] if args.target else TARGETS:
        with atomic_file(directory / f"{target}.ptx", force=args.force) as handle:
            handle.write(module(target))
        print(f"wrote {directory / f'{target}.ptx'}")
    return 0
