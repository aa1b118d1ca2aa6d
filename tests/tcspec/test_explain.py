"""tcspec explain (tcspec/explain.py, tcspec/svg.py): stages recorded from the one spec run."""

from __future__ import annotations

import gzip
import json
import random
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest

from tcspec.cli import main
from tcspec.explain import Explanation, compare, explain, hexfloat
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.inputs import UNIT_SCALE, prepare_dot
from tcspec.ref.vectorfiles import FROZEN_FILE, REFERENCE_DIR, parse_record
from tcspec.spec.catalog import CATALOG, lookup
from tcspec.svg import alignment_svg

SVG = "{http://www.w3.org/2000/svg}"
TINY = "0x39000000"  # 2^-13: a product of two is 2^-26
TOUR = ["--datapath", "dense-tf32", "--a", ",".join([TINY] * 8), "--b", ",".join([TINY] * 8),
        "--c", "0x3f800000"]
FINITE_LINES = {entry["datapath"]: entry["category_lines"]["finite"][0][0] for entry in
                json.loads((REFERENCE_DIR / "INDEX.json").read_text())["files"]}
"""The first line of each reference file's ``finite`` category."""

STAGES = {
    "window": ["decode", "specials", "products", "window", "align", "sum", "convert", "result"],
    "block": ["decode", "specials", "products", "block_choice", "groups", "sum", "convert",
              "result"],
    "integer": ["integer"],
    "arch": ["specials", "convert", "result"],
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _vector_words(name: str) -> tuple[list[int], int | None]:
    """Input words of one vector of ``name`` (a finite reference line, a B200 word) or a
    random input, with its expected word where the vector has one."""
    if name in FINITE_LINES:
        with gzip.open(REFERENCE_DIR / f"{name}.jsonl.gz", "rt", encoding="utf-8") as handle:
            for number, text in enumerate(handle, 1):
                if number == FINITE_LINES[name]:
                    record = parse_record(json.loads(text), number)
                    return record.words, record.expected
    with open(FROZEN_FILE, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            obj = json.loads(text)
            if obj.get("datapath") == name:
                record = parse_record(obj, number)
                return record.words, record.expected
    desc = lookup(name).descriptor
    rng = random.Random(name)
    lanes = [[rng.getrandbits(32) & 0x3FFFFFFF for _ in range(desc.k)] for _ in "ab"]
    scales = [UNIT_SCALE[desc.scaling]] * desc.scale_count if desc.scaling else None
    return prepare_dot(desc, *lanes, rng.getrandbits(30), scales, scales,
                       0x44444444 if desc.sparse else None), None


def _one_per_family() -> list[str]:
    """Every tcgen05 datapath and one architecture datapath per (arch, instruction, family)."""
    chosen: dict[object, str] = {}
    for name, entry in CATALOG.items():
        desc = entry.descriptor
        key = name if entry.is_tcgen05 else (entry.arch, entry.instruction, desc.kind)
        chosen.setdefault(key, name)
    return list(chosen.values())


@pytest.mark.parametrize("names", [_one_per_family(),
                                   pytest.param(list(CATALOG), marks=pytest.mark.full)],
                         ids=["sample", "every"])
def test_explained_word_is_the_spec_result_on_every_datapath(names):
    for name in names:
        entry = CATALOG[name]
        desc = entry.descriptor
        words, expected = _vector_words(name)
        explained = explain(desc, words)
        assert explained.word == compiled_dot(desc)(*words), name
        if expected is not None:
            assert explained.word == expected, name
        names = [s.name for s in explained.stages]
        wanted = (["sparse"] if desc.sparse else []) + STAGES[desc.family]
        if desc.family == "arch":  # chained steps repeat stages; families name their own
            assert set(wanted) <= set(names), (name, names)
            results = [s for s in explained.stages if s.name == "result"]
            assert results[-1].facts["word"] == explained.word, name
        else:
            assert [n for n in names if n in wanted] == wanted, (name, names)
        if desc.family not in ("integer", "arch"):
            assert explained.stages[-1].facts["word"] == explained.word


def _tour() -> Explanation:
    desc = lookup("dense-tf32").descriptor
    return explain(desc, prepare_dot(desc, [0x39000000] * 8, [0x39000000] * 8, 0x3F800000))


def test_tour_stop_one_shows_the_truncated_products():
    explained = _tour()
    stages = {s.name: s for s in explained.stages}
    assert stages["window"].facts["R"] == 0 and not stages["window"].facts["clamp_applied"]
    align = stages["align"]
    assert align.facts == {"quantum": -25, "window_bits": 25}
    assert [row["units"] for row in align.rows] == [0] * 8 + [1 << 25]
    assert [row["lost"] for row in align.rows] == ["0x1p-26"] * 8 + ["0"]
    assert stages["sum"].facts["value"] == "0x1p+0"
    assert explained.word == 0x3F800000
    assert "the -133 clamp does not bind" in explained.text()


def test_json_has_the_stages(capsys):
    code, out, _ = run(capsys, "explain", *TOUR, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["result"] == 0x3F800000 and data["datapath"] == "dense-tf32"
    assert [s["stage"] for s in data["stages"]] == STAGES["window"]
    decode = data["stages"][0]
    assert decode["rows"][0]["a_raw"] == -13 and decode["rows"][0]["a_value"] == "0x1p-13"


def test_vs_names_the_first_stage_that_differs(capsys):
    comparison = compare(_tour().descriptor, _tour().words, "exact-rne")
    assert comparison.right.word == 0x3F800001
    assert comparison.first_difference == "sum"
    assert "exact-rne keeps 0x1p-26 of A0*B0" in comparison.sentence
    assert "window" in comparison.only_left and "align" in comparison.only_left
    wider = compare(_tour().descriptor, _tour().words, "window-26")
    assert wider.first_difference == "align"
    assert "units of 2^-26" in wider.sentence and "A0*B0" in wider.sentence
    code, out, _ = run(capsys, "explain", *TOUR, "--vs", "exact-rne")
    assert code == 0 and "[same in both]" in out and "D [exact-rne] = 0x3F800001" in out
    assert comparison.sentence in out


def _svg_rows(explained: Explanation, tmp_path, capsys, argv) -> None:
    path = tmp_path / "picture.svg"
    code, out, _ = run(capsys, "explain", *argv, "--svg", str(path))
    assert code == 0 and f"wrote {path}" in out
    root = ET.parse(path).getroot()
    groups = [g for g in root.iter(f"{SVG}g")]
    terms = [g.get("data-label") for g in groups if g.get("class") == "term"]
    assert explained.alignment is not None
    nonzero = [t.label for t in explained.alignment.terms if t.mag]
    assert terms == nonzero and terms
    assert [g.get("class") for g in groups][-2:] == ["sum", "result"]
    assert any(r.get("class") == "window" for r in root.iter(f"{SVG}rect"))


@pytest.mark.parametrize("name", ["dense-e4m3", "dense-nvfp4", "sparse-e4m3", "dense-mxf4"])
def test_svg_has_one_row_per_nonzero_term(name, tmp_path, capsys):
    source = REFERENCE_DIR / f"{name}.jsonl.gz"
    desc = lookup(name).descriptor
    words, _ = _vector_words(name)
    _svg_rows(explain(desc, words), tmp_path, capsys, ["--line", f"{source}:{FINITE_LINES[name]}"])


def test_svg_of_the_tour(tmp_path, capsys):
    _svg_rows(_tour(), tmp_path, capsys, TOUR)
    assert alignment_svg(_tour().alignment, "t").startswith("<svg")


@pytest.mark.parametrize(("argv", "message"), [
    (["--datapath", "nope", "--a", "1", "--b", "1"], "unknown datapath 'nope'"),
    (["--datapath", "tf32", "--a", "1,zz", "--b", "1"], "is not a hex word"),
    (["--datapath", "tf32"], "give --a and --b"),
    (["--line", f"{FROZEN_FILE}:100000"], "has no vector on line 100000"),
    (["--line", "no-such-file.jsonl:1"], "cannot read no-such-file.jsonl"),
    (["--line", "file-without-number"], "expected FILE:N"),
    ([*TOUR, "--svg", "/nonexistent-dir/x.svg"], "cannot write /nonexistent-dir/x.svg"),
    ([*TOUR, "--vs", "no-such-model"], "unknown model 'no-such-model'"),
    (["--datapath", "i8-s8-s8-wrap", "--a", "1", "--b", "1", "--svg", "x.svg"],
     "takes K=32"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "explain", *argv)
    assert code == 2 and out == ""
    assert err.startswith("tcspec: error: ") and message in err and err.count("\n") == 1


def test_no_picture_for_integer_sums(capsys, tmp_path):
    ones = ",".join(["0x1"] * 32)
    code, _, err = run(capsys, "explain", "--datapath", "i8-s8-s8-wrap", "--a", ones, "--b",
                       ones, "--svg", str(tmp_path / "x.svg"))
    assert code == 2 and "no window to picture" in err


def test_hexfloat_is_exact():
    assert hexfloat(Fraction(3, 8)) == "0x1.8p-2"
    assert hexfloat(Fraction(-1, 2 ** 26)) == "-0x1p-26"
    assert hexfloat(0) == "0"
    assert hexfloat((1 << 24) - 1) == "0x1.fffffep+23"


def test_block_rules_candidate_differs_at_the_group_sums():
    desc = lookup("dense-nvfp4").descriptor
    words, _ = _vector_words("dense-nvfp4")
    comparison = compare(desc, words, "nvfp4-k16")
    assert comparison.first_difference == "groups"
    assert "groups of 4" in comparison.sentence and "groups of 16" in comparison.sentence


@pytest.mark.parametrize("name", ["dense-tf32", "dense-nvfp4", "dense-mxf4", "sparse-e4m3"])
def test_stage_hooks_build_nothing(name):
    """Recording every stage on the tracer leaves the DAG as it is (same nodes, same output)."""
    from tcspec.smt.formula import _symbolic_dot, traced
    from tcspec.smt.trace import TraceOps

    class RecordingTrace(TraceOps):
        def observe(self, stage, **values):
            self.stages = [*getattr(self, "stages", []), stage]

    ops = RecordingTrace()
    _, result, _ = _symbolic_dot(ops, lookup(name).descriptor)
    plain = traced(lookup(name).descriptor)
    assert len(ops) == plain.node_count and result.node.id == plain.output.id
    assert "convert" in ops.stages
