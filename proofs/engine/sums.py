"""Sums in any order: two adder trees over the same terms are equal (issue 30's engine).

Bit-blasting solvers do not rediscover that addition is associative and commutative: a
balanced tree and a left-to-right chain over the same 33 terms is a query they do not
finish (DESIGN.md, "Solvers"). The engine therefore decides such pairs by normal forms:

- **Modular sums.** A tree of ``add``/``sub``/``neg`` at one width ``W`` denotes an element
  of the ring of integers modulo ``2^W``; flattened into a multiset of leaves with signs,
  two trees with one multiset are equal, by the ring laws (associativity, commutativity,
  ``-(a + b) = -a - b``, ``a - b = a + (-b)``).
- **Integer sums.** A leaf ``sext(t, W)`` (or ``zext``) of a narrower ``t`` denotes the
  integer value of ``t``. When the static bound on a tree's leaves shows that no partial
  sum can leave the range of ``W`` bits, whatever order the tree adds them in, the tree
  denotes the integer sum of those values; two such trees (of any widths) over one
  multiset of integer leaves are equal as integers, so each is the sign extension (or the
  truncation) of the other.

Leaves are compared as merged nodes: the engine has already proved the two sides' terms
equal and made them one node. Nested extensions are read through (``sext(sext(t))`` is
``sext(t)``; ``sext`` of a ``zext`` that widened is that ``zext``).
"""

from __future__ import annotations

from tcspec.smt.trace import Node

MAX_LEAVES = 4096


def _strip(node: Node) -> tuple[Node, bool]:
    """``(inner, signed)``: the narrowest node an extension chain reads, and whether its
    value is read as a signed integer (``sext`` of ``sext`` is one ``sext``, ``zext`` of
    ``zext`` one ``zext``, ``sext`` of a widening ``zext`` that ``zext``; a ``sext`` under a
    ``zext`` is a leaf read unsigned)."""
    signed = True
    while node.op in ("sext", "zext"):
        if node.op == "sext" and not signed:
            break
        if node.op == "zext":
            signed = False
        node = node.args[0]
    return node, signed


def _magnitude(leaf: Node, signed: bool) -> int:
    """The largest absolute integer value ``leaf`` can have, read as ``signed`` says."""
    width = leaf.width or 1
    if leaf.is_const:
        value = leaf.value
        if signed and value >> (width - 1):
            value -= 1 << width
        return abs(value)
    return 1 << (width - 1) if signed else (1 << width) - 1


def _flatten(root: Node) -> tuple[dict[tuple[int, bool], int], int] | None:
    """``root``'s leaves with their signed counts (leaf id and whether read signed), and the
    sum of their largest magnitudes, which bounds every partial sum in any order; None when
    ``root`` is no sum or has too many leaves. Constant leaves add up into one entry
    (key ``(-1, True)``, the integer total as its count)."""
    if root.op not in ("add", "sub", "neg") or root.width is None:
        return None
    width = root.width
    leaves: dict[tuple[int, bool], int] = {}
    total = constant = 0
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, sign = stack.pop()
        if node.width == width and node.op == "add":
            stack += [(node.args[0], sign), (node.args[1], sign)]
        elif node.width == width and node.op == "sub":
            stack += [(node.args[0], sign), (node.args[1], -sign)]
        elif node.width == width and node.op == "neg":
            stack.append((node.args[0], -sign))
        else:
            inner, signed = _strip(node)
            if inner.width is None:
                return None
            if inner.is_const:
                value = inner.value
                if signed and value >> (inner.width - 1):
                    value -= 1 << inner.width
                constant += sign * value
                total += abs(value)
                continue
            key = (inner.id, signed)
            leaves[key] = leaves.get(key, 0) + sign
            total += _magnitude(inner, signed)
            if len(leaves) > MAX_LEAVES:
                return None
    if constant:
        leaves[(-1, True)] = constant
    return {k: n for k, n in leaves.items() if n}, total


def _fits(bound: int, width: int) -> bool:
    """Every integer of magnitude up to ``bound`` fits ``width`` bits, signed."""
    return bound <= (1 << (width - 1)) - 1


def _modular(leaves: dict[tuple[int, bool], int], mask: int) -> dict[tuple[int, bool], int]:
    """The counts modulo ``2^W`` (``mask = 2^W - 1``), zeros dropped."""
    reduced = {k: n & mask for k, n in leaves.items()}
    return {k: n for k, n in reduced.items() if n}


def equal_sums(x: Node, y: Node, relation: str) -> bool:
    """Whether ``relation(x) == y`` holds by the normal forms of the module docstring
    (``equal`` for one width; ``sext`` for integer sums of two widths)."""
    fx, fy = _flatten(x), _flatten(y)
    if fx is None or fy is None:
        return False
    (lx, bx), (ly, by) = fx, fy
    if relation == "equal" and x.width == y.width:
        mask = (1 << x.width) - 1
        return _modular(lx, mask) == _modular(ly, mask)
    if lx != ly:
        return False
    if relation not in ("sext", "equal") or x.width is None or y.width is None:
        return False
    return _fits(bx, x.width) and _fits(by, y.width)
