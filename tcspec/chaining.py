"""Whole-GEMM K chaining: a kernel's K loop as a chain of tcgen05.mma instructions.

Each instruction covers the datapath's K (the logical K when sparse) and
ends in the destination format (SEMANTICS.md sections 2-5), so a long K is
not one wide dot product: the D of one step is the C of the next, and both
the truncation at every step and the order of the K blocks show in the
result. The whole chain of every output runs inside one call of the compiled
kernel (:func:`ref.run.run_chain`: operands read in place, threads over rows
of M, each tile of one row by one block of N columns carrying its D through
every K step); NumPy runs when no kernel does. ``accumulation`` chooses how
partial chains combine (:mod:`tcspec.accumulation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tcspec.accumulation import Accumulation, accumulate, accumulation_of
from tcspec.ref.inputs import (
    API_UNIT_SCALES,
    _array,
    _check_metadata_batch,
    matrix_operands,
    require_scales,
    words_in_place,
)
from tcspec.ref.kernels import check_jobs
from tcspec.ref.run import run_chain
from tcspec.spec.descriptor import Descriptor, resolve


def _order(k_order: Sequence[int] | None, steps: int) -> list[int]:
    if k_order is None:
        return list(range(steps))
    order = [int(step) for step in k_order]
    if sorted(order) != list(range(steps)):
        raise ValueError(f"k_order must list each of the {steps} K blocks 0..{steps - 1} "
                         f"exactly once, got {list(k_order)}")
    return order


def _scales(desc: Descriptor, scales: Any, what: str, rows: int, steps: int
            ) -> np.ndarray | None:
    if scales is None:
        return None
    if desc.scaling is None:
        raise ValueError(f"{what} given, but {desc.name} is not block-scaled")
    blocks = steps * desc.scale_count
    array = words_in_place(scales, what, 8)
    if array.shape != (rows, blocks):
        owner = "A row" if what == "scale_a" else "B column"
        raise ValueError(f"{what} must have shape ({rows}, {blocks}): one scale byte per "
                         f"{owner} and K block of {desc.k // desc.scale_count}, "
                         f"got {array.shape}")
    return array


def _metadata(desc: Descriptor, metadata: Any, rows: int, steps: int) -> np.ndarray | None:
    if metadata is None:
        return None
    shape = (rows, steps, desc.metadata_words)
    if np.ndim(metadata) == 0:
        word = _array(metadata, "sparse_metadata", 32).astype(np.uint32)
        array = np.broadcast_to(word.reshape(1, 1, 1), shape)
    else:
        array = words_in_place(metadata, "sparse_metadata", 32)
        if array.shape != shape:
            raise ValueError(f"sparse_metadata must be one int or have shape {shape} (A row, "
                             f"K step, metadata word), got {array.shape}")
    flat = array.reshape(-1, desc.metadata_words)
    _check_metadata_batch(desc, [flat[:, i] for i in range(flat.shape[1])], flat.shape[0])
    return array


def gemm(a: Any, b: Any, c: Any = None, *, k_order: Sequence[int] | None = None,
         accumulation: str | Accumulation | None = None, scale_a: Any = None,
         scale_b: Any = None, sparse_metadata: Any = None, jobs: int | None = None,
         strict: bool = False, unit_scales: bool = False, **descriptor: Any) -> Any:
    """``D = C + A @ B`` as a chain of instructions: A is M x K, B is K x N, C and D M x N.

    K is any multiple of the instruction's K; step ``s`` multiplies K block
    ``s`` (columns ``s*K_i .. (s+1)*K_i - 1`` of A) and its D is the next
    step's C. ``k_order`` lists the blocks in the order the K loop visits
    them (default ascending); ``accumulation`` (``"chain"``, ``"split-k:S"``,
    ``"promote:N"``, SEMANTICS.md 8) how partial chains over that order
    combine. ``scale_a[M, K / block]`` and ``scale_b[N, K / block]`` hold
    one scale byte per K block of the datapath's scale block;
    ``sparse_metadata`` is one int for every row and step or an array
    ``[M, steps, metadata words]``. ``jobs`` threads (default every core).
    Returns nested lists, or a ``uint32`` array when A or B is a NumPy array
    (F16 D in the low 16 bits; split-K and promotion give F32 words). Words
    are laid out as for :func:`tcspec.mma_dot`; ``strict=True`` refuses likely
    layout mistakes (SEMANTICS.md section 1). A block-scaled datapath needs both
    scales unless ``unit_scales=True``.
    """
    jobs = check_jobs(jobs)
    desc = resolve(**descriptor, sparse=sparse_metadata is not None)
    pattern = accumulation_of(accumulation)
    as_numpy = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
    a_arr, b_arr = matrix_operands(a, b)
    (m, k), n = a_arr.shape, b_arr.shape[1]
    if k == 0 or k % desc.k:
        raise ValueError(f"gemm chains {desc.name} instructions of K={desc.k}: K must be a "
                         f"positive multiple of {desc.k}, got {k}")
    steps = k // desc.k
    order = _order(k_order, steps)
    scales_a = _scales(desc, scale_a, "scale_a", m, steps)
    scales_b = _scales(desc, scale_b, "scale_b", n, steps)
    if not unit_scales:
        require_scales(desc, scale_a, scale_b, API_UNIT_SCALES)
    metadata = _metadata(desc, sparse_metadata, m, steps)
    c_arr = None if c is None else words_in_place(c, "C", 32, (m, n))
    if strict:
        from tcspec.ref.inputs import check_layout_batch

        check_layout_batch(desc, {"a": a_arr, "b": b_arr, "c": c_arr, "scale_a": scales_a,
                                  "scale_b": scales_b})

    def chain(run: Sequence[int], start: np.ndarray | None) -> np.ndarray:
        return run_chain(desc, a_arr, b_arr, start, run, scales_a, scales_b, metadata, jobs)

    d = accumulate(pattern, order, c_arr, chain, desc.d_type)
    return d if as_numpy else d.tolist()
