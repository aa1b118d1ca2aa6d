"""Worker processes that stop with the command: Ctrl-C, SIGTERM or an error ends them all.

``ProcessPoolExecutor`` waits for every queued task on the way out, its workers catch the
``KeyboardInterrupt`` of a task and take the next one, and on Python 3.11 terminating it
while futures are cancelled can raise ``InvalidStateError`` in its manager thread and hang
the interpreter's exit (issue 33). Here each worker is a plain process with its own pipe,
at most :data:`IN_FLIGHT` tasks ahead; workers ignore SIGINT (the command decides what
Ctrl-C means) and die on SIGTERM; on any exception or early stop of the consumer every
worker is killed at once, with no thread or queue left to wait for.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

IN_FLIGHT = 2
"""Tasks sent ahead to each worker."""


class WorkerDiedError(RuntimeError):
    """A worker process ended without answering (killed, or out of memory)."""


def _worker(function: Callable[..., Any], conn: Connection, parent: int) -> None:
    """Answer ``(index, args)`` requests with ``(index, True, result)`` or
    ``(index, False, exception)`` until ``None``, the parent's end closing, or its death."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        if not conn.poll(1.0):
            if os.getppid() != parent:
                return
            continue
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        index, args = request
        try:
            answer = (index, True, function(*args))
        except Exception as exc:
            answer = (index, False, exc)
        try:
            conn.send(answer)
        except Exception as exc:
            conn.send((index, False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _kill(procs: list[Any]) -> None:
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    for proc in procs:
        proc.join(5)


def pool_map(workers: int, function: Callable[..., Any], *iterables: Iterable[Any]
             ) -> Iterator[Any]:
    """``function`` over ``iterables`` on ``workers`` processes, results in order; if the
    consumer fails or stops (Ctrl-C included), or a task raises, every worker is killed
    before the exception goes on. ``function`` must be a module-level function."""
    tasks = enumerate(zip(*iterables))
    procs: list[Any] = []
    conns: list[Connection] = []
    try:
        for _ in range(max(1, workers)):
            mine, theirs = multiprocessing.Pipe()
            proc = multiprocessing.Process(target=_worker, args=(function, theirs, os.getpid()),
                                           daemon=True)
            proc.start()
            theirs.close()
            procs.append(proc)
            conns.append(mine)
        load = [0] * len(procs)
        done: dict[int, Any] = {}
        sent = following = 0
        exhausted = False
        while True:
            for slot, conn in enumerate(conns):
                while not exhausted and load[slot] < IN_FLIGHT:
                    task = next(tasks, None)
                    if task is None:
                        exhausted = True
                        break
                    conn.send(task)
                    load[slot] += 1
                    sent += 1
            while following in done:
                yield done.pop(following)
                following += 1
            if exhausted and following == sent:
                break
            ready = wait([*conns, *(p.sentinel for p in procs)])
            for slot, conn in enumerate(conns):
                if conn not in ready:
                    continue
                try:
                    index, ok, value = conn.recv()
                except (EOFError, OSError):
                    continue
                if not ok:
                    raise value
                done[index] = value
                load[slot] -= 1
            for proc in procs:
                if proc.sentinel in ready and not proc.is_alive():
                    raise WorkerDiedError(f"a worker process ended without answering "
                                          f"(exit status {proc.exitcode})")
        for conn in conns:
            conn.send(None)
        for proc in procs:
            proc.join(5)
    finally:
        _kill(procs)
        for conn in conns:
            conn.close()
