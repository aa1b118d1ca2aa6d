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

import functools
import operator
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcspec.ref.batch import NUMPY
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.kernels import fast_kernel
from tcspec.spec.catalog import build_dot, descriptor_of, input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor, resolve
from tcspec.spec.scalar import SCALAR
from tcspec.spec.sparse import LEGAL_SELECTORS, chunk_selectors, selector_is_legal

UNIT_SCALE = {"ue8m0": 0x7F, "ue4m3": 0x38}
"""Scale byte meaning 1.0, used when a block-scaled call gives no scale vector."""


def _word(value: Any, what: str, bits: int = 32) -> int:
    if isinstance(value, (bool, float)):
        raise ValueError(f"{what} must be an int raw word, got {value!r}")
    try:
        word = operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an int raw word, got {value!r}") from None
    if not 0 <= word < (1 << bits):
        noun = "scale byte" if bits == 8 else f"{bits}-bit word"
        raise ValueError(f"{what} = {word} is out of range: a {noun} is in "
                         f"[0, 0x{(1 << bits) - 1:X}]")
    return word


def _words(values: Any, what: str, bits: int = 32) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{what} must be a sequence of raw words, got {values!r}")
    return [_word(v, f"{what}[{i}]", bits) for i, v in enumerate(values)]


def _check_k(desc: Descriptor, a: Sequence[int], b: Sequence[int]) -> None:
    for what, lanes in (("A", a), ("B", b)):
        if len(lanes) != desc.k:
            sparse = " (sparse: the full logical K)" if desc.sparse else ""
            raise ValueError(f"{desc.name} takes K={desc.k}{sparse} {what} words, "
                             f"got {len(lanes)}")


def _scales(desc: Descriptor, scales: Any, what: str) -> list[int]:
    if desc.scaling is None:
        if scales is not None:
            raise ValueError(f"{what} given, but {desc.name} is not block-scaled")
        return []
    if scales is None:
        return [UNIT_SCALE[desc.scaling]] * desc.scale_count
    values = _words(scales, what, 8)
    if len(values) < desc.scale_count:
        raise ValueError(f"{what} has {len(values)} scale byte(s) but {desc.name} needs "
                         f"{desc.scale_count} (one per {desc.scale_block}-K block)")
    return values[:desc.scale_count]


def _illegal_selector(desc: Descriptor, chunk: int, selector: int, row: int | None = None
                      ) -> ValueError:
    _, rule = desc.sparse_chunk  # type: ignore[misc]
    legal = ", ".join(f"0x{s:X}" for s in LEGAL_SELECTORS[rule])
    where = f"row {row}: " if row is not None else ""
    return ValueError(f"{where}sparse_metadata chunk {chunk} (word {chunk // 8}, nibble "
                      f"{chunk % 8}) has illegal selector 0x{selector:X}; {desc.name} allows "
                      f"{legal}")


def check_metadata(desc: Descriptor, words: Sequence[int]) -> None:
    """Refuse metadata with an illegal selector, naming the chunk (SEMANTICS.md section 5)."""
    illegal = _illegal_chunk(desc, tuple(words))
    if illegal is not None:
        raise _illegal_selector(desc, *illegal)


