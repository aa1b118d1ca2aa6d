"""Structural keys of traced queries and the proof cache (issue 30 item 5).

A query's key is a hash of its DAG up to the names of its free variables: nodes are
numbered in one deterministic depth-first order from the roots, and every variable is
renamed by the order in which that walk first meets it. Two queries with one key are the
same formula up to a renaming of variables, so one is satisfiable exactly when the other
is: lanes of a datapath that pose the same local question share one solver call, and a
spec edit changes the keys of exactly the queries whose DAG it changed.

The cache remembers ``unsat`` answers, on disk when it has a file; ``unknown`` ones only
in memory, with their time limit (a timeout depends on the machine's load, so it must not
outlive the run); a ``sat`` answer is never stored, since its model names the variables of
one query only.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcspec.smt.trace import Node

ENGINE_VERSION = "equivalence-engine-1"
"""Part of every key: a change to what the engine asks bumps it."""


def structure_key(roots: Sequence[Node], *extra: Any) -> str:
    """The hash of the DAG under ``roots`` with variables renamed by first use (and of
    ``extra``, e.g. the solver and time limit)."""
    order: dict[int, int] = {}
    names: dict[str, int] = {}
    digest = hashlib.sha256(repr((ENGINE_VERSION, extra)).encode())
    stack: list[tuple[Node, bool]] = [(root, False) for root in reversed(roots)]
    while stack:
        node, expanded = stack.pop()
        if node.id in order:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((arg, False) for arg in reversed(node.args) if arg.id not in order)
            continue
        order[node.id] = len(order)
        if node.op == "var":
            label: Any = ("var", names.setdefault(node.params[0], len(names)), node.width)
        else:
            label = (node.op, node.params, node.width, tuple(order[a.id] for a in node.args))
        digest.update(repr(label).encode())
    digest.update(repr(tuple(order[r.id] for r in roots)).encode())
    return digest.hexdigest()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tcspec" / "proofs"


class ProofCache:
    """Query key -> answer, in memory and (when ``path`` is given) appended to a JSON-lines
    file that later runs read back. Thread-safe."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._answers: dict[str, dict[str, Any]] = {}
        self._satisfiable: set[str] = set()
        self._lock = threading.Lock()
        self.hits = 0
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                    self._answers[entry["key"]] = entry
                except (ValueError, KeyError, TypeError):
                    continue

    def get(self, key: str, timeout: float) -> dict[str, Any] | None:
        """The cached answer that decides this query at ``timeout``: an ``unsat``, or an
        ``unknown`` reached with at least that much time."""
        with self._lock:
            entry = self._answers.get(key)
            if entry is None:
                return None
            if entry["status"] == "unsat" or (entry["status"] == "unknown"
                                              and entry["timeout"] >= timeout):
                self.hits += 1
                return entry
            return None

    def known_satisfiable(self, key: str) -> bool:
        """Whether this run has seen the query ``key`` answered ``sat`` (kept in memory
        only: it lets a caller skip a query whose model it does not need)."""
        with self._lock:
            return key in self._satisfiable

    def put(self, key: str, status: str, seconds: float, timeout: float) -> None:
        if status == "sat":
            with self._lock:
                self._satisfiable.add(key)
        if status not in ("unsat", "unknown"):
            return
        entry = {"key": key, "status": status, "seconds": round(seconds, 3),
                 "timeout": timeout}
        with self._lock:
            old = self._answers.get(key)
            if old is not None and (old["status"] == "unsat" or old["timeout"] >= timeout):
                return
            self._answers[key] = entry
            if self.path is not None and status == "unsat":
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(entry) + "\n")

    def __len__(self) -> int:
        return len(self._answers)
