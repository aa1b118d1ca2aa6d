"""Throughput of the calls users make, beside the kernel they reach (``tcspec bench --api``).

For each datapath (dense-tf32, dense-e4m3, dense-nvfp4) and core count, in
one run: ``evaluate`` on row-major ``uint32[N, K]`` arrays, ``gemm`` on an
M x N x K problem of random words, and ``matmul`` from float32 on the same
shape (quantisation included). Beside each, the kernel-only rate: the same C
entry point (:meth:`ref.kernels.Kernel.gemm`) with the same operand strides
and thread count, on buffers built before the clock starts. ``matmul`` is
set beside the gemm kernel figure (the kernel is branch-free: its speed does
not depend on the words). Every figure is the best of ``repeats`` runs, so
a loaded machine shows its quietest moment, and carries the process CPU
seconds per wall second of that run: on 2 threads a value near 1 means the
second core was busy with other work. The peak RSS of one e4m3 gemm is
measured in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcspec.api import evaluate
from tcspec.chaining import gemm
from tcspec.floats import matmul
from tcspec.ref import kernels
from tcspec.ref.kernels import Operand
from tcspec.spec.catalog import lookup
from tcspec.spec.descriptor import Descriptor

API_DATAPATHS = ("dense-tf32", "dense-e4m3", "dense-nvfp4")
SHAPE = (512, 512, 4096)
EVALUATE_ROWS = {"dense-tf32": 1 << 20, "dense-e4m3": 1 << 17, "dense-nvfp4": 1 << 16}
TARGETS = {"evaluate": 0.70, "gemm": 0.70, "matmul": 0.50}
"""Least API / kernel-only ratio on one core (issue #18)."""
SCALING_TARGET = 1.7
"""Least 2-core / 1-core ratio of the API rate."""
RSS_LIMIT = 1 << 30


class _Timer:
    """Best-of-N wall seconds, and the process CPU seconds (all threads) of that best run:
    their ratio says how many cores the run really had."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}

    def best(self, key: str, call: Callable[[], Any], repeats: int) -> float:
        best, cpu = float("inf"), 0.0
        for _ in range(repeats):
            start, used = time.perf_counter(), time.process_time()
            call()
            wall = time.perf_counter() - start
            if wall < best:
                best, cpu = wall, time.process_time() - used
        self.cpu[key] = cpu / best if best > 0 else 0.0
        return best


def _fields(desc: Descriptor) -> dict[str, Any]:
    return {key: value for key, value in desc.fields().items() if value is not None}


def _words(rng: np.random.Generator, desc: Descriptor, shape: tuple[int, ...], fmt: str
           ) -> np.ndarray:
    """Random finite-heavy words: uniform raw bits of the operand's container."""
    bits = {"tf32": 32, "e4m3": 8, "e2m1": 4}.get(fmt, 32)
    return rng.integers(0, 1 << bits, size=shape, dtype=np.uint64).astype(np.uint32)


def _scales(rng: np.random.Generator, desc: Descriptor, rows: int, blocks: int
            ) -> np.ndarray | None:
    if desc.scaling is None:
        return None
    return rng.integers(0x30, 0x40, size=(rows, blocks), dtype=np.uint64).astype(np.uint8)


def measure_evaluate(desc: Descriptor, rows: int, jobs: int, repeats: int) -> dict[str, Any]:
    timer = _Timer()
    rng = np.random.default_rng(1)
    a = _words(rng, desc, (rows, desc.k), desc.a_format)
    b = _words(rng, desc, (rows, desc.k), desc.b_format)
    c = rng.integers(0, 1 << 32, size=rows, dtype=np.uint64).astype(np.uint32)
    sa, sb = (_scales(rng, desc, rows, desc.scale_count) for _ in range(2))
    kernel = kernels.kernel_for(desc)
    assert kernel is not None
    groups = [a, b, c.reshape(-1, 1), sa, sb, None]
    ops = [Operand(None) if g is None else Operand(g, rj=g.strides[0], cl=g.strides[1])
           for g in groups]
    out = np.empty((1, rows), dtype=np.uint32)
    call = dict(scale_a=sa, scale_b=sb, jobs=jobs)
    got = evaluate(desc, a, b, c, **call)
    kernel.gemm(ops, out, [0], jobs)
    assert (got == out[0]).all()
    api = rows / timer.best("api", lambda: evaluate(desc, a, b, c, **call), repeats)
    only = rows / timer.best("kernel", lambda: kernel.gemm(ops, out, [0], jobs), repeats)
    return {"path": "evaluate", "shape": f"N={rows}", "api": api, "kernel": only,
            "api_cores_used": timer.cpu["api"], "kernel_cores_used": timer.cpu["kernel"]}


def measure_gemm(desc: Descriptor, shape: tuple[int, int, int], jobs: int, repeats: int
                 ) -> list[dict[str, Any]]:
    m, n, k = shape
    steps = k // desc.k
    timer = _Timer()
    rng = np.random.default_rng(2)
    a = _words(rng, desc, (m, k), desc.a_format)
    b = _words(rng, desc, (k, n), desc.b_format)
    blocks = steps * desc.scale_count
    sa, sb = _scales(rng, desc, m, blocks), _scales(rng, desc, n, blocks)
    kernel = kernels.kernel_for(desc)
    assert kernel is not None
    per = desc.scale_count
    ops = [Operand(a, ri=a.strides[0], rs=desc.k * a.strides[1], cl=a.strides[1]),
           Operand(b, rj=b.strides[1], rs=desc.k * b.strides[0], cl=b.strides[0]),
           Operand(None), Operand(None), Operand(None), Operand(None)]
    if sa is not None and sb is not None:
        ops[3] = Operand(sa, ri=sa.strides[0], rs=per * sa.strides[1], cl=sa.strides[1])
        ops[4] = Operand(sb, rj=sb.strides[0], rs=per * sb.strides[1], cl=sb.strides[1])
    out = np.empty((m, n), dtype=np.uint32)
    order = list(range(steps))
    dots = m * n * steps
    fields = _fields(desc)
    only = dots / timer.best("kernel", lambda: kernel.gemm(ops, out, order, jobs), repeats)
    api = dots / timer.best("api", lambda: gemm(a, b, scale_a=sa, scale_b=sb, jobs=jobs,
                                                **fields), repeats)
    fa = rng.standard_normal((m, k)).astype(np.float32)
    fb = rng.standard_normal((k, n)).astype(np.float32)
    keywords = {"a_format": desc.a_format, "scaling": desc.scaling, "jobs": jobs}
    floats = dots / timer.best("matmul", lambda: matmul(fa, fb, **keywords), repeats)
    label = f"{m}x{n}x{k}"
    used = {"kernel_cores_used": timer.cpu["kernel"]}
    return [{"path": "gemm", "shape": label, "api": api, "kernel": only,
             "api_cores_used": timer.cpu["api"], **used},
            {"path": "matmul (float32)", "shape": label, "api": floats, "kernel": only,
             "api_cores_used": timer.cpu["matmul"], **used}]


def gemm_peak_rss(shape: tuple[int, int, int]) -> int | None:
    """Peak resident bytes of a fresh process running one dense-e4m3 ``gemm`` of ``shape``
    on uint32 words (Linux ``ru_maxrss``)."""
    m, n, k = shape
    code = ("import resource, numpy as np; from tcspec import gemm; "
            "r = np.random.default_rng(0); "
            f"a = r.integers(0, 256, ({m}, {k}), dtype=np.uint32); "
            f"b = r.integers(0, 256, ({k}, {n}), dtype=np.uint32); "
            "gemm(a, b, a_format='e4m3'); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    env = {**os.environ, "TCSPEC_KERNELS": "always"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return int(done.stdout.split()[-1]) * 1024


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def run_api_benchmarks(names: Sequence[str] | None, shape: tuple[int, int, int],
                       repeats: int, cores: Sequence[int] = (1, 2), as_json: bool = False,
                       markdown: bool = False) -> list[dict[str, Any]]:
    """Measure and print the ``--api`` table (or JSON, or docs/benchmarks.md's Markdown)."""
    rows: list[dict[str, Any]] = []
    load_before = _load()
    for name in names or API_DATAPATHS:
        desc = lookup(name).descriptor
        kernels.kernel_for(desc)
        for jobs in cores:
            found = [measure_evaluate(desc, EVALUATE_ROWS.get(desc.name, 1 << 17), jobs,
                                      max(repeats, 3))]
            found += measure_gemm(desc, shape, jobs, repeats)
            for r in found:
                r.update(datapath=desc.name, cores=jobs)
                rows.append(r)
                if not (as_json or markdown):
                    print(_line(r, rows), flush=True)
    rss = gemm_peak_rss(shape)
    summary = {"load_before": load_before, "load_after": _load(), "repeats": repeats,
               "gemm_e4m3_peak_rss": rss}
    if as_json:
        print(json.dumps({"rows": rows, **summary}, indent=1))
        return rows
    if markdown:
        print(MARKDOWN_HEADER)
        for r in rows:
            print(_markdown(r, rows))
    rss_text = "-" if rss is None else f"{rss / 2**20:.0f} MiB"
    verdict = "" if rss is None else ("  (< 1 GiB)" if rss < RSS_LIMIT else "  (OVER 1 GiB)")
    print(f"\ngemm dense-e4m3 {shape[0]}x{shape[1]}x{shape[2]} peak RSS: {rss_text}{verdict}")
    print(f"(dots/s, best of {repeats} runs ({max(repeats, 3)} for evaluate); kernel = the "
          f"same C entry point on buffers built before the clock, same threads; cpu = process "
          f"CPU seconds / wall seconds of that best run, the cores it really had; load "
          f"average {load_before} before, {summary['load_after']} after)")
    return rows


def _scaling(r: dict[str, Any], rows: Sequence[dict[str, Any]]) -> float | None:
    if r["cores"] == 1:
        return None
    one = [o for o in rows if o["cores"] == 1 and o["path"] == r["path"]
           and o["datapath"] == r["datapath"]]
    return r["api"] / one[0]["api"] if one else None


def _per_cpu(r: dict[str, Any]) -> float:
    """API / kernel in dots per CPU second: the share of the work that is the kernel's,
    whatever the machine's load left the process."""
    if not r["api_cores_used"] or not r["kernel_cores_used"]:
        return 0.0
    return (r["api"] / r["api_cores_used"]) / (r["kernel"] / r["kernel_cores_used"])


def _line(r: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    ratio = r["api"] / r["kernel"]
    speedup = _scaling(r, rows)
    target = TARGETS.get(r["path"].split()[0], 0.0)
    mark = "" if r["cores"] != 1 or ratio >= target else f"  (< {target:.0%})"
    if speedup is not None and speedup < SCALING_TARGET:
        mark += f"  (< {SCALING_TARGET}x)"
    extra = f"  per cpu-s {_per_cpu(r):.0%}"
    extra += "" if speedup is None else f"  x{speedup:.2f} vs 1 core"
    return (f"{r['datapath']:12} {r['path']:17} {r['shape']:13} {r['cores']} core(s) "
            f"api {r['api']:>12,.0f} (cpu {r['api_cores_used']:.2f})  kernel "
            f"{r['kernel']:>12,.0f} (cpu {r['kernel_cores_used']:.2f})  {ratio:6.1%}{extra}"
            f"{mark}")


MARKDOWN_HEADER = ("| datapath | call | shape | threads | API dots/s | kernel dots/s | API / "
                   "kernel | per CPU-s | API 2 / 1 thread | cores the API run had |\n"
                   "|---|---|---|---|---|---|---|---|---|---|")


def _markdown(r: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    speedup = _scaling(r, rows)
    return (f"| {r['datapath']} | {r['path']} | {r['shape']} | {r['cores']} | "
            f"{r['api']:,.0f} | {r['kernel']:,.0f} | {r['api'] / r['kernel']:.0%} | "
            f"{_per_cpu(r):.0%} | "
            f"{'-' if speedup is None else f'{speedup:.2f}x'} | {r['api_cores_used']:.2f} |")
