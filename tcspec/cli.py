"""The ``tcspec`` command: parse the arguments, run the command, report bad input.

A dispatcher only. The parser is defined in :mod:`tcspec.cli_args`; each
command is one function in the module of its domain (imported when that
command runs), which prints its result and returns the exit status.

Bad input (a non-hex word, wrong K, an unknown format or datapath, a missing
file) prints one line ``tcspec: error: ...`` naming the problem and exits
with status 2; a mismatch against a vector exits with status 1; Ctrl-C exits 130 and
SIGTERM 143, after every partial output is removed (:mod:`tcspec.outputs`) and every
solver and worker process stopped; a second Ctrl-C ends the process at once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from tcspec.cli_args import build_parser
from tcspec.words import EXIT_USAGE, UsageError

Command = Callable[[argparse.Namespace], int]


def command(name: str) -> Command:
    """The function that runs subcommand ``name``."""
    if name == "list":
        from tcspec.listing import cmd_list
        return cmd_list
    if name == "eval":
        from tcspec.dot import cmd_eval
        return cmd_eval
    if name == "explain":
        from tcspec.dot import cmd_explain
        return cmd_explain
    if name == "validate":
        from tcspec.validate import cmd_validate
        return cmd_validate
    if name == "check":
        from tcspec.campaign import cmd_check
        return cmd_check
    if name == "gen":
        from tcspec.campaign import cmd_gen
        return cmd_gen
    if name == "smtlib":
        from tcspec.export import cmd_smtlib
        return cmd_smtlib
    if name == "export":
        from tcspec.export import cmd_export
        return cmd_export
    if name == "bench":
        from tcspec.bench import cmd_bench
        return cmd_bench
    if name == "conform":
        from tcspec.conformance import cmd_conform
        return cmd_conform
    if name == "probe":
        from tcspec.probe import cmd_probe
        return cmd_probe
    if name == "classify":
        from tcspec.classify import cmd_classify
        return cmd_classify
    if name == "tour":
        from tcspec.tour import cmd_tour
        return cmd_tour
    if name == "hw":
        from tcspec.hw.run import cmd_hw
        return cmd_hw
    if name == "prove":
        from tcspec.proof_matrix import cmd_prove
        return cmd_prove
    if name == "equiv":
        from tcspec.equivalence import cmd_equiv
        return cmd_equiv
    raise UsageError(f"unknown command {name!r}")


EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Exit status after Ctrl-C (130)."""
EXIT_TERMINATED = 128 + signal.SIGTERM
"""Exit status after SIGTERM (143)."""
STOP_GRACE_SECONDS = 5.0
"""Longest time a stopping command may spend removing its partial outputs: after it, or at
a second Ctrl-C (or SIGTERM), the process ends at once."""


class _Stop:
    """How the running command is being stopped: the first signal, and whether this is the
    ``tcspec`` process itself (which may end at once) rather than a caller of :func:`main`."""

    main_pid = 0
    signum: int | None = None
    process = False


def _children_killed() -> None:
    """Kill the solver children and worker processes this process started."""
    solve = sys.modules.get("tcspec.smt.solve")
    if solve is not None:
        solve.stop_solvers()
    import multiprocessing

    for child in multiprocessing.active_children():
        child.kill()


def _exit_now(code: int, message: str | None = None) -> None:
    """End the process at once: children killed, output flushed, no thread waited for."""
    with contextlib.suppress(Exception):
        _children_killed()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if message:
        with contextlib.suppress(Exception):
            os.write(2, (message + "\n").encode())
    os._exit(code)


def _late_stop(code: int) -> None:
    time.sleep(STOP_GRACE_SECONDS)
    _exit_now(code, f"tcspec: error: stopping took over {STOP_GRACE_SECONDS:g} s; ended at "
                    "once (some partial outputs may remain)")


def _stop_signal(signum: int, frame: object) -> None:
    """Ctrl-C and SIGTERM: the first raises ``KeyboardInterrupt`` (outputs cleaned up, exit
    130 or 143); a second one, or :data:`STOP_GRACE_SECONDS` later, ends the process at once.
    A forked worker that has not yet reset the handler just exits."""
    if os.getpid() != _Stop.main_pid:
        os._exit(128 + signum)
    if _Stop.signum is not None and _Stop.process:
        _exit_now(128 + _Stop.signum, "tcspec: error: stopped at once (second signal)")
    if _Stop.signum is None:
        _Stop.signum = signum
        if _Stop.process:
            threading.Thread(target=_late_stop, args=(128 + signum,), daemon=True).start()
    raise KeyboardInterrupt


def _install_handlers() -> dict[int, Any]:
    """Install :func:`_stop_signal` for SIGINT and SIGTERM (a signal this process was started
    ignoring stays ignored, as for ``nohup``); the handlers it replaced."""
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) != signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _stop_signal)
    return previous


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tcspec ARGV``; the exit status. Without ``argv`` this is the ``tcspec`` process
    itself: after Ctrl-C or SIGTERM it ends at once once the outputs are cleaned up, without
    waiting for threads still building a formula."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    _Stop.main_pid, _Stop.signum, _Stop.process = os.getpid(), None, argv is None
    previous = _install_handlers()
    try:
        return command(args.command)(args)
    except (UsageError, ValueError) as exc:
        print(f"tcspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"tcspec: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("tcspec: error: out of memory (the input is larger than this machine holds)",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        terminated = _Stop.signum == signal.SIGTERM
        code = EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        message = (f"tcspec: error: {'terminated' if terminated else 'interrupted'} "
                   "(unfinished outputs removed; finished ones kept)")
        if _Stop.process:
            _exit_now(code, message)
        print(message, file=sys.stderr)
        return code
    finally:
        for signum, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)


if __name__ == "__main__":
    sys.exit(main())
