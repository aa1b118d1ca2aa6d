"""Read an SMT-LIB2 function definition onto the ops protocol (``tcspec equiv``, issue 32).

A user's implementation written as a ``define-fun`` over QF_BV becomes a Python callable
``(ops, words) -> BV``: applied to :class:`~tcspec.smt.trace.TraceOps` it traces the
definition into the DAG the equivalence engine compares, applied to the scalar ops it
evaluates it on words. Only definitions are read: ``set-logic``, ``set-info``,
``set-option``, ``define-fun`` (helpers included; a later one may call an earlier one),
comments; ``declare-fun``/``declare-const``, ``define-fun-rec``, ``assert`` and the
other commands are refused, each by name and line. Terms: ``let``, ``ite``, ``=``,
``distinct``, the Boolean connectives, bit-vector literals (``#b``, ``#x``,
``(_ bvN W)``), ``(! t ...)`` annotations and every QF_BV operator of the SMT-LIB
``FixedSizeBitVectors`` theory except division and remainder (refused by name).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.bitvec import BV, Bool, Ops

Sort = int | None
"""A bit-vector width, or None for Bool."""


class SmtlibError(ValueError):
    """A file this reader does not accept, with the line of the offending text."""


_TOKEN = re.compile(r"""\s+|;[^\n]*|(\()|(\))|("(?:[^"]|"")*")|(\|[^|]*\|)|([^\s()";|]+)""")


@dataclass
class _Atom:
    text: str
    line: int


def parse_sexprs(text: str, spans: list[tuple[int, int]] | None = None) -> list[Any]:
    """The top-level S-expressions of ``text``; atoms carry their line. ``spans`` receives
    each top-level list's (start, end) offsets in ``text``."""
    stack: list[list[Any]] = [[]]
    opened: list[int] = []
    start = 0
    line = 1
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise SmtlibError(f"line {line}: cannot read {text[pos:pos + 20]!r}")
        chunk = match.group(0)
        if match.group(1):
            if len(stack) == 1:
                start = pos
            stack.append([])
            opened.append(line)
        elif match.group(2):
            if len(stack) == 1:
                raise SmtlibError(f"line {line}: ')' closes nothing")
            done = stack.pop()
            opened.pop()
            stack[-1].append(done)
            if len(stack) == 1 and spans is not None:
                spans.append((start, match.end()))
        elif match.group(3) or match.group(4) or match.group(5):
            atom = chunk[1:-1] if match.group(4) else chunk
            stack[-1].append(_Atom(atom, line))
        line += chunk.count("\n")
        pos = match.end()
    if len(stack) != 1:
        raise SmtlibError(f"line {opened[-1]}: '(' is never closed")
    return stack[0]


def _line(x: Any) -> int:
    while isinstance(x, list):
        if not x:
            return 0
        x = x[0]
    return x.line


def _text(x: Any) -> str:
    if isinstance(x, _Atom):
        return x.text
    return "(" + " ".join(_text(y) for y in x) + ")"


def _err(x: Any, message: str) -> SmtlibError:
    return SmtlibError(f"line {_line(x)}: {message}")


def _sort(x: Any) -> Sort:
    if isinstance(x, _Atom) and x.text == "Bool":
        return None
    if (isinstance(x, list) and len(x) == 3 and all(isinstance(y, _Atom) for y in x)
            and x[0].text == "_" and x[1].text == "BitVec" and x[2].text.isdigit()
            and int(x[2].text) > 0):
        return int(x[2].text)
    raise _err(x, f"sort {_text(x)} is not Bool or (_ BitVec n)")


def sort_text(sort: Sort) -> str:
    return "Bool" if sort is None else f"(_ BitVec {sort})"


