"""Worker processes that stop with the command: Ctrl-C, SIGTERM or an error ends them all.

``ProcessPoolExecutor`` used as a context manager waits for every queued task on the
way out, so an interrupted ``gen`` or ``check`` would run on for minutes; and a worker
catches the ``KeyboardInterrupt`` of its task and takes the next one. Here pending
tasks are cancelled and the workers terminated at once, and workers die on SIGTERM.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def _default_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pool_map(workers: int, function: Callable[..., Any], *iterables: Iterable[Any]
             ) -> Iterator[Any]:
    """``function`` over ``iterables`` on ``workers`` processes, results in order; if the
    consumer fails or stops (Ctrl-C included), pending tasks are cancelled and the workers
    terminated before the exception goes on."""
    pool = ProcessPoolExecutor(workers, initializer=_default_sigterm)
    try:
        yield from pool.map(function, *iterables)
    except BaseException:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(5)
        raise
    pool.shutdown()
