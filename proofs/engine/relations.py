"""Relations a caller declares between words: hints to the engine (issue 31).

The engine's own relations (equal, extended, negated, complemented) are those of integer
words. A property over two runs may relate intermediate words in a way only the rule
text knows: a split-K step's D word of the negated run is the float negation of the
first run's, except that a zero stays ``+0`` and the NaN stays canonical. A
:class:`WordRelation` names such a map ``right = build(left)`` on words of one width;
the engine proposes it from simulation beside its own relations and proves each pair it
merges like any other, so a wrong hint costs time, never soundness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tcspec.proofs.engine.simulate import Simulation
from tcspec.smt.trace import Node, TraceOps
from tcspec.spec.bitvec import BV, Ops


@dataclass(frozen=True)
class WordRelation:
    """``right = build(ops, left)`` on words of ``width`` bits."""

    name: str
    width: int
    build: Callable[[Ops, BV], BV]

    @cached_property
    def _traced(self) -> Node:
        ops = TraceOps()
        return self.build(ops, ops.variable("x", self.width)).node

    def on_values(self, values: Sequence[int] | np.ndarray) -> np.ndarray:
        """The relation applied to every value (the NumPy lowering of ``build``, traced
        once)."""
        sim = Simulation([self._traced], {"x": [int(v) for v in values]})
        return sim.values[self._traced.id]

    def on_int(self, value: int) -> int:
        return int(self.on_values([value])[0])
