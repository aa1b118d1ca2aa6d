"""The ``mma-sim`` candidate: the published MMA-Sim model of tcgen05 (SEMANTICS.md section 7).

Two rules differ from the hardware model. Unscaled paths and MXF8F6F4: C and
every product take part in the window maximum, zeros included (a zero factor
or a zero C has exponent -126), with no -133 clamp and no "every product
zero: D = C" rule. MXF4, MXF4NVF4 and NVFP4: one term per 16-element chunk
(its exact product sum times its block's scales) whose window exponent is the
sum of the two scale exponents; C and all four chunks set ``R``, and every
term is truncated to ``2^(R - 35)``. Specials as section 2, plus NaN scales.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.accumulate import (
    align_to_quantum,
    align_to_window,
    exact_product,
    exact_sum,
    masked_max,
)
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import exact_group_sum
from tcspec.spec.convert import Output, encode_output
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import EXP_WIDTH, FORMATS, Decoded, FloatFormat
from tcspec.spec.inputs import DotInputs
from tcspec.spec.specials import apply_specials, decode_operands
from tcspec.spec.window import DESTINATIONS, WINDOW_BITS

ZERO_EXPONENT = -126
"""MMA-Sim's exponent of a zero factor, zero scale or zero C, whatever the format."""

CHUNK = 16
"""Elements per term on the FP4 paths (MXF4, MXF4NVF4, NVFP4)."""

CHUNK_WINDOW = 35
"""Fraction bits of the FP4 paths' window below ``R``."""

F32 = FORMATS["f32"]


def factor_exponent(ops: Ops, x: Decoded) -> BV:
    """The unbiased exponent (a subnormal's is the minimum normal one); -126 for a zero."""
    return ops.ite(x.is_zero, ops.const(ZERO_EXPONENT, EXP_WIDTH), x.raw)


def window_top(ops: Ops, exponents: Sequence[BV], nonzero: Sequence[Bool], *,
               zeros_in_max: bool, clamp: int | None) -> BV:
    """``R``: the largest term exponent, zeros counted (MMA-Sim) or left out (B200, section
    2.4), then raised to ``clamp`` when one is given."""
    if zeros_in_max:
        top = ops.smax_all(exponents)
    else:
        top, _ = masked_max(ops, exponents, nonzero)
    return top if clamp is None else ops.smax(top, clamp)


def mma_sim_window_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                       d_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV,
                       scale_a: Sequence[BV] = (), scale_b: Sequence[BV] = (),
                       scale_format: FloatFormat | None = None, block: int = 1, *,
                       window: int = WINDOW_BITS, zeros_in_max: bool = True,
                       clamp: int | None = None, output: Output | None = None) -> BV:
    """Unscaled paths and MXF8F6F4 (scales given): one ``window``-bit window over every term.

    ``c`` is read in ``d_format``. The defaults are MMA-Sim's tcgen05 rules (F = 25, zeros
    in the maximum, no clamp, the D format's rounding); other architectures and the
    B200-derived candidates are other values (SEMANTICS.md sections 7 and 10).
    """
    operands = decode_operands(ops, a_format, b_format, d_format, a, b, c, scale_format,
                               scale_a, scale_b)
    lanes_a, lanes_b, acc = operands.a, operands.b, operands.c
    scales_a, scales_b, specials = operands.scale_a, operands.scale_b, operands.specials

    terms = [exact_product(ops, x.term, y.term) for x, y in zip(lanes_a, lanes_b)]
    exponents = [ops.add(factor_exponent(ops, x), factor_exponent(ops, y))
                 for x, y in zip(lanes_a, lanes_b)]
    if scales_a:
        pairs = [exact_product(ops, x.term, y.term) for x, y in zip(scales_a, scales_b)]
        terms = [exact_product(ops, t, pairs[i // block]) for i, t in enumerate(terms)]
        exponents = [ops.add(e, pairs[i // block].raw) for i, e in enumerate(exponents)]
    terms.append(acc.term)
    exponents.append(factor_exponent(ops, acc))
    top = window_top(ops, exponents, [t.nonzero for t in terms], zeros_in_max=zeros_in_max,
                     clamp=clamp)
    quantum = ops.sub(top, window)
    units = [align_to_window(ops, term, quantum, window) for term in terms]
    ops.observe("align", quantum=quantum, window=window, terms=terms, units=units,
                rounding="rz")
    out = output or Output(d_format, DESTINATIONS[d_format.name])
    finite = encode_output(ops, exact_sum(ops, units), quantum, out)
    return apply_specials(ops, specials, finite, out.word_format)


def mma_sim_chunk_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                      scale_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV,
                      scale_a: Sequence[BV], scale_b: Sequence[BV], *, block: int,
                      window: int = CHUNK_WINDOW, zeros_in_max: bool = True) -> BV:
    """MXF4, MXF4NVF4 and NVFP4: chunk terms anchored at their scale exponents, to F32 RZ.

    ``zeros_in_max=False`` leaves all-zero chunks and a zero C out of ``R`` (the B200-derived
    candidate of section 10).
    """
    operands = decode_operands(ops, a_format, b_format, F32, a, b, c, scale_format,
                               scale_a, scale_b)
    lanes_a, lanes_b, acc = operands.a, operands.b, operands.c
    scales_a, scales_b, specials = operands.scale_a, operands.scale_b, operands.specials

    elements = [exact_product(ops, x.term, y.term) for x, y in zip(lanes_a, lanes_b)]
    pairs = [exact_product(ops, x.term, y.term) for x, y in zip(scales_a, scales_b)]
    pair_exponents = [ops.add(factor_exponent(ops, x), factor_exponent(ops, y))
                      for x, y in zip(scales_a, scales_b)]
    chunks, exponents = [], []
    for start in range(0, len(a), CHUNK):
        pair = pairs[start // block]
        products = [exact_product(ops, e, pair) for e in elements[start:start + CHUNK]]
        chunks.append(exact_group_sum(ops, a_format, b_format, elements[start:start + CHUNK],
                                      pair, products))
        exponents.append(pair_exponents[start // block])
    exponents.append(factor_exponent(ops, acc))
    top = window_top(ops, exponents, [g.nonzero for g in chunks] + [acc.term.nonzero],
                     zeros_in_max=zeros_in_max, clamp=None)
    quantum = ops.sub(top, window)

    excess = (a_format.max_raw + 1) + (b_format.max_raw + 1) + (CHUNK - 1).bit_length() + 2
    units = [align_to_quantum(ops, g.negative, g.mag, g.exponent, quantum,
                              max(window + excess, g.mag.width) + 1) for g in chunks]
    units.append(align_to_window(ops, acc.term, quantum, window))
    finite = encode_output(ops, exact_sum(ops, units), quantum, Output(F32, "rz"))
    return apply_specials(ops, specials, finite, F32)


def mma_sim_dot(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
    """The ``mma-sim`` word of a dense float or block-scaled datapath."""
    fa, fb, fd = FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.d_type]
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fd, FloatFormat)
    if desc.family == "window":
        return mma_sim_window_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c)
    fs = FORMATS[desc.scaling]
    assert isinstance(fs, FloatFormat) and desc.scale_block is not None
    if desc.kind == "mxf8f6f4":
        return mma_sim_window_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c, inputs.scale_a,
                                  inputs.scale_b, fs, desc.scale_block)
    return mma_sim_chunk_dot(ops, fa, fb, fs, inputs.a, inputs.b, inputs.c, inputs.scale_a,
                             inputs.scale_b, block=desc.scale_block)
