"""Sparse (.sp) datapaths: metadata decoding and operand selection (SEMANTICS.md section 5).

A and B arrive with the full logical K (twice the dense K). The metadata holds
one 4-bit selector per chunk of K, least significant nibble first; the
positions it keeps, in ascending logical order, are the active operands, and
the dense datapath runs on them as the hardware feeds them. Disabled
positions never reach the decoders, so whatever they hold has no effect.

Everything here is written over ``ops``, so the metadata may be symbolic;
:func:`metadata_legality` is the explicit legality predicate of a formula
(the executable API runs the same rule on concrete words and refuses
illegal selectors).
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.bitvec import BV, Bool, Ops

SELECTORS_PER_WORD = 8

LEGAL_SELECTORS = {
    "one": (0x4, 0xE),
    "two": (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE),
    "pairs": (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE),
}
"""Legal selectors per rule: 1-of-2 (tf32), 2-of-4, and two pairs of 8 (FP4 families)."""


def chunk_selectors(ops: Ops, metadata: Sequence[BV], chunks: int) -> list[BV]:
    """The 4-bit selector of each chunk: word ``j // 8``, nibble ``j % 8`` from the bottom."""
    if len(metadata) * SELECTORS_PER_WORD < chunks:
        raise ValueError(f"{chunks} chunks need {-(-chunks // SELECTORS_PER_WORD)} metadata "
                         f"words, got {len(metadata)}")
    selectors = []
    for j in range(chunks):
        word = metadata[j // SELECTORS_PER_WORD]
        nibble = j % SELECTORS_PER_WORD
        selectors.append(ops.extract(word, 4 * nibble + 3, 4 * nibble))
    return selectors


def selector_is_legal(ops: Ops, rule: str, selector: BV) -> Bool:
    return ops.any_(ops.eq(selector, legal) for legal in LEGAL_SELECTORS[rule])


def metadata_legality(ops: Ops, rule: str, metadata: Sequence[BV], chunks: int) -> Bool:
    """Every chunk's selector is legal for ``rule``."""
    return ops.all_(selector_is_legal(ops, rule, s)
                    for s in chunk_selectors(ops, metadata, chunks))


def _pick(ops: Ops, index: BV, options: Sequence[BV]) -> BV:
    """``options[index]`` for a 2-bit (or 1-bit) index, as an ``ite`` chain."""
    picked = options[-1]
    for position in range(len(options) - 2, -1, -1):
        picked = ops.ite(ops.eq(index, position), options[position], picked)
    return picked


def _kept_fields(ops: Ops, selector: BV) -> tuple[BV, BV]:
    """The two 2-bit fields of a selector, in ascending order."""
    first, second = ops.extract(selector, 1, 0), ops.extract(selector, 3, 2)
    return ops.umin(first, second), ops.umax(first, second)


def select_chunk(ops: Ops, rule: str, selector: BV, chunk: Sequence[BV]) -> list[BV]:
    """The active lanes of one chunk, in ascending logical order."""
    if rule == "one":
        return [ops.ite(ops.eq(selector, 0xE), chunk[1], chunk[0])]
    low, high = _kept_fields(ops, selector)
    if rule == "two":
        return [_pick(ops, low, chunk), _pick(ops, high, chunk)]
    evens, odds = chunk[0::2], chunk[1::2]
    return [_pick(ops, low, evens), _pick(ops, low, odds),
            _pick(ops, high, evens), _pick(ops, high, odds)]


CHUNK_SIZES = {"one": 2, "two": 4, "pairs": 8}


def select_active(ops: Ops, rule: str, lanes: Sequence[BV], selectors: Sequence[BV]
                  ) -> list[BV]:
    """Compact the logical-K ``lanes`` to the active ones (half of them), in order."""
    size = CHUNK_SIZES[rule]
    if len(lanes) != size * len(selectors):
        raise ValueError(f"{len(lanes)} lanes do not split into {len(selectors)} chunks "
                         f"of {size}")
    active = []
    for j, selector in enumerate(selectors):
        active += select_chunk(ops, rule, selector, lanes[size * j:size * (j + 1)])
    return active
