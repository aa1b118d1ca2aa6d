"""Every command the documentation prints still works, and every link in it resolves (issue 33).

The pages are README.md and docs/*.md. The rule:

- **Parsed**: every ``tcspec ...`` command printed in a fenced code block that is not Python
  (each line of the block, or the text after a ``$ `` prompt, split at ``;``, ``&&``, ``||``
  and ``|``), every ``python3 tcspec/hw/device_plan.py ...`` command there, and every inline
  code span of the prose that starts with ``tcspec `` must be accepted, exactly as printed,
  by the parser the command line itself uses (:func:`tcspec.cli_args.build_parser`;
  device_plan.py's own). A usage error (argparse's exit 2) fails the test. Shell variables
  set in the same block (``W=...``) are substituted, any other (``$OUT``) stands as its
  name; ``\\`` continuations are joined; heredoc bodies are skipped.
- **Names**: the datapaths (``--datapath``, ``--vs-datapath``; shell patterns aside), models
  (``--model``, ``--vs``, ``--vs-model``, ``--separate``, ``--candidates``), properties and
  breakers (``--mutant``) a fenced command names exist.
- **Named**: an inline span is a reference in prose (``tcspec gen``, ``tcspec probe
  --separate``, a synopsis with ``[--report]``), not a whole command: its command (an
  all-caps word is a placeholder) and every ``--flag`` it names must exist.
- **Run for real**: the README's quick-start examples (every ``tcspec`` command in its sh
  blocks after the first), in a scratch directory that sees the repository's ``ref/``;
  each takes seconds and must exit 0. The README's first block (install, main job, test
  suite) is run by ``.ci/run``, whose test command is its second line.
- **Transcripts**: a block that shows ``$ tcspec ...`` and its output is run, and every
  output line it shows (``...`` elides lines; a trailing ``(the same ...)`` after two
  spaces is a note) starts a line of the real output, in order; it exits 0, or with the
  status of a last line ``(exit status N)``.
- **Parsed only**: everything else, because it needs a GPU (``hw``), takes minutes to
  hours (proof matrices, portability, bench, conform, ten-million-case campaigns), writes
  into the repository (``--report``), or reads a file an earlier command makes.
- **Links**: every relative link and image names an existing file, and a ``#anchor`` a
  heading of that file; every ``.[extra]`` in an install command is an extra of
  pyproject.toml.
- **Tables**: docs/proofs.md's ``equals-reference`` table by family and its table of the
  engine-declared properties are the ones :func:`tcspec.listing.equals_reference_table` and
  :func:`tcspec.listing.families_table` make from the committed report.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tcspec.cli_args import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
OPERATORS = {";", "&&", "||", "|", "&"}
REDIRECTS = {">", ">>", "<", "2>", "2>>", "&>"}
SHELL_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
DEVICE_PLAN = "tcspec/hw/device_plan.py"


@dataclass(frozen=True)
class Command:
    page: Path
    line: int
    argv: tuple[str, ...]
    block: int  # index of the fenced block on its page; -1 for an inline span

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _fenced_blocks(text: str):
    """(info word, first body line number, body) of every fenced block."""
    for match in FENCE.finditer(text):
        yield match.group(2).lower(), text.count("\n", 0, match.start(3)) + 1, match.group(3)


def _split(line: str) -> list[list[str]]:
    """The simple commands of one shell line: words, with operators and redirections cut."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    skip = False
    for token in lexer:
        if skip:
            skip = False
        elif token in OPERATORS:
            commands.append([])
        elif token in REDIRECTS:
            skip = True
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def _block_commands(page: Path, block: int, first: int, body: str) -> list[Command]:
    found: list[Command] = []
    variables: dict[str, str] = {}
    lines = body.split("\n")
    heredoc: str | None = None
    i = 0
    while i < len(lines):
        number, raw = first + i, lines[i]
        i += 1
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        text = raw.strip()
        if text.startswith("$ "):
            text = text[2:]
        while text.endswith("\\") and i < len(lines):
            text = text[:-1] + " " + lines[i].strip()
            i += 1
        marker = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", text)
        if marker:
            heredoc = marker.group(1)
        assignment = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(\S+)", text)
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        text = SHELL_VAR.sub(lambda m: variables.get(m.group(1), m.group(1)), text)
        if "tcspec" not in text:
            continue
        for words in _split(text):
            if words[0] == "tcspec" or words[:2] == ["python3", DEVICE_PLAN]:
                found.append(Command(page, number, tuple(words), block))
    return found


