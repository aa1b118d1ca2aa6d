"""The public reference API: ``mma_dot``, ``mma`` and ``evaluate``.

All three check their inputs on the host (raw words are ints in
``[0, 2^32)``, scale bytes in ``[0, 256)``, K matches the datapath, sparse
selectors are legal) and then run the one specification of
:mod:`spec.catalog` on its fastest lowering: ``mma_dot`` on the compiled
scalar lowering, ``mma`` and ``evaluate`` on the NumPy batch backend, and
all three on the compiled C kernel (:mod:`ref.kernels`) once a process has
run enough rows of a datapath to pay for building it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcspec.ref.compiled import compiled_dot
from tcspec.ref.inputs import (
    API_UNIT_SCALES,
    UNIT_SCALE,
    _batch_group,
    _check_metadata_batch,
    _plain_dot_words,
    _resolved,
    check_layout,
    check_layout_batch,
    matrix_operands,
    prepare_dot,
    require_scales,
    words_in_place,
)
from tcspec.ref.kernels import check_jobs, fast_kernel
from tcspec.ref.run import run_chain, run_rows
from tcspec.spec.catalog import descriptor_of
from tcspec.spec.descriptor import Descriptor, resolve

_RECHECK_CALLS = 4096
SCALAR_CALL_ROWS = 10
"""A compiled-Python ``mma_dot`` call costs about as much as this many NumPy rows: calls
count this much towards the kernel thresholds of :func:`ref.kernels.fast_kernel`."""
_DOT_RUNNERS: dict[Descriptor, list[Any]] = {}


def _dot_runner(desc: Descriptor) -> Callable[[array], int]:
    """The scalar runner of ``desc`` (packed words -> result): the compiled Python lowering,
    switched to the C kernel once enough calls have run (the batch row thresholds, each
    call counting :data:`SCALAR_CALL_ROWS` rows: a build after about 20,000 calls)."""
    entry = _DOT_RUNNERS.get(desc)
    if entry is None:
        dot = compiled_dot(desc)
        entry = _DOT_RUNNERS[desc] = [0, lambda words: dot(*words), False]
    entry[0] += 1
    if not entry[2] and entry[0] % _RECHECK_CALLS == 0:
        kernel = fast_kernel(desc, _RECHECK_CALLS * SCALAR_CALL_ROWS)
        if kernel is not None:
            entry[1], entry[2] = kernel.dot, True
    return entry[1]


def mma_dot(a: Sequence[int], b: Sequence[int], c: int = 0, *, a_format: str,
            b_format: str | None = None, d_type: str | None = None, saturate: bool = False,
            scaling: str | None = None, scale_vec: int | None = None, kind: str | None = None,
            scale_a: Sequence[int] | None = None, scale_b: Sequence[int] | None = None,
            sparse_metadata: int | Sequence[int] | None = None, strict: bool = False,
            unit_scales: bool = False) -> int:
    """One output word ``D = C + sum(A[k] * B[k])`` from raw words (SEMANTICS.md section 6).

    The keyword fields are the descriptor; ``sparse_metadata`` makes it the
    sparse sibling (A and B then hold the full logical K). Runs the compiled
    scalar lowering (built once per datapath on first use), or the C kernel
    once a process has made many calls of one datapath.

    Word layout (SEMANTICS.md section 1): every A, B and C word is an int in
    ``[0, 2^32)``; each format reads only some of its bits and the hardware
    ignores the rest:

    ============  =====================  ==================================
    format        bits read              e.g. 1.0
    ============  =====================  ==================================
    tf32          31..13 (an F32 word)   ``0x3F800000``
    bf16          31..16 (top half)      ``0x3F800000`` (not ``0x3F80``)
    f16           15..0                  ``0x3C00``
    e4m3, e5m2    7..0                   ``0x38``, ``0x3C``
    e2m3, e3m2    5..0                   ``0x08``, ``0x0C``
    e2m1          3..0                   ``0x2``
    u8, s8        7..0                   ``0x01``
    C, F32 D      31..0                  ``0x3F800000``
    C, F16 D      15..0                  ``0x3C00``
    C, S32 D      31..0 (two's compl.)   ``0x00000001``
    ue8m0 scale   7..0                   ``0x7F``
    ue4m3 scale   6..0                   ``0x38``
    ============  =====================  ==================================

    The result is a 32-bit F32 or S32 word, or an F16 word in bits 15..0.
    ``strict=True`` refuses words that are almost surely layout mistakes (all
    set bits outside the bits read, like bf16 ``0x3F80``; set bits above a
    narrow format's width, like an F32 C word on an F16-D path). A
    block-scaled datapath needs ``scale_a`` and ``scale_b``; a missing one is
    refused unless ``unit_scales=True`` asks for unit scales.
    """
    sparse = sparse_metadata is not None
    try:
        desc = _resolved(a_format, b_format, d_type, saturate, scaling, kind, scale_vec, sparse)
    except TypeError:
        desc = resolve(a_format, b_format, d_type, saturate, scaling, kind, scale_vec,
                       sparse=sparse)
    words = _plain_dot_words(desc, a, b, c, scale_a, scale_b, sparse_metadata)
    if words is None:
        words = array("I", prepare_dot(desc, a, b, c, scale_a, scale_b, sparse_metadata))
    if desc.scaling is not None and not unit_scales:
        require_scales(desc, scale_a, scale_b, API_UNIT_SCALES)
    if strict:
        check_layout(desc, words)
    return _dot_runner(desc)(words)


def evaluate(datapath: str | dict[str, Any] | Descriptor, a: Any, b: Any, c: Any, *,
             scale_a: Any = None, scale_b: Any = None,
             sparse_metadata: Any = None, jobs: int | None = None,
             strict: bool = False, unit_scales: bool = False) -> np.ndarray:
    """Many dot products at once (NumPy, or the C kernel for big runs: :func:`ref.run.run_rows`).

    ``a[N, K]``, ``b[N, K]`` raw words, ``c[N]``; scales ``uint8[N, blocks]``;
    metadata one value for all rows, a list of words for all rows, or
    ``uint32[N, words]``. Returns ``uint32[N]`` result words. Arrays are read
    in place (a ``uint32`` A, B, C and ``uint8`` scales need no check), on
    ``jobs`` threads (default every core). Words are laid out as for
    :func:`mma_dot`; ``strict=True`` refuses likely layout mistakes. A block-scaled
    datapath needs both scales unless ``unit_scales=True``.
    """
    jobs = check_jobs(jobs)
    desc = descriptor_of(datapath)
    if isinstance(datapath, dict) and sparse_metadata is not None and not desc.sparse:
        desc = resolve(**{**desc.fields(), "sparse": True})  # type: ignore[arg-type]
    a_arr, b_arr = words_in_place(a, "A", 32), words_in_place(b, "B", 32)
    if a_arr.ndim != 2:
        raise ValueError(f"A must be a 2-D array [N, K], got shape {a_arr.shape}")
    rows = a_arr.shape[0]
    for what, arr in (("A", a_arr), ("B", b_arr)):
        if arr.shape != (rows, desc.k):
            raise ValueError(f"{desc.name} takes K={desc.k}: {what} must have shape "
                             f"({rows}, {desc.k}), got {arr.shape}")
    c_arr = words_in_place(c, "C", 32)
    if c_arr.ndim != 0 and c_arr.shape != (rows,):
        raise ValueError(f"C must have shape ({rows},), got {c_arr.shape}")
    if desc.scaling is None and (scale_a is not None or scale_b is not None):
        raise ValueError(f"scales given, but {desc.name} is not block-scaled")
    if not desc.sparse and sparse_metadata is not None:
        raise ValueError(f"sparse_metadata given, but {desc.name} is dense")
    unit = UNIT_SCALE.get(desc.scaling or "")
    scales = [_batch_group(desc, values, what, 8, rows, desc.scale_count, unit)
              for what, values in (("scale_a", scale_a), ("scale_b", scale_b))]
    if not unit_scales:
        require_scales(desc, scale_a, scale_b, API_UNIT_SCALES)
    metadata = _batch_group(desc, sparse_metadata, "sparse_metadata", 32, rows,
                            desc.metadata_words, None)
    if metadata is not None:
        _check_metadata_batch(desc, [metadata[:, i] for i in range(metadata.shape[1])], rows)
    if strict:
        check_layout_batch(desc, {"a": a_arr, "b": b_arr, "c": c_arr, "scale_a": scales[0],
                                  "scale_b": scales[1]})
    return run_rows(desc, a_arr, b_arr, c_arr, *scales, metadata, jobs=jobs)


def mma(a: Any, b: Any, c: Any = None, *, scale_a: Any = None, scale_b: Any = None,
        sparse_metadata: Any = None, jobs: int | None = None, strict: bool = False,
        unit_scales: bool = False, **descriptor: Any) -> Any:
    """``D = C + A @ B`` on raw words: A is M x K, B is K x N, C and D are M x N.

    ``scale_a`` has one row of scale bytes per A row, ``scale_b`` one per B
    column; ``sparse_metadata`` is one value for all rows or one row of words
    per A row. Returns nested lists of ints, or a ``uint32`` array when A or
    B is a NumPy array. A missing C is all ``+0``. Operands are read in place
    (:func:`ref.run.run_chain`, one step), on ``jobs`` threads. Words are laid
    out as for :func:`mma_dot`; ``strict=True`` refuses likely layout mistakes. A
    block-scaled datapath needs both scales unless ``unit_scales=True``.
    """
    jobs = check_jobs(jobs)
    desc = resolve(**descriptor, sparse=sparse_metadata is not None)
    as_numpy = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
    a_arr, b_arr = matrix_operands(a, b)
    (m, k), (k_b, n) = a_arr.shape, b_arr.shape
    if k != desc.k:
        raise ValueError(f"{desc.name} takes K={desc.k}, got A {m} x {k} and B {k_b} x {n} "
                         f"(one instruction; ref.gemm chains instructions over a K that is a "
                         f"multiple of {desc.k})")
    c_arr = None if c is None else words_in_place(c, "C", 32, (m, n))
    scales = []
    for what, given, count in (("scale_a", scale_a, m), ("scale_b", scale_b, n)):
        if given is None:
            scales.append(None)
            continue
        if desc.scaling is None:
            raise ValueError(f"{what} given, but {desc.name} is not block-scaled")
        array = words_in_place(given, what, 8)
        if array.ndim != 2 or array.shape[0] != count:
            owner = "A row" if what == "scale_a" else "B column"
            raise ValueError(f"{what} needs one row per {owner} ({count}), "
                             f"got {array.shape[0] if array.ndim else 'a scalar'}")
        if array.shape[1] < desc.scale_count:
            raise ValueError(f"{what} has {array.shape[1]} column(s) but {desc.name} needs "
                             f"{desc.scale_count} (one per {desc.scale_block}-K block)")
        scales.append(array[:, :desc.scale_count])
    if not unit_scales:
        require_scales(desc, scale_a, scale_b, API_UNIT_SCALES)
    metadata = None
    if desc.sparse:
        if sparse_metadata is not None and np.ndim(sparse_metadata) == 2 and \
                np.shape(sparse_metadata)[0] != m:
            raise ValueError(f"sparse_metadata needs one row per A row ({m}), "
                             f"got {np.shape(sparse_metadata)[0]}")
        metadata = _batch_group(desc, sparse_metadata, "sparse_metadata", 32, m,
                                desc.metadata_words, None)
        _check_metadata_batch(desc, [metadata[:, i] for i in range(metadata.shape[1])], m)
        metadata = metadata[:, None, :]
    if strict:
        check_layout_batch(desc, {"a": a_arr, "b": b_arr, "c": c_arr, "scale_a": scales[0],
                                  "scale_b": scales[1]})
    d = run_chain(desc, a_arr, b_arr, c_arr, [0], *scales, metadata, jobs=jobs)
    return d if as_numpy else d.tolist()
