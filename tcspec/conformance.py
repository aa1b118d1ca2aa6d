"""One-source conformance: every lowering of the specification on the same inputs.

The lowerings are the interpreted scalar backend, the compiled scalar
lowering, the NumPy batch backend, the compiled C batch kernel on columns and
on row-major rows read in place (where a C compiler is found), the Z3
formula evaluated on the inputs, and the SMT-LIB2 text re-parsed by Z3 and
evaluated. ``tcspec conform`` and the test suite both run them through
:func:`compare`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcspec.ref.compiled import compiled_dot
from tcspec.ref.kernels import compiler, kernel_for
from tcspec.ref.run import layout_groups, row_operands, run_numpy, run_scalar
from tcspec.smt.formula import reparsed_z3, z3_formula
from tcspec.spec.catalog import CATALOG, lookup
from tcspec.spec.descriptor import Descriptor
from tcspec.words import EXIT_MISMATCH, UsageError

Cases = Sequence[Sequence[int]]


def scalar(desc: Descriptor, cases: Cases) -> list[int]:
    return [run_scalar(desc, words) for words in cases]


def compiled(desc: Descriptor, cases: Cases) -> list[int]:
    dot = compiled_dot(desc)
    return [dot(*words) for words in cases]


def numpy_batch(desc: Descriptor, cases: Cases) -> list[int]:
    matrix = np.array(cases, dtype=np.uint64).reshape(len(cases), -1)
    return run_numpy(desc, [matrix[:, i] for i in range(matrix.shape[1])], len(cases)).tolist()


def c_kernel(desc: Descriptor, cases: Cases) -> list[int]:
    kernel = kernel_for(desc)
    matrix = np.array(cases, dtype=np.uint32).reshape(len(cases), -1)
    return kernel([matrix[:, i] for i in range(matrix.shape[1])], len(cases)).tolist()  # type: ignore[misc]


def c_kernel_rows(desc: Descriptor, cases: Cases) -> list[int]:
    """The kernel's strided entry point on the cases as one row-major matrix, in place."""
    kernel = kernel_for(desc)
    matrix = np.array(cases, dtype=np.uint32).reshape(len(cases), -1)
    out = np.empty((1, len(cases)), dtype=np.uint32)
    kernel.gemm(row_operands(layout_groups(desc, matrix)), out, [0])  # type: ignore[union-attr]
    return out[0].tolist()


def z3_evaluated(desc: Descriptor, cases: Cases) -> list[int]:
    formula = z3_formula(desc)
    return [formula.evaluate(words) for words in cases]


def smtlib_reparsed(desc: Descriptor, cases: Cases) -> list[int]:
    formula = reparsed_z3(desc)
    return [formula.evaluate(words) for words in cases]


LOWERINGS: dict[str, Callable[[Descriptor, Cases], list[int]]] = {
    "scalar": scalar,
    "compiled": compiled,
    "numpy": numpy_batch,
    **({"kernel": c_kernel, "kernel-rows": c_kernel_rows} if compiler() else {}),
    "z3": z3_evaluated,
    "smtlib": smtlib_reparsed,
}
"""Every lowering, by name; the first is the reference the others are compared with.
The C kernel (its columnar and its strided entry point) joins where a C compiler is found."""


@dataclass
class Comparison:
    """The words each lowering returned for the same cases, and where they differ."""

    results: dict[str, list[int]]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def reference(self) -> list[int]:
        return self.results["scalar"]

    def disagreements(self) -> list[tuple[int, dict[str, int]]]:
        """``(case index, {lowering: word})`` for every case where lowerings differ."""
        out = []
        for i, want in enumerate(self.reference):
            words = {name: got[i] for name, got in self.results.items()}
            if any(w != want for w in words.values()):
                out.append((i, words))
        return out


def compare(desc: Descriptor, cases: Cases,
            lowerings: dict[str, Callable[[Descriptor, Cases], list[int]]] | None = None
            ) -> Comparison:
    """Run every lowering (or those given) on ``cases`` (checked input words in
    ``input_layout`` order)."""
    results, seconds = {}, {}
    for name, lower in (LOWERINGS if lowerings is None else lowerings).items():
        start = time.perf_counter()
        results[name] = lower(desc, cases)
        seconds[name] = time.perf_counter() - start
    return Comparison(results, seconds)


def random_cases(desc: Descriptor, count: int, seed: int) -> list[list[int]]:
    """``count`` random raw input word lists (legal metadata), reproducible from ``seed``."""
    from tcspec.bench import random_columns

    columns = random_columns(desc, count, seed)
    return [[int(col[i]) for col in columns] for i in range(count)]


def reference_records(desc: Descriptor) -> list[Any]:
    """The vendored vectors of ``desc``: its reference file, or its architecture (MMA-Sim)
    file (SEMANTICS.md section 10); empty when it has neither."""
    from tcspec.ref.vectorfiles import REFERENCE_DIR, Record, arch_vector_files, read_vectors

    path = REFERENCE_DIR / f"{desc.name}.jsonl.gz"
    if not path.exists():
        path = arch_vector_files().get(desc.name, path)
    if not path.exists():
        return []
    return [r for r in read_vectors(path) if isinstance(r, Record)]


def reference_cases(desc: Descriptor) -> tuple[list[list[int]], list[int]]:
    """The vendored vectors of ``desc`` (:func:`reference_records`) as words and expected."""
    records = reference_records(desc)
    return [r.words for r in records], [r.expected for r in records]


def run_conformance(names: Sequence[str], count: int, seed: int, reference: bool,
                    emit: Callable[[str], None]) -> bool:
    """Compare every lowering on random (and reference) cases; ``emit`` each result line.

    Returns whether every lowering agreed everywhere (and matched the vectors).
    """
    from tcspec.spec.catalog import lookup

    emit(f"{'datapath':28} {'random':>6} {'vectors':>7}  {'verdict':10} seconds per lowering "
         f"({', '.join(LOWERINGS)})")
    all_good = True
    for name in names:
        desc = lookup(name).descriptor
        cases = random_cases(desc, count, seed)
        records = reference_records(desc) if reference else []
        vectors, expected = [r.words for r in records], [r.expected for r in records]
        comparison = compare(desc, cases + vectors)
        problems = comparison.disagreements()
        wrong = [i for i, record in enumerate(records)
                 if not record.matches(comparison.reference[len(cases) + i])]
        good = not problems and not wrong
        all_good &= good
        times = " ".join(f"{comparison.seconds[n]:.2f}" for n in LOWERINGS)
        emit(f"{desc.name:28} {len(cases):>6} {len(vectors):>7}  "
             f"{'agree' if good else 'DISAGREE':10} {times}")
        for index, words in problems[:3]:
            shown = ", ".join(f"{n}=0x{w:X}" for n, w in words.items())
            emit(f"    case {index}: {shown}; inputs {[hex(w) for w in (cases + vectors)[index]]}")
        for i in wrong[:3]:
            emit(f"    reference vector {i + 1}: expected 0x{expected[i]:X}, "
                 f"got 0x{comparison.reference[len(cases) + i]:X}")
    return all_good


def cmd_conform(args: argparse.Namespace) -> int:
    """``tcspec conform``: every lowering on the same inputs."""
    names = [lookup(n).name for n in args.datapath] if args.datapath else list(CATALOG)
    if args.cases < 0:
        raise UsageError(f"--cases must be at least 0, got {args.cases}")
    good = run_conformance(names, args.cases, args.seed, args.reference,
                           lambda line: print(line, flush=True))
    return 0 if good else EXIT_MISMATCH
