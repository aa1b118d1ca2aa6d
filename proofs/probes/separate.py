"""Separating suites: few probes on which every pair of listed models disagrees at least once.

For each pair of models that no probe found so far separates (every probe
is replayed on every listed model, so one probe often covers many pairs),
:mod:`proofs.probes.probe` asks the solver for a pair probe. A greedy set cover
then picks the suite. How far from minimal: the exact minimum over the same
pool of probes is computed by brute force when the pool is small, and
``pairs / (most pairs any one pool probe covers)`` bounds it from below; a
smaller suite could exist only with probes outside the pool. Pairs the
solver proves equivalent (under the constraints) cannot be separated by
any input and are reported as such.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tcspec.proofs.probes.probe import (
    DEFAULT_PROBE_TIMEOUT,
    EQUIVALENT,
    UNKNOWN,
    Constraints,
    Log,
    Probe,
    Searcher,
    check_constraints,
    minimized,
    quiet,
    resolve_models,
)
from tcspec.smt.solve import DEFAULT_SOLVER
from tcspec.spec.descriptor import Descriptor

Pair = tuple[str, str]
BRUTE_FORCE_LIMIT = 20000
"""Most subsets tried when computing the exact minimum over the pool."""


@dataclass
class Suite:
    """A separating suite, its pool, and the pairs it could not cover (with why)."""

    desc: Descriptor
    models: list[str]
    suite: list[Probe] = field(default_factory=list)
    pool: list[Probe] = field(default_factory=list)
    equivalent: list[Pair] = field(default_factory=list)
    undecided: list[Pair] = field(default_factory=list)
    pool_minimum: int | None = None
    seconds: float = 0.0
    solver_calls: int = 0
    constraints: Constraints = field(default_factory=Constraints)

    @property
    def pairs(self) -> list[Pair]:
        return list(itertools.combinations(self.models, 2))

    def covered(self, probes: Sequence[Probe] | None = None) -> list[Pair]:
        probes = self.suite if probes is None else probes
        return [p for p in self.pairs if any(x.separates(*p) for x in probes)]

    @property
    def lower_bound(self) -> int:
        """``ceil(coverable pairs / most pairs one pool probe covers)`` (at least 1)."""
        coverable = len(self.covered(self.pool))
        best = max((len(self.covered([x])) for x in self.pool), default=0)
        return max(1, -(-coverable // best)) if best else 0

    def text(self) -> str:
        lines = [f"{self.desc.name}: {len(self.models)} models, {len(self.pairs)} pairs; "
                 f"suite of {len(self.suite)} probe(s) covers {len(self.covered())} pairs "
                 f"({self.seconds:.1f}s, {self.solver_calls} solver calls, pool of "
                 f"{len(self.pool)}){self.constraints.under()}"]
        if self.suite:
            exact = (f"the exact minimum over this pool is {self.pool_minimum}"
                     if self.pool_minimum is not None else "the pool was too large to search")
            lines.append(f"  minimality: greedy set cover; {exact}; lower bound over the pool "
                         f"{self.lower_bound} (probes outside the pool could do better, never "
                         "fewer than 1)")
        for index, probe in enumerate(self.suite):
            groups: dict[int, list[str]] = {}
            for name in self.models:
                groups.setdefault(probe.predicted[name], []).append(name)
            digits = 4 if self.desc.d_type == "f16" else 8
            shown = "; ".join(f"0x{w:0{digits}X}: {', '.join(ns)}" for w, ns in groups.items())
            lines.append(f"  probe {index}: {len(groups)} classes: {shown}")
        for pair in self.equivalent:
            lines.append(f"  equivalent (no separating input, proved): {pair[0]} = {pair[1]}")
        for pair in self.undecided:
            lines.append(f"  not separated (solver undecided): {pair[0]} / {pair[1]}")
        return "\n".join(lines)


def separating_suite(desc: Descriptor, names: Sequence[str],
                     constraints: Constraints | None = None, *,
                     solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_PROBE_TIMEOUT,
                     seed: int | None = None, minimize: bool = False,
                     log: Log = quiet) -> Suite:
    """A small suite separating every pair of ``names`` on ``desc`` that can be separated.

    ``minimize`` shrinks each pair probe as ``tcspec probe --minimize`` does.
    """
    if len(names) < 2:
        raise ValueError("--separate needs at least two models")
    constraints = constraints or Constraints()
    check_constraints(desc, constraints)
    models = resolve_models(desc, names)
    searcher = Searcher(desc, models, solver=solver, timeout=timeout, log=log)
    result = Suite(desc, [m.name for m in models], constraints=constraints)
    started = time.monotonic()
    for pair in result.pairs:
        if any(p.separates(*pair) for p in result.pool):
            continue
        status, probe = searcher.find(list(pair), constraints, seed=seed)
        if probe is not None and minimize:
            probe, _ = minimized(searcher, pair, constraints, probe)
        if probe is not None:
            result.pool.append(probe)
        elif status == EQUIVALENT:
            result.equivalent.append(pair)
        else:
            assert status == UNKNOWN
            result.undecided.append(pair)
    result.suite = greedy_cover(result.pool, result.covered(result.pool))
    result.pool_minimum = exact_minimum(result.pool, result.covered(result.pool),
                                        len(result.suite))
    result.seconds = time.monotonic() - started
    result.solver_calls = len(searcher.calls)
    return result


def greedy_cover(pool: Sequence[Probe], pairs: Sequence[Pair]) -> list[Probe]:
    """Repeatedly take the probe covering most still-uncovered pairs."""
    left = set(pairs)
    chosen: list[Probe] = []
    while left:
        best = max(pool, key=lambda p: sum(p.separates(*pair) for pair in left))
        gained = {pair for pair in left if best.separates(*pair)}
        if not gained:
            break
        chosen.append(best)
        left -= gained
    return chosen


def exact_minimum(pool: Sequence[Probe], pairs: Sequence[Pair], upper: int) -> int | None:
    """The fewest pool probes covering ``pairs`` (``None`` if the search is too large)."""
    if not pairs:
        return 0
    covers = [frozenset(pair for pair in pairs if p.separates(*pair)) for p in pool]
    target = frozenset(pairs)
    tried = 0
    for size in range(1, upper):
        for subset in itertools.combinations(covers, size):
            tried += 1
            if tried > BRUTE_FORCE_LIMIT:
                return None
            if frozenset().union(*subset) == target:
                return size
    return upper
