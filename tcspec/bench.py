"""Throughput of the lowerings on random raw inputs (``tcspec bench``).

Each datapath is measured in one run on every lowering: the interpreted
scalar backend, the compiled scalar lowering, the public ``mma_dot`` (input
checks included), the NumPy batch backend and the compiled C batch kernel,
so the printed ratios compare like with like. The kernel's compile time (or
``cached``) and its load time from the on-disk cache are printed beside it,
and its words are compared with NumPy's on the measured rows.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcspec.api import mma_dot
from tcspec.ref import kernels
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.run import run_numpy, run_scalar
from tcspec.spec.catalog import CATALOG, input_layout, is_specified, lookup
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.sparse import LEGAL_SELECTORS
from tcspec.words import UsageError

DEFAULT_DATAPATHS = ("dense-tf32", "dense-bf16", "dense-e4m3", "mixed-e2m1-e4m3-f16",
                     "i8-s8-s8-wrap", "dense-mx-e4m3", "dense-mxf4", "dense-nvfp4",
                     "sparse-tf32", "sparse-e4m3", "sparse-nvfp4")
KERNEL_ROWS = 131_072
"""Rows per timed kernel run (each run is repeated; the best counts)."""
KERNEL_REPEATS = 10
WARM_UP_SECONDS = 0.5
"""Kernel runs before timing: on the 2-core development machine a kernel starts near half its
steady speed and needs about 0.2 s of vector work to reach it (dense-e4m3: 8.8M dots/s on
the first run, 16.5M from the fifteenth)."""
NUMPY_REPEATS = 3
"""NumPy runs per datapath after a warm-up; the best counts, as for the kernel."""
TARGET_RATIO = 20.0
"""The kernel's target speed-up over NumPy on every datapath (issue #12)."""


def random_columns(desc: Descriptor, rows: int, seed: int = 2026) -> list[np.ndarray]:
    """Uniformly random raw words for every input of ``desc`` (one column per input);
    metadata words are built from random legal selectors."""
    rng = np.random.default_rng(seed)
    columns = []
    for spec in input_layout(desc):
        if spec.role == "metadata":
            legal = np.array(LEGAL_SELECTORS[desc.sparse_chunk[1]], dtype=np.uint64)  # type: ignore[index]
            nibbles = rng.choice(legal, size=(rows, 8))
            columns.append((nibbles << (np.arange(8, dtype=np.uint64) * 4)).sum(axis=1,
                                                                                  dtype=np.uint64))
        else:
            columns.append(rng.integers(0, 1 << spec.width, size=rows, dtype=np.uint64))
    return columns


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _calls_per_second(call: Callable[[int], Any], count: int, seconds: float) -> float:
    """Calls of ``call(i)`` per second over about ``seconds``."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(64):
            call(done % count)
            done += 1
    return _rate(done, time.perf_counter() - start)


def _dot_call(desc: Descriptor, case: Sequence[int]) -> Callable[[], int]:
    """``mma_dot`` of one case, keywords spelled as a user would."""
    k, fields = desc.k, desc.fields()
    a, b, c = list(case[:k]), list(case[k:2 * k]), case[2 * k]
    rest = list(case[2 * k + 1:])
    keywords: dict[str, Any] = {key: value for key, value in fields.items() if value is not None}
    if desc.scaling:
        keywords["scale_a"] = rest[:desc.scale_count]
        keywords["scale_b"] = rest[desc.scale_count:2 * desc.scale_count]
    if desc.sparse:
        keywords["sparse_metadata"] = rest[2 * desc.scale_count if desc.scaling else 0:]
    return lambda: mma_dot(a, b, c, **keywords)


def measure_kernel(desc: Descriptor) -> dict[str, Any]:
    """Kernel dots/s (best of :data:`KERNEL_REPEATS` runs), compile and cache-load seconds,
    and whether its words agree with NumPy's on the measured rows."""
    from tcspec.smt.formula import traced

    out: dict[str, Any] = {"kernel": None, "compile_s": None, "load_s": None, "cached": None,
                           "kernel_agrees": None, "kernel_note": None}
    try:
        kernel = kernels.kernel_for(desc)
    except (kernels.KernelBuildError, ValueError) as exc:
        out["kernel_note"] = str(exc)
        return out
    if kernel is None:
        out["kernel_note"] = "no kernel was built"
        return out
    out["cached"] = not kernel.compiled
    if kernel.compiled:
        out["compile_s"] = kernel.seconds
    kernels.forget_loaded()
    traced.cache_clear()
    start = time.perf_counter()
    kernel = kernels.kernel_for(desc, build=False)
    out["load_s"] = time.perf_counter() - start
    if kernel is None:
        out["kernel_note"] = f"the kernel just built is not in {kernels.cache_dir()}"
        return out
    columns = [np.ascontiguousarray(c, dtype=np.uint32)
               for c in random_columns(desc, KERNEL_ROWS, seed=7)]
    warm = time.perf_counter()
    while time.perf_counter() - warm < WARM_UP_SECONDS:
        kernel(columns, KERNEL_ROWS)
    best = float("inf")
    for _ in range(KERNEL_REPEATS):
        start = time.perf_counter()
        got = kernel(columns, KERNEL_ROWS)
        best = min(best, time.perf_counter() - start)
    out["kernel"] = _rate(KERNEL_ROWS, best)
    check = 2000
    want = run_numpy(desc, [c[:check] for c in columns], check)
    out["kernel_agrees"] = bool((got[:check] == want).all())
    return out


