"""Proofs per architecture (proofs/arch.py, proofs/chaining.py): the table, the windows,
the statements on the scalar lowering, small rows, and the command line."""

from __future__ import annotations

import random

import pytest

from tcspec.cli import main
from tcspec.proofs import chaining
from tcspec.proofs.arch import (
    PROPERTIES,
    REPRESENTATIVES,
    across_query,
    check_across,
    check_permutation,
    negates,
    select_arch_rows,
    windows,
)
from tcspec.proofs.constants import arch_d_fraction_bits, arch_steps, arch_window_bits
from tcspec.proofs.core import PROVED, WITNESS, Settings, decide
from tcspec.spec.algorithms import ARCH_DATAPATHS
from tcspec.spec.catalog import input_layout, lookup
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def _desc(name: str):
    return lookup(name).descriptor


def test_table_agrees_with_the_spec_parameters() -> None:
    """The proof table (ARCHITECTURES.md) and spec/nvidia.py derive the same F, steps and
    D fraction bits for every NVIDIA fused dot-add (a disagreement is a finding)."""
    checked = 0
    for desc in ARCH_DATAPATHS:
        if desc.algorithm != "fused-dot":
            continue
        assert arch_window_bits(desc) == desc.params.window, desc.name
        assert arch_steps(desc) == desc.params.steps, desc.name
        expected = {"f32-rz": 23, "f32_e8m13-rz": 13, "f16-rne": 10}[desc.params.output]
        assert arch_d_fraction_bits(desc) == expected, desc.name
        checked += 1
    assert checked >= 90
    assert arch_window_bits(_desc("sm_70-mma-m8n8k4-f16-f16-c32-d32")) == 23


def test_windows_by_algorithm() -> None:
    assert windows(_desc("sm_80-mma-m16n8k16-f16-f16-c32-d32"), 16) == [
        list(range(8)), list(range(8, 16))]
    assert windows(_desc("sm_90-mma-m16n8k16-f16-f16-c32-d32"), 16) == [list(range(16))]
    assert windows(_desc("cdna3-mfma-16x16x8-xf32-xf32-c32-d32"), 8) == [[0, 1, 2, 3],
                                                                         [4, 5, 6, 7]]
    fp8 = windows(_desc("cdna3-mfma-32x32x16-e4m3fnuz-e4m3fnuz-c32-d32"), 16)
    assert fp8 == [list(range(0, 16, 2)), list(range(1, 16, 2))]
    assert windows(_desc("cdna1-mfma-16x16x4-f32-f32-c32-d32"), 4) == [[0], [1], [2], [3]]


def test_negation_rules() -> None:
    nvidia, amd = _desc("sm_90-mma-m16n8k16-f16-f16-c32-d32"), _desc(
        "cdna3-mfma-32x32x8-f16-f16-c32-d32")

    def holds(desc, d: int, d2: int) -> bool:
        return bool(negates(SCALAR, desc, SCALAR.const(d, 32), SCALAR.const(d2, 32)).node)

    assert holds(nvidia, 0x3F800000, 0xBF800000) and holds(nvidia, 0, 0)
    assert not holds(nvidia, 0, 0x80000000)
    assert holds(nvidia, 0x7FFFFFFF, 0x7FFFFFFF) and not holds(nvidia, 0x7FFFFFFF, 0xFFFFFFFF)
    assert holds(amd, 0, 0x80000000) and holds(amd, 0x7FC00000, 0xFFC00001)
    assert not holds(amd, 0x3F800000, 0x3F800000)


def _random_words(desc, k: int, rng: random.Random) -> dict[str, int]:
    """Small finite words: exponent fields kept low so no special value appears."""
    out = {}
    for spec in input_layout(desc, k):
        if spec.name == "c":
            out[spec.name] = rng.choice([0, 0x3F800000, 0x40400000, 0xBF000000, 0x00001000])
        else:
            out[spec.name] = rng.getrandbits(spec.width) & 0x3F3F3F3F
    return out


@pytest.mark.parametrize("name, k", [("sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", 4),
                                     ("sm_80-mma-m16n8k16-bf16-bf16-c32-d32", 4),
                                     ("cdna3-mfma-16x16x8-xf32-xf32-c32-d32", 8)])
def test_bounds_hold_on_the_scalar_lowering(name: str, k: int) -> None:
    """The chaining and error statements are false (no violation) on random finite inputs,
    and the witness condition is met by none with a huge shift only when D moves."""
    desc = chaining.model(_desc(name), k)
    rng = random.Random(20)
    query = chaining.chaining_query(desc, k)
    for _ in range(40):
        holds, shown = query.replay(_random_words(desc, k, rng))
        assert not holds, shown


def test_chaining_statement_fails_on_a_wrong_bound() -> None:
    """The violation is able to fail: on inputs where chaining moves D, a bound shrunk to
    zero is violated (and the real bound is not)."""
    desc = chaining.model(_desc("sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32"), 4)
    rng = random.Random(7)
    for _ in range(400):
        words = _random_words(desc, 4, rng)
        holds, shown = chaining.chaining_query(desc, 4).replay(words)
        assert not holds
        if shown["d"] != shown["d_single"]:
            break
    else:
        pytest.fail("no input on which chaining moves D")
    real = chaining.bound_of
    chaining.bound_of = lambda m, *args: m.ops.const(0, m.width)
    try:
        holds, shown = chaining.chaining_query(desc, 4).replay(words)
    finally:
        chaining.bound_of = real
    assert holds, shown


def test_steps_rebuild_the_chained_datapath() -> None:
    for name, k in (("sm_80-mma-m16n8k16-f16-f16-c32-d32", 4),
                    ("cdna3-mfma-16x16x8-xf32-xf32-c32-d32", 8)):
        assert chaining.steps_rebuild(chaining.model(_desc(name), k), k)


def test_permutation_inside_a_window_proves() -> None:
    xf32 = _desc("cdna3-mfma-32x32x4-xf32-xf32-c32-d32")
    assert check_permutation(xf32, 4, FAST).result == PROVED


def test_an_fma_chain_is_not_permutation_invariant() -> None:
    row = check_across(_desc("cdna1-mfma-16x16x4-f32-f32-c32-d32"), 2, FAST)
    assert row.result == WITNESS and row.words["d"] != row.words["d_swapped"]


def test_across_witness_replays_on_split_k() -> None:
    desc = chaining.model(_desc("sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32"), 4)
    outcome = decide(across_query(desc, 4), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS
    assert outcome.words["d"] != outcome.words["d_swapped"]


def test_selection_and_cli_errors(capsys) -> None:
    assert set(REPRESENTATIVES) >= {"sm_70", "sm_80", "sm_89", "sm_90", "sm_120", "cdna3"}
    for arch, names in REPRESENTATIVES.items():
        for name in names:
            assert _desc(name).arch == arch
    rows = select_arch_rows("sm_89")
    assert {r.prop.name for r in rows} >= {"arch-permutation", "chaining-bound"}
    assert len({p.name for p in PROPERTIES}) == len(PROPERTIES)
    assert main(["prove", "--arch", "sm_99"]) == 2
    assert "unknown architecture" in capsys.readouterr().err
    assert main(["prove", "--arch", "sm_80", "--datapath",
                 "sm_90-mma-m16n8k16-f16-f16-c32-d32"]) == 2
    assert "not an sm_80 datapath" in capsys.readouterr().err


@pytest.mark.full
def test_chaining_chain_row_on_fp8_split_k() -> None:
    row = chaining.check_chaining(_desc("sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32"), 2,
                                  Settings(second_solver=None, timeout=300))
    assert row.result == PROVED, row.detail
