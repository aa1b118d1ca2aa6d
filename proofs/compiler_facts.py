"""Facts for compiler writers (covers spec/window, spec/accumulate, spec/convert, spec/formats).

Each fact is proved, or refuted / shown with a witness that is replayed on
the executable lowering:

- ``single-lane-is-rz-product``: with C = +0, every other lane's A a zero and
  every A and B word finite, D is that one product rounded toward zero to F32
  (SEMANTICS.md section 2). The statement is written here and in
  :mod:`proofs.reference`, never from ``spec/``: the hypothesis decodes the
  words with the reference's field tables (section 1: zero, finite), and the
  right-hand side takes each word's fields from the same tables (sign bit,
  exponent and fraction positions, bias, cleared bits), normalises their exact
  product and truncates it to 24 bits (or to F32 subnormal units), with signed
  infinity on overflow and +0 for a zero. A witness shows the hypothesis can
  hold (``hypothesis-satisfiable``).
- ``k-order-changes-d``: a GEMM's K loop is a chain of instructions (the D
  of one is the C of the next, section 2.7), so the order of the K steps
  shows in D: two orders over the same K=16 TF32 data give different words.
- ``c-monotonicity-fails``: a larger C can give a smaller D (the window
  follows C's exponent, so a larger C can truncate the products more).
- ``tf32-ignores-low-bits``: the 13 low bits of a TF32 operand word never
  reach D (section 1's container truncation), so they need no clearing.
"""

from __future__ import annotations

from tcspec.proofs import reference as ref
from tcspec.proofs.core import (
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    every_datapath,
    hypothesis_query,
    layout_variables,
    run_dot,
)
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import DotInputs, chained_dot
from tcspec.spec.descriptor import Descriptor

F32 = ref.LAYOUTS["f32"]
"""Section 1: the F32 D's fields (23 fraction bits, bias 127)."""
WIDE = 14
"""Width of the signed exponent arithmetic of the independent rounding below."""


# ------------------------------------------ one product, rounded toward zero


def _fields(ops: Ops, fmt: str, word: BV) -> tuple[Bool, BV, BV]:
    """``(sign, integer significand, exponent of its last bit)`` of a finite word, from the
    reference's field table (section 1: the bits cleared first, fraction, exponent, sign)."""
    lay = ref.LAYOUTS[fmt]
    low = lay.cleared
    frac = ops.extract(word, low + lay.frac_bits - 1, low)
    exp = ops.extract(word, low + lay.frac_bits + lay.exp_bits - 1, low + lay.frac_bits)
    normal = ops.ne(exp, 0)
    significand = ops.concat(ops.bool_to_bv(normal), frac)
    biased = ops.ite(normal, ops.zext(exp, WIDE), ops.const(1, WIDE))
    return ops.bit(word, lay.sign_bit), significand, ops.sub(biased, lay.bias + lay.frac_bits)


def rz_product_f32(ops: Ops, fa: str, fb: str, a: BV, b: BV) -> BV:
    """The F32 word of ``a * b`` (finite words of formats ``fa``, ``fb``), rounded toward
    zero (section 2.7); a zero gives +0."""
    sa, ma, ea = _fields(ops, fa, a)
    sb, mb, eb = _fields(ops, fb, b)
    m = ops.mul_wide(ma, mb)
    e = ops.add(ea, eb)
    width = m.width + 32
    m = ops.zext(m, width)
    top = ops.add(ops.sub(ops.bitlen(m, WIDE), 1), e)
    normal_shift = ops.sub(ops.bitlen(m, WIDE), 1 + F32.frac_bits)
    normal = ops.shift_signed(m, ops.neg(normal_shift))
    lowest = 1 - F32.bias - F32.frac_bits
    subnormal = ops.shift_signed(m, ops.sub(e, lowest))
    biased = ops.add(top, F32.bias)
    top_exp = (1 << F32.exp_bits) - 1
    normal_word = ops.bvor(ops.shl(ops.resize_unsigned(biased, 32), F32.frac_bits),
                           ops.bvand(ops.resize_unsigned(normal, 32), (1 << F32.frac_bits) - 1))
    magnitude = ops.ite(ops.sgt(top, top_exp - 1 - F32.bias),
                        ops.const(top_exp << F32.frac_bits, 32),
                        ops.ite(ops.sge(top, 1 - F32.bias), normal_word,
                                ops.resize_unsigned(subnormal, 32)))
    negative = ops.xor_(sa, sb)
    signed = ops.bvor(magnitude, ops.ite(negative, ops.const(1 << F32.sign_bit, 32),
                                         ops.const(0, 32)))
    return ops.ite(ops.or_(ops.eq(m, 0), ops.eq(magnitude, 0)), ops.const(0, 32), signed)


