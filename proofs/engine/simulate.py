"""Simulation: every node of a traced DAG evaluated on many input words at once.

The equivalence engine proposes its cut-points from simulation, as combinational
equivalence checkers do: two nodes whose values agree (up to a relation) on every
sample are a candidate pair. Values are NumPy arrays, one entry per sample, computed by
the NumPy batch lowering's primitives (``uint64`` up to 64 bits, Python ints above), so
the simulation is the executable semantics of the ops protocol, not a second one.

Each node gets value keys: a hash of its unsigned values, of its signed values and of
their negation (booleans: of the values and of their complement). Two nodes of any
widths with one key in common are related on every sample: equal, equal once zero- or
sign-extended, or negated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from tcspec.ref.batch import NUMPY
from tcspec.smt.trace import Node, walk

_N = NUMPY

_APPLY = {
    "extract": lambda a, p, w: _N.p_extract(a[0], w[0], p[0], p[1]),
    "concat": lambda a, p, w: _N.p_concat(a[0], w[0], a[1], w[1]),
    "zext": lambda a, p, w: _N.p_zext(a[0], w[0], p[0]),
    "sext": lambda a, p, w: _N.p_sext(a[0], w[0], p[0]),
    "not": lambda a, p, w: _N.p_not(a[0], w[0]),
    "and": lambda a, p, w: _N.p_and(a[0], a[1], w[0]),
    "or": lambda a, p, w: _N.p_or(a[0], a[1], w[0]),
    "xor": lambda a, p, w: _N.p_xor(a[0], a[1], w[0]),
    "add": lambda a, p, w: _N.p_add(a[0], a[1], w[0]),
    "sub": lambda a, p, w: _N.p_sub(a[0], a[1], w[0]),
    "neg": lambda a, p, w: _N.p_neg(a[0], w[0]),
    "mul": lambda a, p, w: _N.p_mul(a[0], a[1], w[0]),
    "shl": lambda a, p, w: _N.p_shl(a[0], a[1], w[0]),
    "lshr": lambda a, p, w: _N.p_lshr(a[0], a[1], w[0]),
    "ashr": lambda a, p, w: _N.p_ashr(a[0], a[1], w[0]),
    "eq": lambda a, p, w: _N.p_eq(a[0], a[1], w[0]),
    "ult": lambda a, p, w: _N.p_ult(a[0], a[1], w[0]),
    "ule": lambda a, p, w: _N.p_ule(a[0], a[1], w[0]),
    "slt": lambda a, p, w: _N.p_slt(a[0], a[1], w[0]),
    "sle": lambda a, p, w: _N.p_sle(a[0], a[1], w[0]),
    "band": lambda a, p, w: a[0] & a[1],
    "bor": lambda a, p, w: a[0] | a[1],
    "bnot": lambda a, p, w: ~a[0],
    "bxor": lambda a, p, w: a[0] ^ a[1],
    "ite": lambda a, p, w: np.where(a[0], a[1], a[2]),
}

INT64_MIN = -(1 << 63)


def column(values: Sequence[int] | np.ndarray, width: int | None) -> np.ndarray:
    """Sample values as the array type the NumPy lowering uses for ``width``."""
    if width is None:
        return np.asarray(values, dtype=bool)
    if width > 64:
        return np.asarray([int(v) for v in values], dtype=object)
    return np.asarray([int(v) for v in values], dtype=np.uint64)


def _digest(data: bytes, tag: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=12, person=tag.ljust(16, b"\0")).digest()


def _ints_digest(values: Iterable[int], tag: bytes) -> bytes:
    """One digest for a sequence of Python ints, equal to the array digest when they fit."""
    items = [int(v) for v in values]
    if tag == b"u" and all(0 <= v < (1 << 64) for v in items):
        return _digest(np.asarray(items, dtype=np.uint64).tobytes(), tag)
    if tag != b"u" and all(INT64_MIN < v < (1 << 63) for v in items):
        return _digest(np.asarray(items, dtype=np.int64).tobytes(), tag)
    return _digest(repr(items).encode(), tag)


class Simulation:
    """The values of every node reachable from ``roots`` on ``samples``."""

    def __init__(self, roots: Sequence[Node], samples: Mapping[str, Sequence[int]]) -> None:
        self.nodes = list(walk(roots))
        self.inputs = {n.params[0]: n for n in self.nodes if n.op == "var"}
        self.count = len(next(iter(samples.values()))) if samples else 1
        self.samples = {name: list(samples.get(name, [0] * self.count)) for name in self.inputs}
        self.values: dict[int, np.ndarray] = {}
        self._keys: dict[int, tuple[bytes, ...]] = {}
        self._bit_keys: dict[int, tuple[bytes, bytes]] = {}
        self._evaluate()

    def _evaluate(self) -> None:
        values: dict[int, np.ndarray] = {}
        count = self.count
        for node in self.nodes:
            if node.op == "var":
                values[node.id] = column(self.samples[node.params[0]], node.width)
            elif node.op == "const":
                values[node.id] = column([node.value] * count, node.width)
            elif node.op == "bool_const":
                values[node.id] = np.full(count, bool(node.value))
            else:
                out = _APPLY[node.op]([values[a.id] for a in node.args], node.params,
                                      [a.width for a in node.args])
                values[node.id] = np.broadcast_to(out, (count,))
        self.values = values
        self._keys = {}
        self._bit_keys = {}

    def add(self, words: Mapping[str, int]) -> None:
        """One more sample (input name -> word; missing inputs are 0), all nodes re-evaluated."""
        for name, column_values in self.samples.items():
            column_values.append(int(words.get(name, 0)))
        self.count += 1
        self._evaluate()

    def sample(self, index: int) -> dict[str, int]:
        return {name: int(v[index]) for name, v in self.samples.items()}

    def value(self, node: Node, index: int) -> int | bool:
        v = self.values[node.id][index]
        return bool(v) if node.width is None else int(v)

    def constant(self, node: Node) -> bool:
        """Whether the node takes one value on every sample."""
        v = self.values[node.id]
        return bool(np.all(v == v[0])) if len(v) else True

    def mapped_keys(self, nodes: Sequence[Node],
                    apply: Callable[[np.ndarray], np.ndarray]) -> list[bytes]:
        """The unsigned digest of ``apply`` of each node's values (one width, one call)."""
        if not nodes:
            return []
        stacked = np.concatenate([np.asarray(self.values[n.id]) for n in nodes])
        mapped = np.asarray(apply(stacked)).reshape(len(nodes), self.count)
        if mapped.dtype == object:
            return [_ints_digest(row, b"u") for row in mapped]
        mapped = mapped.astype(np.uint64)
        return [_digest(np.ascontiguousarray(row).tobytes(), b"u") for row in mapped]

    def bit_keys(self, node: Node) -> tuple[bytes, bytes]:
        """Digests of the 1-bit words that are 1 where a boolean holds, and 1 where it fails
        (comparable with a 1-bit node's unsigned :meth:`keys`); cached like them, since
        the index is rebuilt after every refinement."""
        found = self._bit_keys.get(node.id)
        if found is None:
            held = np.ascontiguousarray(self.values[node.id], dtype=bool)
            found = self._bit_keys[node.id] = (
                _digest(held.astype(np.uint64).tobytes(), b"u"),
                _digest((~held).astype(np.uint64).tobytes(), b"u"))
        return found

    def keys(self, node: Node) -> tuple[bytes, ...]:
        """``(unsigned, signed, negated)`` digests of a bit-vector node's values;
        ``(values, complement)`` of a boolean's."""
        found = self._keys.get(node.id)
        if found is None:
            found = self._keys[node.id] = self._compute_keys(node)
        return found

    def _compute_keys(self, node: Node) -> tuple[bytes, ...]:
        v = self.values[node.id]
        if node.width is None:
            b = np.ascontiguousarray(v, dtype=bool)
            return _digest(b.tobytes(), b"b"), _digest((~b).tobytes(), b"b")
        width = node.width
        if v.dtype == object:
            ints = [int(x) for x in v]
            half = 1 << (width - 1)
            signed = [x - (1 << width) if x >= half else x for x in ints]
            return (_ints_digest(ints, b"u"), _ints_digest(signed, b"s"),
                    _ints_digest([-x for x in signed], b"s"))
        u = np.ascontiguousarray(v, dtype=np.uint64)
        if width == 64:
            s = u.view(np.int64)
        else:
            sign = np.uint64(1 << (width - 1))
            s = ((u ^ sign) - sign).view(np.int64)
        if s.size and s.min() == INT64_MIN:
            negated = _ints_digest([-int(x) for x in s], b"s")
        else:
            negated = _digest((-s).tobytes(), b"s")
        return _digest(u.tobytes(), b"u"), _digest(s.tobytes(), b"s"), negated


def signed_value(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) else value


def evaluate_inputs(roots: Sequence[Node], words: Mapping[str, int]) -> dict[int, Any]:
    """Every node's scalar value at one input (missing inputs are 0)."""
    sim = Simulation(roots, {name: [words.get(name, 0)] for name in
                             (n.params[0] for n in walk(roots) if n.op == "var")})
    return {node.id: sim.value(node, 0) for node in sim.nodes}
