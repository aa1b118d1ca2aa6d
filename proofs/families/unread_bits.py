"""Unread bits: the bits of a raw word outside its format's container never move D
(SEMANTICS.md section 1).

"A format narrower than 32 bits reads only its low bits and ignores the rest"; tf32 and
bf16 clear their low 13 and 16 fraction bits before anything reads them; a UE4M3 scale
ignores bit 7; u8 and s8 read the low 8 bits. The second run reads every A, B, C and scale
word with those bits cleared, and D must be the same word. The read bits of each format
come from the rule book's field table (``container`` and ``cleared``), the integer and
scale widths from section 1's table as written here.
"""

from __future__ import annotations

from tcspec.proofs.families.declare import Family, Words, as_property
from tcspec.proofs.rulebook.fields import FORMATS
from tcspec.proofs.rulebook.names import Datapath, layout
from tcspec.spec.bitvec import BV, Ops

INTEGER_CONTAINER = 8
"""Section 1: u8 / s8 read the low 8 bits of their word (an S32 C reads all 32)."""


def read_mask(format_name: str, word_bits: int) -> int:
    """The bits of a ``word_bits``-wide word that format ``format_name`` reads."""
    if format_name in ("u8", "s8"):
        return (1 << INTEGER_CONTAINER) - 1
    f = FORMATS.get(format_name)
    if f is None:
        return (1 << word_bits) - 1
    return ((1 << min(f.container, word_bits)) - 1) & ~((1 << f.cleared) - 1)


def _format_of(rec: Datapath, word: str) -> str | None:
    role = word.rstrip("0123456789")
    return {"a": rec.a_format, "b": rec.b_format, "c": rec.c_format,
            "scale_a": rec.scaling, "scale_b": rec.scaling}.get(role)


def cleared_words(ops: Ops, rec: Datapath, words: Words) -> Words:
    out = dict(words)
    for name, word in words.items():
        fmt_name = _format_of(rec, name)
        if fmt_name is None:
            continue
        mask = read_mask(fmt_name, word.width)
        if mask != (1 << word.width) - 1:
            out[name] = ops.bvand(word, ops.const(mask, word.width))
    return out


def d_unchanged(ops: Ops, rec: Datapath, first: BV, second: BV) -> tuple[BV, BV]:
    return first, second


def applies(rec: Datapath) -> bool:
    """Every datapath with a word whose format leaves some of its bits unread."""
    for name, width in layout(rec.name):
        fmt_name = _format_of(rec, name)
        if fmt_name is not None and read_mask(fmt_name, width) != (1 << width) - 1:
            return True
    return False


UNREAD_BITS = Family(
    "ignores-unread-bits",
    "the bits of an A, B, C or scale word outside its format (tf32/bf16 low fraction bits, "
    "bits above a narrow container, UE4M3 bit 7) never change D",
    applies, cleared_words, d_unchanged,
    statement="D(words) = D(words with unread bits cleared)")

PROPERTIES = (as_property(UNREAD_BITS, ("spec (decode of every format)",)),)