def _finite(ops: Ops, fmt: str, word: BV) -> Bool:
    """Section 1, by the reference's decoder: the word is neither NaN nor infinite."""
    value = ref.decode(ops, fmt, word)
    return ops.not_(ops.or_(value.nan, value.inf))


def _zero(ops: Ops, fmt: str, word: BV) -> Bool:
    """Section 1, by the reference's decoder: the word is a zero of either sign."""
    value = ref.decode(ops, fmt, word)
    return ops.and_(ops.not_(ops.or_(value.nan, value.inf)), ops.eq(value.mag, 0))


def single_lane_hypothesis(ops: Ops, desc: Descriptor, inputs: DotInputs, lane: int,
                           c_value: int = 0) -> Bool:
    """C is ``c_value`` (+0), every A lane but ``lane`` a zero, ``A[lane]`` and every B lane
    finite (the reference's decoder; never ``spec/``)."""
    zero_elsewhere = ops.all_(_zero(ops, desc.a_format, word)
                              for i, word in enumerate(inputs.a) if i != lane)
    finite = ops.all_([_finite(ops, desc.a_format, inputs.a[lane]),
                       *(_finite(ops, desc.b_format, word) for word in inputs.b)])
    return ops.and_(ops.eq(inputs.c, c_value), zero_elsewhere, finite)


def single_lane_query(desc: Descriptor, k: int, lane: int, c_value: int = 0) -> Query:
    """Violation: C = +0, A zero off ``lane``, finite words, yet D is not RZ(A*B).

    ``c_value`` replaces +0 (a test shows the claim then fails)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d = run_dot(ops, desc, inputs)
        expected = rz_product_f32(ops, desc.a_format, desc.b_format, inputs.a[lane],
                                  inputs.b[lane])
        hypothesis = single_lane_hypothesis(ops, desc, inputs, lane, c_value)
        return ops.and_(hypothesis, ops.ne(d, expected)), {"d": d, "rz_product": expected}

    return Query(f"lane {lane}", "forall", layout_variables(desc, k), body)


def single_lane_witness(desc: Descriptor, k: int, lane: int) -> Query:
    """The hypothesis of :func:`single_lane_query` holds for some words whose right-hand side
    is not +0 (so the row is not about zeros alone), shown with D and the right-hand side."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        expected = rz_product_f32(ops, desc.a_format, desc.b_format, inputs.a[lane],
                                  inputs.b[lane])
        return ops.and_(single_lane_hypothesis(ops, desc, inputs, lane), ops.ne(expected, 0)), {
            f"a{lane}": inputs.a[lane], f"b{lane}": inputs.b[lane], "c": inputs.c,
            "d": run_dot(ops, desc, inputs), "rz_product": expected}

    return hypothesis_query(layout_variables(desc, k), body, f"lane {lane}, a nonzero product word")


def check_single_lane(desc: Descriptor, k: int, settings: Settings) -> Row:
    lanes = (0, k - 1)
    queries = [query for lane in lanes
               for query in (single_lane_witness(desc, k, lane), single_lane_query(desc, k, lane))]
    return check_queries("single-lane-is-rz-product", desc, k, queries, settings,
                         detail="first and last lane; hypothesis (zero, finite) and right-hand "
                         "side from proofs/reference.py's field tables (SEMANTICS.md section "
                         "1), written in proofs/compiler_facts.py")


# ------------------------------------------------------- K order of a GEMM


