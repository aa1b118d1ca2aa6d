"""Solver runner: one satisfiability query, any of three solvers, a hard timeout.

A query is a list of boolean nodes of one traced DAG (:mod:`smt.trace`);
:func:`query_script` prints it as plain QF_BV SMT-LIB2 and :func:`check_sat`
hands that text to bitwuzla, z3 or cvc5 in a child process, so a timeout is
enforced by killing the process and several queries can run at once. A
query the solver did not decide is ``unknown`` with its time, never a
verdict (DESIGN.md, "Solvers"). ``sat`` comes with the values of every
declared variable, as ints.

Run as ``python3 -m tcspec.smt.solve SOLVER TIMEOUT`` it is that child: it reads the
script on standard input and prints one JSON object.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tcspec.smt.smtlib import sort_of, to_smtlib_term
from tcspec.smt.trace import Node, walk

SOLVERS = ("bitwuzla", "z3", "cvc5")
DEFAULT_SOLVER = "bitwuzla"
ARITHMETIC_SOLVERS = ("z3", "cvc5")
"""The solvers of scripts in integer and real arithmetic (bitwuzla decides bit-vectors only)."""
DEFAULT_TIMEOUT = 120.0
KILL_GRACE = 5.0
"""Seconds past the solver's own time limit before the child process is killed."""


