"""Sign symmetry: negating every A element and C negates D (SEMANTICS.md 2.5, 2.7, 4, 10.3).

The second run reads each A word and C with its value negated: the sign bit of the
format's field table flipped (an fnuz zero, whose flipped pattern would be the NaN, and
the fnuz NaN stay as they are, 11.3). Truncation toward zero and round-to-nearest-even are
both odd, so D negates, with the rule text's exceptions:

- a NaN D stays the canonical NaN (2.2);
- NVIDIA datapaths (sections 2, 4, 5, 10.3, 10.6) give ``+0`` for every zero result, so a
  zero D stays ``+0``;
- the AMD families (11.1-11.4) add in IEEE arithmetic, where an exact cancellation gives
  ``+0`` under round-to-nearest whatever the operands' signs: a zero D maps to a zero of
  either sign.
"""

from __future__ import annotations

from tcspec.proofs.engine.relations import Classes, WordRelation
from tcspec.proofs.families.declare import Family, Words, as_property
from tcspec.proofs.rulebook.fields import D_FORMATS, FNUZ, FORMATS, DFormat, dfmt
from tcspec.proofs.rulebook.names import CDNA3_RD, FMA_CHAIN, INTEGER, PAIRWISE_TREE, Datapath
from tcspec.spec.bitvec import BV, Ops

IEEE_ZERO_FAMILIES = (FMA_CHAIN, CDNA3_RD, PAIRWISE_TREE)
"""Sections 11.1-11.4: IEEE adds, where the sign of a zero result depends on the operands."""


def negated_value(ops: Ops, word: BV, format_name: str) -> BV:
    """``word`` with its value negated: the format's sign bit flipped (section 1's field
    table); an fnuz word whose other bits are all zero (zero, or the NaN) unchanged."""
    f = FORMATS[format_name]
    assert f.sign_bit is not None
    flipped = ops.bvxor(word, ops.const(1 << f.sign_bit, word.width))
    if f.specials != FNUZ:
        return flipped
    rest = ops.extract(word, f.sign_bit - 1, 0)
    return ops.ite(ops.eq(rest, 0), word, flipped)


def negate_a_and_c(ops: Ops, rec: Datapath, words: Words) -> Words:
    out = dict(words)
    for name, word in words.items():
        role = name.rstrip("0123456789")
        if role == "a":
            out[name] = negated_value(ops, word, rec.a_format)
        elif role == "c":
            out[name] = negated_value(ops, word, rec.c_format)
    return out


def negated_word(ops: Ops, word: BV, d: DFormat) -> BV:
    """An NVIDIA D word of format ``d`` negated: the sign flipped, a zero (``+0``, 2.5) and
    the canonical NaN (2.2) unchanged."""
    is_zero = ops.eq(ops.extract(word, d.width - 2, 0), 0)
    is_nan = ops.eq(word, d.nan)
    flipped = ops.bvxor(word, ops.const(d.sign_mask, d.width))
    return ops.ite(ops.or_(is_zero, is_nan), word, flipped)


def d_negates(ops: Ops, rec: Datapath, first: BV, second: BV) -> tuple[BV, BV]:
    """(the D the rule text expects of the second run, its D)."""
    d = dfmt(rec.d_format)
    top = d.width - 1
    is_zero = ops.eq(ops.extract(first, top - 1, 0), 0)
    expected = negated_word(ops, first, d)
    if rec.family not in IEEE_ZERO_FAMILIES:
        return expected, second
    second_zero = ops.eq(ops.extract(second, top - 1, 0), 0)
    plus_zero = ops.const(0, d.width)
    return (ops.ite(is_zero, plus_zero, expected),
            ops.ite(second_zero, plus_zero, second))


def flipped_word(ops: Ops, word: BV, d: DFormat) -> BV:
    """A word of format ``d`` with its sign flipped, zeros included; the NaN unchanged."""
    return ops.ite(ops.eq(word, d.nan), word, ops.bvxor(word, ops.const(d.sign_mask, d.width)))


def zero_classes(d: DFormat) -> Classes:
    """IEEE zeros as one class: ``+0`` its representative, the sign bit picking the member
    (11.1-11.4: the sign of an exact cancellation follows the operands)."""
    top = d.width - 1

    def canon(ops: Ops, word: BV) -> BV:
        return ops.ite(ops.eq(ops.extract(word, top - 1, 0), 0), ops.const(0, d.width), word)

    def choose(ops: Ops, word: BV, sign: BV) -> BV:
        return ops.ite(ops.eq(word, 0), ops.concat(sign, ops.const(0, top)), word)

    return Classes(f"zero-sign-{d.name}", 1, canon, choose,
                   lambda ops, word: ops.extract(word, top, top))


def negated_steps(rec: Datapath) -> tuple[WordRelation, ...]:
    """The hint: a split-K step's D word (10.4) of the second run is the first run's
    :func:`negated_word`; a pairwise tree's word (11.4) its :func:`negated_word` or its
    :func:`flipped_word` (a zero's sign follows its operands). An FMA chain's running word
    (11.1) is the first's flipped word only up to the sign of a zero (an exact
    cancellation gives ``+0``, two zeros the AND of their signs): a loose relation
    (:func:`zero_classes`), offered alone, since the inputs that tell it from the strict
    ones (two zero addends) are too rare for the samples to find."""
    formats = sorted({dfmt(name) for name in (rec.d_format, rec.c_format) if name in D_FORMATS},
                     key=lambda d: d.width)
    if rec.family == FMA_CHAIN:
        return tuple(WordRelation(f"negated-any-zero-{d.name}", d.width,
                                  lambda ops, word, d=d: flipped_word(ops, word, d),
                                  zero_classes(d)) for d in formats)
    hints = [WordRelation(f"negated-{d.name}", d.width,
                          lambda ops, word, d=d: negated_word(ops, word, d)) for d in formats]
    if rec.family in IEEE_ZERO_FAMILIES:
        hints += [WordRelation(f"flipped-{d.name}", d.width,
                               lambda ops, word, d=d: flipped_word(ops, word, d))
                  for d in formats]
    return tuple(hints)


def applies(rec: Datapath) -> bool:
    """Every datapath with float A and C words (section 3's integer paths have no sign
    symmetry: ``-(-128)`` is not an s8)."""
    return rec.family != INTEGER and rec.a_format in FORMATS and rec.c_format in FORMATS


SIGN_SYMMETRY = Family(
    "sign-symmetry",
    "negating every A element and C negates D (zero: +0 on NVIDIA paths, any zero on AMD "
    "IEEE paths; NaN stays canonical)",
    applies, negate_a_and_c, d_negates,
    statement="D(-A, B, -C) = -D(A, B, C)", hints=negated_steps)

PROPERTIES = (as_property(SIGN_SYMMETRY, ("spec (every float family)",)),)