@dataclass
class Function:
    """One ``define-fun``: its parameters, result sort and body."""

    name: str
    params: list[tuple[str, Sort]]
    result: Sort
    body: Any
    line: int
    table: dict[str, Function]
    source: str = ""
    """The ``define-fun`` command's text."""

    def __call__(self, ops: Ops, words: Mapping[str, BV | Bool]) -> BV | Bool:
        """The body applied to ``words`` (parameter name -> value) over ``ops``."""
        args = []
        for name, _ in self.params:
            if name not in words:
                raise SmtlibError(f"line {self.line}: no value for parameter {name}")
            args.append(words[name])
        return _Evaluator(ops, self.table).apply(self, args, self.body)


_SIMPLE = {"bvadd", "bvsub", "bvmul", "bvand", "bvor", "bvxor", "bvnand", "bvnor",
           "bvxnor", "bvshl", "bvlshr", "bvashr", "bvcomp", "bvult", "bvule", "bvugt",
           "bvuge", "bvslt", "bvsle", "bvsgt", "bvsge", "bvnot", "bvneg", "concat"}
_REFUSED = {"bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod"}


class _Evaluator:
    def __init__(self, ops: Ops, table: Mapping[str, Function]) -> None:
        self.ops = ops
        self.table = table

    def apply(self, fn: Function, args: Sequence[Any], at: Any) -> Any:
        env: dict[str, Any] = {}
        for (name, sort), value in zip(fn.params, args):
            got = _sort_of(value)
            if got != sort:
                raise _err(at, f"{fn.name}: parameter {name} is {sort_text(sort)}, "
                               f"given {sort_text(got)}")
            env[name] = value
        value = self.term(fn.body, env)
        if _sort_of(value) != fn.result:
            raise _err(fn.body, f"{fn.name} is declared {sort_text(fn.result)} but its "
                                f"body is {sort_text(_sort_of(value))}")
        return value

    def term(self, x: Any, env: dict[str, Any]) -> Any:
        copied = False
        while (isinstance(x, list) and len(x) == 3 and isinstance(x[0], _Atom)
               and x[0].text == "let"):
            if not isinstance(x[1], list) or not x[1]:
                raise _err(x, "let needs a list of bindings")
            bound = []
            for binding in x[1]:
                if (not isinstance(binding, list) or len(binding) != 2
                        or not isinstance(binding[0], _Atom)):
                    raise _err(x, f"bad let binding {_text(binding)}")
                bound.append((binding[0].text, self.term(binding[1], env)))
            if not copied:
                env = dict(env)
                copied = True
            env.update(bound)
            x = x[2]
        if isinstance(x, _Atom):
            return self.atom(x, env)
        if not x:
            raise _err(x, "empty term ()")
        head = x[0]
        if isinstance(head, list):
            return self.indexed(head, [self.term(a, env) for a in x[1:]], x)
        op = head.text
        if op == "!":
            return self.term(x[1], env)
        if op == "_":
            return self.literal(x)
        if op == "ite":
            if len(x) != 4:
                raise _err(x, "ite takes 3 arguments")
            cond, then, other = (self.term(a, env) for a in x[1:])
            if _sort_of(cond) is not None:
                raise _err(x, "ite's condition is not Bool")
            if _sort_of(then) != _sort_of(other):
                raise _err(x, f"ite's branches are {sort_text(_sort_of(then))} and "
                              f"{sort_text(_sort_of(other))}")
            return self.ops.ite(cond, then, other)
        args = [self.term(a, env) for a in x[1:]]
        if op in self.table:
            fn = self.table[op]
            if len(args) != len(fn.params):
                raise _err(x, f"{op} takes {len(fn.params)} arguments, given {len(args)}")
            return self.apply(fn, args, x)
        return self.builtin(op, args, x)

    def atom(self, x: _Atom, env: Mapping[str, Any]) -> Any:
        t = x.text
        if t in env:
            return env[t]
        if t == "true":
            return self.ops.true()
        if t == "false":
            return self.ops.false()
        if t.startswith("#b") and len(t) > 2 and set(t[2:]) <= {"0", "1"}:
            return self.ops.const(int(t[2:], 2), len(t) - 2)
        if t.startswith("#x") and len(t) > 2:
            try:
                return self.ops.const(int(t[2:], 16), 4 * (len(t) - 2))
            except ValueError:
                pass
        if t in self.table and not self.table[t].params:
            return self.apply(self.table[t], [], x)
        raise _err(x, f"unknown symbol {t}")

    def literal(self, x: list) -> BV:
        if (len(x) == 3 and all(isinstance(y, _Atom) for y in x) and x[1].text.startswith("bv")
                and x[1].text[2:].isdigit() and x[2].text.isdigit() and int(x[2].text) > 0):
            width = int(x[2].text)
            return self.ops.const(int(x[1].text[2:]) % (1 << width), width)
        raise _err(x, f"unknown term {_text(x)}")

    def indexed(self, head: list, args: list[Any], x: Any) -> Any:
        if not (len(head) >= 3 and all(isinstance(y, _Atom) for y in head)
                and head[0].text == "_" and all(y.text.isdigit() for y in head[2:])):
            raise _err(x, f"unknown operator {_text(head)}")
        op, idx = head[1].text, [int(y.text) for y in head[2:]]
        if len(args) != 1 or _sort_of(args[0]) is None:
            raise _err(x, f"{op} takes one bit-vector")
        (a,) = args
        ops = self.ops
        if op == "extract" and len(idx) == 2:
            hi, lo = idx
            if not (a.width > hi >= lo):
                raise _err(x, f"extract {hi} {lo} of a {a.width}-bit value")
            return ops.extract(a, hi, lo)
        if op in ("zero_extend", "sign_extend") and len(idx) == 1:
            if idx[0] == 0:
                return a
            return (ops.zext if op == "zero_extend" else ops.sext)(a, a.width + idx[0])
        if op == "repeat" and len(idx) == 1 and idx[0] > 0:
            return ops.concat(*([a] * idx[0]))
        if op in ("rotate_left", "rotate_right") and len(idx) == 1:
            r = idx[0] % a.width
            if r == 0:
                return a
            if op == "rotate_right":
                r = a.width - r
            return ops.concat(ops.extract(a, a.width - 1 - r, 0),
                              ops.extract(a, a.width - 1, a.width - r))
        raise _err(x, f"unknown operator {_text(head)}")

    def builtin(self, op: str, args: list[Any], x: Any) -> Any:
        ops = self.ops
        sorts = [_sort_of(a) for a in args]
        if op in ("and", "or", "xor", "=>", "not"):
            if any(s is not None for s in sorts) or not args:
                raise _err(x, f"{op} takes Bool arguments")
            if op == "not":
                if len(args) != 1:
                    raise _err(x, "not takes one argument")
                return ops.not_(args[0])
            if op == "and":
                return ops.and_(*args)
            if op == "or":
                return ops.or_(*args)
            if op == "xor":
                out = args[0]
                for a in args[1:]:
                    out = ops.xor_(out, a)
                return out
            out = args[-1]
            for a in reversed(args[:-1]):
                out = ops.implies(a, out)
            return out
        if op in ("=", "distinct"):
            if len(args) < 2 or len(set(sorts)) != 1:
                raise _err(x, f"{op} needs two or more arguments of one sort")
            def same(a: Any, b: Any) -> Bool:
                return ops.iff(a, b) if sorts[0] is None else ops.eq(a, b)
            if op == "=":
                return ops.and_(*(same(a, b) for a, b in itertools.pairwise(args)))
            return ops.and_(*(ops.not_(same(args[i], args[j]))
                              for i in range(len(args)) for j in range(i + 1, len(args))))
        if op in _REFUSED:
            raise _err(x, f"{op} (division) is not supported by tcspec's ops protocol")
        if op not in _SIMPLE:
            raise _err(x, f"unknown operator {op}")
        if any(s is None for s in sorts) or not args:
            raise _err(x, f"{op} takes bit-vector arguments")
        if op == "concat":
            return ops.concat(*args)
        if op in ("bvnot", "bvneg"):
            if len(args) != 1:
                raise _err(x, f"{op} takes one argument")
            return ops.bvnot(args[0]) if op == "bvnot" else ops.neg(args[0])
        if len(set(sorts)) != 1:
            raise _err(x, f"{op} on widths {sorts}")
        if op in ("bvadd", "bvmul", "bvand", "bvor", "bvxor"):
            fn: Callable[[BV, BV], BV] = {"bvadd": ops.add, "bvmul": ops.mul,
                                          "bvand": ops.bvand, "bvor": ops.bvor,
                                          "bvxor": ops.bvxor}[op]
            out = args[0]
            for a in args[1:]:
                out = fn(out, a)
            return out
        if len(args) != 2:
            raise _err(x, f"{op} takes two arguments")
        a, b = args
        if op == "bvsub":
            return ops.sub(a, b)
        if op == "bvnand":
            return ops.bvnot(ops.bvand(a, b))
        if op == "bvnor":
            return ops.bvnot(ops.bvor(a, b))
        if op == "bvxnor":
            return ops.bvnot(ops.bvxor(a, b))
        if op == "bvshl":
            return ops.shl(a, b)
        if op == "bvlshr":
            return ops.lshr(a, b)
        if op == "bvashr":
            return ops.ashr(a, b)
        if op == "bvcomp":
            return ops.bool_to_bv(ops.eq(a, b))
        return {"bvult": ops.ult, "bvule": ops.ule, "bvugt": ops.ugt, "bvuge": ops.uge,
                "bvslt": ops.slt, "bvsle": ops.sle, "bvsgt": ops.sgt,
                "bvsge": ops.sge}[op](a, b)


