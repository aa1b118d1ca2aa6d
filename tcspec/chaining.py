"""Whole-GEMM K chaining: a kernel's K loop as a chain of tcgen05.mma instructions.

Each instruction covers the datapath's K (the logical K when sparse) and
ends in the destination format (SEMANTICS.md sections 2-5), so a long K is
not one wide dot product: the D of one step is the C of the next, and both
the truncation at every step and the order of the K blocks show in the
result. Every step runs the NumPy batch lowering through :func:`tcspec.api.mma`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tcspec.api import mma
from tcspec.ref.inputs import _array, matrix_operands
from tcspec.spec.descriptor import Descriptor, resolve


def _order(k_order: Sequence[int] | None, steps: int) -> list[int]:
    if k_order is None:
        return list(range(steps))
    order = [int(step) for step in k_order]
    if sorted(order) != list(range(steps)):
        raise ValueError(f"k_order must list each of the {steps} K blocks 0..{steps - 1} "
                         f"exactly once, got {list(k_order)}")
    return order


def _step_scales(desc: Descriptor, scales: Any, what: str, rows: int, steps: int
                 ) -> list[np.ndarray | None]:
    if scales is None:
        return [None] * steps
    if desc.scaling is None:
        raise ValueError(f"{what} given, but {desc.name} is not block-scaled")
    per_step = desc.scale_count
    array = _array(scales, what, 8)
    blocks = steps * per_step
    if array.shape != (rows, blocks):
        owner = "A row" if what == "scale_a" else "B column"
        raise ValueError(f"{what} must have shape ({rows}, {blocks}): one scale byte per "
                         f"{owner} and K block of {desc.k // per_step}, got {array.shape}")
    return [array[:, s * per_step:(s + 1) * per_step] for s in range(steps)]


def _step_metadata(desc: Descriptor, metadata: Any, rows: int, steps: int) -> list[Any]:
    if metadata is None or np.ndim(metadata) == 0:
        return [metadata] * steps
    array = _array(metadata, "sparse_metadata", 32)
    shape = (rows, steps, desc.metadata_words)
    if array.shape != shape:
        raise ValueError(f"sparse_metadata must be one int or have shape {shape} (A row, "
                         f"K step, metadata word), got {array.shape}")
    return [array[:, s, :] for s in range(steps)]


def gemm(a: Any, b: Any, c: Any = None, *, k_order: Sequence[int] | None = None,
         scale_a: Any = None, scale_b: Any = None, sparse_metadata: Any = None,
         **descriptor: Any) -> Any:
    """``D = C + A @ B`` as a chain of instructions: A is M x K, B is K x N, C and D M x N.

    K is any multiple of the instruction's K; step ``s`` multiplies K block
    ``s`` (columns ``s*K_i .. (s+1)*K_i - 1`` of A) and its D is the next
    step's C. ``k_order`` lists the blocks in the order the K loop visits
    them (default ascending). ``scale_a[M, K / block]`` and
    ``scale_b[N, K / block]`` hold one scale byte per K block of the
    datapath's scale block; ``sparse_metadata`` is one int for every row and
    step or an array ``[M, steps, metadata words]``. Returns nested lists,
    or a ``uint32`` array when A or B is a NumPy array (F16 D in the low 16
    bits).
    """
    desc = resolve(**descriptor, sparse=sparse_metadata is not None)
    as_numpy = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
    a_arr, b_arr = matrix_operands(a, b)
    (m, k), n = a_arr.shape, b_arr.shape[1]
    if k == 0 or k % desc.k:
        raise ValueError(f"gemm chains {desc.name} instructions of K={desc.k}: K must be a "
                         f"positive multiple of {desc.k}, got {k}")
    steps = k // desc.k
    order = _order(k_order, steps)
    scales_a = _step_scales(desc, scale_a, "scale_a", m, steps)
    scales_b = _step_scales(desc, scale_b, "scale_b", n, steps)
    metadata = _step_metadata(desc, sparse_metadata, m, steps)
    d = np.zeros((m, n), dtype=np.uint32) if c is None else _array(c, "C", 32, (m, n))
    for step in order:
        lanes = slice(step * desc.k, (step + 1) * desc.k)
        d = mma(a_arr[:, lanes], b_arr[lanes, :], d, scale_a=scales_a[step],
                scale_b=scales_b[step], sparse_metadata=metadata[step], **descriptor)
    d = np.asarray(d, dtype=np.uint32)
    return d if as_numpy else d.tolist()
