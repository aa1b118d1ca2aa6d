"""K-group carry preservation (proofs/carry.py)."""

from __future__ import annotations

import pytest

from tcspec.proofs import carry
from tcspec.proofs.core import WITNESS, Settings, decide
from tcspec.spec.catalog import lookup

NVFP4 = lookup("dense-nvfp4").descriptor
FAST = Settings(second_solver=None, timeout=60)


def test_group_sizes_and_reachable_ends() -> None:
    assert carry.group_size(NVFP4) == 4
    assert carry.reachable_excess(NVFP4) == (3, 3)
    mxf4 = lookup("dense-mxf4").descriptor
    assert carry.group_size(mxf4) == 16 and carry.reachable_excess(mxf4) == (12, 11)


def test_both_ends_are_reached_for_nvfp4() -> None:
    row = carry.check_ends(NVFP4, 64, FAST)
    assert row.result == WITNESS
    names = [lemma["name"] for lemma in row.lemmas]
    assert names == ["same-sign excess 0 (nonzero sum)", "same-sign excess 3",
                     "mixed signs difference 3"]


def test_excess_of_g_minus_1_replays() -> None:
    outcome = decide(carry.end_queries(NVFP4)[1], "bitwuzla", 60)
    assert outcome.result == WITNESS
    difference = outcome.words["group_units"] - outcome.words["per_product_units"]
    assert abs(difference) == carry.group_size(NVFP4) - 1


def test_b200_carry_word_separates_group_from_per_product() -> None:
    """The B200 word nvfp4-k4-product-carry: per-product 0x49FCAFB6, hardware 0x49FCAFB7."""
    words = carry.carry_word_inputs(NVFP4)
    query = carry.differ_query(NVFP4, 64, words, "b200")
    holds, shown = query.replay({})
    assert holds and shown["hardware"] == 0x49FCAFB7 and shown["per_product"] == 0x49FCAFB6
    outcome = decide(query, "bitwuzla", 60)
    assert outcome.result == WITNESS and outcome.words["hardware"] == 0x49FCAFB7


@pytest.mark.full
def test_mxf4_ends() -> None:
    assert carry.check_ends(lookup("dense-mxf4").descriptor, 64, Settings(second_solver=None)
                            ).result == WITNESS
