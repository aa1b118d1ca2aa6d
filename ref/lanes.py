"""Bit-level facts that let the kernel printer (:mod:`ref.kernels`) use narrow lanes and few masks.

A node of a traced DAG is a ``width``-bit value. The C kernels keep each
value in a 32- or 64-bit lane and print a mask after an operation only where
some consumer reads the bits above the value's width. Three facts, computed
once per DAG:

- *demand*: how many low bits of a node any consumer reads. The low ``d``
  bits of ``add``, ``sub``, ``mul``, bitwise operations, ``shl`` and ``ite``
  depend only on the low ``d`` bits of their operands, so a wide sum whose
  consumers read 32 bits (``extract(total, 31, 0)``) lives in a 32-bit lane.
- *clean*: nodes some consumer reads with zeros above their width
  (comparisons, right shifts, shift amounts, the low half of ``concat``,
  ``zext``, the output). Only those are masked, and only when their lane
  may hold bits above the width.
- *known bits*: the true value of a node is below ``2**known``. A ``sext``
  whose operand's sign bit is known zero is a ``zext``.

The lane bound ``bound`` says the actual lane value (whatever a consumer
does not read included) is below ``2**bound``, which decides the masks and
when a product of two 32-bit-bounded values can use a 32x32->64 multiply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tcspec.smt.trace import Node, walk

COMPARISONS = ("eq", "ult", "ule", "slt", "sle")
BOOLEAN_OPS = ("band", "bor", "bxor", "bnot")
LOW_BITS_OPS = ("add", "sub", "mul", "and", "or", "xor", "not", "neg")
"""Operations whose low ``d`` result bits depend only on the low ``d`` bits of the operands."""


def strip_zext(node: Node) -> Node:
    """``zext`` is never printed: a consumer reads the extended node itself."""
    while node.op == "zext":
        node = node.args[0]
    return node


@dataclass
class LaneFacts:
    """Per node id: the lane (32 or 64 bits; booleans 32), the demanded low bits, the lane
    bound, which nodes are masked to their width, and how each ``sext`` is printed."""

    lane: dict[int, int] = field(default_factory=dict)
    demand: dict[int, int] = field(default_factory=dict)
    bound: dict[int, int] = field(default_factory=dict)
    masked: set[int] = field(default_factory=set)
    sext_mode: dict[int, str] = field(default_factory=dict)

    def wide_product(self, node: Node) -> bool:
        """A 64-bit-lane product of two lane values below ``2**32``: a 32x32->64 multiply."""
        return (node.op == "mul" and self.lane[node.id] == 64
                and all(self.bound[strip_zext(a).id] <= 32 for a in node.args))


def _known_bits(node: Node, known: dict[int, int]) -> int:
    """A ``k`` with the node's value (unsigned, once masked to its width) below ``2**k``."""
    op, w = node.op, node.width or 1
    k = [known.get(a.id, a.width or 1) for a in node.args]
    if op == "const":
        return int(node.params[0]).bit_length()
    if op == "zext" or op == "lshr":
        return k[0]
    if op == "extract":
        hi, lo = node.params
        return max(0, min(hi - lo + 1, k[0] - lo))
    if op == "and":
        return min(k)
    if op in ("or", "xor", "ite"):
        return max(k[-2:])
    if op == "add":
        return min(w, max(k) + 1)
    if op == "mul":
        return min(w, k[0] + k[1])
    if op == "sext":
        return k[0] if k[0] < node.args[0].width else w
    if op == "concat":
        return node.args[1].width + k[0] if k[0] else k[1]
    return w


def _sext_mode(node: Node, known: dict[int, int], demand: int) -> str:
    """``zext`` (sign bit known zero), ``low`` (no consumer reads past the operand's width)
    or ``shift`` (sign-extend by a left then an arithmetic right shift)."""
    inner = node.args[0]
    if known[inner.id] < inner.width:
        return "zext"
    return "low" if demand <= inner.width else "shift"


