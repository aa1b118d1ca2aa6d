"""Relations a caller declares between words: hints to the engine (issue 31).

The engine's own relations (equal, extended, negated, complemented) are those of integer
words. A property over two runs may relate intermediate words in a way only the rule
text knows: a split-K step's D word of the negated run is the float negation of the
first run's, except that a zero stays ``+0`` and the NaN stays canonical. A
:class:`WordRelation` names such a map ``right = build(left)`` on words of one width;
the engine proposes it from simulation beside its own relations and proves each pair it
merges like any other, so a wrong hint costs time, never soundness.

A relation may also be *loose*: ``right`` equals ``build(left)`` only up to a class of
words (:class:`Classes`), such as the sign of a zero in IEEE arithmetic, where an exact
cancellation's zero takes its sign from the operands, not from the other run's word. Such
a pair is proved as ``canon(right) == canon(build(left))``, and merging it replaces the
right word by ``choose(canon(build(left)), f)`` with ``f`` a fresh free variable: every
member of the class, so the merged DAG over-approximates the real one (a cut-point that
keeps what the class fixes). ``proved`` stays sound; a model of a query over such a DAG
is only a candidate, which the engine replays before it believes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tcspec.proofs.engine.simulate import Simulation
from tcspec.smt.trace import Node, TraceOps
from tcspec.spec.bitvec import BV, Ops

LOOSE_PREFIX = "loose!"
"""The name prefix of the free variable a loose merge introduces (``loose!<n>``, numbered
once per process)."""


@dataclass(frozen=True)
class Classes:
    """Word classes: ``canon`` maps a word to its class's representative; ``choose(c, f)``
    is the member of ``c``'s class that the ``free_width``-bit word ``f`` picks, and
    ``free_of(w)`` the ``f`` that picks ``w`` (``choose(canon(w), free_of(w)) == w`` for
    every ``w``: what a merge's soundness rests on, checked by
    :func:`proofs.engine.sweep.check_classes`)."""

    name: str
    free_width: int
    canon: Callable[[Ops, BV], BV]
    choose: Callable[[Ops, BV, BV], BV]
    free_of: Callable[[Ops, BV], BV]


@dataclass(frozen=True)
class WordRelation:
    """``right = build(ops, left)`` on words of ``width`` bits (up to ``classes``)."""

    name: str
    width: int
    build: Callable[[Ops, BV], BV]
    classes: Classes | None = None

    @cached_property
    def _traced(self) -> tuple[Node, Node, Node]:
        ops = TraceOps()
        x = ops.variable("x", self.width)
        mapped = self.build(ops, x)
        if self.classes is None:
            return mapped.node, x.node, x.node
        return (self.classes.canon(ops, mapped).node, self.classes.canon(ops, x).node,
                self.classes.free_of(ops, x).node)

    def _apply(self, node: Node, values: Sequence[int] | np.ndarray) -> np.ndarray:
        sim = Simulation([node], {"x": [int(v) for v in values]})
        return sim.values[node.id]

    def on_values(self, values: Sequence[int] | np.ndarray) -> np.ndarray:
        """The relation applied to every left value, then its class's representative (the
        NumPy lowering of ``build``, traced once)."""
        return self._apply(self._traced[0], values)

    def right_values(self, values: Sequence[int] | np.ndarray) -> np.ndarray:
        """Each right value's class representative (the value itself for a strict
        relation)."""
        if self.classes is None:
            return np.asarray(values)
        return self._apply(self._traced[1], values)

    def free_values(self, values: Sequence[int] | np.ndarray) -> np.ndarray:
        """The free word that picks each right value from its class."""
        return self._apply(self._traced[2], values)

    def on_int(self, value: int) -> int:
        return int(self.on_values([value])[0])

    def holds(self, left: int, right: int) -> bool:
        """Whether the words ``left`` and ``right`` are related."""
        return self.on_int(left) == int(self.right_values([right])[0])