def _sort_of(value: Any) -> Sort:
    if isinstance(value, Bool):
        return None
    if isinstance(value, BV):
        return value.width
    raise TypeError(f"not a traced value: {value!r}")


_IGNORED = {"set-logic", "set-info", "set-option", "check-sat", "exit", "get-model",
            "push", "pop"}
_NOT_DEFINITIONS = {"declare-fun", "declare-const", "define-fun-rec", "define-funs-rec",
                    "assert", "define-sort", "declare-sort", "declare-datatypes",
                    "declare-datatype"}


def read_functions(text: str) -> dict[str, Function]:
    """Every ``define-fun`` of ``text`` by name (module docstring); SmtlibError naming
    the line of anything else."""
    table: dict[str, Function] = {}
    spans: list[tuple[int, int]] = []
    commands = parse_sexprs(text, spans)
    for stray in commands:
        if not isinstance(stray, list):
            raise _err(stray, f"expected a command, found {_text(stray)[:40]}")
    for command, (begin, end) in zip(commands, spans):
        if not isinstance(command, list) or not command or not isinstance(command[0], _Atom):
            raise _err(command, f"expected a command, found {_text(command)[:40]}")
        name = command[0].text
        if name in _IGNORED:
            continue
        if name in _NOT_DEFINITIONS:
            raise _err(command, f"{name} is not allowed: the file may only define "
                                "functions (define-fun), with no free symbols")
        if name != "define-fun":
            raise _err(command, f"unknown or unsupported command {name}")
        if len(command) != 5 or not isinstance(command[1], _Atom) \
                or not isinstance(command[2], list):
            raise _err(command, "define-fun needs a name, a parameter list, a sort and a body")
        fn_name = command[1].text
        if fn_name in table:
            raise _err(command, f"{fn_name} is defined twice")
        params = []
        for p in command[2]:
            if not isinstance(p, list) or len(p) != 2 or not isinstance(p[0], _Atom):
                raise _err(command, f"bad parameter {_text(p)} of {fn_name}")
            params.append((p[0].text, _sort(p[1])))
        table[fn_name] = Function(fn_name, params, _sort(command[3]), command[4],
                                  command[0].line, table, text[begin:end])
    return table
