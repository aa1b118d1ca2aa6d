"""The argument parser of the ``tcspec`` command: every subcommand, its flags and help.

Only definitions: :mod:`tcspec.cli` parses with it and runs the command.
"""

from __future__ import annotations

import argparse

from tcspec.cli_help import (
    D_TYPES,
    KINDS,
    LAYOUT_TABLE,
    OPERAND_FORMATS,
    OnlyWith,
    Parser,
    datapaths_text,
    epilog,
    exit_status_text,
    jobs_count,
    models_text,
    positive_int,
    positive_seconds,
)


def _sub(sub: argparse._SubParsersAction, name: str, help: str, *extra: str
         ) -> argparse.ArgumentParser:
    """Subcommand ``name`` with its examples (and ``extra`` paragraphs) in ``--help``."""
    return sub.add_parser(name, help=help, description=help, epilog=epilog(name, *extra),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="replace an existing output (outputs are written atomically; "
                        "without --force an existing one is refused)")


def _add_dot_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    """The input flags of one dot product (eval, explain)."""
    p.add_argument("--datapath", help="canonical name (e.g. dense-tf32) or alias (tf32); "
                   "`tcspec list` prints them all")
    p.add_argument("--a-format", help=f"A operand format: {OPERAND_FORMATS} "
                   "(instead of --datapath)")
    p.add_argument("--b-format", help="B operand format (default: the A format)")
    p.add_argument("--d-type", choices=("f32", "f16", "s32"), help=f"D type: {D_TYPES}")
    p.add_argument("--saturate", action="store_true", help="kind::i8: saturate the S32 sum")
    p.add_argument("--scaling", choices=("ue8m0", "ue4m3"),
                   help="block scales: ue8m0 (OCP MX) or ue4m3 (NVFP4)")
    p.add_argument("--kind", help=f"instruction kind: {KINDS}")
    p.add_argument("--scale-vec", type=int, choices=(1, 2, 4),
                   help="scale bytes per 32-K block: 1, 2 or 4")
    p.add_argument("--a", required=required, metavar="WORDS|@FILE",
                   help="A words in hex, comma- or space-separated (logical K of them), or "
                        "@FILE holding them")
    p.add_argument("--b", required=required, metavar="WORDS|@FILE", help="B words, as --a")
    p.add_argument("--c", default="0x0", metavar="WORD", help="hex C word (default +0)")
    p.add_argument("--scale-a", metavar="BYTES|@FILE", help="hex scale bytes for A")
    p.add_argument("--scale-b", metavar="BYTES|@FILE", help="hex scale bytes for B")
    p.add_argument("--metadata", metavar="WORDS", help="hex sparse metadata word(s); makes "
                   "the datapath sparse (one word is reused for every group of 8 chunks)")
    p.add_argument("--raw-containers", action="store_true",
                   help="pass words whose set bits the format does not read (see the word "
                        "layout below) as the hardware reads them, instead of refusing them")


