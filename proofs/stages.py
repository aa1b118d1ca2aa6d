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

from smt.trace import TraceOps
from spec.accumulate import align_to_window, exact_product, exact_sum, window_exponent
from spec.bitvec import BV, Ops
from spec.catalog import DotInputs, build_dot, input_layout, inputs_from
from spec.convert import encode_float
from spec.descriptor import Descriptor
from spec.exact import Operands, decode_operands
from spec.formats import FORMATS, FloatFormat, Term
from spec.specials import Specials, apply_specials
from spec.window import DESTINATIONS, WINDOW_BITS, default_clamp


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


def rebuilds_datapath(desc: Descriptor, k: int) -> bool:
    """Whether :func:`window_stages` gives ``build_dot``'s own output node at logical ``k``."""
    ops = TraceOps()
    layout = input_layout(desc, k)
    inputs = inputs_from(layout, [ops.variable(s.name, s.width) for s in layout])
    return window_stages(ops, desc, inputs).word.node is build_dot(ops, desc, inputs,
                                                                   any_k=True).node
