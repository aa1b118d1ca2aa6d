"""Traced DAG -> C99 statements: one ``const`` local per node, no undefined behaviour.

Every bit-vector node (at most 64 bits wide) is a ``uint64_t`` holding its
value in the low ``width`` bits, every boolean an ``int`` (0 or 1). Results
of ``add``, ``sub``, ``neg``, ``mul``, ``not``, ``sext`` and ``shl`` are
masked to the node's width; unsigned arithmetic wraps modulo 2^64 in C, so
masking gives the bit-vector result. Shifts go through the ``tcspec_bv_*``
helpers of :data:`C_HELPERS`, which return 0 (or the sign fill) for an
amount at least the width, so no C shift ever has an amount >= 64. Signed
comparisons flip the sign bit and compare unsigned. The helpers and the
functions built from them are ``TCSPEC_HD``: ``__host__ __device__`` under
nvcc, nothing elsewhere.

The API is small so batch kernels can reuse it: :func:`c_expr` (one node),
:func:`c_statements` (every node below some roots), :func:`c_function`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tcspec.smt.trace import Node, walk

MAX_WIDTH = 64

C_HD_MACRO = """\
#ifndef TCSPEC_HD
#if defined(__CUDACC__)
#define TCSPEC_HD __host__ __device__
#else
#define TCSPEC_HD
#endif
#endif
"""
"""``TCSPEC_HD``: ``__host__ __device__`` under nvcc; define it first to override."""

C_HELPERS = """\
static TCSPEC_HD inline uint64_t tcspec_bv_mask(unsigned w)
{
    return w >= 64u ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u;
}

/* x << n on w bits; 0 when n >= w. */
static TCSPEC_HD inline uint64_t tcspec_bv_shl(uint64_t x, uint64_t n, unsigned w)
{
    return n < w ? (x << n) & tcspec_bv_mask(w) : 0u;
}

/* Logical x >> n on w bits; 0 when n >= w. */
static TCSPEC_HD inline uint64_t tcspec_bv_lshr(uint64_t x, uint64_t n, unsigned w)
{
    return n < w ? x >> n : 0u;
}

/* Arithmetic x >> n on w bits: the sign bit fills from the left; all sign when n >= w. */
static TCSPEC_HD inline uint64_t tcspec_bv_ashr(uint64_t x, uint64_t n, unsigned w)
{
    uint64_t fill = (x >> (w - 1u)) & 1u ? ~UINT64_C(0) : 0u;
    if (n >= w)
        return fill & tcspec_bv_mask(w);
    return ((x >> n) | (fill & ~(tcspec_bv_mask(w) >> n))) & tcspec_bv_mask(w);
}

/* Sign-extend the w-bit value x to 64 bits (mask the result to the target width). */
static TCSPEC_HD inline uint64_t tcspec_bv_sext(uint64_t x, unsigned w)
{
    uint64_t sign = UINT64_C(1) << (w - 1u);
    return (x ^ sign) - sign;
}
"""
"""C99 helpers every generated function uses (after ``<stdint.h>`` and :data:`C_HD_MACRO`)."""

_INFIX = {"and": "&", "or": "|", "xor": "^", "eq": "==", "ult": "<", "ule": "<=",
          "band": "&&", "bor": "||", "bxor": "!="}
_WRAPPING = {"add": "+", "sub": "-", "mul": "*"}
_SHIFTS = {"shl": "tcspec_bv_shl", "lshr": "tcspec_bv_lshr", "ashr": "tcspec_bv_ashr"}


def mask_literal(width: int) -> str:
    return f"UINT64_C(0x{(1 << width) - 1:X})"


def c_type(node: Node) -> str:
    """``int`` for a boolean node, ``uint64_t`` for a bit-vector node."""
    return "int" if node.width is None else "uint64_t"


def value_name(node: Node) -> str:
    """The local that holds an inner node's value: ``v<id>``."""
    return f"v{node.id}"


def c_expr(node: Node, ref: Callable[[Node], str]) -> str:
    """C expression for ``node`` in terms of its operands, each written by ``ref``.

    The value is the node's bit-vector value in the low ``width`` bits of a
    ``uint64_t`` (an ``int`` 0/1 for booleans). ``ValueError`` for a node
    wider than 64 bits or an unknown primitive.
    """
    if node.width is not None and node.width > MAX_WIDTH:
        raise ValueError(f"node {node.id} is {node.width} bits wide; C lowering stops at 64")
    op, args = node.op, [ref(a) for a in node.args]
    if op == "const":
        return f"UINT64_C(0x{node.value:X})"
    if op == "bool_const":
        return "1" if node.value else "0"
    if op == "extract":
        hi, lo = node.params
        return f"(({args[0]} >> {lo}) & {mask_literal(hi - lo + 1)})"
    if op == "concat":
        return f"(({args[0]} << {node.args[1].width}) | {args[1]})"
    if op == "zext":
        return args[0]
    if op == "sext":
        return f"(tcspec_bv_sext({args[0]}, {node.args[0].width}u) & {mask_literal(node.width)})"
    if op == "not":
        return f"({args[0]} ^ {mask_literal(node.width)})"
    if op == "neg":
        return f"((UINT64_C(0) - {args[0]}) & {mask_literal(node.width)})"
    if op in _WRAPPING:
        return f"(({args[0]} {_WRAPPING[op]} {args[1]}) & {mask_literal(node.width)})"
    if op in _SHIFTS:
        return f"{_SHIFTS[op]}({args[0]}, {args[1]}, {node.width}u)"
    if op in ("slt", "sle"):
        sign = f"UINT64_C(0x{1 << (node.args[0].width - 1):X})"
        cmp = "<" if op == "slt" else "<="
        return f"(({args[0]} ^ {sign}) {cmp} ({args[1]} ^ {sign}))"
    if op in _INFIX:
        return f"({args[0]} {_INFIX[op]} {args[1]})"
    if op == "bnot":
        return f"(!{args[0]})"
    if op == "ite":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    raise ValueError(f"no C lowering for primitive {op!r}")


def c_statements(roots: Sequence[Node], ref: Callable[[Node], str],
                 indent: str = "    ") -> list[str]:
    """``const T v<id> = expr;`` for every inner node below ``roots``, operands first.

    ``ref`` writes a ``var`` node (e.g. ``(uint64_t)a[3]``); constants are
    inlined and inner nodes are read from their locals.
    """

    def operand(node: Node) -> str:
        if node.op == "var":
            return ref(node)
        if node.is_const:
            return c_expr(node, operand)
        return value_name(node)

    return [f"{indent}const {c_type(node)} {value_name(node)} = {c_expr(node, operand)};"
            for node in walk(roots) if node.op != "var" and not node.is_const]


def c_function(signature: str, root: Node, ref: Callable[[Node], str],
               result_type: str) -> str:
    """A C function definition: ``signature`` and a body returning ``root`` as ``result_type``."""
    body = c_statements([root], ref)
    if root.op == "var":
        value = ref(root)
    elif root.is_const:
        value = c_expr(root, ref)
    else:
        value = value_name(root)
    return "\n".join([signature, "{", *body, f"    return ({result_type}){value};", "}"]) + "\n"
