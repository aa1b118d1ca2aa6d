"""A long-lived solver child: many small queries without a process start each.

:func:`smt.solve.run_script` starts one child process per query, which costs
a Python start and a solver import (a few hundred milliseconds). The
equivalence engine asks hundreds of small queries per datapath, so it keeps
one :class:`SolverWorker` per thread instead: a child that reads one request
per line (JSON: solver, time limit, script) and answers one JSON line, with
the same answer format as :mod:`smt.solve`. The time limit is the solver's
own; if the child has not answered ``KILL_GRACE`` seconds after it, it is
killed (the answer is ``unknown``) and the next query starts a new one. The
children are registered with :mod:`smt.solve`, so :func:`smt.solve.stop_solvers`
(Ctrl-C, SIGTERM) kills them too.

Run as ``python3 -m tcspec.smt.worker`` it is that child.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time

from tcspec.smt import solve
from tcspec.smt.solve import KILL_GRACE, SOLVERS, SolveResult, SolverStoppedError


class SolverWorker:
    """One child process answering queries in turn (not thread-safe: one per thread)."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None
        self.started = 0

    def _spawn(self) -> subprocess.Popen[str]:
        with solve._GUARD:
            if solve._STOPPING.is_set():
                raise SolverStoppedError("stopping: no new solver runs")
            child = subprocess.Popen([sys.executable, "-m", "tcspec.smt.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
            solve._RUNNING.add(child)
        self.started += 1
        return child

    def close(self) -> None:
        """Stop the child (it is started again by the next query)."""
        child, self._child = self._child, None
        if child is None:
            return
        with solve._GUARD:
            solve._RUNNING.discard(child)
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream:
                stream.close()

    def solve(self, script: str, *, solver: str = solve.DEFAULT_SOLVER,
              timeout: float = solve.DEFAULT_TIMEOUT) -> SolveResult:
        """``check-sat`` of ``script`` by ``solver`` within ``timeout`` seconds."""
        if solver not in SOLVERS:
            raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
        if self._child is None or self._child.poll() is not None:
            self.close()
            self._child = self._spawn()
        child = self._child
        started = time.monotonic()
        request = json.dumps({"solver": solver, "timeout": timeout, "script": script})
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(request + "\n")
            child.stdin.flush()
            line = _read_line(child, timeout + KILL_GRACE)
        except (BrokenPipeError, OSError):
            line = None
        if solve._STOPPING.is_set():
            self.close()
            raise SolverStoppedError("stopping: the solver was killed")
        seconds = time.monotonic() - started
        if line is None:
            self.close()
            return SolveResult("unknown", solver, seconds, reason=f"killed after {timeout:g}s")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            self.close()
            return SolveResult("unknown", solver, seconds, reason="the solver worker failed")
        status = answer["status"]
        reason = answer.get("reason", "") or ("" if status != "unknown"
                                              else f"no answer within {timeout:g}s")
        return SolveResult(status, solver, seconds,
                           {k: int(v) for k, v in answer.get("model", {}).items()}, reason)


def _read_line(child: subprocess.Popen[str], limit: float) -> str | None:
    """The child's next answer line, or None when it has none within ``limit`` seconds."""
    assert child.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(limit):
            return None
    line = child.stdout.readline()
    return line or None


def _child_main() -> int:
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = solve._CHILDREN[request["solver"]](request["script"],
                                                        float(request["timeout"]))
        except Exception as exc:  # the parent turns any solver failure into "unknown"
            answer = {"status": "unknown", "reason": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(_child_main())
