"""Verilog implementations for ``tcspec equiv`` (issue 32): the netlist reader against
Verilog's own arithmetic (computed here with Python ints) and against Yosys's ``eval``,
an independent integer module proved equal, its saturating sibling refuted with Yosys's
replay, and one-line refusals naming the port or cell."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tcspec
from tcspec.cli import main
from tcspec.spec.scalar import SCALAR
from tcspec.verilog import verilog_function

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples" / "equiv"
TF32_PORTS = ", ".join([f"input [31:0] {s}{i}" for s in "ab" for i in range(8)]
                       + ["input [31:0] c", "output [31:0] d"])

MIXED = """
module impl(input [7:0] a0, input [7:0] b0, input [7:0] c, output reg [7:0] d);
  wire signed [7:0] sa = a0;
  always @* begin
    case (c[1:0])
      2'd0: d = a0 + b0;
      2'd1: d = sa >>> b0[2:0];
      2'd2: d = (a0 < b0) ? a0 * b0 : a0 >> b0;
      default: d = {a0[3:0], b0[7:4]} ^ {8{^c}};
    endcase
  end
endmodule
"""


def _mixed_reference(a: int, b: int, c: int) -> int:
    signed_a = a - 256 if a >= 128 else a
    select = c & 3
    if select == 0:
        return (a + b) & 255
    if select == 1:
        return (signed_a >> (b & 7)) & 255
    if select == 2:
        return (a * b) & 255 if a < b else (a >> b if b < 8 else 0)
    parity = bin(c).count("1") & 1
    return (((a & 15) << 4) | (b >> 4)) ^ (255 if parity else 0)


def _integer_module(saturate: bool = False) -> str:
    ports = ", ".join([f"input [31:0] {s}{i}" for s in "ab" for i in range(32)]
                      + ["input [31:0] c", "output [31:0] d"])
    terms = " + ".join(f"$signed(a{i}[7:0]) * $signed(b{i}[7:0])" for i in range(32))
    return (f"module impl({ports});\n"
            f"  wire signed [39:0] sum = $signed(c) + {terms};\n"
            "  assign d = sum[31:0];\nendmodule\n")


def test_the_netlist_means_what_verilog_says(tmp_path):
    source = tmp_path / "mixed.v"
    source.write_text(MIXED)
    build, evaluate = verilog_function(source, "impl", [("a0", 8), ("b0", 8), ("c", 8)], 8)
    rng = random.Random(1)
    cases = [(200, 3, 1), (5, 9, 2), (77, 200, 7), (255, 255, 0), (128, 9, 2)]
    cases += [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(300)]
    for a, b, c in cases:
        words = {"a0": SCALAR.const(a, 8), "b0": SCALAR.const(b, 8), "c": SCALAR.const(c, 8)}
        assert int(build(SCALAR, words).node) == _mixed_reference(a, b, c), (a, b, c)
    for a, b, c in cases[:4]:
        assert evaluate({"a0": a, "b0": b, "c": c}) == _mixed_reference(a, b, c)


def test_an_independent_verilog_module_is_proved_equal(tmp_path, capsys):
    source = tmp_path / "int8.v"
    source.write_text(_integer_module())
    assert main(["equiv", "--datapath", "i8-s8-s8-wrap", str(source)]) == 0
    assert "equal in" in capsys.readouterr().out


def test_the_saturating_datapath_differs_and_yosys_replays_it(tmp_path):
    source = tmp_path / "int8.v"
    source.write_text(_integer_module())
    verdict = tcspec.equiv(str(source), "i8-s8-s8-saturate")
    assert verdict.result == "differs"
    assert verdict.spec in (0x7FFFFFFF, 0x80000000) and verdict.impl != verdict.spec


def test_a_round_to_nearest_tf32_module_differs():
    verdict = tcspec.equiv(str(EXAMPLES / "tf32-rne.v"), "dense-tf32")
    assert verdict.result == "differs"
    assert abs(verdict.spec - verdict.impl) == 1


@pytest.mark.parametrize(("body", "message"), [
    (f"module impl(input clk, {TF32_PORTS});\n  assign d = c;\nendmodule\n",
     "input port clk of impl is not an input word"),
    ("module impl(input [31:0] c, input [31:0] a0, output [31:0] d);\n"
     "  assign d = c;\nendmodule\n", "module impl has no input port a1"),
    ("module impl(input [15:0] a0, output [31:0] d);\n  assign d = a0;\nendmodule\n",
     "input port a0 of impl is 16 bits"),
    ("module other(input [31:0] c, output [31:0] d);\n  assign d = c;\nendmodule\n",
     "Module `impl' not found"),
    ("module impl(input [31:0] c, output [31:0] d)\n  assign d = c;\nendmodule\n",
     "Yosys: "),
    (f"module impl({TF32_PORTS});\n  wire [31:0] x = (x & a0) | c;\n  assign d = x;\n"
     "endmodule\n", "combinational loop through cell $or$bad.v"),
    ("", "Module `impl' not found"),
])
def test_bad_modules_are_one_line_errors(body, message, tmp_path, capsys):
    """Exit 2 and one error line; the heartbeat's progress lines may come first (Yosys's
    first run with an empty cache compiles its WebAssembly, over 10 s: CI red once)."""
    source = tmp_path / "bad.v"
    source.write_text(body)
    code = main(["equiv", "--datapath", "dense-tf32", str(source)])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if "still working" not in line]
    assert len(lines) == 1 and lines[0].startswith("tcspec: error:") and message in lines[0], \
        err


@pytest.mark.parametrize("body", ["always @* if (a0[0]) d = c;",
                                  "always @(posedge a0[0]) d <= c;"], ids=["latch", "flop"])
def test_a_sequential_module_is_refused_by_its_cell(body, tmp_path, capsys):
    source = tmp_path / "state.v"
    source.write_text(f"module impl({TF32_PORTS.replace('output', 'output reg')});\n"
                      f"  {body}\nendmodule\n")
    code = main(["equiv", "--datapath", "dense-tf32", str(source)])
    err = capsys.readouterr().err
    assert code == 2 and "the module is sequential" in err, err
