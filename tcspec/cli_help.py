"""Help text of the ``tcspec`` command: accepted values, examples, the word layout table.

Definitions only, read by :mod:`tcspec.cli_args`. The value lists come from the
catalog and the candidate registry, so a new datapath or model shows up here.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import NoReturn

from tcspec.words import EXIT_USAGE

MAX_JOBS = 1024


class OnlyWith(argparse.Action):
    """A flag that means something only beside another (``needs``, e.g. ``--arch``): given
    without it, :class:`Parser` refuses it rather than ignore it."""

    def __init__(self, option_strings: list[str], dest: str, needs: str,
                 **kwargs: object) -> None:
        self.needs = needs
        super().__init__(option_strings, dest, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        pending = getattr(namespace, "_only_with", [])
        namespace._only_with = [*pending, (option_string, self.needs)]


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors read ``tcspec: error: ...`` (one line, exit 2)."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        for flag, needs in getattr(parsed, "_only_with", []):
            if not getattr(parsed, needs.lstrip("-").replace("-", "_"), None):
                self.error(f"{flag} applies only with {needs}")
        if hasattr(parsed, "_only_with"):
            delattr(parsed, "_only_with")
        return parsed, rest

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("tcspec").strip()
        where = f"{command}: " if command else ""
        repeated = re.match(r"argument (\S+): (\1 .*)", message)
        if repeated:
            message = repeated.group(2)
        found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group(2))
            close = difflib.get_close_matches(found.group(1), choices, n=1)
            if close:
                message += f"; did you mean {close[0]!r}?"
        print(f"tcspec: error: {where}{message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def jobs_count(text: str) -> int:
    """``--jobs N``: a whole number of processes in 1..MAX_JOBS."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number of processes, "
                                         f"got {text!r}") from None
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1 and at most {MAX_JOBS}, "
                                         f"got {value}")
    return value


def positive_int(flag: str) -> Callable[[str], int]:
    """The type of ``flag``: a whole number of at least 1 (``--cases``, ``--count``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes a whole number, got {text!r}"
                                             ) from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be at least 1, got {value}")
        return value
    return parse


def positive_seconds(flag: str) -> Callable[[str], float]:
    """The type of ``flag``: a positive, finite number of seconds."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes seconds, got {text!r}") from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"{flag} must be positive seconds, got {text}")
        return value
    return parse


def datapaths_text() -> str:
    """Every catalogued datapath, with its short alias where it has one."""
    from tcspec.spec.catalog import CATALOG

    names = list(CATALOG)
    return textwrap.fill(f"datapaths ({len(names)}, `tcspec list`; a dense-X name also "
                         f"answers to X, e.g. tf32 = dense-tf32): " + ", ".join(names), 88)


def models_text() -> str:
    from tcspec.spec.candidates import ALIASES, CANDIDATES, PARAMETRIC

    aliases = ", ".join(f"{k} = {v}" for k, v in ALIASES.items())
    return textwrap.fill(f"models: {', '.join(CANDIDATES)}; parameter values "
                         f"{' / '.join(PARAMETRIC)}" + (f"; aliases {aliases}" if aliases else "")
                         + " (`tcspec list --candidates`)", 88)


OPERAND_FORMATS = "tf32, bf16, f16, e4m3, e5m2, e2m3, e3m2, e2m1, u8, s8"
D_TYPES = "f32, f16, s32"
KINDS = "tf32, f16, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4"

LAYOUT_TABLE = """\
word layout (SEMANTICS.md section 1): every A, B, C word is 32 bits; a format reads
only these bits, the hardware ignores the others:
  format          bits read               1.0 is
  tf32            31..13 (an F32 word)    0x3F800000
  bf16            31..16 (top half)       0x3F800000  (not 0x3F80)
  f16             15..0                   0x3C00
  e4m3 / e5m2     7..0                    0x38 / 0x3C
  e2m3 / e3m2     5..0                    0x08 / 0x0C
  e2m1            3..0                    0x2
  u8 / s8         7..0                    0x01
  C, F32 D        31..0                   0x3F800000
  C, F16 D        15..0                   0x3C00
  C, S32 D        31..0 (two's complement)
  ue8m0 scale     7..0                    0x7F
  ue4m3 scale     6..0                    0x38
D is an F32 or S32 word, or an F16 word in bits 15..0. A word that is almost surely a
layout mistake (every set bit outside the bits read, like bf16 0x3F80; set bits above
a narrow format's width, like an F32 C word on an F16-D path) is refused unless
--raw-containers."""

