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

  The static bound reads a leaf's width only; a caller that can prove a tighter one (a
  solver query ``|leaf| <= b``, :data:`Bounder`) is asked for it when the static bound
  does not fit (a term sized from its exponent range, 13 bits wide, whose value never
  exceeds 8 bits).

- **Extrema.** A tree of ``ite(p < q, q, p)`` (a maximum; ``ite(p < q, p, q)`` a minimum;
  ``<`` or ``<=``, signed or unsigned) denotes the maximum of its set of leaves: the join
  of a total order is associative, commutative and idempotent, so two trees of one kind
  over one set of leaves are equal (a window's top exponent over permuted lanes). Trees
  of ``or`` (``and``) over booleans are the same lattice: "some product is nonzero" over
  the lanes in any order.

Leaves are compared as merged nodes: the engine has already proved the two sides' terms
equal and made them one node. Nested extensions are read through (``sext(sext(t))`` is
``sext(t)``; ``sext`` of a ``zext`` that widened is that ``zext``).
"""

from __future__ import annotations

from collections.abc import Callable

from tcspec.smt.trace import Node

MAX_LEAVES = 4096

Bounder = Callable[[Node, bool, int], bool]
"""``bounder(leaf, signed, b)``: whether ``|leaf| <= b`` (read signed or not) is proved."""


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


def _flatten(root: Node, nodes: dict[int, Node] | None = None,
             bounder: Bounder | None = None) -> tuple[dict[tuple[int, bool], int], int] | None:
    """``root``'s leaves with their signed counts (leaf id and whether read signed), and the
    sum of their largest magnitudes, which bounds every partial sum in any order; None when
    ``root`` is no sum or has too many leaves. Constant leaves add up into one entry
    (key ``(-1, True)``, the integer total as its count). A narrower sum read signed (a
    balanced subtree merged with the other side's chain) is opened when its own bound
    shows that it does not wrap, statically or by ``bounder``."""
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
            if signed and inner.op in ("add", "sub", "neg"):
                opened = _opened(inner, bounder)
                if opened is not None:
                    (sub, sub_nodes), sub_total = opened
                    for k, n in sub.items():
                        if k[0] == -1:
                            constant += sign * n
                        else:
                            leaves[k] = leaves.get(k, 0) + sign * n
                    if nodes is not None:
                        nodes.update(sub_nodes)
                    total += sub_total
                    continue
            key = (inner.id, signed)
            if nodes is not None:
                nodes[inner.id] = inner
            leaves[key] = leaves.get(key, 0) + sign
            total += _magnitude(inner, signed)
            if len(leaves) > MAX_LEAVES:
                return None
    if constant:
        leaves[(-1, True)] = constant
    return {k: n for k, n in leaves.items() if n}, total


def _opened(inner: Node, bounder: Bounder | None
            ) -> tuple[tuple[dict[tuple[int, bool], int], dict[int, Node]], int] | None:
    """``inner``'s leaves, their nodes and bound when ``inner`` is a sum that never wraps."""
    sub_nodes: dict[int, Node] = {}
    flat = _flatten(inner, sub_nodes, bounder)
    if flat is None or inner.width is None:
        return None
    sub, sub_total = flat
    if not _never_wraps(sub, sub_nodes, sub_total, inner.width, bounder):
        return None
    return (sub, sub_nodes), sub_total


def _fits(bound: int, width: int) -> bool:
    """Every integer of magnitude up to ``bound`` fits ``width`` bits, signed."""
    return bound <= (1 << (width - 1)) - 1


def _modular(leaves: dict[tuple[int, bool], int], mask: int) -> dict[tuple[int, bool], int]:
    """The counts modulo ``2^W`` (``mask = 2^W - 1``), zeros dropped."""
    reduced = {k: n & mask for k, n in leaves.items()}
    return {k: n for k, n in reduced.items() if n}


def _proved_fit(leaves: dict[tuple[int, bool], int], nodes: dict[int, Node], width: int,
                bounder: Bounder) -> bool:
    """Whether every partial sum of ``leaves`` fits ``width`` signed bits by proved leaf
    bounds: one uniform bound ``b`` per unit of count, ``sum(|n|) * b`` plus the constant
    within range; a leaf whose static magnitude is within ``b`` is not asked."""
    limit = (1 << (width - 1)) - 1 - abs(leaves.get((-1, True), 0))
    counts = sum(abs(n) for key, n in leaves.items() if key[0] != -1)
    if counts == 0:
        return limit >= 0
    each = limit // counts
    if each < 1:
        return False
    return all(_magnitude(nodes[key[0]], key[1]) <= each or bounder(nodes[key[0]], key[1], each)
               for key in leaves if key[0] != -1)


def _never_wraps(leaves: dict[tuple[int, bool], int], nodes: dict[int, Node], bound: int,
                 width: int, bounder: Bounder | None) -> bool:
    """Whether no partial sum of ``leaves`` leaves ``width`` signed bits: by the static
    ``bound``, else by proved leaf bounds."""
    return _fits(bound, width) or (
        bounder is not None and _proved_fit(leaves, nodes, width, bounder))


def equal_sums(x: Node, y: Node, relation: str, bounder: Bounder | None = None) -> bool:
    """Whether ``relation(x) == y`` holds by the normal forms of the module docstring
    (``equal`` for one width; ``sext`` for integer sums of two widths); ``bounder``
    proves leaf bounds where the static ones do not fit."""
    nodes: dict[int, Node] = {}
    fx, fy = _flatten(x, nodes, bounder), _flatten(y, nodes, bounder)
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
    if _fits(bx, x.width) and _fits(by, y.width):
        return True
    return _never_wraps(lx, nodes, max(bx, by), min(x.width, y.width), bounder)


def fits_in(x: Node, width: int, bounder: Bounder | None = None, depth: int = 4) -> bool:
    """Whether ``x`` read signed always fits ``width`` signed bits (so ``x`` is the sign
    extension of its low ``width`` bits): an extension of a node that does, a sum whose
    leaves' static or proved bounds keep every partial sum in range, an ``ite`` of two
    such nodes."""
    if x.width is not None and x.width <= width:
        return True
    if x.op == "sext":
        return fits_in(x.args[0], width, bounder, depth)
    if x.op == "zext":
        return (x.args[0].width or width) < width
    if x.op == "ite" and depth > 0:
        return all(fits_in(a, width, bounder, depth - 1) for a in x.args[1:])
    nodes: dict[int, Node] = {}
    flat = _flatten(x, nodes, bounder)
    if flat is None:
        return False
    leaves, bound = flat
    return _never_wraps(leaves, nodes, bound, width, bounder)


def never_most_negative(x: Node, bounder: Bounder | None = None) -> bool:
    """Whether the sum ``x`` never takes its most negative word ``-2^(W-1)``: no partial
    sum wraps and ``|x| <= 2^(W-1) - 1``, by static or proved leaf bounds (so ``-x``, and
    ``|x|`` as ``x < 0 ? -x : x``, never wrap when ``x`` is cut to a free variable)."""
    nodes: dict[int, Node] = {}
    flat = _flatten(x, nodes, bounder) if x.width is not None else None
    if flat is None or x.width is None:
        return False
    leaves, bound = flat
    return _never_wraps(leaves, nodes, bound, x.width, bounder)


_ORDERS = {"slt": "s", "sle": "s", "ult": "u", "ule": "u"}


def _extremum_kind(node: Node) -> str | None:
    """``"smax"``, ``"smin"``, ``"umax"``, ``"umin"``, ``"bor"`` or ``"band"`` when
    ``node`` is one step of an extremum tree (module docstring)."""
    if node.op in ("bor", "band"):
        return node.op
    if node.op != "ite" or node.args[0].op not in _ORDERS:
        return None
    test, then, other = node.args
    p, q = test.args
    if then is q and other is p:
        return _ORDERS[test.op] + "max"
    if then is p and other is q:
        return _ORDERS[test.op] + "min"
    return None


def _extremum_leaves(node: Node, kind: str) -> frozenset[int] | None:
    leaves: set[int] = set()
    stack = [node]
    while stack:
        top = stack.pop()
        if _extremum_kind(top) == kind:
            stack.extend(top.args if kind in ("bor", "band") else top.args[0].args)
        else:
            leaves.add(top.id)
        if len(leaves) > MAX_LEAVES:
            return None
    return frozenset(leaves)


def equal_extrema(x: Node, y: Node) -> bool:
    """Whether ``x`` and ``y`` are extremum trees of one kind over one set of leaves."""
    kind = _extremum_kind(x)
    if kind is None or kind != _extremum_kind(y) or x.width != y.width:
        return False
    return _extremum_leaves(x, kind) == _extremum_leaves(y, kind)
