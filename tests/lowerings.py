"""The lowerings of one specification, each as ``(descriptor, cases) -> result words``.

Adding a datapath to the catalog adds it to every conformance matrix that
iterates over :data:`LOWERINGS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ref.api import run_batch, run_scalar
from ref.compiled import compiled_dot
from smt.formula import reparsed_z3, z3_formula
from spec.catalog import CATALOG, is_specified
from spec.descriptor import Descriptor

Cases = Sequence[Sequence[int]]


def scalar(desc: Descriptor, cases: Cases) -> list[int]:
    return [run_scalar(desc, words) for words in cases]


def compiled(desc: Descriptor, cases: Cases) -> list[int]:
    dot = compiled_dot(desc)
    return [dot(*words) for words in cases]


def numpy_batch(desc: Descriptor, cases: Cases) -> list[int]:
    matrix = np.array(cases, dtype=np.uint64)
    return run_batch(desc, [matrix[:, i] for i in range(matrix.shape[1])], len(cases)).tolist()


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
    "z3": z3_evaluated,
    "smtlib": smtlib_reparsed,
}

SPECIFIED = [name for name, entry in CATALOG.items() if is_specified(entry.descriptor)]
