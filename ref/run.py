"""The specification run on checked input words or columns: scalar, NumPy, the fastest.

The words and columns are already checked (:mod:`ref.inputs`) and in
``input_layout(desc)`` order. :func:`run_rows` and :func:`run_chain` take
operand arrays as they are (row-major ``[N, K]`` rows, or ``[M, K] x [K, N]``
matrices chained over K) and run the compiled kernel on them in place
(:meth:`ref.kernels.Kernel.gemm`), NumPy when no kernel runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tcspec.ref.batch import NUMPY
from tcspec.ref.inputs import UNIT_SCALE
from tcspec.ref.kernels import GROUP_ROLES, Operand, fast_kernel
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
    return NUMPY.values(result, rows).astype(np.uint64 if result.width > 32 else np.uint32)


def _rows(array: np.ndarray | None, lanes: int) -> np.ndarray | None:
    """``array`` as ``[N, lanes]`` (a 1-D array of lanes or a scalar broadcast to every row)."""
    if array is None or lanes == 0:
        return None
    array = np.asarray(array)
    if array.ndim == 0:
        array = array.reshape(1)
    return array[None, :lanes] if array.ndim == 1 else array[:, :lanes]


def row_operands(groups: Sequence[np.ndarray | None]) -> list[Operand]:
    """Kernel operands of ``[N, lanes]`` groups (:data:`ref.kernels.GROUP_ROLES` order): dot
    ``j`` reads row ``j``."""
    return [Operand(None) if g is None else Operand(g, rj=g.strides[0], cl=g.strides[1])
            for g in groups]


def layout_groups(desc: Descriptor, matrix: np.ndarray) -> list[np.ndarray | None]:
    """Views of rows of layout-ordered words ``matrix[N, inputs]`` as the operand groups
    (:data:`ref.kernels.GROUP_ROLES` order; None where the datapath has none)."""
    roles = [spec.role for spec in input_layout(desc)]
    out: list[np.ndarray | None] = []
    for role in GROUP_ROLES:
        where = [j for j, name in enumerate(roles) if name == role]
        out.append(matrix[:, where[0]:where[-1] + 1] if where else None)
    return out


def run_rows(desc: Descriptor, a: np.ndarray, b: np.ndarray, c: np.ndarray,
             scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None,
             metadata: np.ndarray | None = None, jobs: int | None = None) -> np.ndarray:
    """Result words ``uint32[N]`` of checked operand arrays read in place: ``a``/``b``
    ``[N, K]``, ``c`` ``[N]`` (or a scalar), scales ``[N, >=blocks]`` (or one row for every
    dot; None: unit scales), metadata ``[N, >=words]`` or one row. ``jobs`` threads
    (default every core)."""
    rows = a.shape[0]
    groups = [a, b, np.asarray(c).reshape(-1, 1) if np.ndim(c) else np.asarray(c).reshape(1, 1),
              _rows(scale_a, desc.scale_count), _rows(scale_b, desc.scale_count),
              _rows(metadata, desc.metadata_words)]
    if desc.scaling is not None:
        unit = np.full((1, desc.scale_count), UNIT_SCALE[desc.scaling], dtype=np.uint8)
        groups[3] = unit if groups[3] is None else groups[3]
        groups[4] = unit if groups[4] is None else groups[4]
    groups = [g if g is None or g.shape[0] == rows else np.broadcast_to(g, (rows, g.shape[1]))
              for g in groups]
    kernel = fast_kernel(desc, rows)
    if kernel is not None and kernel.strided is not None:
        out = np.empty((1, rows), dtype=np.uint32)
        kernel.gemm(row_operands(groups), out, [0], jobs)
        return out[0]
    columns = [g[:, i] for g in groups if g is not None for i in range(g.shape[1])]
    return run_numpy(desc, columns, rows)


NUMPY_CHAIN_WORDS = 1 << 22
"""Operand words per NumPy step of :func:`run_chain` (rows of M are taken in slices)."""


def run_chain(desc: Descriptor, a: np.ndarray, b: np.ndarray, c: np.ndarray | None,
              steps: Sequence[int], scale_a: np.ndarray | None = None,
              scale_b: np.ndarray | None = None, metadata: np.ndarray | None = None,
              jobs: int | None = None) -> np.ndarray:
    """``D[M, N]`` (``uint32``) of the chain of K ``steps`` over checked matrices read in
    place: ``a[M, K]``, ``b[K, N]``, ``c[M, N]`` (None: +0), ``scale_a[M, K/block]``,
    ``scale_b[N, K/block]``, ``metadata[M, steps, words]`` (SEMANTICS.md sections 2-5 for
    one step; step ``s`` takes K block ``s``; the D of one step is the C of the next).
    Each kernel call runs every step of its rows (:meth:`ref.kernels.Kernel.gemm`)."""
    (m, _), n = a.shape, b.shape[1]
    k, per_step = desc.k, desc.scale_count
    if desc.scaling is not None:
        count = a.shape[1] // k * per_step
        unit = UNIT_SCALE[desc.scaling]
        one = np.full((1, 1), unit, np.uint8)
        scale_a = np.broadcast_to(one, (m, count)) if scale_a is None else scale_a
        scale_b = np.broadcast_to(one, (n, count)) if scale_b is None else scale_b
    kernel = fast_kernel(desc, m * n * max(len(steps), 1))
    if kernel is not None and kernel.strided is not None:
        ops = [Operand(a, ri=a.strides[0], rs=k * a.strides[1], cl=a.strides[1]),
               Operand(b, rj=b.strides[1], rs=k * b.strides[0], cl=b.strides[0]),
               Operand(c, ri=c.strides[0], rj=c.strides[1]) if c is not None else Operand(None),
               Operand(None), Operand(None), Operand(None)]
        if scale_a is not None and scale_b is not None:
            ops[3] = Operand(scale_a, ri=scale_a.strides[0], rs=per_step * scale_a.strides[1],
                             cl=scale_a.strides[1])
            ops[4] = Operand(scale_b, rj=scale_b.strides[0], rs=per_step * scale_b.strides[1],
                             cl=scale_b.strides[1])
        if metadata is not None:
            ops[5] = Operand(metadata, ri=metadata.strides[0], rs=metadata.strides[1],
                             cl=metadata.strides[2])
        return kernel.gemm(ops, np.empty((m, n), dtype=np.uint32), steps, jobs)
    d = np.zeros((m, n), dtype=np.uint32) if c is None else np.array(c, dtype=np.uint32)
    chunk = max(1, NUMPY_CHAIN_WORDS // max(1, n * k))
    for first in range(0, m, chunk):
        rows = slice(first, min(m, first + chunk))
        count = rows.stop - rows.start
        for s in steps:
            lanes = slice(s * k, (s + 1) * k)
            columns = [np.repeat(a[rows, lanes], n, axis=0), np.tile(b[lanes, :].T, (count, 1)),
                       d[rows].reshape(-1, 1)]
            if scale_a is not None and scale_b is not None:
                blocks = slice(s * per_step, (s + 1) * per_step)
                columns += [np.repeat(scale_a[rows, blocks], n, axis=0),
                            np.tile(scale_b[:, blocks], (count, 1))]
            if metadata is not None:
                columns.append(np.repeat(metadata[rows, s, :desc.metadata_words], n, axis=0))
            flat = [g[:, i] for g in columns for i in range(g.shape[1])]
            d[rows] = run_numpy(desc, flat, count * n).reshape(count, n)
    return d
