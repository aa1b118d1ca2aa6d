"""Input checks every layer above the lowerings needs: raw words, K, scales, metadata.

Raw words are ints in ``[0, 2^32)``, scale bytes in ``[0, 256)``, K matches the
datapath, sparse selectors are legal (SEMANTICS.md section 5), descriptor
fields resolve to a datapath. Each check raises ``ValueError`` naming the
problem. Used by the public API, the vector-file reader, the probes and the
command line alike.
"""

from __future__ import annotations

import functools
import operator
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from tcspec.ref.batch import NUMPY
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


MAX_LIST = 4096
"""Longest list of words any datapath reads (K, scale bytes, metadata words are far fewer):
a longer one is refused before any element is converted."""


def _words(values: Any, what: str, bits: int = 32) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{what} must be a sequence of raw words, got {_short(values)}")
    if len(values) > MAX_LIST:
        raise ValueError(f"{what} has {len(values)} words; no datapath reads more than "
                         f"{MAX_LIST}")
    return [_word(v, f"{what}[{i}]", bits) for i, v in enumerate(values)]


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value) if not hasattr(value, "__len__") or len(value) < 64 else \
        f"{type(value).__name__} of length {len(value)}"
    return text if len(text) <= limit else text[:limit] + "..."


def _check_count(desc: Descriptor, what: str, count: int) -> None:
    if count != desc.k:
        sparse = " (sparse: the full logical K)" if desc.sparse else ""
        raise ValueError(f"{desc.name} takes K={desc.k}{sparse} {what} words, got {count}")


def _check_k(desc: Descriptor, a: Sequence[int], b: Sequence[int]) -> None:
    for what, lanes in (("A", a), ("B", b)):
        _check_count(desc, what, len(lanes))


def require_scales(desc: Descriptor, scale_a: Any, scale_b: Any, how: str,
                   names: tuple[str, str] = ("scale_a", "scale_b")) -> None:
    """A block-scaled datapath takes both operands' scale bytes: a missing one is refused
    (ValueError naming it by ``names``; ``how`` says how to give them or ask for unit
    scales), never taken as unit scales in silence."""
    if desc.scaling is None:
        return
    missing = [what for what, given in zip(names, (scale_a, scale_b)) if given is None]
    if missing:
        raise ValueError(f"{desc.name} is block-scaled ({desc.scaling}, {desc.scale_count} "
                         f"scale byte(s) per operand, one per {desc.scale_block}-K block) but "
                         f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                         f"missing: {how} (0x{UNIT_SCALE[desc.scaling]:02X} is the unit "
                         f"{desc.scaling} scale)")


API_UNIT_SCALES = "pass them, or unit_scales=True for unit scales"
"""How the API asks for unit scales (:func:`require_scales`)."""


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
    bits = getattr(desc, "operand_bits", 32)
    packed = None if bits > 32 else _plain_dot_words(desc, a, b, c, scale_a, scale_b,
                                                     sparse_metadata)
    if packed is not None:
        return packed.tolist()
    for what, values in (("A", a), ("B", b)):
        if hasattr(values, "__len__") and not isinstance(values, (str, bytes)):
            _check_count(desc, what, len(values))
    words_a, words_b = _words(a, "A", bits), _words(b, "B", bits)
    _check_k(desc, words_a, words_b)
    word_c = _word(c, "C", bits)
    return (words_a + words_b + [word_c] + _scales(desc, scale_a, "scale_a")
            + _scales(desc, scale_b, "scale_b") + _metadata(desc, sparse_metadata))


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


