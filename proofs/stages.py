"""The unscaled window datapath rebuilt stage by stage, for proofs that cut at stage boundaries.

:func:`window_stages` calls exactly the stage functions of
:func:`spec.window.window_dot` (SEMANTICS.md section 2: decode, specials,
exact products, window, alignment, exact sum, conversion, specials applied)
and keeps every intermediate value. :func:`rebuilds_datapath` checks on the
trace that the rebuilt word is the *same hash-consed node* as
``build_dot``'s, so a proof that reasons about these stages reasons about
the datapath itself, with no stage left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.smt.trace import TraceOps
from tcspec.spec.accumulate import (
    align_to_window,
    exact_product,
    exact_sum,
    masked_max,
    max_raw,
    window_exponent,
)
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import GroupSum, align_group, exact_group_sum, rules_for
from tcspec.spec.catalog import DotInputs, build_dot, input_layout, inputs_from
from tcspec.spec.convert import encode_float
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat, Term
from tcspec.spec.specials import (
    Operands,
    Specials,
    apply_specials,
    decode_operands,
)
from tcspec.spec.window import DESTINATIONS, WINDOW_BITS, default_clamp


@dataclass(frozen=True)
class WindowRun:
    """Every stage value of one window dot product."""

    operands: Operands
    specials: Specials
    terms: list[Term]
    top: BV
    quantum: BV
    units: list[BV]
    total: BV
    finite: BV
    word: BV


def formats_of(desc: Descriptor) -> tuple[FloatFormat, FloatFormat, FloatFormat]:
    fa, fb, fd = FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.d_type]
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fd, FloatFormat)
    return fa, fb, fd


def window_from_operands(ops: Ops, operands: Operands, d_format: FloatFormat,
                         clamp: int | None) -> WindowRun:
    """Stages 3-7 of section 2 on decoded operands (the hardware window and rounding)."""
    terms = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    terms.append(operands.c.term)
    top = window_exponent(ops, terms, clamp)
    quantum = ops.sub(top, WINDOW_BITS)
    units = [align_to_window(ops, term, quantum, WINDOW_BITS) for term in terms]
    total = exact_sum(ops, units)
    finite = encode_float(ops, total, quantum, d_format, DESTINATIONS[d_format.name])
    word = apply_specials(ops, operands.specials, finite, d_format)
    return WindowRun(operands, operands.specials, terms, top, quantum, units, total, finite,
                     word)


def window_stages(ops: Ops, desc: Descriptor, inputs: DotInputs) -> WindowRun:
    """``desc``'s window datapath (any K) with every stage value kept."""
    fa, fb, fd = formats_of(desc)
    operands = decode_operands(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c)
    return window_from_operands(ops, operands, fd, default_clamp(fa, fb))


@dataclass(frozen=True)
class ScaledRun:
    """Every stage value of one MXF8F6F4 dot product (section 4: one product per group)."""

    specials: Specials
    products: list[Term]
    c_term: Term
    c_dominant: Bool
    quanta: tuple[BV, BV]
    units: tuple[list[BV], list[BV]]
    totals: tuple[BV, BV]
    total: BV
    quantum: BV
    word: BV