def _inline_commands(page: Path, text: str) -> list[Command]:
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = []
    for match in re.finditer(r"(?<!`)`(tcspec [^`]+)`(?!`)", prose):
        span = " ".join(match.group(1).split())
        line = prose.count("\n", 0, match.start()) + 1
        for words in _split(span):
            if words[0] == "tcspec":
                found.append(Command(page, line, tuple(words), -1))
    return found


def _commands() -> list[Command]:
    found: list[Command] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block, (info, first, body) in enumerate(_fenced_blocks(text)):
            if info not in ("python", "py", "pycon", "c", "json"):
                found += _block_commands(page, block, first, body)
        found += _inline_commands(page, text)
    return found


COMMANDS = _commands()
README = ROOT / "README.md"
RUN = [c for c in COMMANDS if c.page == README and c.block >= 1 and c.argv[0] == "tcspec"]


class _ParsedError(Exception):
    """Raised in place of running device_plan.py once its arguments are parsed."""


def _parse(argv: tuple[str, ...]) -> int | None:
    """None when ``argv`` parses; else the exit status argparse chose (2: usage error)."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if argv[0] == "tcspec":
                build_parser().parse_args(list(argv[1:]))
            else:
                _parse_device_plan(list(argv[2:]))
    except _ParsedError:
        return None
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    else:
        return None
    if code:
        pytest.fail(f"{shlex.join(argv)}: {err.getvalue().strip()}", pytrace=False)
    return code


def _parse_device_plan(argv: list[str]) -> None:
    from tcspec.hw import device_plan

    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _ParsedError

    argparse.ArgumentParser.parse_args = parse_then_stop
    try:
        device_plan.main(argv)
    finally:
        argparse.ArgumentParser.parse_args = original


def test_the_pages_print_commands():
    assert len(COMMANDS) >= 60, [c.where for c in COMMANDS]
    assert len(RUN) >= 4, [c.where for c in RUN]
    for page in ("docs/cli.md", "docs/proofs.md", "docs/probes.md", "docs/gpu.md",
                 "docs/exports.md", "docs/campaigns.md", "docs/architectures.md"):
        assert any(c.page == ROOT / page and c.block >= 0 for c in COMMANDS), page


BLOCKS = [c for c in COMMANDS if c.block >= 0]
SPANS = [c for c in COMMANDS if c.block < 0]


@pytest.mark.parametrize("command", BLOCKS, ids=[c.where for c in BLOCKS])
def test_every_printed_command_parses(command: Command):
    assert _parse(command.argv) in (None, 0)


def _named(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(kind, name) of every datapath, model, property and breaker the parsed ``args`` name."""
    names: list[tuple[str, str]] = []

    def add(kind: str, value: object) -> None:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                names.extend((kind, part) for part in item.split(",") if part)

    if args.command != "hw":
        add("datapath", getattr(args, "datapath", None))
        add("datapath", getattr(args, "vs_datapath", None))
    for field in ("model", "vs", "vs_model", "separate"):
        add("model", getattr(args, field, None))
    if args.command == "classify":
        add("model", args.candidates)
    if args.command == "prove":
        add("property", args.property)
        add("breaker", args.mutant)
    return names


@pytest.mark.parametrize("command", [c for c in BLOCKS if c.argv[0] == "tcspec"],
                         ids=[c.where for c in BLOCKS if c.argv[0] == "tcspec"])
def test_names_in_printed_commands_exist(command: Command):
    from tcspec.classify import resolve_candidates
    from tcspec.proofs.mutants import BREAKERS
    from tcspec.proofs.runner import properties
    from tcspec.spec.catalog import lookup

    args = build_parser().parse_args(list(command.argv[1:]))
    for kind, name in _named(args):
        if kind == "datapath" and not re.search(r"[*?\[]", name):
            lookup(name)
        elif kind == "model":
            resolve_candidates([name])
        elif kind == "property":
            assert name in properties(), f"no property {name!r}"
        elif kind == "breaker":
            assert name in {b.name for b in BREAKERS}, f"no breaker {name!r}"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("command", SPANS, ids=[c.where for c in SPANS])
def test_every_command_named_in_prose_exists(command: Command):
    parser: argparse.ArgumentParser = build_parser()
    words = list(command.argv[1:])
    while words and _subparsers(parser):
        if re.fullmatch(r"[A-Z_]+", words[0]):
            return  # `tcspec COMMAND --help`: a placeholder
        choices = _subparsers(parser)
        assert words[0] in choices, f"{shlex.join(command.argv)}: no command {words[0]!r}"
        parser = choices[words.pop(0)]
    known = {s for a in parser._actions for s in a.option_strings}
    for word in words:
        flag = re.match(r"\[?(--?[A-Za-z][\w-]*)", word)
        if flag:
            assert flag.group(1) in known, f"{shlex.join(command.argv)}: no flag {flag.group(1)}"


