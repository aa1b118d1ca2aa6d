"""Word layout (SEMANTICS.md section 1, issue 19): documented where users look, and likely
layout mistakes refused by the command line and by the API under ``strict=True``.

The constants come from SEMANTICS.md section 1: bf16 reads bits 31..16 of an F32 word,
f16 bits 15..0, e4m3 bits 7..0, ue4m3 bits 6..0; an F16-D path reads C as F16.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcspec import evaluate, mma_dot
from tcspec.cli import main
from tcspec.cli_args import build_parser

ROOT = Path(__file__).resolve().parents[2]
BF16_ONE_16 = 0x3F80
BF16_ONE = 0x3F800000
F16_ONE = 0x3C00
E4M3_ONE = 0x38


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def words(word: int, k: int) -> str:
    return ",".join([f"0x{word:X}"] * k)


@pytest.mark.parametrize(("argv", "rule"), [
    (["--datapath", "dense-bf16", "--a", words(BF16_ONE_16, 16), "--b", words(BF16_ONE, 16)],
     "bits 31..16"),
    (["--datapath", "mixed-f16-f16-f16", "--a", words(F16_ONE, 16), "--b", words(F16_ONE, 16),
      "--c", "0x3F800000"], "bits 15..0"),
    (["--datapath", "dense-e4m3", "--a", words(0x100 | E4M3_ONE, 32),
      "--b", words(E4M3_ONE, 32)], "bits 7..0"),
    (["--datapath", "dense-nvfp4", "--a", words(0x2, 64), "--b", words(0x2, 64),
      "--scale-a", words(0x80 | 0x38, 4), "--scale-b", words(0x38, 4)], "bits 6..0"),
])
def test_eval_refuses_likely_layout_mistakes(argv, rule, capsys):
    code, out, err = run(capsys, "eval", *argv)
    assert code == 2 and out == ""
    assert err.startswith("tcspec: error:") and rule in err and "SEMANTICS.md section 1" in err
    assert "--raw-containers" in err and len(err.strip().splitlines()) == 1


def test_raw_containers_passes_the_word_as_the_hardware_reads_it(capsys):
    argv = ["eval", "--datapath", "dense-e4m3", "--a", words(0x100 | E4M3_ONE, 32),
            "--b", words(E4M3_ONE, 32), "--json"]
    code, out, _ = run(capsys, *argv, "--raw-containers")
    masked = mma_dot([E4M3_ONE] * 32, [E4M3_ONE] * 32, 0, a_format="e4m3")
    assert code == 0 and f'"expected": {masked}' in out and masked == 0x42000000


def test_explain_refuses_the_bf16_half_word(capsys):
    code, _, err = run(capsys, "explain", "--datapath", "bf16", "--a", words(BF16_ONE_16, 16),
                       "--b", words(BF16_ONE, 16))
    assert code == 2 and "bits 31..16" in err and "0x3F800000" in err


def test_probe_refuses_a_fixed_ue4m3_scale_with_bit_7(capsys):
    code, _, err = run(capsys, "probe", "--datapath", "nvfp4", "--vs", "nvfp4-per-product",
                       "--scale-a", "0xB8")
    assert code == 2 and "bits 6..0" in err


def test_good_words_still_evaluate(capsys):
    code, out, _ = run(capsys, "eval", "--datapath", "dense-bf16", "--a", words(BF16_ONE, 16),
                       "--b", words(BF16_ONE, 16))
    assert code == 0 and "D = 0x41800000" in out


def test_api_is_lenient_by_default_and_strict_on_request():
    assert mma_dot([BF16_ONE_16] * 16, [BF16_ONE] * 16, 0, a_format="bf16") == 0
    with pytest.raises(ValueError, match=r"bits 31\.\.16"):
        mma_dot([BF16_ONE_16] * 16, [BF16_ONE] * 16, 0, a_format="bf16", strict=True)
    with pytest.raises(ValueError, match="F16-D path"):
        mma_dot([F16_ONE] * 16, [F16_ONE] * 16, 0x3F800000, a_format="f16", d_type="f16",
                strict=True)
    assert mma_dot([F16_ONE] * 16, [F16_ONE] * 16, F16_ONE, a_format="f16", d_type="f16",
                   strict=True) == 0x4C40


def test_mma_and_gemm_strict_refuse_the_bf16_half_word():
    from tcspec import mma

    a, b = [[BF16_ONE_16] * 16] * 2, [[BF16_ONE] * 3] * 16
    assert mma(a, b, a_format="bf16") == [[0] * 3] * 2
    with pytest.raises(ValueError, match=r"A\[0, 0\]"):
        mma(a, b, a_format="bf16", strict=True)
    from tcspec import gemm

    with pytest.raises(ValueError, match=r"A\[0, 0\]"):
        gemm([[BF16_ONE_16] * 32] * 2, [[BF16_ONE] * 3] * 32, a_format="bf16", strict=True)
    assert gemm([[BF16_ONE] * 32] * 2, [[BF16_ONE] * 3] * 32, a_format="bf16",
                strict=True) == [[0x42000000] * 3] * 2


def test_evaluate_strict_names_the_row():
    a = np.full((3, 16), F16_ONE, dtype=np.uint32)
    c = np.array([0, F16_ONE, 0x3F800000], dtype=np.uint32)
    lenient = evaluate("mixed-f16-f16-f16", a, a, c)
    assert lenient[2] == lenient[0]
    with pytest.raises(ValueError, match=r"C\[2\]"):
        evaluate("mixed-f16-f16-f16", a, a, c, strict=True)


def test_layout_table_is_where_users_look():
    help_text = build_parser()._subparsers._group_actions[0].choices["eval"].format_help()
    api_page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "docs/api.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    for text in (help_text, mma_dot.__doc__, api_page):
        assert "31..16" in text and "31..13" in text and "15..0" in text and "3..0" in text
        assert "0x3F80" in text and "6..0" in text
    assert "layout" in (evaluate.__doc__ or "")
