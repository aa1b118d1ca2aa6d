"""The ``tcspec`` command: parse the arguments, run the command, report bad input.

A dispatcher only. The parser is defined in :mod:`tcspec.cli_args`; each
command is one function in the module of its domain (imported when that
command runs), which prints its result and returns the exit status.

Bad input (a non-hex word, wrong K, an unknown format or datapath, a missing
file) prints one line ``tcspec: error: ...`` naming the problem and exits
with status 2; a mismatch against a vector exits with status 1; Ctrl-C (or
SIGTERM) exits 130 after every partial output is removed (:mod:`tcspec.outputs`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence

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
        from tcspec.prove import cmd_prove
        return cmd_prove
    raise UsageError(f"unknown command {name!r}")


_MAIN_PID = [0]


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends the command like Ctrl-C (outputs cleaned up, exit 130); a forked worker
    that has not yet reset the handler just exits."""
    if os.getpid() != _MAIN_PID[0]:
        os._exit(128 + signum)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    _MAIN_PID[0] = os.getpid()
    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
        installed = True
    except ValueError:
        previous, installed = None, False
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
        print("tcspec: error: interrupted (partial outputs removed)", file=sys.stderr)
        return 130
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":
    sys.exit(main())