@pytest.mark.parametrize("command", RUN, ids=[c.where for c in RUN])
def test_quick_start_examples_run(command: Command, tmp_path: Path):
    (tmp_path / "ref").symlink_to(ROOT / "ref", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    argv = [sys.executable, "-c", "import sys; from tcspec.cli import main; sys.exit(main())",
            *command.argv[1:]]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (shlex.join(command.argv), done.stdout[-2000:],
                                  done.stderr[-2000:])


def _transcripts() -> list[tuple[str, list[str], list[str]]]:
    """(where, argv, shown output lines) of each ``$ tcspec`` block that shows output."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block, (_, _, body) in enumerate(_fenced_blocks(text)):
            lines = body.rstrip("\n").split("\n")
            if not any(line.startswith("$ tcspec ") for line in lines):
                continue
            commands = [c for c in COMMANDS if c.page == page and c.block == block]
            shown = [line for line in lines if not line.startswith("$ ")]
            if len(commands) == 1 and shown:
                found.append((commands[0].where, list(commands[0].argv), shown))
    return found


TRANSCRIPTS = _transcripts()


EXIT_LINE = re.compile(r"^\(exit status (\d+)\)$")
"""A transcript's last line ``(exit status N)`` is the status the command must end with
(default 0); it is not an output line."""


@pytest.mark.parametrize("where, argv, shown", TRANSCRIPTS, ids=[t[0] for t in TRANSCRIPTS])
def test_transcripts_show_real_output(where: str, argv: list[str], shown: list[str]):
    done = subprocess.run([sys.executable, "-c", "import sys; from tcspec.cli import main; "
                           "sys.exit(main())", *argv[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    status = EXIT_LINE.match(shown[-1].strip())
    assert done.returncode == (int(status.group(1)) if status else 0), done.stderr[-2000:]
    output = done.stdout.split("\n")
    at = 0
    for line in shown:
        if line.strip() == "..." or EXIT_LINE.match(line.strip()):
            continue
        bare = re.sub(r"\s{2,}\(the same [^)]*\)$", "", line)
        starts = [i for i in range(at, len(output))
                  if output[i].startswith(line) or output[i].startswith(bare)]
        assert starts, f"{where}: {line!r} is not in the output (after line {at})"
        at = starts[0] + 1


def _slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def _links(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return [(prose.count("\n", 0, m.start()) + 1, m.group(1))
            for m in re.finditer(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)",
                                 prose)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page: Path):
    broken = []
    for line, target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"line {line}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"line {line}: {target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_install_extras_exist():
    tomllib = pytest.importorskip("tomllib")
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    named = set()
    for page in PAGES:
        for group in re.findall(r"install -e '?\.\[([\w,-]+)\]", page.read_text(encoding="utf-8")):
            named |= set(group.split(","))
    assert named and named <= extras, named - extras


def test_readme_starts_with_the_two_commands():
    """.ci/run runs line 2 of the README's first fenced block: the test command."""
    info, _, body = next(_fenced_blocks(README.read_text(encoding="utf-8")))
    lines = body.splitlines()
    assert info == "sh" and len(lines) == 2
    assert lines[0].startswith("python3 -m pip install -e . && tcspec ")
    assert lines[1].startswith("python3 -m pip install -e '.[test") and "pytest" in lines[1]


def test_proof_table_comes_from_the_report():
    """docs/proofs.md's equals-reference table is the committed report's, grouped by family."""
    from tcspec.listing import equals_reference_table

    page = (ROOT / "docs" / "proofs.md").read_text(encoding="utf-8")
    assert equals_reference_table() in page, (
        "docs/proofs.md's equals-reference table is stale: paste "
        "`python3 -c 'from tcspec.listing import equals_reference_table as t; print(t())'`")


def test_families_table_comes_from_the_report():
    """docs/proofs.md's table of the engine-declared properties is the committed report's."""
    from tcspec.listing import families_table

    page = (ROOT / "docs" / "proofs.md").read_text(encoding="utf-8")
    assert families_table() in page, (
        "docs/proofs.md's families table is stale: paste "
        "`python3 -c 'from tcspec.listing import families_table as t; print(t())'`")
