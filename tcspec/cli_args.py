"""The argument parser of the ``tcspec`` command: every subcommand, its flags and help.

Only definitions: :mod:`tcspec.cli` parses with it and runs the command.
"""

from __future__ import annotations

import argparse


def _add_dot_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    """The input flags of one dot product (eval, explain)."""
    p.add_argument("--datapath", help="canonical name (e.g. dense-tf32) or alias (tf32)")
    p.add_argument("--a-format")
    p.add_argument("--b-format")
    p.add_argument("--d-type", choices=("f32", "f16", "s32"))
    p.add_argument("--saturate", action="store_true")
    p.add_argument("--scaling", choices=("ue8m0", "ue4m3"))
    p.add_argument("--kind")
    p.add_argument("--scale-vec", type=int, choices=(1, 2, 4))
    p.add_argument("--a", required=required, help="comma-separated hex A words (logical K)")
    p.add_argument("--b", required=required, help="comma-separated hex B words")
    p.add_argument("--c", default="0x0", help="hex C word (default +0)")
    p.add_argument("--scale-a", help="comma-separated hex scale bytes for A")
    p.add_argument("--scale-b", help="comma-separated hex scale bytes for B")
    p.add_argument("--metadata", help="hex sparse metadata word(s); makes the datapath sparse "
                   "(one word is reused for every group of 8 chunks)")


