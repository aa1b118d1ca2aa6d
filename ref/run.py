"""The specification run on checked input words or columns: scalar, NumPy, the fastest.

The words and columns are already checked (:mod:`ref.inputs`) and in
``input_layout(desc)`` order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tcspec.ref.batch import NUMPY
from tcspec.ref.kernels import fast_kernel
from tcspec.spec.catalog import build_dot, input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.scalar import SCALAR


def run_scalar(desc: Descriptor, words: Sequence[int]) -> int:
    """The specification on the scalar backend for checked input words."""
    layout = input_layout(desc)
    values = [SCALAR.const(w, spec.width) for spec, w in zip(layout, words, strict=True)]
    return SCALAR.value(build_dot(SCALAR, desc, inputs_from(layout, values)))


def run_batch(desc: Descriptor, columns: Sequence[np.ndarray], rows: int) -> np.ndarray:
    """The specification on the fastest lowering for checked input columns: the compiled
    kernel when the run is big enough (:func:`ref.kernels.fast_kernel`), else NumPy."""
    kernel = fast_kernel(desc, rows)
    if kernel is not None:
        return kernel(columns, rows)
    return run_numpy(desc, columns, rows)


def run_numpy(desc: Descriptor, columns: Sequence[np.ndarray], rows: int) -> np.ndarray:
    """The specification on the NumPy backend for checked input columns."""
    if rows == 0:
        return np.zeros(0, dtype=np.uint32)
    layout = input_layout(desc)
    values = [NUMPY.input(col, spec.width) for spec, col in zip(layout, columns, strict=True)]
    result = build_dot(NUMPY, desc, inputs_from(layout, values))
    return NUMPY.values(result, rows).astype(np.uint32)
