"""Section 11.4: CDNA1/CDNA2 f16 and bf16 pairwise trees (family ``pairwise-tree``).

**Unvalidated** (no vector exists: the published model fails on these instructions).
The rules, with the operands widened exactly to F32 and C and D F32:

- K is cut into consecutive groups of :func:`group_size` products (f16 4, bf16 2,
  CDNA2's ``bf16_1k`` 4).
- Each leaf is ``fmaf(a, b, +0)``: the exact product rounded once to F32, nearest
  even (exact for f16; bf16 rounds only on F32 underflow or overflow). An exact zero
  product gives ``+0`` (``-0 + +0`` is ``+0``); a nonzero product that rounds to zero
  keeps its sign. Specials as IEEE: a NaN factor or Inf x 0 is NaN, an infinite
  factor the infinity of the product's sign (:func:`leaf_word`).
- Each node is ``fmaf(l, 1, r)``, an F32 RNE add, here literally section 11.1's
  :func:`~tcspec.proofs.rulebook.fma.fma_word` with ``B = 1.0`` (``0x3F800000``), over
  a recursive halving tree (4 products: ``((p0 + p1) + (p2 + p3))``).
- The running value starts as C; each group's root is added to it with an F32 RNE add,
  running value first (``fmaf(acc, 1, root)``).
- CDNA2 only (``ftz``): A, B and C values below their format's smallest normal
  (exponent field 0: zeros and subnormals) become ``+0`` first; every leaf, node and
  running value below ``2^-126`` (an F32 word with exponent field 0) becomes a zero of
  its own sign.
- NaN is the canonical ``0x7FFFFFFF`` (every add is an 11.1 FMA step, whose NaN that is).

Reading (11.4 leaves it to "the code's evident reading"): the running value after
each group add is flushed (CDNA2), and the flushed C is the first running value; the
final D is the last running value. The leaf's rounding is done here directly
(``rounding.F32_RNE`` of ``+-mA*mB * 2^(eA + eB)``), which is ``fmaf(a, b, +0)``: the
exact product plus an exact ``+0`` is rounded once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tcspec.spec.bitvec import BV, Ops

from .fields import decode, fields_of, fmt, special_word
from .fma import fma_word
from .names import PAIRWISE_TREE, Datapath
from .result import Result
from .rounding import F32_RNE, convert

ONE_F32 = 0x3F800000
"""1.0 in F32: the multiplier of each node's ``fmaf(l, 1, r)``."""

F32_SIGN = 0x80000000

GROUPS = {"f16": 4, "bf16": 2}
"""11.4's table: the group size by operand format (``_1k`` bf16: :data:`GROUP_1K`)."""

GROUP_1K = 4

FTZ_ARCHS = ("cdna2",)
"""11.4: the flush rules are CDNA2's (CDNA1 keeps subnormals)."""

_F32 = "f32"


def group_size(rec: Datapath) -> int:
    """11.4's group: 4 for f16, 2 for bf16, 4 for CDNA2's ``bf16_1k`` (``_1k`` shape)."""
    if rec.a_format != rec.b_format or rec.a_format not in GROUPS:
        raise ValueError(f"{rec.name}: no section-11.4 row for {rec.a_format} x {rec.b_format}")
    if rec.shape is not None and rec.shape.endswith("_1k"):
        if rec.a_format != "bf16":
            raise ValueError(f"{rec.name}: only bf16 has a _1k row")
        return GROUP_1K
    return GROUPS[rec.a_format]


def flush_input(ops: Ops, word: BV, format_name: str) -> BV:
    """CDNA2: a value below the format's smallest normal (exponent field 0, zeros
    included) becomes ``+0`` (the all-zero word)."""
    _, exp, _ = fields_of(ops, word, fmt(format_name))
    return ops.ite(ops.eq(exp, 0), ops.const(0, word.width), word)


def flush_f32(ops: Ops, word: BV) -> BV:
    """CDNA2: an F32 word below ``2^-126`` (exponent field 0) becomes a zero of its sign."""
    _, exp, _ = fields_of(ops, word, fmt(_F32))
    return ops.ite(ops.eq(exp, 0), ops.bvand(word, F32_SIGN), word)


def leaf_word(ops: Ops, a_word: BV, b_word: BV, format_name: str) -> BV:
    """``fmaf(a, b, +0)`` for two operand words of ``format_name`` widened exactly to F32:
    the exact product rounded to F32 RNE (``+0`` for an exact zero product)."""
    f = fmt(format_name)
    a, b = decode(ops, a_word, f), decode(ops, b_word, f)
    negative = a.sign ^ b.sign
    m = ops.mul_wide(a.m, b.m)
    units = ops.zext(m, m.width + 1)
    units = ops.ite(negative, ops.neg(units), units)
    e = ops.sub(ops.add(a.r, b.r), 2 * f.F)
    finite = convert(ops, units, e, F32_RNE)
    nan = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf)
    inf = (a.inf | b.inf) & ~nan
    return special_word(ops, _F32, nan, inf & ~negative, inf & negative, finite)


def add_f32(ops: Ops, left: BV, right: BV) -> BV:
    """An F32 RNE add as 11.4 writes it: ``fmaf(left, 1, right)`` (11.1's FMA step)."""
    return fma_word(ops, left, ops.const(ONE_F32, 32), right, _F32)


def tree(ops: Ops, values: Sequence[BV], ftz: bool) -> BV:
    """The recursive halving tree of F32 RNE adds over ``values`` (flushed nodes when
    ``ftz``)."""
    if len(values) == 1:
        return values[0]
    half = len(values) // 2
    node = add_f32(ops, tree(ops, values[:half], ftz), tree(ops, values[half:], ftz))
    return flush_f32(ops, node) if ftz else node


def pairwise_dot(ops: Ops, format_name: str, group: int, ftz: bool, a_words: Sequence[BV],
                 b_words: Sequence[BV], c_word: BV) -> BV:
    """11.4 on raw words: groups of ``group`` leaves, each summed by its tree and added to
    the running value (which starts as C); ``ftz`` applies CDNA2's flush rules."""
    k = len(a_words)
    if len(b_words) != k or not k or k % group:
        raise ValueError(f"pairwise_dot needs K A and B words, K a multiple of {group}")
    if ftz:
        a_words = [flush_input(ops, w, format_name) for w in a_words]
        b_words = [flush_input(ops, w, format_name) for w in b_words]
        c_word = flush_input(ops, c_word, _F32)
    acc = c_word
    for lo in range(0, k, group):
        leaves = [leaf_word(ops, a, b, format_name)
                  for a, b in zip(a_words[lo:lo + group], b_words[lo:lo + group])]
        if ftz:
            leaves = [flush_f32(ops, leaf) for leaf in leaves]
        acc = add_f32(ops, acc, tree(ops, leaves, ftz))
        if ftz:
            acc = flush_f32(ops, acc)
    return acc


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The ``pairwise-tree`` family function (11.4)."""
    if rec.c_format != _F32 or rec.d_format != _F32:
        raise ValueError(f"{rec.name}: the pairwise trees have F32 C and D")
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    word = pairwise_dot(ops, rec.a_format, group_size(rec), rec.arch in FTZ_ARCHS,
                        a_words, b_words, words["c"])
    return Result(word, ops.true())


FAMILIES = {PAIRWISE_TREE: dot}
