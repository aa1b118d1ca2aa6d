"""Throughput of the lowerings on random raw inputs (``tcspec bench``).

Each datapath is measured in one run on the interpreted scalar backend, the
compiled scalar lowering and the NumPy batch backend, so the printed ratios
compare like with like.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ref.api import run_batch, run_scalar
from ref.compiled import compiled_dot
from spec.catalog import input_layout, is_specified, lookup
from spec.descriptor import Descriptor
from spec.sparse import LEGAL_SELECTORS

DEFAULT_DATAPATHS = ("dense-tf32", "dense-bf16", "dense-e4m3", "mixed-e2m1-e4m3-f16",
                     "i8-s8-s8-wrap", "dense-mx-e4m3", "dense-mxf4", "dense-nvfp4",
                     "sparse-tf32", "sparse-e4m3", "sparse-nvfp4")


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


def measure(desc: Descriptor, rows: int, scalar_seconds: float) -> dict[str, float]:
    """dots/s of each lowering on the same random inputs."""
    columns = random_columns(desc, rows)
    cases = [[int(col[i]) for col in columns] for i in range(min(rows, 5000))]
    out: dict[str, float] = {}

    run_batch(desc, [col[:8] for col in columns], 8)
    start = time.perf_counter()
    run_batch(desc, columns, rows)
    out["numpy"] = _rate(rows, time.perf_counter() - start)

    compiled = compiled_dot(desc)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < scalar_seconds and done < len(cases) * 20:
        compiled(*cases[done % len(cases)])
        done += 1
    out["compiled"] = _rate(done, time.perf_counter() - start)

    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < scalar_seconds:
        run_scalar(desc, cases[done % len(cases)])
        done += 1
    out["scalar"] = _rate(done, time.perf_counter() - start)
    return out


def run_benchmarks(names: Sequence[str] | None, rows: int, scalar_seconds: float) -> None:
    print(f"{'datapath':26} {'K':>4} {'scalar':>10} {'compiled':>10} {'numpy':>11}  "
          f"{'compiled/scalar':>15} {'numpy/scalar':>12}   (dots/s; NumPy batch of {rows})")
    for name in names or DEFAULT_DATAPATHS:
        desc = lookup(name).descriptor
        if not is_specified(desc):
            print(f"{desc.name:26} not yet specified")
            continue
        r = measure(desc, rows, scalar_seconds)
        print(f"{desc.name:26} {desc.k:>4} {r['scalar']:>10.0f} {r['compiled']:>10.0f} "
              f"{r['numpy']:>11.0f}  {r['compiled'] / r['scalar']:>14.1f}x "
              f"{r['numpy'] / r['scalar']:>11.1f}x", flush=True)
