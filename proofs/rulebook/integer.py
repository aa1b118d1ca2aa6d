"""Section 3: integer (kind::i8) -> S32.

Each A and B byte (the low 8 bits of its word) is read as u8 (0..255) or s8
(-128..127), independently for A and B; C is a two's-complement S32 word. C
and all K = 32 products are summed exactly; wrapping mode keeps the sum mod
``2^32``, saturating mode clamps it once, after the exact sum, to
``[-2^31, 2^31 - 1]``. No windows, no specials.

Widths: a byte is read as a 9-bit signed value (u8 zero-extended, s8
sign-extended); a product of two is exact in 18 signed bits
(``|p| <= 255 * 255 < 2^17``); the sum of C and 32 products lies in
``[-2^31 - 2^21, 2^31 + 2^21)``, so :data:`SUM_BITS` = 33 signed bits hold it.
Sum order: C first, then the products in ascending k.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tcspec.spec.bitvec import BV, Ops

from .names import INTEGER, Datapath
from .result import Result

BYTE_BITS = 9
PRODUCT_BITS = 2 * BYTE_BITS
SUM_BITS = 33
S32_MAX = (1 << 31) - 1
S32_MIN = -(1 << 31)


def read_byte(ops: Ops, word: BV, signedness: str) -> BV:
    """The low byte of ``word`` as a 9-bit signed value: ``u8`` or ``s8`` (section 3)."""
    byte = ops.extract(word, 7, 0)
    if signedness == "u8":
        return ops.zext(byte, BYTE_BITS)
    if signedness == "s8":
        return ops.sext(byte, BYTE_BITS)
    raise ValueError(f"unknown integer format {signedness!r}")


def integer_dot(ops: Ops, a_format: str, b_format: str, mode: str, a_words: Sequence[BV],
                b_words: Sequence[BV], c_word: BV) -> BV:
    """Section 3 on raw words: the S32 D word (``mode`` ``wrap`` or ``saturate``)."""
    if mode not in ("wrap", "saturate"):
        raise ValueError(f"unknown integer mode {mode!r}")
    if len(a_words) != len(b_words):
        raise ValueError("integer_dot needs equally many A and B words")
    total = ops.sext(c_word, SUM_BITS)
    for a, b in zip(a_words, b_words):
        pa = ops.sext(read_byte(ops, a, a_format), PRODUCT_BITS)
        pb = ops.sext(read_byte(ops, b, b_format), PRODUCT_BITS)
        total = ops.add(total, ops.sext(ops.mul(pa, pb), SUM_BITS))
    if mode == "saturate":
        total = ops.ite(ops.sgt(total, S32_MAX), ops.const(S32_MAX, SUM_BITS), total)
        total = ops.ite(ops.slt(total, S32_MIN), ops.const(S32_MIN, SUM_BITS), total)
    return ops.extract(total, 31, 0)


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The section-3 family function: ``i8-<a>-<b>-<wrap|saturate>``."""
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    word = integer_dot(ops, rec.a_format, rec.b_format, rec.int_mode or "", a_words, b_words,
                       words["c"])
    return Result(word, ops.true())


FAMILIES = {INTEGER: dot}