def scaled_stages(ops: Ops, desc: Descriptor, inputs: DotInputs) -> ScaledRun:
    """MXF8F6F4's block-scaled datapath (groups of one product) with every stage value kept:
    the C-dominant and the product path, each aligned term by term and summed exactly."""
    fa, fb, _ = formats_of(desc)
    fs, f32 = FORMATS[desc.scaling or ""], FORMATS["f32"]
    assert isinstance(fs, FloatFormat) and isinstance(f32, FloatFormat)
    rules = rules_for(desc.kind, desc.scaling or "")
    if (rules.product_group, rules.c_dominant_group, rules.scale_window) != (1, 1, None):
        raise ValueError(f"{desc.name} sums groups of more than one product")
    block = desc.scale_block or 1
    operands = decode_operands(ops, fa, fb, f32, inputs.a, inputs.b, inputs.c, fs,
                               inputs.scale_a, inputs.scale_b)
    specials, acc = operands.specials, operands.c
    pairs = [exact_product(ops, x.term, y.term)
             for x, y in zip(operands.scale_a, operands.scale_b)]
    products = [exact_product(ops, exact_product(ops, x.term, y.term), pairs[i // block])
                for i, (x, y) in enumerate(zip(operands.a, operands.b))]
    top, any_product = max_raw(ops, products)
    c_term = acc.term
    c_dominant = ops.and_(c_term.nonzero, ops.or_(ops.not_(any_product), ops.sge(acc.raw, top)))
    quanta = (ops.sub(acc.raw, rules.c_window), ops.sub(top, rules.product_window))
    bound = max(rules.product_window, rules.c_window)
    units = tuple([align_to_window(ops, t, q, bound) for t in [*products, c_term]]
                  for q in quanta)
    totals = (exact_sum(ops, units[0]), exact_sum(ops, units[1]))
    width = max(t.width for t in totals)
    total = ops.ite(c_dominant, ops.sext(totals[0], width), ops.sext(totals[1], width))
    quantum = ops.ite(c_dominant, quanta[0], quanta[1])
    word = apply_specials(ops, specials, encode_float(ops, total, quantum, f32, "rz"), f32)
    return ScaledRun(specials, products, c_term, c_dominant, quanta, units, totals, total,
                     quantum, word)


@dataclass(frozen=True)
class GroupedRun(ScaledRun):
    """Every stage value of a block-scaled dot product whose paths sum groups of products
    exactly before truncating (NVFP4: 4 on the product path, 16 on the C-dominant path); the
    units of each path are its groups' and then C's."""

    top: BV
    scale_top: BV
    groups: tuple[list[GroupSum], list[GroupSum]]


def grouped_stages(ops: Ops, desc: Descriptor, inputs: DotInputs) -> GroupedRun:
    """``block_scaled_dot`` (section 4) for rules without the per-group C merge and the
    subnormal floor, every stage value kept; in each pair the C-dominant path comes first."""
    fa, fb, _ = formats_of(desc)
    fs, f32 = FORMATS[desc.scaling or ""], FORMATS["f32"]
    assert isinstance(fs, FloatFormat) and isinstance(f32, FloatFormat)
    rules = rules_for(desc.kind, desc.scaling or "")
    if rules.group_c_merge or rules.subnormal_floor is not None or rules.scale_window is None:
        raise ValueError(f"{desc.name} merges groups with C or floors subnormals")
    block = desc.scale_block or 1
    operands = decode_operands(ops, fa, fb, f32, inputs.a, inputs.b, inputs.c, fs,
                               inputs.scale_a, inputs.scale_b)
    pairs = [exact_product(ops, x.term, y.term)
             for x, y in zip(operands.scale_a, operands.scale_b)]
    elements = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    products = [exact_product(ops, e, pairs[i // block]) for i, e in enumerate(elements)]
    top, any_product = max_raw(ops, products)
    scale_top, _ = masked_max(ops, [pairs[i // block].raw for i in range(len(products))],
                              [p.nonzero for p in products])
    c_term = operands.c.term
    c_dominant = ops.and_(c_term.nonzero, ops.or_(ops.not_(any_product),
                                                  ops.sge(operands.c.raw, top)))
    quanta = (ops.sub(operands.c.raw, rules.c_window),
              ops.smax(ops.sub(top, rules.product_window),
                       ops.sub(scale_top, rules.scale_window)))
    bound = max(rules.product_window, rules.c_window)
    groups = tuple([exact_group_sum(ops, fa, fb, elements[start:start + size],
                                    pairs[start // block], products[start:start + size])
                    for start in range(0, len(products), size)]
                   for size in (rules.c_dominant_group, rules.product_group))
    units = tuple([*[align_group(ops, g, q, bound) for g in path],
                   align_to_window(ops, c_term, q, bound)] for path, q in zip(groups, quanta))
    totals = (exact_sum(ops, units[0]), exact_sum(ops, units[1]))
    width = max(t.width for t in totals)
    total = ops.ite(c_dominant, ops.sext(totals[0], width), ops.sext(totals[1], width))
    quantum = ops.ite(c_dominant, quanta[0], quanta[1])
    word = apply_specials(ops, operands.specials, encode_float(ops, total, quantum, f32, "rz"),
                          f32)
    return GroupedRun(operands.specials, products, c_term, c_dominant, quanta,
                      (units[0], units[1]), totals, total, quantum, word, top, scale_top,
                      (groups[0], groups[1]))


def traced_inputs(desc: Descriptor, k: int) -> tuple[TraceOps, DotInputs]:
    """A fresh trace with one variable per input word of ``desc`` at logical ``k``."""
    ops = TraceOps()
    layout = input_layout(desc, k)
    return ops, inputs_from(layout, [ops.variable(s.name, s.width) for s in layout])


def run_stages(ops: Ops, desc: Descriptor, inputs: DotInputs) -> WindowRun | ScaledRun:
    """The stage rebuild of ``desc``: window, block with single-product groups, or grouped."""
    if desc.family != "block":
        return window_stages(ops, desc, inputs)
    rules = rules_for(desc.kind, desc.scaling or "")
    if (rules.product_group, rules.c_dominant_group) == (1, 1):
        return scaled_stages(ops, desc, inputs)
    return grouped_stages(ops, desc, inputs)


def rebuilds_datapath(desc: Descriptor, k: int) -> bool:
    """Whether the stage rebuild (:func:`run_stages`) gives ``build_dot``'s own output node
    at logical ``k``."""
    ops, inputs = traced_inputs(desc, k)
    return run_stages(ops, desc, inputs).word.node is build_dot(ops, desc, inputs,
                                                                any_k=True).node