def _add_hw_parser(sub: argparse._SubParsersAction) -> None:
    """``tcspec hw run|selftest|list|ptx``: the GPU harness."""
    hw = _sub(sub, "hw", "run vector, probe or campaign files on a real GPU")
    cmds = hw.add_subparsers(dest="hw_command", required=True, metavar="HW_COMMAND")
    for name, text in (("run", "every runnable line through the real instruction"),
                       ("selftest", "check every operand layout on this GPU")):
        p = cmds.add_parser(name, help=text)
        if name == "run":
            p.add_argument("files", nargs="+", metavar="FILE.jsonl[.gz]|DIR")
            p.add_argument("--out", required=True, metavar="OBSERVED.jsonl",
                           help="the observed lines (written atomically)")
            p.add_argument("--no-selftest", action="store_true",
                           help="skip the layout self-test of each instruction used")
            _force(p)
        p.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
        p.add_argument("--arch", default="auto", help="sm_NN the device must be (auto)")
        p.add_argument("--instruction", choices=("tcgen05", "wgmma", "mma"),
                       help="only this instruction (default: the newest that runs the line)")
    p = cmds.add_parser("list", help="every instruction form of the table and its datapath")
    p.add_argument("--target", help="one PTX target (sm_80, sm_90a, ...)")
    p.add_argument("--arch", help="the GPU the rows run on (sm_90: the rows it runs, with the "
                   "sm_90 datapaths); default: each row on its own target")
    p = cmds.add_parser("compare", help="a device-plan directory's D words against the "
                        "datapath each row computes on that GPU and every candidate model "
                        "(tcspec/hw/device_plan.py); exit 1 when there are findings")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--markdown", metavar="FILE", help="also write the findings table here")
    p.add_argument("--hardware-words", nargs="?", const="", metavar="FILE",
                   help="write the observed words of the architecture datapaths as a "
                   "hardware-word file (default FILE: ref/vectors/hardware/<gpu>.jsonl)")
    p.add_argument("--gpu", help="the gpu field of those words (default: the device name, "
                   "e.g. H200)")
    p.add_argument("--words-per-harness", type=int, default=256, metavar="N",
                   help="hardware words kept per campaign besides every finding (0: all)")
    _force(p)
    p = cmds.add_parser("ptx", help="write the generated PTX, one file per target")
    p.add_argument("--target", help="one target (default: all)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="directory of the .ptx files (created if needed)")
    _force(p)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tcspec", description="Executable, formal specification of tcgen05.mma arithmetic.",
        epilog="run `tcspec COMMAND --help` for a command's flags and examples.\n\n"
               + exit_status_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _sub(sub, "list", "every catalogued datapath and its validation status")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--candidates", action="store_true",
                   help="the candidate models of SEMANTICS.md section 7 and where they apply")
    p.add_argument("--arch", metavar="ARCH", help="only this architecture's datapaths "
                   "(sm_70 ... sm_120, cdna1..cdna3; sm_100 includes tcgen05)")

    p = _sub(sub, "eval", "one dot product from hex words", LAYOUT_TABLE, datapaths_text())
    _add_dot_arguments(p, required=True)
    p.add_argument("--json", action="store_true", help="print a vector line")

    p = _sub(sub, "explain", "every stage of one dot product, as the spec runs it",
             LAYOUT_TABLE, models_text())
    _add_dot_arguments(p, required=False)
    p.add_argument("--line", metavar="FILE:N", help="explain line N of a vector file instead")
    p.add_argument("--vs", metavar="MODEL", help="side by side with a candidate model "
                   "(SEMANTICS.md section 7; `tcspec list --candidates`)")
    p.add_argument("--svg", metavar="FILE", help="also draw the bit-alignment picture")
    p.add_argument("--json", action="store_true", help="the stages as data")
    _force(p)

    p = _sub(sub, "validate", "replay the frozen B200 words (and reference vectors)")
    p.add_argument("--reference", action="store_true", help="also replay the reference vectors")
    p.add_argument("--verbose", action="store_true", help="list every passing B200 word")
    p.add_argument("--jobs", type=jobs_count, help="processes for the reference files "
                   "(default: the cores)")
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")

    p = _sub(sub, "check", "replay vector files (shared line format, or columnar "
             "directories from `tcspec gen --format npy-dir`)", models_text())
    p.add_argument("files", nargs="+", metavar="FILE.jsonl[.gz]|DIR")
    p.add_argument("--jobs", type=jobs_count, help="processes for a columnar directory "
                   "(default: the cores)")
    p.add_argument("--json", action="store_true", help="machine-readable report on stdout")
    p.add_argument("--dask", metavar="ADDRESS", help="split the check across the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")
    p.add_argument("--model", metavar="NAME",
                   help="check against a candidate model of SEMANTICS.md section 7 "
                        "(default: hardware; see `tcspec list --candidates`)")
    p.add_argument("--explain-first", action="store_true",
                   help="explain the first mismatching line stage by stage, and name the "
                        "candidate model that gives its observed word and where it departs")

    p = _sub(sub, "gen", "generate cases with expected words from the specification",
             datapaths_text())
    p.add_argument("--datapath", required=True, help="canonical name or alias (`tcspec list`)")
    p.add_argument("--cases", type=positive_int("--cases"), required=True,
                   help="rows to generate")
    p.add_argument("--mix", default="raw,finite,edge",
                   help="case categories, row by row in turn (default raw,finite,edge)")
    p.add_argument("--seed", type=int, default=0, help="seed of the case streams (default 0)")
    p.add_argument("--out", required=True, help="FILE.jsonl[.gz], or a directory for npy-dir "
                   "(written atomically; an existing one needs --force). Refused before "
                   "anything is written when its estimated size (exact for npy-dir, from 512 "
                   "sample lines for jsonl) times 1.05 exceeds the free disk there")
    p.add_argument("--format", choices=("jsonl", "npy-dir"), default="jsonl",
                   help="jsonl: the shared line format (default); npy-dir: .npy columns")
    _force(p)
    p.add_argument("--jobs", type=jobs_count, help="processes, a chunk of rows each "
                   "(default: the cores; the file is the same for any count)")
    p.add_argument("--dask", metavar="ADDRESS", help="generate the chunks on the Dask "
                   "cluster at ADDRESS (optional extra `dist`; workers share the paths)")

    p = _sub(sub, "smtlib", "a self-contained SMT-LIB2 script for a datapath")
    p.add_argument("--datapath", required=True, help="canonical name or alias (`tcspec list`)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    _force(p)

    p = _sub(sub, "export", "the specification as an SMT-LIB function library or C99")
    p.add_argument("--lang", required=True, choices=("smtlib", "c"),
                   help="smtlib: SMT-LIB2 define-funs; c: a C99/CUDA header and source")
    p.add_argument("--datapath", action="append", help="repeatable canonical name")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--form", choices=("library", "script"),
                   help="smtlib: define-fun library (default) or one datapath's script")
    p.add_argument("-o", "--output", help="smtlib: a file (default stdout); c: a directory")
    _force(p)

    p = _sub(sub, "bench", "throughput of every lowering side by side (dots/s), "
                       "kernel compile and cache-load times")
    p.add_argument("--datapath", action="append", help="repeatable; default: a representative set")
    p.add_argument("--all", action="store_true", help="every catalogued datapath")
    p.add_argument("--rows", type=positive_int("--rows"), default=20000,
                   help="batch size for the NumPy backend")
    p.add_argument("--scalar-seconds", type=positive_seconds("--scalar-seconds"),
                   default=1.0,
                   help="time budget per scalar measurement")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--markdown", action="store_true",
                   help="the throughput table as Markdown (docs/benchmarks.md)")
    p.add_argument("--api", action="store_true",
                   help="evaluate, gemm and matmul beside the kernel they reach, 1 and 2 cores")
    p.add_argument("--shape", default="512,512,4096", help="--api: the gemm shape M,N,K")
    p.add_argument("--repeats", type=positive_int("--repeats"), default=2,
                   help="--api: runs per figure (best counts)")

    p = _sub(sub, "conform", "every lowering on the same inputs (one-source check)")
    p.add_argument("--datapath", action="append", help="repeatable; default: every datapath")
    p.add_argument("--cases", type=positive_int("--cases"), default=200,
                   help="random cases per datapath")
    p.add_argument("--seed", type=int, default=2026, help="seed of the random cases")
    p.add_argument("--reference", action="store_true",
                   help="also run every reference vector through every lowering")

    p = _sub(sub, "probe", "solver-made inputs on which candidate models differ",
             models_text(), "solver runs print a stderr line at least every 10 s.")
    p.add_argument("--datapath", help="canonical name (e.g. dense-tf32) or alias "
                   "(`tcspec list`); required except with --portability")
    p.add_argument("--model", default="hardware", help="first model (default: hardware; "
                   "models below)")
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
    p.add_argument("--count", type=positive_int("--count"), default=1,
                   help="probes with pairwise different inputs")
    p.add_argument("--minimize", action="store_true",
                   help="fewest active lanes first, then the smallest exponent spread")
    p.add_argument("--seed", type=int, help="diversify: random sign/low bits and lane choice")
    p.add_argument("--out", action="append",
                   help="write the probes here (repeatable; .jsonl/.csv pick the format; "
                        "default: stdout)")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl",
                   help="format of stdout and of an --out without .jsonl/.csv")
    _force(p)
    p.add_argument("--raw-containers", action="store_true",
                   help="accept fixed scale bytes with bits the scale format does not read")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla",
                   help="SMT solver (bitwuzla, z3, cvc5)")
    p.add_argument("--timeout", type=positive_seconds("--timeout"), default=60.0,
                   help="seconds per solver call")
    p.add_argument("--verbose", action="store_true", help="log every solver call to stderr")

    p = _sub(sub, "classify", "which candidate models survive observed words", models_text())
    p.add_argument("file", metavar="OBSERVED.jsonl", help="lines with inputs and `expected`")
    p.add_argument("--candidates", metavar="M1,M2,...", help="default: every candidate")
    p.add_argument("--all", action="store_true", help="list every line that rules a model out")
    p.add_argument("--json", action="store_true", help="machine-readable verdicts on stdout")
    p.add_argument("--arch", action="store_true", help="name the architecture datapaths "
                   "consistent with the observed words (any K they chain to)")

    p = _sub(sub, "equiv", "prove your implementation equal to a datapath for all inputs, "
             "or get the input where it differs",
             "IMPL is FILE.smt2 (a define-fun named impl, or --function NAME, with the\n"
             "parameters of `tcspec export --lang smtlib --datapath D`), FILE.v or FILE.sv\n"
             "(a combinational module impl, or --top NAME, with those input ports and an\n"
             "output d; needs Yosys: the verilog extra), FILE.py:NAME or module:NAME (a\n"
             "Python function NAME(ops, words) over the ops protocol); see docs/equiv.md.\n"
             "Exit status: 0 equal, 1 differs or unknown, 2 bad input.")
    p.add_argument("impl", metavar="IMPL",
                   help="FILE.smt2, FILE.v, FILE.sv, FILE.py:NAME or module:NAME")
    p.add_argument("--datapath", required=True, help="the catalogued datapath (tcspec list)")
    p.add_argument("--function", help="the SMT-LIB function to compare (default: impl)")
    p.add_argument("--top", help="the Verilog top module (default: impl)")
    p.add_argument("--assume", action="append", choices=("finite", "legal-metadata"),
                   help="restrict the inputs (repeatable; printed with every verdict): "
                   "finite (no NaN or Inf word or scale), legal-metadata (sparse selectors "
                   "legal)")
    p.add_argument("--k", type=positive_int("--k"), help="logical K (default: the "
                   "instruction's; any other K is a model of the datapath)")
    p.add_argument("--timeout", type=positive_seconds("--timeout"), default=120.0,
                   help="seconds for the output query (120); the run gets 1.5 x that")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla",
                   help="SMT solver (bitwuzla)")
    p.add_argument("--json", action="store_true", help="the verdict as one JSON object")

    p = _sub(sub, "tour", "a short guided tour of the arithmetic")

    _add_hw_parser(sub)

    p = _sub(sub, "prove", "prove properties for all inputs (the proof matrix)",
             "Second opinions (--second-solver, default auto) re-run every proved query\n"
             "with another solver and often take most of the run (minutes where the first\n"
             "pass takes seconds): --second-solver none skips them. Ctrl-C stops at any\n"
             "phase within seconds; during the second opinions it keeps (prints, and with\n"
             "--report writes) the first-pass verdicts.")
    p.add_argument("--property", help="a property (or several, comma separated; default: all)")
    p.add_argument("--datapath", help="a datapath, a comma list, or shell patterns such as "
                   "'sm_*' (default: each property's required ones)")
    p.add_argument("--k", type=int, help="logical K of the query (default: the hardware K; "
                   "any other K is a model of the datapath). Above K=1024 a row whose formula "
                   "is estimated past 2 GB of memory is announced on stderr with the estimate "
                   "before it is built (about 1.6 KB per node of one traced dot product; "
                   "dense-tf32 needs about 0.13 GB per 1000 K)")
    p.add_argument("--solver", choices=("bitwuzla", "z3", "cvc5"), default="bitwuzla",
                   help="SMT solver (bitwuzla, z3, cvc5)")
    p.add_argument("--timeout", type=positive_seconds("--timeout"), default=120.0,
                   help="seconds per query (120)")
    p.add_argument("--second-solver", default="auto",
                   help="re-run proved queries with this solver: auto (cvc5, then z3), z3, "
                   "cvc5 or none (the second opinions often take most of the time: none "
                   "skips them)")
    p.add_argument("--second-timeout", type=positive_seconds("--second-timeout"),
                   default=30.0,
                   help="seconds per query for the second solver (30)")
    p.add_argument("--jobs", type=jobs_count, default=1, help="rows decided in parallel")
    p.add_argument("--fast", action="store_true", help="the small-K subset the tests run")
    p.add_argument("--report", nargs="?", const=True, metavar="DIR",
                   help="write proofs/REPORT.json and proofs/REPORT.md (replaced atomically), "
                   "or with DIR DIR/REPORT.json and DIR/REPORT.md (DIR is created if missing); "
                   "with --property, --datapath or --k only those rows are re-decided and "
                   "replace theirs in the report (DIR's own, else the package's), every other "
                   "row kept as it was; Ctrl-C during the second opinions still writes the "
                   "first-pass verdicts")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--no-cache", action="store_true",
                   help="decide every row again (by default a row whose key, the hash of its "
                   "traced DAGs, solver and limits, is unchanged reuses the committed verdict)")
    p.add_argument("--all-properties", action="store_true",
                   help="with --datapath: every property that applies, not only the required")
    p.add_argument("--mutants", action="store_true",
                   help="break the spec (proofs/mutants.py) in scratch copies and print which "
                   "rows each breaker kills and keeps (with --report: proofs/MUTANTS.md)")
    p.add_argument("--mutant", action="append", metavar="NAME",
                   help="with --mutants: only this breaker (repeatable)")
    p.add_argument("--arch", help="the per-architecture matrix of this architecture "
                   "(sm_70 ... cdna3; with --report: proofs/arch/REPORT-<arch>.*)")
    p.add_argument("--budget", type=float, default=900.0, action=OnlyWith, needs="--arch",
                   help="with --arch: seconds for the whole matrix; rows not started by "
                   "then are unknown (900)")
    return parser