@functools.lru_cache(maxsize=4096)
def _illegal_chunk(desc: Descriptor, words: tuple[int, ...]) -> tuple[int, int] | None:
    """``(chunk, selector)`` of the first illegal selector in ``words``, or None."""
    size, rule = desc.sparse_chunk  # type: ignore[misc]
    values = [SCALAR.const(w, 32) for w in words]
    for chunk, selector in enumerate(chunk_selectors(SCALAR, values, desc.k // size)):
        if not SCALAR.truth(selector_is_legal(SCALAR, rule, selector)):
            return chunk, SCALAR.value(selector)
    return None


def _check_metadata_batch(desc: Descriptor, columns: Sequence[np.ndarray], rows: int) -> None:
    size, rule = desc.sparse_chunk  # type: ignore[misc]
    values = [NUMPY.input(col, 32) for col in columns]
    for chunk, selector in enumerate(chunk_selectors(NUMPY, values, desc.k // size)):
        legal = NUMPY.truths(selector_is_legal(NUMPY, rule, selector), rows)
        if not legal.all():
            row = int(np.argmin(legal))
            raise _illegal_selector(desc, chunk, int(NUMPY.values(selector, rows)[row]), row)


def _metadata(desc: Descriptor, metadata: Any) -> list[int]:
    if not desc.sparse:
        if metadata is not None:
            raise ValueError(f"sparse_metadata given, but {desc.name} is dense")
        return []
    if metadata is None:
        raise ValueError(f"{desc.name} is sparse and needs sparse_metadata")
    if isinstance(metadata, (list, tuple)):
        words = _words(metadata, "sparse_metadata")
        if len(words) < desc.metadata_words:
            raise ValueError(f"sparse_metadata has {len(words)} word(s) but {desc.name} "
                             f"needs {desc.metadata_words} to cover every chunk")
        words = words[:desc.metadata_words]
    else:
        words = [_word(metadata, "sparse_metadata")] * desc.metadata_words
    check_metadata(desc, words)
    return words


def prepare_dot(desc: Descriptor, a: Any, b: Any, c: Any, scale_a: Any = None,
                scale_b: Any = None, sparse_metadata: Any = None) -> list[int]:
    """Checked input words of one dot product, in ``input_layout(desc)`` order."""
    packed = _plain_dot_words(desc, a, b, c, scale_a, scale_b, sparse_metadata)
    if packed is not None:
        return packed.tolist()
    words_a, words_b = _words(a, "A"), _words(b, "B")
    _check_k(desc, words_a, words_b)
    word_c = _word(c, "C")
    return (words_a + words_b + [word_c] + _scales(desc, scale_a, "scale_a")
            + _scales(desc, scale_b, "scale_b") + _metadata(desc, sparse_metadata))


def run_scalar(desc: Descriptor, words: Sequence[int]) -> int:
    """The specification on the scalar backend for checked input words."""
    layout = input_layout(desc)
    values = [SCALAR.const(w, spec.width) for spec, w in zip(layout, words, strict=True)]
    return SCALAR.value(build_dot(SCALAR, desc, inputs_from(layout, values)))


@functools.lru_cache(maxsize=512, typed=True)
def _resolved(a_format: str, b_format: str | None, d_type: str | None, saturate: bool,
              scaling: str | None, kind: str | None, scale_vec: int | None,
              sparse: bool) -> Descriptor:
    return resolve(a_format, b_format, d_type, saturate, scaling, kind, scale_vec, sparse)


def resolve_fields(fields: dict[str, Any], sparse: bool) -> Descriptor:
    """:func:`spec.descriptor.resolve` of a descriptor-field dict, cached per field set."""
    try:
        return _resolved(fields.get("a_format"), fields.get("b_format"),  # type: ignore[arg-type]
                         fields.get("d_type"), fields.get("saturate", False),
                         fields.get("scaling"), fields.get("kind"), fields.get("scale_vec"),
                         sparse)
    except TypeError:
        return resolve(**fields, sparse=sparse)


def _plain_dot_words(desc: Descriptor, a: Any, b: Any, c: Any, scale_a: Any,
                     scale_b: Any, metadata: Any = None) -> array | None:
    """The packed input words of a call whose arguments are plain in-range int lists,
    checked in bulk; None sends the call through :func:`prepare_dot` (which names any
    problem)."""
    if (type(a) not in _PLAIN or type(b) not in _PLAIN or len(a) != desc.k
            or len(b) != desc.k or desc.sparse != (metadata is not None)):
        return None
    if desc.sparse:
        if type(metadata) is int:
            metadata = [metadata] * desc.metadata_words
        elif type(metadata) in _PLAIN and len(metadata) >= desc.metadata_words:
            metadata = list(metadata[:desc.metadata_words])
        else:
            return None
    words = [*a, *b, c]
    if desc.scaling is not None:
        for scales in (scale_a, scale_b):
            if scales is None:
                words += [UNIT_SCALE[desc.scaling]] * desc.scale_count
            elif (type(scales) in _PLAIN and len(scales) == desc.scale_count
                  and min(scales, default=0) >= 0 and max(scales, default=0) < 256):
                words += scales
            else:
                return None
    elif scale_a is not None or scale_b is not None:
        return None
    if desc.sparse:
        words += metadata
    if set(map(type, words)) != _INT:
        return None
    try:
        packed = array("I", words)
    except (OverflowError, TypeError):
        return None
    if desc.sparse:
        check_metadata(desc, metadata)
    return packed


_PLAIN = (list, tuple)
_INT = {int}
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
            sparse_metadata: int | Sequence[int] | None = None) -> int:
    """One output word ``D = C + sum(A[k] * B[k])`` from raw words (SEMANTICS.md section 6).

    The keyword fields are the descriptor; ``sparse_metadata`` makes it the
    sparse sibling (A and B then hold the full logical K). Runs the compiled
    scalar lowering (built once per datapath on first use), or the C kernel
    once a process has made many calls of one datapath.
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
    return _dot_runner(desc)(words)


def _array(values: Any, what: str, bits: int, shape: tuple[int, ...] | None = None) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype == object:
        array = np.asarray(_words(array.ravel().tolist(), what, bits), dtype=np.uint64)
        array = array.reshape(np.shape(values))
    if array.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold integer raw words, got dtype {array.dtype}")
    if array.size and (array.min() < 0 or int(array.max()) >= (1 << bits)):
        raise ValueError(f"{what} holds values outside [0, 0x{(1 << bits) - 1:X}]")
    if shape is not None and array.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {array.shape}")
    return array.astype(np.uint64)


def _batch_columns(desc: Descriptor, values: Any, what: str, bits: int, rows: int,
                   needed: int, default: int | None) -> list[np.ndarray]:
    if needed == 0:
        return []
    if values is None:
        if default is None:
            raise ValueError(f"{desc.name} needs {what}")
        return [np.full(rows, default, dtype=np.uint64)] * needed
    array = _array(values, what, bits)
    if array.ndim == 0:
        return [np.full(rows, int(array), dtype=np.uint64)] * needed
    if array.ndim == 1 and what == "sparse_metadata":
        if array.shape[0] < needed:
            raise ValueError(f"sparse_metadata has {array.shape[0]} word(s) but {desc.name} "
                             f"needs {needed}")
        return [np.full(rows, int(v), dtype=np.uint64) for v in array[:needed]]
    if array.ndim != 2 or array.shape[0] != rows:
        raise ValueError(f"{what} must have shape ({rows}, >={needed}), got {array.shape}")
    if array.shape[1] < needed:
        unit = f" (one per {desc.scale_block}-K block)" if desc.scaling else ""
        raise ValueError(f"{what} has {array.shape[1]} column(s) but {desc.name} needs "
                         f"{needed}{unit}")
    return [array[:, i] for i in range(needed)]


def evaluate(datapath: str | dict[str, Any] | Descriptor, a: Any, b: Any, c: Any, *,
             scale_a: Any = None, scale_b: Any = None,
             sparse_metadata: Any = None) -> np.ndarray:
    """Many dot products at once (NumPy, or the C kernel for big runs: :func:`run_batch`).

    ``a[N, K]``, ``b[N, K]`` raw words, ``c[N]``; scales ``uint8[N, blocks]``;
    metadata one value for all rows, a list of words for all rows, or
    ``uint32[N, words]``. Returns ``uint32[N]`` result words.
    """
    desc = descriptor_of(datapath)
    if isinstance(datapath, dict) and sparse_metadata is not None and not desc.sparse:
        desc = resolve(**{**desc.fields(), "sparse": True})  # type: ignore[arg-type]
    a_arr, b_arr = _array(a, "A", 32), _array(b, "B", 32)
    if a_arr.ndim != 2:
        raise ValueError(f"A must be a 2-D array [N, K], got shape {a_arr.shape}")
    rows = a_arr.shape[0]
    for what, arr in (("A", a_arr), ("B", b_arr)):
        if arr.shape != (rows, desc.k):
            raise ValueError(f"{desc.name} takes K={desc.k}: {what} must have shape "
                             f"({rows}, {desc.k}), got {arr.shape}")
    c_arr = _array(c, "C", 32)
    c_arr = np.broadcast_to(c_arr, (rows,)) if c_arr.ndim == 0 else c_arr
    if c_arr.shape != (rows,):
        raise ValueError(f"C must have shape ({rows},), got {c_arr.shape}")
    if desc.scaling is None and (scale_a is not None or scale_b is not None):
        raise ValueError(f"scales given, but {desc.name} is not block-scaled")
    if not desc.sparse and sparse_metadata is not None:
        raise ValueError(f"sparse_metadata given, but {desc.name} is dense")
    columns = [a_arr[:, i] for i in range(desc.k)] + [b_arr[:, i] for i in range(desc.k)]
    columns.append(np.ascontiguousarray(c_arr))
    unit = UNIT_SCALE.get(desc.scaling or "")
    for what, values in (("scale_a", scale_a), ("scale_b", scale_b)):
        columns += _batch_columns(desc, values, what, 8, rows, desc.scale_count, unit)
    metadata = _batch_columns(desc, sparse_metadata, "sparse_metadata", 32, rows,
                              desc.metadata_words, None)
    if metadata:
        _check_metadata_batch(desc, metadata, rows)
    return run_batch(desc, columns + metadata, rows)


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


def matrix_operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked A (M x K) and B (K x N) raw-word matrices as ``uint64`` arrays."""
    a_arr, b_arr = _array(a, "A", 32), _array(b, "B", 32)
    if a_arr.ndim != 2 or b_arr.ndim != 2:
        raise ValueError(f"A and B must be matrices, got shapes {a_arr.shape} and {b_arr.shape}")
    (m, k), (k_b, n) = a_arr.shape, b_arr.shape
    if k != k_b:
        raise ValueError(f"A is {m} x {k} but B is {k_b} x {n}: inner dimensions differ")
    return a_arr, b_arr


def mma(a: Any, b: Any, c: Any = None, *, scale_a: Any = None, scale_b: Any = None,
        sparse_metadata: Any = None, **descriptor: Any) -> Any:
    """``D = C + A @ B`` on raw words: A is M x K, B is K x N, C and D are M x N.

    ``scale_a`` has one row of scale bytes per A row, ``scale_b`` one per B
    column; ``sparse_metadata`` is one value for all rows or one row of words
    per A row. Returns nested lists of ints, or a ``uint32`` array when A or
    B is a NumPy array. A missing C is all ``+0``.
    """
    desc = resolve(**descriptor, sparse=sparse_metadata is not None)
    as_numpy = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
    a_arr, b_arr = matrix_operands(a, b)
    (m, k), (k_b, n) = a_arr.shape, b_arr.shape
    if k != desc.k:
        raise ValueError(f"{desc.name} takes K={desc.k}, got A {m} x {k} and B {k_b} x {n} "
                         f"(one instruction; ref.gemm chains instructions over a K that is a "
                         f"multiple of {desc.k})")
    c_arr = np.zeros((m, n), dtype=np.uint64) if c is None else _array(c, "C", 32, (m, n))
    rows_a = np.repeat(a_arr, n, axis=0)
    rows_b = np.tile(b_arr.T, (m, 1))
    lane_scales_a = None if scale_a is None else np.repeat(_array(scale_a, "scale_a", 8), n, 0)
    lane_scales_b = None if scale_b is None else np.tile(_array(scale_b, "scale_b", 8), (m, 1))
    for what, given, count in (("scale_a", scale_a, m), ("scale_b", scale_b, n)):
        if given is not None and np.asarray(given).shape[0] != count:
            owner = "A row" if what == "scale_a" else "B column"
            raise ValueError(f"{what} needs one row per {owner} ({count}), "
                             f"got {np.asarray(given).shape[0]}")
    metadata = sparse_metadata
    if sparse_metadata is not None and np.ndim(sparse_metadata) == 2:
        if np.shape(sparse_metadata)[0] != m:
            raise ValueError(f"sparse_metadata needs one row per A row ({m}), "
                             f"got {np.shape(sparse_metadata)[0]}")
        metadata = np.repeat(_array(sparse_metadata, "sparse_metadata", 32), n, axis=0)
    d = evaluate(desc, rows_a, rows_b, c_arr.reshape(-1), scale_a=lane_scales_a,
                 scale_b=lane_scales_b, sparse_metadata=metadata).reshape(m, n)
    return d if as_numpy else d.tolist()