@dataclass(frozen=True)
class SolveResult:
    """What one solver said about one query, and how long it took."""

    status: str
    solver: str
    seconds: float
    model: dict[str, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def sat(self) -> bool:
        return self.status == "sat"

    @property
    def unsat(self) -> bool:
        return self.status == "unsat"

    def describe(self) -> str:
        extra = f" ({self.reason})" if self.reason else ""
        return f"{self.status} by {self.solver} in {self.seconds:.1f}s{extra}"


def free_variables(assertions: Sequence[Node]) -> list[Node]:
    """The ``var`` nodes the assertions depend on, in first-use order."""
    return [node for node in walk(assertions) if node.op == "var"]


def query_script(assertions: Sequence[Node], variables: Sequence[Node] = ()) -> str:
    """A QF_BV script asserting every node of ``assertions`` (then ``check-sat``).

    ``variables`` are declared even when no assertion uses them, so a model
    names every input of a formula.
    """
    declared = {node.id: node for node in variables}
    for node in free_variables(assertions):
        declared.setdefault(node.id, node)
    lines = ["(set-logic QF_BV)"]
    lines += [f"(declare-fun {node.params[0]} () {sort_of(node.width)})"
              for node in declared.values()]
    if assertions:
        lines += [f"(assert {term})" for term in to_smtlib_term(list(assertions))]
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


def check_sat(assertions: Sequence[Node], variables: Sequence[Node] = (), *,
              solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_TIMEOUT) -> SolveResult:
    """Is the conjunction of ``assertions`` satisfiable? ``solver`` decides within ``timeout``."""
    return run_script(query_script(assertions, variables), solver=solver, timeout=timeout)


class SolverStoppedError(Exception):
    """The command is stopping (Ctrl-C, SIGTERM, an error): no solver runs any more."""


_RUNNING: set[subprocess.Popen[str]] = set()
_GUARD = threading.Lock()
_STOPPING = threading.Event()


def stop_solvers() -> None:
    """Kill every solver child of this process and refuse new ones
    (:class:`SolverStoppedError`), so threads deciding queries end at once instead of running
    their remaining queries."""
    _STOPPING.set()
    with _GUARD:
        running = list(_RUNNING)
    for child in running:
        child.kill()


def run_script(text: str, *, solver: str = DEFAULT_SOLVER,
               timeout: float = DEFAULT_TIMEOUT) -> SolveResult:
    """Run a ``check-sat`` script in a child process; see :func:`check_sat`."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    started = time.monotonic()
    with _GUARD:
        if _STOPPING.is_set():
            raise SolverStoppedError("stopping: no new solver runs")
        child = subprocess.Popen([sys.executable, "-m", "tcspec.smt.solve", solver,
                                  repr(timeout)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        _RUNNING.add(child)
    try:
        stdout, stderr = child.communicate(text, timeout=timeout + KILL_GRACE)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return SolveResult("unknown", solver, time.monotonic() - started,
                           reason=f"killed after {timeout:g}s")
    except BaseException:
        child.kill()
        raise
    finally:
        with _GUARD:
            _RUNNING.discard(child)
    if _STOPPING.is_set():
        raise SolverStoppedError("stopping: the solver was killed")
    seconds = time.monotonic() - started
    try:
        answer = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return SolveResult("unknown", solver, seconds,
                           reason=f"solver process failed (exit {child.returncode}): {tail}")
    status = answer["status"]
    reason = answer.get("reason", "")
    if status == "unknown" and not reason:
        reason = f"no answer within {timeout:g}s"
    return SolveResult(status, solver, seconds,
                       {k: int(v) for k, v in answer.get("model", {}).items()}, reason)


# ------------------------------------------------------------ child process


def _value_text(text: str) -> int:
    text = text.strip()
    if text in ("true", "false"):
        return int(text == "true")
    if text.startswith("#b"):
        return int(text[2:], 2)
    if text.startswith("#x"):
        return int(text[2:], 16)
    if text.startswith("(_ bv"):
        return int(text[5:].split()[0])
    return int(text, 0)


def _solve_bitwuzla(text: str, timeout: float) -> dict[str, object]:
    import bitwuzla as bw

    options = bw.Options()
    options.set(bw.Option.PRODUCE_MODELS, True)
    options.set(bw.Option.TIME_LIMIT_PER, int(timeout * 1000))
    tm = bw.TermManager()
    parser = bw.Parser(tm, options)
    body = text.replace("(check-sat)", "")
    parser.parse(body, True, False)
    solver = parser.bitwuzla()
    result = solver.check_sat()
    if result == bw.Result.SAT:
        model = {str(t.symbol()): _value_text(str(solver.get_value(t)))
                 for t in parser.get_declared_funs()}
        return {"status": "sat", "model": model}
    return {"status": "unsat" if result == bw.Result.UNSAT else "unknown"}


def _solve_z3(text: str, timeout: float) -> dict[str, object]:
    import z3

    solver = z3.Solver()
    solver.set("timeout", int(timeout * 1000))
    solver.from_string(text.replace("(check-sat)", ""))
    result = solver.check()
    if result == z3.sat:
        found = solver.model()
        model = {}
        for decl in found.decls():
            value = found[decl]
            if z3.is_bool(value):
                model[decl.name()] = int(z3.is_true(value))
            elif z3.is_bv_value(value) or z3.is_int_value(value):
                model[decl.name()] = value.as_long()
        return {"status": "sat", "model": model}
    reason = solver.reason_unknown() if result == z3.unknown else ""
    return {"status": "unsat" if result == z3.unsat else "unknown", "reason": reason}


def _solve_cvc5(text: str, timeout: float) -> dict[str, object]:
    import cvc5

    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("produce-models", "true")
    solver.setOption("tlimit-per", str(int(timeout * 1000)))
    symbols = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text.replace("(check-sat)", ""),
                          "tcspec")
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        command.invoke(solver, symbols)
    result = solver.checkSat()
    if result.isSat():
        model = {}
        for term in symbols.getDeclaredTerms():
            value = solver.getValue(term)
            if value.getSort().isBoolean():
                model[term.getSymbol()] = int(value.getBooleanValue())
            elif value.getSort().isBitVector():
                model[term.getSymbol()] = int(value.getBitVectorValue(10))
        return {"status": "sat", "model": model}
    if result.isUnsat():
        return {"status": "unsat"}
    return {"status": "unknown", "reason": str(result.getUnknownExplanation())}


_CHILDREN = {"bitwuzla": _solve_bitwuzla, "z3": _solve_z3, "cvc5": _solve_cvc5}


def _child_main(argv: Sequence[str]) -> int:
    solver, timeout = argv[0], float(argv[1])
    try:
        answer = _CHILDREN[solver](sys.stdin.read(), timeout)
    except Exception as exc:  # the parent turns any solver failure into "unknown"
        answer = {"status": "unknown", "reason": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