def k_order_query(desc: Descriptor, steps: int = 2) -> Query:
    """Witness: the K steps in ascending and in descending order give different finite D."""
    k = desc.k
    variables = tuple((f"{side}{i}", 32) for side in "ab" for i in range(steps * k)) + \
        (("c", 32),)

    def chain(ops: Ops, values: Variables, order: list[int]) -> BV:
        inputs = DotInputs([values[f"a{i}"] for i in range(steps * k)],
                           [values[f"b{i}"] for i in range(steps * k)], values["c"])
        return chained_dot(ops, desc, inputs, order, build=run_dot)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        forward = chain(ops, values, list(range(steps)))
        backward = chain(ops, values, list(reversed(range(steps))))
        finite = ops.and_(_finite_f32(ops, forward), _finite_f32(ops, backward))
        return (ops.and_(finite, ops.ne(forward, backward)),
                {"ascending": forward, "descending": backward, **values})

    return Query(f"{steps} steps, both orders", "exists", variables, body)


def check_k_order(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("k-order-changes-d", desc, k, [k_order_query(desc, k // desc.k)],
                         settings, detail=f"K={k} as {k // desc.k} chained instructions of "
                         f"K={desc.k}")


# ----------------------------------------------------------- C monotonicity


def order_key(ops: Ops, word: BV) -> BV:
    """A signed integer that orders finite F32 words by value (-0 and +0 equal)."""
    magnitude = ops.zext(ops.extract(word, 30, 0), 33)
    return ops.ite(ops.bit(word, 31), ops.neg(magnitude), magnitude)


def _finite_f32(ops: Ops, word: BV) -> Bool:
    return ops.ne(ops.extract(word, 30, 23), 0xFF)


MINUS_ONE, MINUS_BELOW_ONE = 0xBF800000, 0xBF7FFFFF
"""-1.0 and the next F32 above it, -(1 - 2^-24): one binade lower, so a finer window."""

TINY_A = (0x39000000,) * 6 + (0x39400000,) * 2
TINY_B = (0xB9000000,) * 6
"""Pinned lanes: A = 2^-13 (six lanes) and 1.5 * 2^-13 (two), B = -2^-13 (first six)."""


ONE_AND_HALF = {"bf16": 0x3FC00000, "f16": 0x3E00, "e4m3": 0x3C, "e5m2": 0x3E, "e2m3": 0x0C,
                "e3m2": 0x0E, "e2m1": 0x3}
MINUS_ONE_WORD = {"bf16": 0xBF800000, "f16": 0xBC00, "e4m3": 0xB8, "e5m2": 0xBC, "e2m3": 0x28,
                  "e3m2": 0x2C, "e2m1": 0xA}
"""Section 1's words of 1.5 and -1.0 in each element format (bf16 in its F32 container)."""

C_BINADE, C_BINADE_BELOW = 0xCC800000, 0xCC7FFFFF
"""-2^26 and the next F32 above it, -(2^26 - 4): one binade lower, so a finer window."""

CARRY_LANES = 12
"""Products of -1.5 whose units the finer window keeps: 12 of them reach one ulp of D."""


def built_witness(desc: Descriptor, k: int) -> dict[str, int] | None:
    """Section 2's window makes C monotonicity fail on every element format with K >= 12:
    C1 = -2^26 sets ``R = 26``, ``q = 1``, so a product -1.5 truncates to 0 units; C2 =
    -(2^26 - 4) sets ``R = 25``, ``q = 0``, and each product keeps one unit (-1). Twelve such
    products give ``D2 = -(2^26 - 4) - 12 = -2^26 - 8`` (an F32 word: the ulp is 8) below
    ``D1 = -2^26``."""
    if k < CARRY_LANES or desc.a_format not in ONE_AND_HALF or desc.b_format not in ONE_AND_HALF:
        return None
    words = {"c": C_BINADE, "c_larger": C_BINADE_BELOW}
    for i in range(k):
        words[f"a{i}"] = ONE_AND_HALF[desc.a_format] if i < CARRY_LANES else 0
        words[f"b{i}"] = MINUS_ONE_WORD[desc.b_format] if i < CARRY_LANES else 0
    return words


def monotonicity_query(desc: Descriptor, k: int, pinned: bool = True) -> Query:
    """Witness: C1 < C2 (finite), yet D(C1) > D(C2) (finite).

    ``pinned``: on the element formats with K >= 12 every word is :func:`built_witness`'s
    (the query checks it); on tf32 at K=8 C1 = -1, C2 = -(1 - 2^-24) and every lane but B6
    and B7 (:data:`TINY_A`, :data:`TINY_B`), leaving the solver to find those two: free
    searches (also with only C, or C and A, pinned) did not finish in 120 s.
    """
    variables = layout_variables(desc, k) + (("c_larger", 32),)
    built = built_witness(desc, k) if pinned else None

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        if built is not None:
            values = {**values, **{n: ops.const(w, 32) for n, w in built.items()}}
        elif pinned:
            values = {**values, "c": ops.const(MINUS_ONE, 32),
                      "c_larger": ops.const(MINUS_BELOW_ONE, 32)}
            if desc.a_format == "tf32" and k == len(TINY_A):
                values.update({f"a{i}": ops.const(w, 32) for i, w in enumerate(TINY_A)})
                values.update({f"b{i}": ops.const(w, 32) for i, w in enumerate(TINY_B)})
        inputs = dot_inputs(desc, k, values)
        larger = DotInputs(inputs.a, inputs.b, values["c_larger"])
        d, d_larger = run_dot(ops, desc, inputs), run_dot(ops, desc, larger)
        condition = ops.and_(
            *(_finite_f32(ops, w) for w in (inputs.c, larger.c, d, d_larger)),
            ops.slt(order_key(ops, inputs.c), order_key(ops, larger.c)),
            ops.sgt(order_key(ops, d), order_key(ops, d_larger)))
        shown = {"c": inputs.c, "c_larger": larger.c, "d": d, "d_larger": d_larger}
        shown.update({f"b{i}": w for i, w in enumerate(inputs.b)})
        return condition, shown

    return Query("C1 < C2 but D1 > D2", "exists", variables, body)


def check_monotonicity(desc: Descriptor, k: int, settings: Settings) -> Row:
    if built_witness(desc, k) is not None:
        detail = ("every word built from section 2's window: C1 = -2^26, C2 = -(2^26 - 4), "
                  f"lanes 0-{CARRY_LANES - 1} 1.5 x -1.0, the rest zero")
    else:
        detail = "C pinned to -1 and -(1 - 2^-24), tf32 lanes pinned but B6, B7; the solver " \
                 "finds those"
    return check_queries("c-monotonicity-fails", desc, k, [monotonicity_query(desc, k)],
                         settings, detail=detail)


# ------------------------------------------------------- TF32 low bits


def low_bits_query(desc: Descriptor, k: int) -> Query:
    """Violation: changing the low 13 bits of every A and B word changes D."""
    variables = layout_variables(desc, k) + tuple(
        (f"low_{side}{i}", 13) for side in "ab" for i in range(k))

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)

        def changed(side: str, words: list[BV]) -> list[BV]:
            return [ops.bvxor(w, ops.zext(values[f"low_{side}{i}"], 32))
                    for i, w in enumerate(words)]

        other = DotInputs(changed("a", list(inputs.a)), changed("b", list(inputs.b)), inputs.c)
        d, d_other = run_dot(ops, desc, inputs), run_dot(ops, desc, other)
        return ops.ne(d, d_other), {"d": d, "d_changed": d_other}

    return Query("low 13 bits", "forall", variables, body)


def check_low_bits(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("tf32-ignores-low-bits", desc, k, [low_bits_query(desc, k)], settings)


def _f32_window(desc: Descriptor) -> bool:
    return desc.family == "window" and not desc.sparse and desc.d_type == "f32"


def _tf32(desc: Descriptor) -> bool:
    return _f32_window(desc) and desc.a_format == "tf32"


PROPERTIES = [
    Property("single-lane-is-rz-product", "C = +0 and one nonzero lane: D is that product "
             "rounded toward zero to F32", ("spec.window", "spec.accumulate", "spec.convert"),
             every_datapath(_f32_window), _f32_window, check_single_lane,
             fast=(("dense-tf32", 2),)),
    Property("k-order-changes-d", "the order of a GEMM's K steps changes D (witness)",
             ("spec.window",), ("dense-tf32",), _tf32, check_k_order,
             k_step=lambda desc: desc.k, default_k=lambda desc: 2 * desc.k),
    Property("c-monotonicity-fails", "a larger C can give a smaller D (witness)",
             ("spec.window", "spec.accumulate"), every_datapath(_f32_window), _f32_window,
             check_monotonicity),
    Property("tf32-ignores-low-bits", "the 13 low bits of TF32 operand words never reach D",
             ("spec.formats",), ("dense-tf32",), _tf32, check_low_bits,
             fast=(("dense-tf32", 8),)),
]
