"""The SMT-LIB2 script of a datapath is read by z3, bitwuzla and cvc5, and the DAG by pysmt.

Each solver is given a frozen B200 instance: with the inputs fixed, the
defined output must equal the hardware word (sat) and cannot differ (unsat).
"""

from __future__ import annotations

import pytest
import z3

from tcspec.ref.vectorfiles import frozen_record
from tcspec.smt.formula import OUTPUT_NAME, traced
from tcspec.smt.smtlib import literal
from tcspec.spec.catalog import input_layout, is_specified

INSTANCES = [n for n in ("tf32-1", "tf32-minimum-subnormal", "bf16-1", "e4m3-0",
                         "mixed-e2m1-e4m3-f16-input-nan", "i8-s8-u8-sat")
             if is_specified(frozen_record(n).descriptor)]


def _pinned(record, relation: str) -> str:
    formula = traced(record.descriptor)
    width = formula.output.width
    lines = [formula.smtlib()]
    for spec, word in zip(input_layout(record.descriptor), record.words):
        lines.append(f"(assert (= {spec.name} {literal(word, spec.width)}))")
    expected = literal(record.expected, width)
    lines.append(f"(assert ({relation} {OUTPUT_NAME} {expected}))" if relation == "="
                 else f"(assert (not (= {OUTPUT_NAME} {expected})))")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", INSTANCES)
def test_z3_reads_the_script_and_agrees_with_b200(name):
    record = frozen_record(name)
    for relation, want in (("=", z3.sat), ("distinct", z3.unsat)):
        solver = z3.Solver()
        solver.from_string(_pinned(record, relation))
        assert solver.check() == want


@pytest.mark.parametrize("name", INSTANCES)
def test_bitwuzla_reads_the_script_and_agrees_with_b200(name):
    bitwuzla = pytest.importorskip("bitwuzla")
    record = frozen_record(name)
    for relation, want in (("=", "sat"), ("distinct", "unsat")):
        tm = bitwuzla.TermManager()
        options = bitwuzla.Options()
        parser = bitwuzla.Parser(tm, options, "smt2", 16)
        parser.parse(_pinned(record, relation), True, False)
        assert str(parser.bitwuzla().check_sat()) == want


def test_pysmt_solves_the_traced_formula():
    from pysmt.environment import Environment

    from tcspec.smt.pysmt_bridge import to_pysmt

    record = frozen_record("tf32-1")
    formula = traced(record.descriptor)
    env = Environment()
    mgr = env.formula_manager
    output, *inputs = to_pysmt([formula.output, *formula.inputs], env)
    pins = [mgr.Equals(symbol, mgr.BV(word, node.width))
            for symbol, node, word in zip(inputs, formula.inputs, record.words)]
    differs = mgr.Not(mgr.Equals(output, mgr.BV(record.expected, 32)))
    with env.factory.Solver(name="z3") as solver:
        for pin in pins:
            solver.add_assertion(pin)
        assert solver.solve()
        assert solver.get_value(output).constant_value() == record.expected
        solver.add_assertion(differs)
        assert not solver.solve()


def test_script_is_self_contained_and_shares_subterms():
    text = traced(frozen_record("tf32-1").descriptor).smtlib()
    assert text.count("(declare-fun ") == 17
    assert "(define-fun d () (_ BitVec 32)" in text
    assert "(let (" in text
    assert text.startswith("; tcspec datapath dense-tf32")


@pytest.mark.parametrize("name", INSTANCES[:3])
def test_cvc5_reads_the_script_and_agrees_with_b200(name):
    cvc5 = pytest.importorskip("cvc5")
    record = frozen_record(name)
    for relation, want in (("=", "sat"), ("distinct", "unsat")):
        tm = cvc5.TermManager()
        solver = cvc5.Solver(tm)
        symbols = cvc5.SymbolManager(tm)
        parser = cvc5.InputParser(solver, symbols)
        parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, _pinned(record, relation), name)
        answers = []
        while not (command := parser.nextCommand()).isNull():
            answers.append(command.invoke(solver, symbols).strip())
        assert [a for a in answers if a] == [want]