def _operand_needs(node: Node, demand: int, sext_mode: str | None
                   ) -> list[tuple[Node, int, bool]]:
    """``(operand, low bits read, read clean)`` for each operand of ``node``."""
    op, args = node.op, node.args
    if op in COMPARISONS:
        return [(a, a.width, True) for a in args]
    if op in BOOLEAN_OPS:
        return [(a, 0, False) for a in args]
    if op == "ite":
        return [(args[0], 0, False), (args[1], demand, False), (args[2], demand, False)]
    if op in LOW_BITS_OPS:
        return [(a, min(demand, a.width), False) for a in args]
    if op == "shl":
        return [(args[0], min(demand, args[0].width), False), (args[1], args[1].width, True)]
    if op == "lshr":
        return [(args[0], args[0].width, True), (args[1], args[1].width, True)]
    if op == "ashr":
        return [(args[0], args[0].width, False), (args[1], args[1].width, True)]
    if op == "extract":
        return [(args[0], node.params[0] + 1, False)]
    if op == "concat":
        low = args[1].width
        return [(args[0], max(demand - low, 0), False), (args[1], min(demand, low), demand > low)]
    if op == "zext" or sext_mode == "zext":
        inner = args[0]
        return [(inner, min(demand, inner.width), demand > inner.width)]
    if op == "sext":
        inner = args[0]
        return [(inner, min(demand, inner.width), False)]
    return []


def _lane_bound(node: Node, facts: LaneFacts) -> int:
    """A bound ``b`` with the node's printed lane value below ``2**b`` (before its mask)."""
    op, lane = node.op, facts.lane[node.id]
    if node.width is None:
        return lane
    if op == "const":
        return int(node.params[0]).bit_length()
    if op == "var":
        return node.width
    if op == "zext":
        return facts.bound[strip_zext(node).id]
    bounds = [min(facts.bound[strip_zext(a).id], lane) for a in node.args]
    if op == "add":
        return min(lane, max(bounds) + 1)
    if op == "mul":
        if facts.wide_product(node):
            return min(64, sum(facts.bound[strip_zext(a).id] for a in node.args))
        return min(lane, sum(bounds))
    if op == "and":
        return min(bounds)
    if op in ("or", "xor"):
        return max(bounds)
    if op == "ite":
        return max(bounds[1:])
    if op == "lshr":
        return min(lane, facts.bound[strip_zext(node.args[0]).id])
    if op == "extract":
        return min(lane, max(0, facts.bound[strip_zext(node.args[0]).id] - node.params[1]))
    if op == "concat":
        low = node.args[1].width
        return bounds[1] if low >= lane else min(lane, max(bounds[0] + low, bounds[1]))
    if op == "sext" and facts.sext_mode[node.id] != "shift":
        return bounds[0]
    return lane


def analyse(output: Node) -> LaneFacts:
    """The :class:`LaneFacts` of the DAG below ``output`` (read clean, all its bits)."""
    nodes = list(walk([output]))
    known: dict[int, int] = {}
    for node in nodes:
        if node.width is not None:
            known[node.id] = _known_bits(node, known)
    facts = LaneFacts()
    demand: dict[int, int] = {output.id: output.width or 0}
    clean: set[int] = {output.id}
    for node in reversed(nodes):
        need = demand.get(node.id, 0)
        mode = None
        if node.op == "sext":
            mode = facts.sext_mode[node.id] = _sext_mode(node, known, need)
        for arg, bits, read_clean in _operand_needs(node, need, mode):
            demand[arg.id] = max(demand.get(arg.id, 0), bits)
            if read_clean:
                clean.add(arg.id)
    facts.demand = demand
    for node in nodes:
        if node.width is None:
            facts.lane[node.id] = 32
        else:
            live = max(1, min(node.width, demand.get(node.id, 0)))
            facts.lane[node.id] = 32 if live <= 32 else 64
    for node in nodes:
        bound = _lane_bound(node, facts)
        if node.width is not None and node.id in clean and bound > node.width:
            facts.masked.add(node.id)
            bound = node.width
        facts.bound[node.id] = bound
    return facts
