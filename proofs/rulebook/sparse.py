"""Section 5: sparse (.sp) datapaths.

A and B come with the full logical K (twice the dense K). The logical K is cut
into chunks, one 4-bit selector per chunk, least significant nibble first:
chunk ``j`` is nibble ``j % 8`` of metadata word ``j // 8``.

- ``1-of-2`` (tf32, chunks of 2): selector ``0x4`` keeps the lower element,
  ``0xE`` the upper; nothing else is legal.
- ``2-of-4`` (bf16, f16, f8f6f4, MXF8F6F4; chunks of 4): bits 1..0 name one
  kept position, bits 3..2 the other.
- ``2-pairs-of-8`` (NVFP4, MXF4, MXF4NVF4; chunks of 8): the two 2-bit fields
  name pair indices ``p``, each keeping elements ``2p`` and ``2p + 1``.

For the last two the legal selectors are ``4, 8, C, 9, D, 6, E``; anything else
is an error, so ``Result.defined`` is "every chunk's selector is legal".

The kept positions of every chunk, in ascending logical order, are compacted
(chunk after chunk) into the dense K, and the dense rules of the sibling
datapath (``dense-<rest of the name>``) run on the compacted lanes with the
same C and the same scale bytes (one per block of the compacted K). Disabled
positions never reach the decoder, so a NaN or Inf there has no effect. The
dense rules are looked up through the registry: the block-scaled siblings are
the block module's (NotImplementedError until it exists).

Reading of the text: ``0x6`` names positions 2 (bits 1..0) and 1 (bits 3..2);
compaction takes them ascending (1, then 2), like ``0x9``. With an illegal
selector the word is still computed (the lower field's position first, as if
the fields were ascending; equal fields keep that position twice) but
``defined`` is false, and no rule gives that word a meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tcspec.spec.bitvec import BV, Bool, Ops

from .names import ONE_OF_TWO, PAIRS_OF_EIGHT, SPARSE, TWO_OF_FOUR, Datapath, parse
from .registry import dispatch
from .result import Result

LEGAL_SELECTORS = (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE)
"""Section 5: the legal 2-of-4 and pairwise selectors."""

ONE_OF_TWO_LOWER = 0x4
ONE_OF_TWO_UPPER = 0xE
"""Section 5: the tf32 selectors (lower, upper element of a chunk of 2)."""

CHUNKS_PER_WORD = 8


def selector(ops: Ops, meta: Sequence[BV], chunk: int) -> BV:
    """The 4-bit selector of chunk ``chunk``: nibble ``chunk % 8`` of word ``chunk // 8``."""
    word = meta[chunk // CHUNKS_PER_WORD]
    lo = 4 * (chunk % CHUNKS_PER_WORD)
    return ops.extract(word, lo + 3, lo)


def legal(ops: Ops, sel: BV, selection: str) -> Bool:
    """Whether ``sel`` is a legal selector for ``selection`` (section 5)."""
    allowed = (ONE_OF_TWO_LOWER, ONE_OF_TWO_UPPER) if selection == ONE_OF_TWO else LEGAL_SELECTORS
    return ops.any_(ops.eq(sel, value) for value in allowed)


def _pick(ops: Ops, items: Sequence[BV], index: BV) -> BV:
    """``items[index]`` for a symbolic index (an ite chain over the static positions)."""
    out = items[0]
    for i in range(1, len(items)):
        out = ops.ite(ops.eq(index, i), items[i], out)
    return out


def kept_positions(ops: Ops, sel: BV, selection: str) -> list[BV]:
    """The kept positions of one chunk, ascending, as 3-bit indexes into the chunk."""
    if selection == ONE_OF_TWO:
        upper = ops.eq(sel, ONE_OF_TWO_UPPER)
        return [ops.ite(upper, ops.const(1, 3), ops.const(0, 3))]
    f0 = ops.zext(ops.extract(sel, 1, 0), 3)
    f1 = ops.zext(ops.extract(sel, 3, 2), 3)
    first, second = ops.umin(f0, f1), ops.umax(f0, f1)
    if selection == TWO_OF_FOUR:
        return [first, second]
    if selection == PAIRS_OF_EIGHT:
        def element(pair: BV, offset: int) -> BV:
            return ops.add(ops.shl(pair, 1), offset)

        return [element(first, 0), element(first, 1), element(second, 0), element(second, 1)]
    raise ValueError(f"unknown sparse selection {selection!r}")


def compact(ops: Ops, rec: Datapath, a_words: Sequence[BV], b_words: Sequence[BV],
            meta: Sequence[BV]) -> tuple[list[BV], list[BV], Bool]:
    """The kept A and B lanes in ascending logical order, and "every selector is legal"."""
    chunk = rec.chunk
    selection = rec.selection
    if chunk is None or selection is None:
        raise ValueError(f"{rec.name} is not a sparse datapath")
    kept_a: list[BV] = []
    kept_b: list[BV] = []
    legal_all = []
    for j in range(rec.k // chunk):
        sel = selector(ops, meta, j)
        legal_all.append(legal(ops, sel, selection))
        a_chunk = a_words[j * chunk:(j + 1) * chunk]
        b_chunk = b_words[j * chunk:(j + 1) * chunk]
        for pos in kept_positions(ops, sel, selection):
            index = ops.resize_unsigned(pos, max(1, (chunk - 1).bit_length()))
            kept_a.append(_pick(ops, a_chunk, index))
            kept_b.append(_pick(ops, b_chunk, index))
    if len(kept_a) != rec.dense_k:  # pragma: no cover - static tables
        raise AssertionError(f"{rec.name}: compaction gave {len(kept_a)} lanes, "
                             f"not {rec.dense_k}")
    return kept_a, kept_b, ops.all_(legal_all)


def kept_lanes(ops: Ops, name: str, k: int, words: Mapping[str, BV]
               ) -> tuple[list[BV], list[BV], Bool]:
    """:func:`compact` on the words of sparse datapath ``name`` at logical K ``k`` (a model of
    the instruction on fewer lanes keeps ``k / 2`` and reads the metadata words that cover
    its chunks)."""
    rec = parse(name)
    chunks = k // (rec.chunk or 1)
    rec = replace(rec, k=k, dense_k=k // 2, meta_words=-(-chunks // CHUNKS_PER_WORD))
    return compact(ops, rec, [words[f"a{i}"] for i in range(k)],
                   [words[f"b{i}"] for i in range(k)],
                   [words[f"meta{i}"] for i in range(rec.meta_words)])


def dense_words(ops: Ops, rec: Datapath, words: Mapping[str, BV]
                ) -> tuple[dict[str, BV], Bool]:
    """The dense sibling's input words (the compacted A and B lanes, the same C and scale
    bytes) and "every selector is legal"."""
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    meta = [words[f"meta{i}"] for i in range(rec.meta_words)]
    kept_a, kept_b, defined = compact(ops, rec, a_words, b_words, meta)
    dense = parse(rec.dense_name or "")
    out = {f"a{i}": w for i, w in enumerate(kept_a)}
    out.update({f"b{i}": w for i, w in enumerate(kept_b)})
    out["c"] = words["c"]
    for side in ("a", "b"):
        for i in range(dense.n_scales):
            out[f"scale_{side}{i}"] = words[f"scale_{side}{i}"]
    return out, defined


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The section-5 family function: compact, then the dense sibling's rules."""
    dense, defined = dense_words(ops, rec, words)
    result = dispatch(ops, rec.dense_name or "", dense)
    return Result(result.word, defined & result.defined)


FAMILIES = {SPARSE: dot}
