"""``tcspec equiv`` and :func:`tcspec.equiv`: prove a user's implementation equal to a
datapath, or hand back the input where it differs (issue 32; the engine side is
:mod:`tcspec.proofs.equiv`).

An implementation is given as

- ``FILE.smt2``: a ``define-fun`` (default name ``impl``, else ``--function``) whose
  parameters are the datapath's input words, in the order, with the names and sorts of
  ``tcspec export --lang smtlib --datapath D``, returning D's word sort; helper
  ``define-fun``s allowed, no ``declare-fun`` (:mod:`tcspec.smt.read_smtlib`). A
  counterexample is replayed on it by z3's evaluator, not by tcspec's reader.
- ``FILE.v`` or ``FILE.sv``: a combinational module (default top ``impl``, else ``--top``)
  whose input ports are the parameters above, by name and width, and whose output is
  ``d``; read through Yosys (:mod:`tcspec.verilog`) and replayed by Yosys's ``eval``.
- ``FILE.py:NAME`` or ``module:NAME``: a Python function ``NAME(ops, words) -> BV`` over
  the ops protocol (``docs/equiv.md``), with :func:`datapath_word` and
  :func:`convert_word` as building blocks. Replayed on the scalar ops.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tcspec.proofs.equiv import (
    ASSUMPTIONS,
    DIFFERS,
    EQUAL,
    Implementation,
    PropertyVerdict,
    Verdict,
    check_property,
)
from tcspec.proofs.equiv import check as _check
from tcspec.smt.progress import Heartbeat
from tcspec.smt.read_smtlib import Function, SmtlibError, read_functions, sort_text
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import (
    build_dot,
    descriptor_of,
    input_layout,
    inputs_from,
    output_width,
)
from tcspec.spec.convert import convert_word as _convert_word
from tcspec.spec.formats import float_format
from tcspec.words import UsageError, describe_word, hex_word

__all__ = ["ASSUMPTIONS", "PropertyVerdict", "Verdict", "convert_word", "datapath_word",
           "equiv", "load_implementation", "prove"]


def datapath_word(ops: Ops, datapath: str, words: Mapping[str, BV], k: int | None = None
                  ) -> BV:
    """The D word of catalogued ``datapath`` over ``ops`` on ``words`` (input word name ->
    value, names as ``tcspec export`` lists them); ``k`` another logical K (a model)."""
    desc = descriptor_of(datapath)
    k = desc.k if k is None else k
    layout = input_layout(desc, k)
    missing = [s.name for s in layout if s.name not in words]
    if missing:
        raise ValueError(f"{desc.name} needs input words {', '.join(missing[:4])}"
                         + (" ..." if len(missing) > 4 else ""))
    values = [ops.resize_unsigned(words[s.name], s.width) if words[s.name].width != s.width
              else words[s.name] for s in layout]
    return build_dot(ops, desc, inputs_from(layout, values), any_k=k != desc.k)


def convert_word(ops: Ops, word: BV, source: str, target: str) -> BV:
    """A ``source``-format word as the ``target``-format word of the same value (an exact
    widening such as e4m3 -> f16, f16 -> f32; NaN gives the target's canonical NaN),
    ``target``'s container wide. ValueError when the conversion is not exact."""
    src, dst = float_format(source), float_format(target)
    if word.width > src.container_bits:
        word = ops.extract(word, src.container_bits - 1, 0)
    return _convert_word(ops, word, src, dst)


# ------------------------------------------------------------------ loading


def _smtlib_implementation(path: Path, function: str | None, datapath: str,
                           k: int | None) -> Implementation:
    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        table = read_functions(text)
    except SmtlibError as exc:
        raise UsageError(f"{path}: {exc}") from None
    name = function or "impl"
    if name not in table:
        known = ", ".join(table) or "none"
        raise UsageError(f"{path} defines no function {name!r} (it defines: {known}; "
                         "--function NAME picks one)")
    fn = table[name]
    _check_parameters(fn, datapath, k, str(path))
    desc = descriptor_of(datapath)
    layout = input_layout(desc, desc.k if k is None else k)
    return Implementation(f"{path}:{name}", "smtlib", fn,
                          _z3_evaluator(fn, [(s.name, s.width) for s in layout]))


def _check_parameters(fn: Function, datapath: str, k: int | None, where: str) -> None:
    desc = descriptor_of(datapath)
    layout = input_layout(desc, desc.k if k is None else k)
    want = [(s.name, s.width) for s in layout]
    for index, (expected, got) in enumerate(zip(want, fn.params)):
        if expected[0] != got[0]:
            raise UsageError(f"{where}: parameter {index + 1} of {fn.name} is {got[0]}, "
                             f"{desc.name} expects {expected[0]} there (see tcspec export "
                             f"--lang smtlib --datapath {desc.name})")
        if expected[1] != got[1]:
            raise UsageError(f"{where}: parameter {got[0]} of {fn.name} is "
                             f"{sort_text(got[1])}, {desc.name} expects "
                             f"{sort_text(expected[1])}")
    if len(fn.params) != len(want):
        extra = (f"lacks {want[len(fn.params)][0]}" if len(fn.params) < len(want)
                 else f"has an extra parameter {fn.params[len(want)][0]}")
        raise UsageError(f"{where}: {fn.name} takes {len(fn.params)} parameters and "
                         f"{extra}; {desc.name} takes {len(want)}")
    d_bits = output_width(desc)
    if fn.result != d_bits:
        raise UsageError(f"{where}: {fn.name} returns {sort_text(fn.result)}, {desc.name}'s "
                         f"D word is {sort_text(d_bits)}")


_SIMPLE_SYMBOL = re.compile(r"[A-Za-z~!@$%^&*_+=<>.?/\-][0-9A-Za-z~!@$%^&*_+=<>.?/\-]*")


def _z3_evaluator(fn: Function, params: Sequence[tuple[str, int]]
                  ) -> Callable[[Mapping[str, int]], int]:
    """``fn`` evaluated by z3 on words (its own parse of the definitions, not tcspec's)."""
    import z3

    definitions = "\n".join(f.source for f in fn.table.values())
    symbol = fn.name if _SIMPLE_SYMBOL.fullmatch(fn.name) else f"|{fn.name}|"
    width = fn.result

    def evaluate(values: Mapping[str, int]) -> int:
        args = " ".join(f"(_ bv{values.get(n, 0) % (1 << w)} {w})" for n, w in params)
        script = (f"{definitions}\n(declare-const tcspec_d (_ BitVec {width}))\n"
                  f"(assert (= tcspec_d ({symbol} {args})))")
        try:
            term = z3.simplify(z3.parse_smt2_string(script)[0].arg(1))
        except z3.Z3Exception as exc:
            raise UsageError(f"z3 cannot evaluate {fn.name} (tcspec read it, z3 does not): "
                             f"{exc}") from None
        if not z3.is_bv_value(term):
            raise RuntimeError(f"z3 did not evaluate {fn.name} to a constant")
        return term.as_long()

    return evaluate


def _verilog_implementation(path: Path, top: str, datapath: str, k: int | None
                            ) -> Implementation:
    from tcspec.verilog import verilog_function

    desc = descriptor_of(datapath)
    layout = [(s.name, s.width) for s in input_layout(desc, desc.k if k is None else k)]
    build, evaluate = verilog_function(path, top, layout, output_width(desc))
    return Implementation(f"{path}:{top}", "verilog", build, evaluate)


def _python_implementation(spec: str) -> Implementation:
    where, _, name = spec.rpartition(":")
    if not where or not name.isidentifier():
        raise UsageError(f"{spec!r}: a Python implementation is FILE.py:NAME or module:NAME")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
        loader_spec = importlib.util.spec_from_file_location(f"tcspec_impl_{path.stem}", path)
        if loader_spec is None or loader_spec.loader is None:
            raise UsageError(f"cannot load {path} as Python")
        module = importlib.util.module_from_spec(loader_spec)
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # a user's module may raise anything on import
            raise UsageError(f"{path} raised {type(exc).__name__} on import: {exc}") from None
    else:
        try:
            module = importlib.import_module(where)
        except Exception as exc:
            raise UsageError(f"cannot import {where}: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UsageError(f"{where} has no function {name}")
    return Implementation(spec, "python", fn)


def load_implementation(impl: str | Implementation | Callable[..., BV], datapath: str, *,
                        function: str | None = None, top: str | None = None,
                        k: int | None = None) -> Implementation:
    """The implementation ``impl`` names (module docstring), checked against ``datapath``'s
    inputs; UsageError naming the problem."""
    if isinstance(impl, Implementation):
        return impl
    if callable(impl):
        return Implementation(getattr(impl, "__name__", "impl"), "python", impl)
    lower = impl.lower()
    if lower.endswith(".smt2") or lower.endswith(".smt"):
        return _smtlib_implementation(Path(impl), function, datapath, k)
    if lower.endswith((".v", ".sv")):
        return _verilog_implementation(Path(impl), top or "impl", datapath, k)
    if ":" in impl:
        return _python_implementation(impl)
    raise UsageError(f"{impl!r}: an implementation is FILE.smt2, FILE.py:NAME or "
                     "module:NAME")


# ------------------------------------------------------------------ API and command


def _checked(datapath: str, assume: Sequence[str], timeout: float) -> Any:
    """``datapath``'s descriptor, after refusing an unknown assumption or a timeout <= 0."""
    for which in assume:
        if which not in ASSUMPTIONS:
            raise UsageError(f"unknown assumption {which!r} (known: {', '.join(ASSUMPTIONS)})")
    if timeout <= 0:
        raise UsageError(f"timeout must be positive, got {timeout}")
    return descriptor_of(datapath)


def equiv(impl: str | Implementation | Callable[..., BV], datapath: str, *,
          assume: Sequence[str] = (), timeout: float = 120.0, k: int | None = None,
          function: str | None = None, top: str | None = None,
          solver: str = "bitwuzla") -> Verdict:
    """Whether ``impl`` gives ``datapath``'s D word for every input meeting ``assume``:
    a :class:`Verdict` (``equal``, ``differs`` with replayed words, or ``unknown``)."""
    desc = _checked(datapath, assume, timeout)
    implementation = load_implementation(impl, desc.name, function=function, top=top, k=k)
    verdict = _check(implementation, desc.name, k=k, assume=assume, timeout=timeout,
                     solver=solver)
    if verdict.result == DIFFERS:
        verdict.stage = first_differing_stage(desc.name, verdict)
    return verdict


def prove(datapath: str, predicate: Callable[..., Bool], *,
          relate: Callable[[Ops, Mapping[str, BV]], Mapping[str, BV]] | None = None,
          assume: Sequence[str] = (), timeout: float = 120.0, k: int | None = None,
          solver: str = "bitwuzla") -> PropertyVerdict:
    """Prove a property a user states over a datapath's inputs and D, for every input
    meeting ``assume``: ``predicate(ops, words, d)`` returns an ops Bool; with ``relate``
    (words -> the words of a second run) it is ``predicate(ops, words, d, words2, d2)``.
    ``proved``, ``refuted`` with input words replayed on the scalar lowering, or
    ``unknown`` (docs/equiv.md, "Your own property")."""
    desc = _checked(datapath, assume, timeout)
    return check_property(desc.name, predicate, relate=relate, k=k, assume=assume,
                          timeout=timeout, solver=solver)


def first_differing_stage(datapath: str, verdict: Verdict) -> str:
    """Which candidate model of SEMANTICS.md section 7 gives the implementation's word on
    the counterexample, and where ``tcspec explain`` first sees it depart from the spec."""
    from tcspec.explain import observed_word

    desc = descriptor_of(datapath)
    if verdict.k != desc.k or verdict.impl is None:
        return ""
    try:
        text = observed_word(desc, [verdict.inputs[s.name] for s in input_layout(desc)],
                             verdict.impl)
    except (ValueError, TypeError, KeyError, NotImplementedError):
        return ""
    return text.replace("the observed word", "the implementation's word")


def _print(verdict: Verdict, d_type: str) -> None:
    constraints = ("; ".join(f"{a}: {ASSUMPTIONS[a]}" for a in verdict.assumptions)
                   or "none (every input word)")
    print(f"{verdict.implementation} vs {verdict.datapath} (K={verdict.k}): "
          f"{verdict.result} in {verdict.seconds:.1f} s")
    print(f"assumptions: {constraints}")
    if verdict.result == EQUAL:
        print("equal: for every input meeting the assumptions the two D words are equal")
    elif verdict.result == DIFFERS:
        nonzero = [f"{n}=0x{v:X}" for n, v in verdict.inputs.items() if v]
        print("differs: on these input words (replayed on both sides; every other word 0):")
        for start in range(0, len(nonzero), 6):
            print("  " + "  ".join(nonzero[start:start + 6]))
        for side, word in (("spec", verdict.spec), ("impl", verdict.impl)):
            print(f"  D {side} = {hex_word(word, d_type)}  ({describe_word(word, d_type)})")
        if verdict.stage:
            print(verdict.stage)
    else:
        print(f"unknown: {verdict.stopped}")
    if verdict.result != DIFFERS:
        print(f"engine: {verdict.detail}")


def cmd_equiv(args: argparse.Namespace) -> int:
    """``tcspec equiv``: exit 0 equal, 1 differs or unknown, 2 bad input."""
    with Heartbeat(f"equiv {args.impl}"):
        verdict = equiv(args.impl, args.datapath, assume=args.assume or (),
                        timeout=args.timeout, k=args.k, function=args.function, top=args.top,
                        solver=args.solver)
    if args.json:
        json.dump(verdict.to_json(), sys.stdout)
        print()
    else:
        _print(verdict, descriptor_of(args.datapath).d_type)
    return 0 if verdict.result == EQUAL else 1
