"""tcspec export (tcspec/export.py): the SMT-LIB library in z3, bitwuzla and cvc5; the C reference.

Each exported function is evaluated on the datapath's B200 words, then its
reference vectors, then (for the 21 datapaths with neither) the vectors of
``ref/vectors/ours``. The default suite checks a handful of datapaths on two
vectors each; ``-m full`` checks all 110.
"""

from __future__ import annotations

import ctypes
import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from tcspec.export import C_HEADER, C_SOURCE, c_name, select, smtlib_text, write_c
from tcspec.ours import OURS_DIR, unvectored
from tcspec.ref.vectorfiles import (
    FROZEN_FILE,
    REFERENCE_DIR,
    Record,
    arch_vector_files,
    read_vectors,
)
from tcspec.smt.formula import traced
from tcspec.smt.smtlib import literal
from tcspec.smt.solve import SOLVERS, run_script
from tcspec.spec.algorithms import c_exempt
from tcspec.spec.catalog import CATALOG, input_layout
from tcspec.spec.provenance import semantics_sha256
from tests.limits import SOLVER_LIMIT

HANDFUL = ["dense-tf32", "sparse-nvfp4", "mixed-e2m1-e4m3-f16", "i8-s8-u8-saturate",
           "dense-mx-e4m3-e5m2", "sm_80-mma-m16n8k16-f16-f16-c16-d16"]
"""Float, sparse block-scaled, F16 D, integer, an ``ours``-only datapath, and an Ampere
split-K one (F16 rounding between its two steps; MMA-Sim's vectors)."""

C_FLAGS = ["-std=c99", "-O2", "-Wall", "-Werror"]


def vectors_for(name: str, limit: int) -> list[Record]:
    """B200 words first, then reference vectors, then ours: at most ``limit`` records."""
    found: list[Record] = []
    sources = [FROZEN_FILE, REFERENCE_DIR / f"{name}.jsonl.gz", OURS_DIR / f"{name}.jsonl",
               *[p for n, p in arch_vector_files().items() if n == name]]
    for path in sources:
        if not path.is_file():
            continue
        for record in read_vectors(path):
            assert isinstance(record, Record), record
            if record.datapath == name:
                found.append(record)
            if len(found) == limit:
                return found
    return found


def _query(records: list[Record], flip: bool = False) -> str:
    """Library plus ``(assert (or (distinct (f words) expected) ...))``: unsat iff all agree."""
    descs = list({r.descriptor.name: r.descriptor for r in records}.values())
    terms = []
    for index, record in enumerate(records):
        formula = traced(record.descriptor)
        layout = input_layout(record.descriptor)
        args = " ".join(literal(w, s.width) for w, s in zip(record.words, layout, strict=True))
        expected = record.expected ^ (1 if flip and index == 0 else 0)
        terms.append(f"(distinct ({formula.function_name} {args}) "
                     f"{literal(expected, formula.output.width)})")
        if record.descriptor.sparse:
            meta = [literal(w, s.width) for w, s in zip(record.words, layout)
                    if s.role == "metadata"]
            terms.append(f"(not ({formula.function_name}.legal {' '.join(meta)}))")
    return smtlib_text(descs) + f"(assert (or {' '.join(terms)}))\n(check-sat)\n"


def test_every_datapath_has_vectors_to_check():
    assert len(unvectored()) == 21 + 25  # tcgen05 mixed/F16-D, and the CDNA1/2 trees
    assert all(vectors_for(name, 1) for name in CATALOG)


def test_library_defines_one_function_per_datapath_with_provenance():
    text = smtlib_text(select(["sparse-tf32", "dense-tf32"]))
    assert text.count("(define-fun tcgen05.dense-tf32 ((a0 (_ BitVec 32))") == 1
    assert "(define-fun tcgen05.sparse-tf32.legal ((meta0 (_ BitVec 32))) Bool" in text
    assert text.count("(set-logic QF_BV)") == 1 and "(declare-fun" not in text
    assert text.count(f"sha256 {semantics_sha256()}") == 3
    assert "inputs in order: a0..a7 A words (32 bits), b0..b7 B words (32 bits), c C word" in text
    assert "(let (" in text


def test_script_form_is_the_tcspec_smtlib_script():
    desc = select(["dense-tf32"])
    assert smtlib_text(desc, "script") == traced(desc[0]).smtlib()
    with pytest.raises(ValueError, match="exactly one"):
        smtlib_text(select(["dense-tf32", "dense-bf16"]), "script")
    with pytest.raises(ValueError, match="not both"):
        select(["dense-tf32"], everything=True)


def _check_library(names: list[str], per_datapath: int) -> None:
    records = [r for name in names for r in vectors_for(name, per_datapath)]
    assert len(records) >= len(names)
    for solver in SOLVERS:
        result = run_script(_query(records), solver=solver, timeout=SOLVER_LIMIT)
        assert result.unsat, f"{solver}: {result.describe()} on {names}"


@pytest.mark.parametrize("solver", SOLVERS)
def test_library_functions_agree_with_the_vectors(solver):
    records = [r for name in HANDFUL for r in vectors_for(name, 2)]
    assert run_script(_query(records), solver=solver, timeout=SOLVER_LIMIT).unsat
    assert run_script(_query(records, flip=True), solver=solver, timeout=SOLVER_LIMIT).sat


@pytest.mark.full
@pytest.mark.parametrize("name", list(CATALOG))
def test_full_library_in_three_solvers(name):
    _check_library([name], 12)


# ------------------------------------------------------------------------- C