def words_in_place(values: Any, what: str, bits: int,
                   shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Checked raw words as an integer array, not copied when already one: an unsigned
    array whose dtype holds at most ``bits`` bits needs no range check (a ``uint32`` A, B or
    C, a ``uint8`` scale array); any other integer array is range-checked and kept; lists
    become ``uint32`` (``uint64`` for wider words)."""
    array = values if isinstance(values, np.ndarray) else np.asarray(values)
    if array.dtype == object or array.dtype.kind not in "iu":
        return _array(values, what, bits, shape).astype(np.uint32 if bits <= 32 else np.uint64)
    if not (array.dtype.kind == "u" and array.dtype.itemsize * 8 <= bits) and array.size:
        low, high = array.min(), array.max()
        if low < 0 or int(high) >= (1 << bits):
            raise ValueError(f"{what} holds values outside [0, 0x{(1 << bits) - 1:X}]")
    if shape is not None and array.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {array.shape}")
    return array


def _batch_group(desc: Descriptor, values: Any, what: str, bits: int, rows: int,
                 needed: int, default: int | None) -> np.ndarray | None:
    """Checked ``[rows, needed]`` words of one operand group of a batch (a view where it can
    be: one value or one row of words broadcast to every row), or None when the datapath has
    no such input."""
    if needed == 0:
        return None
    if values is None:
        if default is None:
            raise ValueError(f"{desc.name} needs {what}")
        values = default
    array = words_in_place(values, what, bits)
    if array.ndim == 0:
        return np.broadcast_to(array.reshape(1, 1), (rows, needed))
    if array.ndim == 1 and what == "sparse_metadata":
        if array.shape[0] < needed:
            raise ValueError(f"sparse_metadata has {array.shape[0]} word(s) but {desc.name} "
                             f"needs {needed}")
        return np.broadcast_to(array[None, :needed], (rows, needed))
    if array.ndim != 2 or array.shape[0] != rows:
        raise ValueError(f"{what} must have shape ({rows}, >={needed}), got {array.shape}")
    if array.shape[1] < needed:
        unit = f" (one per {desc.scale_block}-K block)" if desc.scaling else ""
        raise ValueError(f"{what} has {array.shape[1]} column(s) but {desc.name} needs "
                         f"{needed}{unit}")
    return array[:, :needed]


def matrix_operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked A (M x K) and B (K x N) raw-word matrices (:func:`words_in_place`)."""
    a_arr, b_arr = words_in_place(a, "A", 32), words_in_place(b, "B", 32)
    if a_arr.ndim != 2 or b_arr.ndim != 2:
        raise ValueError(f"A and B must be matrices, got shapes {a_arr.shape} and {b_arr.shape}")
    (m, k), (k_b, n) = a_arr.shape, b_arr.shape
    if k != k_b:
        raise ValueError(f"A is {m} x {k} but B is {k_b} x {n}: inner dimensions differ")
    return a_arr, b_arr


# ------------------------------------------------------------------ word layout

LAYOUT_RULE = ("SEMANTICS.md section 1: every word is 32 bits; tf32 and bf16 read the top "
               "bits of an F32 word, narrower formats the low bits")


def read_mask(name: str) -> int:
    """The bits of its 32-bit word (or 8-bit scale byte) that format ``name`` reads
    (SEMANTICS.md section 1): ``0xFFFFE000`` tf32, ``0xFFFF0000`` bf16, ``0xFF`` e4m3, ..."""
    from tcspec.spec.formats import FORMATS, FloatFormat

    fmt = FORMATS[name]
    if not isinstance(fmt, FloatFormat):
        return (1 << fmt.bits) - 1
    return ((1 << fmt.container_bits) - 1) & ~((1 << fmt.cleared_bits) - 1)


def bit_range(mask: int) -> str:
    """``bits 31..16`` for ``0xFFFF0000``."""
    low = (mask & -mask).bit_length() - 1
    return f"bits {mask.bit_length() - 1}..{low}"


def role_formats(desc: Descriptor) -> dict[str, str]:
    """Input role -> the format its words are read as (C in the D type)."""
    roles = {"a": desc.a_format, "b": desc.b_format,
             "c": "f16" if desc.d_type == "f16" else "f32"}
    if desc.scaling:
        roles["scale_a"] = roles["scale_b"] = desc.scaling
    return roles


def layout_mistake(name: str, word: int) -> str | None:
    """Why ``word`` is almost surely a layout mistake for format ``name``, or None: its set
    bits all sit outside the bits the format reads (bf16 ``0x3F80``), or a format read from
    the low bits has set bits above its width (an F32 C word on an F16-D path)."""
    mask = read_mask(name)
    outside = word & ~mask
    if not outside:
        return None
    low_aligned = mask & 1
    if low_aligned:
        width = mask.bit_length()
        return (f"{name} reads {bit_range(mask)} only, but 0x{word:X} has set bits above bit "
                f"{width - 1} (0x{outside:X}; the hardware ignores them)")
    if word & mask:
        return None
    hint = ""
    if name == "bf16" and word < 1 << 16:
        hint = f"; a 16-bit bf16 code goes in the top half: 0x{word << 16:08X}"
    elif name == "tf32":
        hint = "; a tf32 word is an F32 word whose bits 12..0 are ignored"
    return (f"{name} reads {bit_range(mask)} of its 32-bit word, and 0x{word:X} has no set bit "
            f"there (it reads as zero){hint}")


def layout_problems(desc: Descriptor, words: Sequence[int]) -> list[str]:
    """Every likely layout mistake among ``words`` (``input_layout(desc)`` order)."""
    from tcspec.spec.catalog import input_layout

    roles = role_formats(desc)
    problems = []
    for spec, word in zip(input_layout(desc), words, strict=True):
        name = roles.get(spec.role)
        if name is None:
            continue
        why = layout_mistake(name, word)
        if why:
            role = spec.role.upper() if len(spec.role) == 1 else spec.role
            label = "C" if spec.role == "c" else f"{role}[{spec.index}]"
            if spec.role == "c" and name == "f16":
                why += "; an F16-D path reads C as an F16 word: is this an F32 C word?"
            problems.append(f"{label} = 0x{word:X}: {why}")
    return problems


def check_layout(desc: Descriptor, words: Sequence[int], hint: str = "strict=False") -> None:
    """``ValueError`` naming the first likely layout mistake in ``words`` (strict mode)."""
    problems = layout_problems(desc, words)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValueError(f"{desc.name}: {problems[0]}{more}; word layout: {LAYOUT_RULE} "
                         f"({hint} passes such words as the hardware reads them)")


def check_layout_batch(desc: Descriptor, arrays: dict[str, np.ndarray],
                       hint: str = "strict=False") -> None:
    """:func:`check_layout` over batch arrays ``{role: uint32 array}`` (rows first)."""
    roles = role_formats(desc)
    for role, arr in arrays.items():
        if arr is None or role not in roles:
            continue
        mask = np.uint64(read_mask(roles[role]))
        values = np.asarray(arr).astype(np.uint64)
        outside = (values & ~mask) != 0
        if not mask & np.uint64(1):
            outside &= (values & mask) == 0
        if outside.any():
            index = np.unravel_index(int(np.argmax(outside)), outside.shape)
            word = int(values[index])
            what = "C" if role == "c" else role.upper() if len(role) == 1 else role
            raise ValueError(f"{desc.name}: {what}{list(map(int, index))} = 0x{word:X}: "
                             f"{layout_mistake(roles[role], word)}; word layout: "
                             f"{LAYOUT_RULE} ({hint} passes such words as the hardware "
                             f"reads them)")
