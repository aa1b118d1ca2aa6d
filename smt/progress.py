"""Progress lines for long solver runs: never more than a few seconds of silence on stderr
(issue 19). One heartbeat serves the proofs, the probes and the command line."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

HEARTBEAT_SECONDS = 10.0
"""Longest silence on stderr during a long run."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Heartbeat:
    """While the block runs, a line ``NAME: still working (Ns; last: STEP)`` whenever nothing
    was written for ``every`` seconds (default :data:`HEARTBEAT_SECONDS`), through ``write``
    (default: stderr). ``note(step)`` records what is running; ``log(line)`` writes a line
    now and counts as one."""

    def __init__(self, name: str, every: float | None = None,
                 write: Callable[[str], None] | None = None) -> None:
        self.name = name
        self.every = HEARTBEAT_SECONDS if every is None else every
        self.write = write or _stderr
        self.step = ""
        self.started = self.last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def note(self, step: str) -> None:
        self.step = step

    def log(self, line: str) -> None:
        self.last = time.monotonic()
        self.write(line)

    def _run(self) -> None:
        while not self._stop.wait(min(1.0, self.every / 4)):
            now = time.monotonic()
            if now - self.last >= self.every:
                self.last = now
                step = f"; last: {self.step}" if self.step else ""
                self.write(f"  {self.name}: still working ({now - self.started:.0f}s{step})")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