def _add_hw_parser(sub: argparse._SubParsersAction) -> None:
    """``tcspec hw run|selftest|list|ptx``: the GPU harness."""
    hw = sub.add_parser("hw", help="run vector, probe or campaign files on a real GPU")
    cmds = hw.add_subparsers(dest="hw_command", required=True, metavar="HW_COMMAND")
    for name, text in (("run", "every runnable line through the real instruction"),
                       ("selftest", "check every operand layout on this GPU")):
        p = cmds.add_parser(name, help=text)
        if name == "run":
            p.add_argument("files", nargs="+", metavar="FILE.jsonl[.gz]|DIR")
            p.add_argument("--out", required=True, metavar="OBSERVED.jsonl")
            p.add_argument("--no-selftest", action="store_true",
                           help="skip the layout self-test of each instruction used")
        p.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
        p.add_argument("--arch", default="auto", help="sm_NN the device must be (auto)")
        p.add_argument("--instruction", choices=("tcgen05", "wgmma", "mma"),
                       help="only this instruction (default: the newest that runs the line)")
    p = cmds.add_parser("list", help="every instruction form of the table and its datapath")
    p.add_argument("--target", help="one PTX target (sm_80, sm_90a, ...)")
    p = cmds.add_parser("compare", help="a device-plan directory's D words against every "
                        "candidate model (tcspec/hw/device_plan.py)")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--markdown", metavar="FILE", help="also write the findings table here")
    p = cmds.add_parser("ptx", help="write the generated PTX, one file per target")
    p.add_argument("--target", help="one target (default: all)")
    p.add_argument("-o", "--output", required=True, metavar="DIR")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcspec", description="Executable, formal specification of tcgen05.mma arithmetic.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="every catalogued datapath and its validation status")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--candidates", action="store_true",
                   help="the candidate models of SEMANTICS.md section 7 and where they apply")
    p.add_argument("--arch", metavar="ARCH", help="only this architecture's datapaths "
                   "(sm_70 ... sm_120, cdna1..cdna3; sm_100 includes tcgen05)")

    p = sub.add_parser("eval", help="one dot product from hex words")
    _add_dot_arguments(p, required=True)
    p.add_argument("--json", action="store_true", help="print a vector line")

    p = sub.add_parser("explain", help="every stage of one dot product, as the spec runs it")
    _add_dot_arguments(p, required=False)
    p.add_argument("--line", metavar="FILE:N", help="explain line N of a vector file instead")
    p.add_argument("--vs", metavar="MODEL", help="side by side with a candidate model "
                   "(SEMANTICS.md section 7; `tcspec list --candidates`)")
    p.add_argument("--svg", metavar="FILE", help="also draw the bit-alignment picture")
    p.add_argument("--json", action="store_true", help="the stages as data")

    p = sub.add_parser("validate", help="replay the frozen B200 words (and reference vectors)")
    p.add_argument("--reference", action="store_true", help="also replay the reference vectors")
    p.add_argument("--verbose", action="store_true", help="list every passing B200 word")
    p.add_argument("--jobs", type=int, help="processes for the reference files "
                   "(default: the cores)")

    p = sub.add_parser("check", help="replay vector files (shared line format, or columnar "
                       "directories from `tcspec gen --format npy-dir`)")
    p.add_argument("files", nargs="+", metavar="FILE.jsonl[.gz]|DIR")
    p.add_argument("--jobs", type=int, help="processes for a columnar directory "
                   "(default: the cores)")
    p.add_argument("--dask", metavar="ADDRESS", help="split the check across the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")
    p.add_argument("--model", metavar="NAME",
                   help="check against a candidate model of SEMANTICS.md section 7 "
                        "(default: hardware; see `tcspec list --candidates`)")

    p = sub.add_parser("gen", help="generate cases with expected words from the specification")
    p.add_argument("--datapath", required=True)
    p.add_argument("--cases", type=int, required=True)
    p.add_argument("--mix", default="raw,finite,edge",
                   help="case categories, row by row in turn (default raw,finite,edge)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="FILE.jsonl[.gz], or a directory for npy-dir")
    p.add_argument("--format", choices=("jsonl", "npy-dir"), default="jsonl")
    p.add_argument("--jobs", type=int, help="processes, a chunk of rows each "
                   "(default: the cores; the file is the same for any count)")
    p.add_argument("--dask", metavar="ADDRESS", help="generate the chunks on the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")

    p = sub.add_parser("smtlib", help="a self-contained SMT-LIB2 script for a datapath")
    p.add_argument("--datapath", required=True)
    p.add_argument("-o", "--output", help="write to this file instead of stdout")

    p = sub.add_parser("export", help="the specification as an SMT-LIB function library or C99")
    p.add_argument("--lang", required=True, choices=("smtlib", "c"))
    p.add_argument("--datapath", action="append", help="repeatable canonical name")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--form", choices=("library", "script"),
                   help="smtlib: define-fun library (default) or one datapath's script")
    p.add_argument("-o", "--output", help="smtlib: a file (default stdout); c: a directory")

    p = sub.add_parser("bench", help="throughput of every lowering side by side (dots/s), "
                       "kernel compile and cache-load times")
    p.add_argument("--datapath", action="append", help="repeatable; default: a representative set")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--rows", type=int, default=20000, help="batch size for the NumPy backend")
    p.add_argument("--scalar-seconds", type=float, default=1.0,
                   help="time budget per scalar measurement")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--markdown", action="store_true", help="the README's throughput table")
    p.add_argument("--api", action="store_true",
                   help="evaluate, gemm and matmul beside the kernel they reach, 1 and 2 cores")
    p.add_argument("--shape", default="512,512,4096", help="--api: the gemm shape M,N,K")
    p.add_argument("--repeats", type=int, default=2, help="--api: runs per figure (best counts)")

    p = sub.add_parser("conform", help="every lowering on the same inputs (one-source check)")
    p.add_argument("--datapath", action="append", help="repeatable; default: every datapath")
    p.add_argument("--cases", type=int, default=200, help="random cases per datapath")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--reference", action="store_true",
                   help="also run every reference vector through every lowering")

    p = sub.add_parser("probe", help="solver-made inputs on which candidate models differ")
    p.add_argument("--datapath", help="canonical name (e.g. dense-tf32)")
    p.add_argument("--model", default="hardware", help="first model (default: hardware)")
    p.add_argument("--vs", metavar="CANDIDATE", help="the model to tell apart from --model")
    p.add_argument("--vs-datapath", metavar="DATAPATH", help="another datapath with the same "
                   "operand formats: an input on which the two differ, or unsat (the smaller K "
                   "chained to the larger)")
    p.add_argument("--vs-model", default="hardware", help="with --vs-datapath: its model")
    p.add_argument("--portability", action="store_true", help="every format group: classes "
                   "proved identical, a witness per pair, fingerprint suites")
    p.add_argument("--formats", metavar="LABEL,...", help="with --portability: only these "
                   "format groups (e.g. f16-f16-c32-d32)")
    p.add_argument("--report", action="store_true", help="with --portability: write "
                   "proofs/PORTABILITY.md/.json and ref/vectors/fingerprints/")
    p.add_argument("--separate", metavar="M1,M2,...",
                   help="a small suite separating every pair of these models")
    p.add_argument("--sensitivity", action="store_true",
                   help="which rule constants of the hardware model the inputs can observe")
    p.add_argument("--finite", action="store_true", help="no Inf or NaN inputs")
    p.add_argument("--active-lanes", type=int, metavar="N",
                   help="at most N lanes with a nonzero product")
    p.add_argument("--c", choices=("zero", "nonzero"), help="C zero or nonzero")
    p.add_argument("--exp-range", metavar="LO:HI",
                   help="raw exponents of nonzero A, B and C within LO..HI")
    p.add_argument("--shape", choices=("one-lane", "c-only", "cancel"),
                   help="probe ladder shape: one active lane, no active lane, or lanes 0 and 1 "
                        "cancelling exactly above every other term")
    p.add_argument("--scale-a", help="fix the A scale bytes (hex; one is reused)")
    p.add_argument("--scale-b", help="fix the B scale bytes (hex; one is reused)")
    p.add_argument("--metadata", help="fix the sparse metadata words (hex; one is reused)")
    p.add_argument("--count", type=int, default=1, help="probes with pairwise different inputs")
    p.add_argument("--minimize", action="store_true",
                   help="fewest active lanes first, then the smallest exponent spread")
    p.add_argument("--seed", type=int, help="diversify: random sign/low bits and lane choice")
    p.add_argument("--out", action="append",
                   help="write the probes here (repeatable; .jsonl/.csv pick the format; "
                        "default: stdout)")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per solver call")
    p.add_argument("--verbose", action="store_true", help="log every solver call to stderr")

    p = sub.add_parser("classify", help="which candidate models survive observed words")
    p.add_argument("file", metavar="OBSERVED.jsonl", help="lines with inputs and `expected`")
    p.add_argument("--candidates", metavar="M1,M2,...", help="default: every candidate")
    p.add_argument("--all", action="store_true", help="list every line that rules a model out")
    p.add_argument("--arch", action="store_true", help="name the architecture datapaths "
                   "consistent with the observed words (any K they chain to)")

    p = sub.add_parser("tour", help="a short guided tour of the arithmetic")

    _add_hw_parser(sub)

    p = sub.add_parser("prove", help="prove properties for all inputs (the proof matrix)")
    p.add_argument("--property", help="one property family row kind (default: all)")
    p.add_argument("--datapath", help="one datapath (default: each property's required ones)")
    p.add_argument("--k", type=int, help="logical K of the query (default: the hardware K; "
                   "any other K is a model of the datapath)")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per query (120)")
    p.add_argument("--second-solver", default="auto",
                   help="re-run proved queries with this solver: auto (cvc5, then z3), z3, "
                   "cvc5 or none")
    p.add_argument("--second-timeout", type=float, default=30.0,
                   help="seconds per query for the second solver (30)")
    p.add_argument("--jobs", type=int, default=1, help="rows decided in parallel")
    p.add_argument("--fast", action="store_true", help="the small-K subset the tests run")
    p.add_argument("--report", action="store_true",
                   help="write proofs/REPORT.json and proofs/REPORT.md")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--all-properties", action="store_true",
                   help="with --datapath: every property that applies, not only the required")
    p.add_argument("--mutants", action="store_true",
                   help="break the spec (proofs/mutants.py) in scratch copies and print which "
                   "rows each breaker kills and keeps (with --report: proofs/MUTANTS.md)")
    p.add_argument("--mutant", action="append", metavar="NAME",
                   help="with --mutants: only this breaker (repeatable)")
    return parser