def measure(desc: Descriptor, rows: int, scalar_seconds: float) -> dict[str, Any]:
    """dots/s of each lowering on random inputs, with the kernel's build facts."""
    columns = random_columns(desc, rows)
    cases = [[int(col[i]) for col in columns] for i in range(min(rows, 5000))]
    out: dict[str, Any] = {"datapath": desc.name, "k": desc.k, "rows": rows}

    run_numpy(desc, columns, rows)
    best = float("inf")
    for _ in range(NUMPY_REPEATS):
        start = time.perf_counter()
        run_numpy(desc, columns, rows)
        best = min(best, time.perf_counter() - start)
    out["numpy"] = _rate(rows, best)

    out.update(measure_kernel(desc))
    compiled = compiled_dot(desc)
    out["compiled"] = _calls_per_second(lambda i: compiled(*cases[i]), len(cases),
                                        scalar_seconds)
    calls = [_dot_call(desc, case) for case in cases[:256]]
    out["mma_dot"] = _calls_per_second(lambda i: calls[i](), len(calls), scalar_seconds)
    out["scalar"] = _calls_per_second(lambda i: run_scalar(desc, cases[i]), len(cases),
                                      scalar_seconds / 2)
    return out


def _figure(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(top: float | None, bottom: float | None) -> str:
    return "-" if top is None or not bottom else f"{top / bottom:.1f}x"


MARKDOWN_HEADER = (
    "| datapath | K | interpreted scalar | compiled scalar | `mma_dot` (checks included) | NumPy "
    "| C kernel | kernel / NumPy | first compile s | cache load s |\n"
    "|---|---|---|---|---|---|---|---|---|---|")


def markdown_row(r: dict[str, Any]) -> str:
    """One throughput table row (dots/s with thousands separators)."""
    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"

    compile_s = "cached" if r["cached"] else _figure(r["compile_s"], 2)
    return (f"| {r['datapath']} | {r['k']} | {rate(r['scalar'])} | {rate(r['compiled'])} | "
            f"{rate(r['mma_dot'])} | {rate(r['numpy'])} | {rate(r['kernel'])} | "
            f"{_ratio(r['kernel'], r['numpy'])} | {compile_s} | {_figure(r['load_s'], 3)} |")


def run_benchmarks(names: Sequence[str] | None, rows: int, scalar_seconds: float,
                   as_json: bool = False, markdown: bool = False) -> list[dict[str, Any]]:
    """Measure ``names`` (default :data:`DEFAULT_DATAPATHS`); print a table, docs/benchmarks.md's
    Markdown table, or JSON."""
    results = []
    if markdown:
        print(MARKDOWN_HEADER, flush=True)
    elif not as_json:
        print(f"{'datapath':22} {'K':>3} {'scalar':>8} {'compiled':>9} {'mma_dot':>9} "
              f"{'numpy':>9} {'kernel':>11} {'k/numpy':>8} {'k/compiled':>10} "
              f"{'compile s':>9} {'load s':>7}")
    for name in names or DEFAULT_DATAPATHS:
        desc = lookup(name).descriptor
        if not is_specified(desc):
            if not as_json:
                print(f"{desc.name:22} not yet specified")
            continue
        r = measure(desc, rows, scalar_seconds)
        results.append(r)
        if markdown:
            print(markdown_row(r), flush=True)
        if as_json or markdown:
            continue
        compile_s = "cached" if r["cached"] else _figure(r["compile_s"], 2)
        flag = "" if r["kernel_agrees"] in (True, None) else "  KERNEL DISAGREES WITH NUMPY"
        print(f"{desc.name:22} {desc.k:>3} {r['scalar']:>8.0f} {r['compiled']:>9.0f} "
              f"{r['mma_dot']:>9.0f} {r['numpy']:>9.0f} {_figure(r['kernel']):>11} "
              f"{_ratio(r['kernel'], r['numpy']):>8} {_ratio(r['kernel'], r['compiled']):>10} "
              f"{compile_s:>9} {_figure(r['load_s'], 3):>7}{flag}", flush=True)
        if r["kernel_note"]:
            print(f"    kernel: {r['kernel_note']}")
    if as_json:
        print(json.dumps(results, indent=1))
    elif markdown:
        summary = ratio_summary(results)
        if summary:
            print(f"\n{summary}")
    else:
        print(f"(dots/s; NumPy best of {NUMPY_REPEATS} runs on a batch of {rows} rows after one "
              f"warm-up run, kernel best of {KERNEL_REPEATS} runs of {KERNEL_ROWS} rows after "
              f"{WARM_UP_SECONDS:g} s of warm-up, one core; mma_dot is the public call, checks "
              "included)")
        summary = ratio_summary(results)
        if summary:
            print(summary)
    return results


def ratio_summary(results: Sequence[dict[str, Any]]) -> str | None:
    """One line: on how many datapaths the kernel reaches :data:`TARGET_RATIO` x NumPy, the
    median and the lowest ratios."""
    ratios = sorted((r["kernel"] / r["numpy"], r["datapath"]) for r in results
                    if r.get("kernel") and r.get("numpy"))
    if not ratios:
        return None
    met = sum(ratio >= TARGET_RATIO for ratio, _ in ratios)
    median = ratios[len(ratios) // 2][0]
    lowest = ", ".join(f"{name} {ratio:.1f}x" for ratio, name in ratios[:3])
    return (f"kernel >= {TARGET_RATIO:.0f}x NumPy on {met} of {len(ratios)} datapaths; median "
            f"{median:.1f}x; lowest: {lowest}")


def cmd_bench(args: argparse.Namespace) -> int:
    """``tcspec bench``: the throughput of every lowering side by side."""
    if args.rows < 1:
        raise UsageError(f"--rows must be at least 1, got {args.rows}")
    if args.all and args.datapath:
        raise UsageError("give --all or --datapath, not both")
    names = list(CATALOG) if args.all else args.datapath or None
    if args.json and args.markdown:
        raise UsageError("give --json or --markdown, not both")
    if args.api:
        from tcspec.bench_api import run_api_benchmarks

        try:
            shape = tuple(int(part) for part in args.shape.split(","))
        except ValueError:
            shape = ()
        if len(shape) != 3 or min(shape) < 1 or args.repeats < 1:
            raise UsageError(f"--shape must be M,N,K of positive ints and --repeats at least "
                             f"1, got {args.shape!r} and {args.repeats}")
        run_api_benchmarks(names, shape, args.repeats, as_json=args.json,  # type: ignore[arg-type]
                           markdown=args.markdown)
        return 0
    run_benchmarks(names, args.rows, args.scalar_seconds, args.json, args.markdown)
    return 0
