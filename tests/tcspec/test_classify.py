"""classify: which candidates survive observed words (tcspec/classify.py)."""

from __future__ import annotations

import json

import pytest

from tcspec.classify import classification_text, classify_file, family_of
from tcspec.cli import main
from tcspec.ref.vectorfiles import FROZEN_FILE
from tcspec.spec.catalog import lookup

RULED_OUT = ("exact-rne", "exact-rz", "window-23", "window-24", "window-26", "window-27",
             "nvfp4-per-product")


@pytest.fixture(scope="module")
def frozen():
    return classify_file(FROZEN_FILE)


def test_frozen_words_keep_hardware_and_rule_out_the_rejected_models(frozen):
    survivors = frozen.survivors()
    assert "hardware" in survivors and "nvfp4-k16" in survivors
    for name in RULED_OUT + ("mma-sim",):
        assert name not in survivors


def test_mma_sim_falls_only_to_two_floor_words(frozen):
    against = [record.name for family in frozen.families.values()
               for record, _ in family.verdicts["mma-sim"].against]
    assert len(against) == 2
    assert all(name.startswith("test_subnormal_window_floor") for name in against)


def test_lines_that_do_not_apply_are_skipped_and_counted(frozen):
    integer = frozen.families["i8"].verdicts
    assert integer["hardware"].checked == 8 and integer["exact-rne"].skipped == 8
    assert not integer["exact-rne"].applies
    text = classification_text(frozen)
    assert "family tf32" in text and "ruled out by" in text and "skipped" in text


def test_family_groups_dense_and_sparse_siblings():
    assert family_of(lookup("sparse-tf32").descriptor) == "tf32"
    assert family_of(lookup("mixed-e2m1-e4m3-f16").descriptor) == "f8f6f4"
    assert family_of(lookup("dense-mxf4nvf4-4x-ue4m3").descriptor) == "mxf4nvf4-ue4m3"


def test_observed_words_of_another_model_flip_the_verdict(tmp_path):
    lines = [json.loads(t) for t in FROZEN_FILE.read_text().splitlines()]
    tf32 = [line for line in lines if line["datapath"] == "dense-tf32"][:3]
    from tcspec.ref.compiled import compiled_model
    from tcspec.ref.vectorfiles import parse_record

    for number, line in enumerate(tf32, 1):
        record = parse_record(line, number)
        line["expected"] = compiled_model("exact-rne", record.descriptor)(*record.words)
        line["expected_hex"] = f"0x{line['expected']:08X}"
    path = tmp_path / "observed.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in tf32))
    result = classify_file(path, ["hardware", "exact-rne"])
    verdicts = result.families["tf32"].verdicts
    assert verdicts["exact-rne"].survives and not verdicts["hardware"].survives


def test_cli_bad_input(tmp_path, capsys):
    assert main(["classify", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["classify", str(FROZEN_FILE), "--candidates", "no-such"]) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["classify", str(empty)]) == 2
    assert capsys.readouterr().err.count("tcspec: error:") == 3
