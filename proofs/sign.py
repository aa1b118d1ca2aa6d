"""Sign symmetry of the float datapaths (covers spec/formats, spec/specials, spec/accumulate,
spec/convert, spec/window, spec/blockscaled).

Flipping the format's own sign bit of every A element and of C negates D,
except that a zero D stays +0 and a NaN stays the canonical NaN; the same
for B. Truncation toward zero (SEMANTICS.md sections 2.5 and 2.7) is what
makes this hold: a rounding mode that is not symmetric would break it. The
property compares the specification with itself on changed inputs, so it
needs no second formulation.
"""

from __future__ import annotations

from proofs.core import (
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    layout_variables,
    run_dot,
)
from spec.bitvec import BV, Bool, Ops
from spec.catalog import DotInputs, output_width
from spec.descriptor import Descriptor
from spec.formats import FORMATS, FloatFormat
from spec.specials import canonical_nan

REQUIRED = ("dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3", "dense-e5m2", "dense-e2m3",
            "dense-e3m2", "dense-e2m1", "dense-nvfp4", "dense-mx-e4m3")


def sign_bit(name: str) -> int:
    """The bit of a raw word that holds the format's sign (section 1 container layout)."""
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    return fmt.container_bits - 1


def _flip(ops: Ops, word: BV, bit: int) -> BV:
    return ops.bvxor(word, 1 << bit)


def negated(ops: Ops, d: BV, d_format: FloatFormat) -> BV:
    """``-d`` as the datapath must give it: a zero stays +0, a NaN stays canonical."""
    top = d.width - 1
    magnitude = ops.extract(d, top - 1, 0)
    is_zero = ops.eq(magnitude, 0)
    is_nan = ops.eq(d, canonical_nan(d_format))
    flipped = _flip(ops, d, top)
    return ops.ite(ops.or_(is_zero, is_nan), d, flipped)


def sign_query(desc: Descriptor, k: int, operand: str) -> Query:
    """Violation: flipping every ``operand`` (``a`` or ``b``) sign and C's does not negate D."""
    d_format = FORMATS[desc.d_type]
    assert isinstance(d_format, FloatFormat)
    variables = layout_variables(desc, k)
    operand_format = desc.a_format if operand == "a" else desc.b_format
    lane_bit, c_bit = sign_bit(operand_format), sign_bit(desc.d_type)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        flipped = DotInputs(lanes if operand == "a" else inputs.a,
                            lanes if operand == "b" else inputs.b,
                            _flip(ops, inputs.c, c_bit), inputs.scale_a, inputs.scale_b,
                            inputs.metadata)
        d = run_dot(ops, desc, inputs)
        d_flipped = run_dot(ops, desc, flipped)
        width = output_width(desc)
        d, d_flipped = ops.extract(d, width - 1, 0), ops.extract(d_flipped, width - 1, 0)
        return ops.ne(d_flipped, negated(ops, d, d_format)), {"d": d, "d_flipped": d_flipped}

    return Query(f"flip-{operand}-and-c", "forall", variables, body)


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    queries = [sign_query(desc, k, "a"), sign_query(desc, k, "b")]
    return check_queries("sign-symmetry", desc, k, queries, settings)


def applies(desc: Descriptor) -> bool:
    return desc.family in ("window", "block")


PROPERTIES = [Property(
    "sign-symmetry", "negating every A (or B) element and C negates D (zero stays +0, "
    "NaN stays canonical)",
    ("spec.formats", "spec.specials", "spec.accumulate", "spec.convert", "spec.window",
     "spec.blockscaled"),
    REQUIRED, applies, check, fast=(("dense-e2m1", 4),))]