def _call_args(record: Record) -> list[object]:
    args: list[object] = []
    layout = input_layout(record.descriptor)
    for role, pairs in itertools.groupby(zip(layout, record.words), key=lambda p: p[0].role):
        words = [w for _, w in pairs]
        if role == "c":
            args.append(ctypes.c_uint32(words[0]))
        elif role.startswith("scale"):
            args.append((ctypes.c_uint8 * len(words))(*words))
        else:
            args.append((ctypes.c_uint32 * len(words))(*words))
    return args


def _build_c(names: list[str], directory: Path) -> ctypes.CDLL:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    write_c(select(names), directory)
    library = directory / "libtcspec_tcgen05.so"
    subprocess.run([cc, *C_FLAGS, "-shared", "-fPIC", str(directory / C_SOURCE), "-o",
                    str(library)], check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(library))


def _check_c(library: ctypes.CDLL, names: list[str], per_datapath: int) -> None:
    for name in names:
        desc = CATALOG[name].descriptor
        function = getattr(library, c_name(desc))
        function.restype = ctypes.c_uint32
        records = vectors_for(name, per_datapath)
        assert records
        for record in records:
            assert function(*_call_args(record)) == record.expected, (name, record.line)
        if desc.sparse:
            legal = getattr(library, c_name(desc) + "_legal")
            meta = records[0].words[-desc.metadata_words:]
            assert legal((ctypes.c_uint32 * len(meta))(*meta)) == 1
            assert legal((ctypes.c_uint32 * len(meta))(*[0x0] * len(meta))) == 0


def test_c_reference_compiles_warning_free_and_agrees_with_the_vectors(tmp_path):
    library = _build_c(HANDFUL, tmp_path)
    _check_c(library, HANDFUL, 2)
    header = (tmp_path / C_HEADER).read_text()
    assert ("uint32_t tcspec_dense_tf32(const uint32_t a[8], const uint32_t b[8], uint32_t c);"
            in header)
    assert ("tcspec_sparse_nvfp4(const uint32_t a[128], const uint32_t b[128], uint32_t c, "
            "const uint8_t scale_a[4], const uint8_t scale_b[4], const uint32_t meta[2]);"
            in header)
    assert "int tcspec_sparse_nvfp4_legal(const uint32_t meta[2]);" in header


@pytest.mark.full
def test_full_c_reference(tmp_path):
    names = [n for n, d in CATALOG.items() if not c_exempt(d.descriptor)]
    library = _build_c(names, tmp_path)
    _check_c(library, names, 12)


def test_the_c_export_refuses_64_bit_datapaths_by_name():
    with pytest.raises(ValueError, match="sm_90-mma-m8n8k4-f64-f64-c64-d64"):
        write_c(select(["sm_90-mma-m8n8k4-f64-f64-c64-d64"]), "/nonexistent")


@pytest.mark.full
def test_c_reference_compiles_for_the_device(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    write_c(select(HANDFUL), tmp_path)
    kernel = tmp_path / "kernel.cu"
    kernel.write_text(f'#include "{C_SOURCE}"\n'
                      "__global__ void tf32(const uint32_t *a, const uint32_t *b, uint32_t *d)\n"
                      "{ d[threadIdx.x] = tcspec_dense_tf32(a, b, d[threadIdx.x]); }\n")
    subprocess.run([nvcc, "-c", str(kernel), "-o", str(tmp_path / "kernel.o")], check=True,
                   capture_output=True, text=True, cwd=tmp_path)


def test_export_command(capsys, tmp_path):
    from tcspec.cli import main

    target = tmp_path / "tcgen05.smt2"
    assert main(["export", "--lang", "smtlib", "--datapath", "tf32", "--datapath", "i8-s8-s8-wrap",
                 "-o", str(target)]) == 0
    assert target.read_text().count("(define-fun tcgen05.") == 2
    assert main(["export", "--lang", "c", "--datapath", "dense-tf32", "-o",
                 str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / C_SOURCE).is_file() and (tmp_path / "c" / C_HEADER).is_file()
    capsys.readouterr()
    for argv in (["--lang", "c", "--datapath", "tf32"], ["--lang", "smtlib"],
                 ["--lang", "smtlib", "--all", "--form", "script"],
                 ["--lang", "c", "--datapath", "tf32", "--form", "script", "-o", str(tmp_path)],
                 ["--lang", "smtlib", "--datapath", "nope"],
                 ["--lang", "smtlib", "--datapath", "tf32", "-o", str(tmp_path / "no" / "x")],
                 ["--lang", "c", "--datapath", "tf32", "-o", str(target)]):
        assert main(["export", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("tcspec: error: ") and err.count("\n") == 1
    assert main(["smtlib", "--datapath", "tf32"]) == 0
    assert capsys.readouterr().out == smtlib_text(select(["tf32"]), "script")


def test_translation_validation_example_of_the_readme():
    """Every B lane +0 and C = +0 give +0 for every finite A; an infinite A gives NaN."""
    lanes = " ".join(f"a{i}" for i in range(8))
    claim = "".join(f"(declare-const a{i} (_ BitVec 32))" for i in range(8)) + (
        "(define-fun z () (_ BitVec 32) #x00000000)\n"
        f"(assert (distinct (tcgen05.dense-tf32 {lanes} z z z z z z z z z) z))\n")
    finite = " ".join(f"(distinct ((_ extract 30 23) a{i}) #xff)" for i in range(8))
    library = smtlib_text(select(["dense-tf32"]))
    proved = run_script(library + claim + f"(assert (and {finite}))\n(check-sat)\n",
                        timeout=SOLVER_LIMIT)
    assert proved.unsat, proved.describe()
    refuted = run_script(library + claim + "(check-sat)\n", timeout=SOLVER_LIMIT)
    assert refuted.sat and any((refuted.model[f"a{i}"] >> 23) & 0xFF == 0xFF for i in range(8))
