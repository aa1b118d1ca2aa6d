"""Input that used to be taken silently: missing block scales, restating vector-file fields
that disagree, flags that mean nothing where they were given, out-of-range ``jobs``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tcspec import evaluate, gemm, matmul, mma, mma_dot
from tcspec.cli import main
from tcspec.ref.vectorfiles import FROZEN_FILE, BadLine, Record, read_vectors

E4M3_ONE = 0x38
MX_ONES = ",".join(["0x38"] * 32)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ block scales


@pytest.mark.parametrize("command", ["eval", "explain"])
def test_cli_refuses_a_block_scaled_dot_without_scales(command: str,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    code, out, err = run(capsys, command, "--datapath", "dense-mx-e4m3", "--a", MX_ONES,
                         "--b", MX_ONES)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--scale-a and --scale-b are missing" in err
    assert "0x7F is the unit ue8m0 scale" in err
    code, out, _ = run(capsys, command, "--datapath", "dense-mx-e4m3", "--a", MX_ONES,
                       "--b", MX_ONES, "--scale-a", "0x7F")
    assert code == 2
    code, out, _ = run(capsys, "eval", "--datapath", "dense-mx-e4m3", "--a", MX_ONES, "--b",
                       MX_ONES, "--scale-a", "0x7F", "--scale-b", "0x7F")
    assert code == 0 and "D = 0x42000000" in out


def test_api_refuses_missing_scales_unless_unit_scales() -> None:
    ones = [E4M3_ONE] * 32
    fields = {"a_format": "e4m3", "scaling": "ue8m0"}
    with pytest.raises(ValueError, match="scale_a and scale_b are missing"):
        mma_dot(ones, ones, 0, **fields)
    assert mma_dot(ones, ones, 0, unit_scales=True, **fields) == 0x42000000
    assert mma_dot(ones, ones, 0, scale_a=[0x7F], scale_b=[0x7F], **fields) == 0x42000000
    a = np.full((2, 32), E4M3_ONE, np.uint32)
    with pytest.raises(ValueError, match="scale_b is missing"):
        evaluate("dense-mx-e4m3", a, a, np.zeros(2, np.uint32),
                 scale_a=np.full((2, 1), 0x7F, np.uint8))
    assert evaluate("dense-mx-e4m3", a, a, np.zeros(2, np.uint32),
                    unit_scales=True).tolist() == [0x42000000] * 2
    b = np.full((32, 2), E4M3_ONE, np.uint32)
    for call in (mma, gemm):
        with pytest.raises(ValueError, match="scale_a and scale_b are missing"):
            call(a, b, **fields)
        assert call(a, b, unit_scales=True, **fields).tolist() == [[0x42000000] * 2] * 2


# ------------------------------------------------------------------ vector-file fields


def _frozen_line(name: str) -> dict:
    for text in FROZEN_FILE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(text)
        if obj["name"] == name:
            return obj
    raise KeyError(name)


@pytest.mark.parametrize("edit, problem", [
    (lambda o: o.update(expected_hex="0xFF800001"), "expected_hex 0xFF800001 is not expected"),
    (lambda o: o.update(K=16), "K=16 but dense-tf32 has K=8"),
    (lambda o: o["descriptor_resolved"].update(d_type="f16"), "descriptor_resolved"),
    (lambda o: o.update(expected_hex="FF800000"), "0x-prefixed hex word"),
])
def test_a_restating_field_that_disagrees_is_a_malformed_line(edit, problem: str,
                                                              tmp_path: Path) -> None:
    obj = _frozen_line("tf32-0")
    edit(obj)
    path = tmp_path / "edited.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    (item,) = read_vectors(path)
    assert isinstance(item, BadLine) and problem in item.problem


def test_every_committed_vector_line_agrees_with_its_restating_fields() -> None:
    frozen = list(read_vectors(FROZEN_FILE))
    assert len(frozen) == 77 and all(isinstance(r, Record) for r in frozen)


def test_check_refuses_an_edited_hex_word(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    obj = _frozen_line("tf32-0")
    obj["expected_hex"] = "0xFF800001"
    path = tmp_path / "edited.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and "expected_hex" in err


# ------------------------------------------------------------------ flags that mean nothing


@pytest.mark.parametrize("argv, problem", [
    (["prove", "--property", "sign-symmetry", "--budget", "5"], "--budget applies only with "
                                                                "--arch"),
    (["hw", "list", "--target", "sm_99a"], "--target 'sm_99a' is not a PTX target"),
    (["hw", "ptx", "--target", "sm_99a", "-o", "{tmp}/ptx"], "is not a PTX target"),
])
def test_a_flag_that_would_be_ignored_is_refused(argv: list[str], problem: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and problem in err
    assert list(tmp_path.iterdir()) == []


def test_classify_refuses_an_empty_candidate_list(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(_frozen_line("tf32-0")) + "\n")
    code, _, err = run(capsys, "classify", str(path), "--candidates", "")
    assert code == 2 and "--candidates '' names no model" in err
    code, out, _ = run(capsys, "classify", str(path), "--candidates", " hardware")
    assert code == 0 and "hardware" in out


# ------------------------------------------------------------------ jobs


@pytest.mark.parametrize("jobs, error", [(0, ValueError), (-1, ValueError), (2000, ValueError),
                                         ("2", TypeError), (2.0, TypeError),
                                         (True, TypeError)])
def test_the_api_refuses_jobs_the_command_line_refuses(jobs: object,
                                                       error: type[Exception]) -> None:
    a = np.zeros((2, 8), np.uint32)
    b = np.zeros((8, 2), np.uint32)
    calls = [lambda: evaluate("tf32", a, a, np.zeros(2, np.uint32), jobs=jobs),
             lambda: mma(a, b, a_format="tf32", jobs=jobs),
             lambda: gemm(a, b, a_format="tf32", jobs=jobs),
             lambda: matmul(np.zeros((2, 8), np.float32), np.zeros((8, 2), np.float32),
                            a_format="tf32", jobs=jobs)]
    for call in calls:
        with pytest.raises(error, match="jobs"):
            call()


def test_the_api_takes_whole_numbers_of_jobs() -> None:
    a = np.zeros((2, 8), np.uint32)
    for jobs in (None, 1, 2, np.int64(2)):
        assert evaluate("tf32", a, a, np.zeros(2, np.uint32), jobs=jobs).tolist() == [0, 0]


# ------------------------------------------------------------------ messages that misled


def test_a_big_endian_array_is_read_by_its_values() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((8, 4)).astype(np.float32)
    c = rng.standard_normal((4, 4)).astype(np.float32)
    native = matmul(a, b, c, a_format="tf32")
    swapped = matmul(a.astype(">f4"), b.astype(">f4"), c.astype(">f4"), a_format="tf32")
    assert native.view(np.uint32).tolist() == swapped.view(np.uint32).tolist()


def test_matmul_of_integer_arrays_points_to_mma_and_gemm() -> None:
    a = np.ones((2, 32), np.int8)
    with pytest.raises(ValueError, match=r"A must be a float array, got integers \(dtype "
                                         r"int8\).*tcspec\.mma or tcspec\.gemm"):
        matmul(a, a.T.copy(), a_format="s8")


@pytest.mark.parametrize("arch", [[], ["--arch"]])
def test_classify_of_a_directory_says_it_is_one(arch: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "classify", *arch, str(tmp_path))
    assert code == 2 and f"{tmp_path} is a directory; give the observed-words file" in err
    code, _, err = run(capsys, "classify", *arch, str(tmp_path / "none.jsonl"))
    assert code == 2 and "no such observed-words file" in err


def test_a_json_error_names_the_files_line_and_the_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tcspec.hw.run import Unreadable, read_lines

    good = json.dumps(_frozen_line("tf32-0"))
    path = tmp_path / "observed.jsonl"
    path.write_text(f"{good}\n{good}\n{{\"a\": [1, 2,, 3]}}\n")
    (bad,) = [item for item in read_lines(path) if isinstance(item, Unreadable)]
    assert bad.label == "observed.jsonl:3"
    assert bad.problem == "not JSON (Expecting value at column 13)"
    _, out, _ = run(capsys, "classify", "--arch", str(path))
    assert "malformed line 3: not JSON (Expecting value at column 13)" in out
    assert "line 1 column" not in out


def test_a_line_cut_short_is_said_to_end_early_not_at_column_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = json.dumps(_frozen_line("tf32-0"))[:40]
    path = tmp_path / "cut.jsonl"
    path.write_text(cut + "\n")
    (bad,) = read_vectors(path)
    assert isinstance(bad, BadLine)
    assert bad.problem.endswith(f"at the end of the line, column {len(cut) + 1}: cut short?)")
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and "column 1)" not in err and "cut short" in err