EXAMPLES = {
    "list": ["tcspec list", "tcspec list --candidates", "tcspec list --json"],
    "eval": ["tcspec eval --datapath tf32 --a 0x3f800000,0x3f800000,0,0,0,0,0,0 "
             "--b 0x40000000,0x40000000,0,0,0,0,0,0 --c 0x3f800000",
             "tcspec eval --a-format e4m3 --d-type f16 --a @a.txt --b @b.txt --c 0x3c00",
             "tcspec eval --datapath nvfp4 --a @a.txt --b @b.txt --scale-a 0x38 "
             "--scale-b 0x38,0x38,0x38,0x38"],
    "explain": ["tcspec explain --line ref/vectors/b200_frozen.jsonl:1",
                "tcspec explain --datapath tf32 --a @a.txt --b @b.txt --vs exact-rne "
                "--svg pic.svg"],
    "validate": ["tcspec validate", "tcspec validate --reference --jobs 2",
                 "tcspec validate --json"],
    "check": ["tcspec check vectors.jsonl.gz", "tcspec check --model exact-rne probes.jsonl",
              "tcspec check --json cases/"],
    "gen": ["tcspec gen --datapath tf32 --cases 1000 --out cases.jsonl.gz",
            "tcspec gen --datapath e4m3 --cases 10000000 --format npy-dir --out cases/ --force"],
    "smtlib": ["tcspec smtlib --datapath tf32 -o tf32.smt2"],
    "export": ["tcspec export --lang smtlib --all -o tcgen05.smt2",
               "tcspec export --lang c --datapath tf32 -o ref_c/"],
    "bench": ["tcspec bench --datapath tf32", "tcspec bench --api --shape 256,256,1024"],
    "conform": ["tcspec conform --datapath tf32 --cases 50"],
    "probe": ["tcspec probe --datapath tf32 --vs exact-rne --count 5 --out p.jsonl",
              "tcspec probe --datapath tf32 --separate hardware,exact-rne,window-24",
              "tcspec probe --datapath nvfp4 --sensitivity"],
    "classify": ["tcspec classify observed.jsonl",
                 "tcspec classify --candidates hardware,exact-rne --json observed.jsonl"],
    "tour": ["tcspec tour"],
    "prove": ["tcspec prove --fast",
              "tcspec prove --property sign-symmetry --datapath tf32 --second-solver none",
              "tcspec prove --property sign-symmetry --report proof-report/",
              "tcspec prove --jobs 2 --report"],
    "equiv": ["tcspec equiv --datapath dense-tf32 docs/examples/equiv/tf32.smt2",
              "tcspec equiv --datapath dense-tf32 docs/examples/equiv/tf32-rne.smt2 --json",
              "tcspec equiv --datapath sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32 "
              "docs/examples/equiv/fp8_via_f16.py:impl"],
    "hw": ["tcspec hw list", "tcspec hw run vectors.jsonl --out observed.jsonl"],
}


def epilog(command: str, *extra: str) -> str:
    """The examples of ``command`` (and any ``extra`` paragraphs) for its ``--help``."""
    lines = ["examples:", *(f"  {line}" for line in EXAMPLES.get(command, ()))]
    return "\n\n".join(["\n".join(lines), *extra])


def exit_status_text() -> str:
    return ("exit status: 0 success, 1 a mismatch (or a property not proved), 2 bad input "
            "(one line `tcspec: error: ...` on stderr), 130 interrupted by Ctrl-C, 143 "
            "terminated by SIGTERM (partial outputs removed; a second Ctrl-C ends at once)")
