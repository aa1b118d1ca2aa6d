"""``tcspec equiv`` and :func:`tcspec.equiv`: equal, differs (with words replayed on both
sides, checked here again on the scalar lowering and z3), unknown never read as equal,
and one-line refusals of bad input (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcspec
from tcspec.cli import main
from tcspec.export import smtlib_text
from tcspec.spec.catalog import descriptor_of
from tests.limits import SOLVER_LIMIT

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples" / "equiv"

INTEGER_IMPL = '''
def impl(ops, words):
    """i8-s8-s8-wrap as SEMANTICS.md section 3 reads: signed bytes, exact products, C plus
    their sum modulo 2^32 (written with a 40-bit accumulator, unlike the spec)."""
    acc = ops.sext(words["c"], 40)
    for i in range(32):
        a = ops.sext(ops.extract(words[f"a{i}"], 7, 0), 40)
        b = ops.sext(ops.extract(words[f"b{i}"], 7, 0), 40)
        acc = ops.add(acc, ops.mul(a, b))
    return ops.extract(acc, 31, 0)
'''


@pytest.fixture
def tf32_export(tmp_path: Path) -> Path:
    path = tmp_path / "tf32.smt2"
    path.write_text(smtlib_text([descriptor_of("dense-tf32")]))
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_exported_function_is_equal(tf32_export, capsys):
    code, out, _ = _run(capsys, "equiv", "--datapath", "dense-tf32", str(tf32_export),
                        "--function", "tcgen05.dense-tf32")
    assert code == 0
    assert "equal in" in out and "assumptions: none (every input word)" in out


def test_a_broken_c_sign_differs_with_replayed_words(tf32_export, tmp_path, capsys):
    text = tf32_export.read_text()
    sign = "(= ((_ extract 31 31) c) #b1)"
    assert text.count(sign) == 1
    broken = tmp_path / "broken.smt2"
    broken.write_text(text.replace(sign, "(= ((_ extract 31 31) c) #b0)"))
    code, out, _ = _run(capsys, "equiv", "--datapath", "dense-tf32", str(broken),
                        "--function", "tcgen05.dense-tf32", "--json")
    assert code == 1
    record = json.loads(out)
    assert record["result"] == "differs" and record["datapath"] == "dense-tf32"
    assert record["assumptions"] == []
    example = record["counterexample"]
    words = [int(example["inputs"][f"{side}{i}"], 16) for side in "ab" for i in range(8)]
    c = int(example["inputs"]["c"], 16)
    spec = tcspec.mma_dot(words[:8], words[8:], c, a_format="tf32")
    assert int(example["spec"], 16) == spec
    assert int(example["impl"], 16) == spec ^ 0x80000000


def test_an_independent_python_implementation_is_proved_equal(tmp_path, capsys):
    module = tmp_path / "int_impl.py"
    module.write_text(INTEGER_IMPL)
    code, out, _ = _run(capsys, "equiv", "--datapath", "i8-s8-s8-wrap", f"{module}:impl")
    assert code == 0, out
    assert "pairs proposed" in out and " 0 pairs proposed" not in out


def test_saturation_is_what_the_wrapping_implementation_misses(tmp_path):
    module = tmp_path / "int_impl.py"
    module.write_text(INTEGER_IMPL)
    verdict = tcspec.equiv(f"{module}:impl", "i8-s8-s8-saturate")
    assert verdict.result == "differs"
    assert verdict.spec in (0x7FFFFFFF, 0x80000000) and verdict.impl != verdict.spec


def test_fp8_through_f16_differs_on_c_alone():
    """Two sm_80 f16 steps pass C through; sm_89's FP8 path keeps 13 fraction bits
    (ARCHITECTURES.md section 10), so C alone tells them apart."""
    verdict = tcspec.equiv(f"{EXAMPLES / 'fp8_via_f16.py'}:impl",
                           "sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", assume=["finite"])
    assert verdict.result == "differs"
    assert verdict.assumptions == ["finite"]
    nonzero = {name for name, value in verdict.inputs.items() if value}
    assert nonzero == {"c"}
    assert verdict.impl == verdict.inputs["c"] and verdict.spec != verdict.impl
    assert verdict.spec == verdict.inputs["c"] & ~0x3FF


def test_finite_assumption_is_kept_in_the_counterexample(tmp_path):
    module = tmp_path / "nan_impl.py"
    module.write_text("def impl(ops, words):\n    return ops.const(0x7FC00000, 32)\n")
    verdict = tcspec.equiv(f"{module}:impl", "dense-tf32", assume=["finite"])
    assert verdict.result == "differs"
    assert all(verdict.inputs[f"a{i}"] & 0x7F800000 != 0x7F800000 for i in range(8))
    assert verdict.inputs["c"] & 0x7F800000 != 0x7F800000


@pytest.mark.parametrize(("argv", "message"), [
    (["x.v"], "no such file: x.v"),
    (["missing.smt2"], "cannot read missing.smt2"),
    (["nofunction.py:impl"], "no such file: nofunction.py"),
    (["json:no_such_function"], "json has no function no_such_function"),
    (["plainname"], "an implementation is FILE.smt2, FILE.py:NAME or module:NAME"),
    ([f"{EXAMPLES / 'fp8_via_f16.py'}:impl"], "fp8_via_f16.py:impl raised KeyError: 'a8'"),
    (["--datapath", "dense-tf99", "x.smt2"], "unknown datapath 'dense-tf99'"),
])
def test_bad_implementations_are_one_line_errors(argv, message, capsys):
    code, _, err = _run(capsys, "equiv", "--datapath", "dense-tf32", *argv)
    assert code == 2
    lines = [line for line in err.splitlines() if "still working" not in line]
    assert len(lines) == 1 and lines[0].startswith("tcspec: error:") and message in lines[0], \
        err


@pytest.mark.parametrize(("text", "message"), [
    ("", "defines no function 'impl' (it defines: none"),
    ("(define-fun impl ((c (_ BitVec 32))) (_ BitVec 32) (bvadd c c)",
     "line 1: '(' is never closed"),
    ("(define-fun impl () (_ BitVec 32) #x00000000)", "impl takes 0 parameters and lacks a0"),
])
def test_malformed_smtlib_files_are_one_line_errors(text, message, tmp_path, capsys):
    path = tmp_path / "bad.smt2"
    path.write_text(text)
    code, _, err = _run(capsys, "equiv", "--datapath", "dense-tf32", str(path))
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_parameters_are_checked_by_name_and_sort(tf32_export, tmp_path, capsys):
    code, _, err = _run(capsys, "equiv", "--datapath", "dense-bf16", str(tf32_export),
                        "--function", "tcgen05.dense-tf32")
    assert code == 2 and "parameter 9 of tcgen05.dense-tf32 is b0" in err
    code, _, err = _run(capsys, "equiv", "--datapath", "dense-tf32", str(tf32_export))
    assert code == 2 and "defines no function 'impl'" in err
    narrow = tmp_path / "narrow.smt2"
    params = " ".join(f"({s}{i} (_ BitVec 32))" for s in "ab" for i in range(8))
    narrow.write_text(f"(define-fun impl ({params} (c (_ BitVec 16))) (_ BitVec 32) #x00000000)")
    code, _, err = _run(capsys, "equiv", "--datapath", "dense-tf32", str(narrow))
    assert code == 2 and "parameter c of impl is (_ BitVec 16)" in err


def test_an_unknown_verdict_is_not_equal(monkeypatch):
    from tcspec.proofs import equiv as engine_side

    def undecided(pairs, **kwargs):
        from tcspec.proofs.engine.sweep import EngineStats, EquivalenceResult
        return EquivalenceResult("unknown", 1.0, EngineStats(), stopped="output pair: timeout")

    monkeypatch.setattr(engine_side, "prove_equivalent", undecided)
    verdict = tcspec.equiv(lambda ops, words: words["c"], "dense-tf32")
    assert verdict.result == "unknown" and "timeout" in verdict.to_json()["stopped"]


def test_the_hand_written_smtlib_tf32_is_equal():
    """docs/examples/equiv/tf32.smt2, written from SEMANTICS.md alone (a 64-bit integer
    encoding, its own decoder and window): equal for every input word."""
    verdict = tcspec.equiv(str(EXAMPLES / "tf32.smt2"), "dense-tf32", timeout=SOLVER_LIMIT)
    assert verdict.result == "equal", verdict.stopped


@pytest.mark.parametrize(("variant", "candidate"), [("tf32-rne", "exact-rne"),
                                                    ("tf32-no-clamp", None)])
def test_one_rule_deviations_differ(variant, candidate):
    verdict = tcspec.equiv(str(EXAMPLES / f"{variant}.smt2"), "dense-tf32",
                           timeout=SOLVER_LIMIT)
    assert verdict.result == "differs"
    assert verdict.spec != verdict.impl
    if candidate:
        assert f"candidate model {candidate}" in verdict.stage


def _flip_a_and_c(ops, words):
    flipped = dict(words)
    for i in range(8):
        flipped[f"a{i}"] = ops.bvxor(words[f"a{i}"], 0x80000000)
    flipped["c"] = ops.bvxor(words["c"], 0x80000000)
    return flipped


def _negated_or_zero(ops, words, d, words2, d2):
    return ops.or_(ops.eq(ops.extract(d, 30, 0), 0), ops.eq(d2, ops.bvxor(d, 0x80000000)))


def test_a_users_one_run_property_is_proved():
    """SEMANTICS.md 2.7: a zero result is +0, so D is never the word of -0."""
    verdict = tcspec.prove("dense-tf32", lambda ops, words, d: ops.ne(d, 0x80000000),
                           timeout=SOLVER_LIMIT)
    assert verdict.result == "proved", verdict.stopped


def test_a_users_two_run_property_is_refuted_with_replayed_words():
    """Sign symmetry fails on NaN inputs (the canonical NaN is positive, 2.2)."""
    verdict = tcspec.prove("dense-tf32", _negated_or_zero, relate=_flip_a_and_c,
                           timeout=SOLVER_LIMIT)
    assert verdict.result == "refuted"
    assert verdict.d == [0x7FFFFFFF, 0x7FFFFFFF]
    assert verdict.to_json()["counterexample"]["d"] == ["0x7FFFFFFF", "0x7FFFFFFF"]


@pytest.mark.full
def test_sign_symmetry_on_finite_words_is_proved():
    verdict = tcspec.prove("dense-tf32", _negated_or_zero, relate=_flip_a_and_c,
                           assume=["finite"], timeout=SOLVER_LIMIT)
    assert verdict.result == "proved", verdict.stopped


def test_a_predicate_that_is_not_a_bool_is_refused():
    with pytest.raises(ValueError, match="the predicate returns BV, not an ops Bool"):
        tcspec.prove("dense-tf32", lambda ops, words, d: d)
    with pytest.raises(ValueError, match="relate's words lack"):
        tcspec.prove("dense-tf32", lambda ops, w, d, w2, d2: ops.eq(d, d2),
                     relate=lambda ops, words: {})
