"""Candidate models (spec/candidates.py, spec/exact.py, spec/twostage.py, spec/mmasim.py).

Each bit-vector candidate is held to its rational counterpart in
ref/oracle.py (SEMANTICS.md section 7) on raw, finite and edge inputs, on
the compiled lowering of its traced DAG; the scalar backend is held to the
compiled one; mma-sim to MMA-Sim's own words; hand cases pin the rules.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tcspec.ref import oracle
from tcspec.ref.batch import NUMPY
from tcspec.ref.compiled import compiled_dot, compiled_model
from tcspec.ref.vectorfiles import FROZEN_FILE, read_vectors
from tcspec.smt.formula import traced
from tcspec.spec.candidates import (
    CANDIDATES,
    HARDWARE,
    build_model,
    candidate_names,
    candidate_table,
    get_candidate,
)
from tcspec.spec.catalog import input_layout, inputs_from, lookup
from tcspec.spec.exact import exact_fixed_point
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tcspec.strategies import dot_words
from tcspec.validate import check_file

MMA_SIM_FILE = FROZEN_FILE.parent / "candidates" / "mma-sim.jsonl"
CLAMPED = ("tf32", "bf16")
UNSCALED = ["dense-tf32", "dense-bf16", "dense-e4m3", "mixed-e2m1-e4m3-f16"]
BLOCK = ["dense-nvfp4", "dense-mx-e4m3", "dense-mxf4"]


def _clamp(desc):
    return -133 if desc.a_format in CLAMPED else None


def _window(**kw):
    return lambda desc, a, b, c, sa, sb: oracle.window_model(
        a, b, c, a_format=desc.a_format, b_format=desc.b_format, d_type=desc.d_type, **kw)


def _clamped_window(**kw):
    return lambda desc, a, b, c, sa, sb: oracle.window_model(
        a, b, c, a_format=desc.a_format, b_format=desc.b_format, d_type=desc.d_type,
        clamp=_clamp(desc), **kw)


def _exact(rounding):
    return lambda desc, a, b, c, sa, sb: oracle.exact_model(
        a, b, c, a_format=desc.a_format, b_format=desc.b_format, d_type=desc.d_type,
        rounding=rounding)


def _two_stage(desc, a, b, c, sa, sb):
    return oracle.two_stage_model(a, b, c, a_format=desc.a_format, b_format=desc.b_format,
                                  d_type=desc.d_type)


def _family(desc):
    return oracle.block_family(desc.kind, desc.scaling) if desc.scaling else None


def _mma_sim(desc, a, b, c, sa, sb):
    return oracle.mma_sim_model(a, b, c, sa, sb, a_format=desc.a_format,
                                b_format=desc.b_format, d_type=desc.d_type,
                                scaling=desc.scaling, family=_family(desc),
                                block=desc.scale_block or 1)


def _block(family):
    return lambda desc, a, b, c, sa, sb: oracle.block_model(
        a, b, c, sa, sb, a_format=desc.a_format, b_format=desc.b_format,
        scaling=desc.scaling, family=family, block=desc.scale_block)


ORACLES = {
    "exact-rne": _exact("rne"),
    "exact-rz": _exact("rz"),
    **{f"window-{w}": _clamped_window(window=w) for w in (23, 24, 26, 27)},
    "window-no-clamp": _window(),
    "window-rne-align": _clamped_window(align="rne"),
    "two-stage": _two_stage,
    "nvfp4-per-product": _block("nvfp4-per-product"),
    "nvfp4-k16": _block("nvfp4-k16"),
    "mma-sim": _mma_sim,
}

PAIRS = [(model, name) for model in ORACLES for name in UNSCALED + BLOCK
         if CANDIDATES[model].applies(lookup(name).descriptor)]


def _split(desc, words):
    k, s = desc.k, desc.scale_count
    return (words[:k], words[k:2 * k], words[2 * k], words[2 * k + 1:2 * k + 1 + s],
            words[2 * k + 1 + s:2 * k + 1 + 2 * s])


def _hold_to_oracle(model, name, category, examples):
    desc = lookup(name).descriptor
    dot = compiled_model(model, desc)

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(words=dot_words(desc, category))
    def check(words):
        assert dot(*words) == ORACLES[model](desc, *_split(desc, words))

    check()


@pytest.mark.parametrize("category", ["raw", "finite", "edge"])
@pytest.mark.parametrize(("model", "name"), PAIRS)
def test_candidate_agrees_with_its_rational_counterpart(model, name, category):
    _hold_to_oracle(model, name, category, 30)


@pytest.mark.full
@pytest.mark.parametrize("category", ["raw", "finite", "edge"])
@pytest.mark.parametrize(("model", "name"), PAIRS)
def test_candidate_agrees_with_its_rational_counterpart_at_length(model, name, category):
    _hold_to_oracle(model, name, category, 600)


@functools.cache
def _random_words(name: str, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    layout = input_layout(lookup(name).descriptor)
    return [[rng.getrandbits(s.width) if s.role != "metadata" else 0x4E4E4E4E for s in layout]
            for _ in range(count)]


@pytest.mark.parametrize("name", ["dense-tf32", "sparse-bf16", "mixed-e2m1-e4m3-f16",
                                  "dense-nvfp4", "sparse-nvfp4", "dense-mx-e5m2"])
def test_scalar_and_numpy_backends_agree_with_the_compiled_dag(name):
    desc = lookup(name).descriptor
    layout = input_layout(desc)
    rows = _random_words(name, 6, 11)
    columns = np.array(rows, dtype=np.uint64)
    for model in candidate_names(desc):
        dot = compiled_model(model, desc)
        want = [dot(*words) for words in rows]
        for words, word in zip(rows, want):
            values = [SCALAR.const(w, s.width) for w, s in zip(words, layout)]
            assert build_model(SCALAR, model, desc, inputs_from(layout, values)).node \
                == word, model
        batch = [NUMPY.input(columns[:, i], s.width) for i, s in enumerate(layout)]
        got = NUMPY.values(build_model(NUMPY, model, desc, inputs_from(layout, batch)), len(rows))
        assert [int(w) for w in got] == want, model


def test_mma_sim_reproduces_mma_sim_and_hardware_keeps_its_words():
    records = list(read_vectors(MMA_SIM_FILE))
    assert len(records) == 124
    for record in records:
        assert compiled_model("mma-sim", record.descriptor)(*record.words) == record.expected
        assert compiled_dot(record.descriptor)(*record.words) == record.raw["hardware_model"]
    assert check_file(MMA_SIM_FILE, model="mma-sim").total.passed == 124


def test_hardware_model_still_passes_every_frozen_word():
    total = check_file(FROZEN_FILE).total
    assert (total.passed, total.cases) == (77, 77)
    assert check_file(FROZEN_FILE, model="window").total.passed == 77


def test_hardware_and_window_are_the_datapath_itself():
    desc = lookup("dense-tf32").descriptor
    assert compiled_model("hardware", desc) is compiled_dot(desc)
    assert compiled_model("Window", desc) is compiled_dot(desc)
    assert traced(desc).model == HARDWARE


# e2m1 words: 0x7 = 6.0, 0xF = -6.0, 0x1 = 0.5; UE4M3 0x7E = 448 (raw 8), 0x01 = 2^-9.
NVFP4_GROUPS = ([0x7, 0xF] + [0] * 14 + [0x1, 0x1, 0x1, 0, 0x1, 0x1, 0x1] + [0] * 41,
                [0x7, 0x7] + [0] * 14 + [0x1] * 8 + [0] * 40, 0,
                [0x7E, 0x01, 0x38, 0x38], [0x7E, 0x01, 0x38, 0x38])


@pytest.mark.parametrize(("model", "word"), [
    ("hardware", 0x36800000),           # q = 2^-19; two K=4 groups of 3 x 2^-20: 1 unit each
    ("nvfp4-k16", 0x36C00000),          # one K=16 group of 6 x 2^-20: 3 units
    ("nvfp4-per-product", 0x00000000),  # each 2^-20 product truncates to 0
    ("mma-sim", 0x36C00000),            # chunk term 6 x 2^-20 at R - 35 = 16 - 35: 3 units
])
def test_nvfp4_product_grouping_by_hand(model, word):
    """Lanes 0 and 1 cancel but set P = 20 and S = 16; block 1 holds 2^-20 products."""
    a, b, c, sa, sb = NVFP4_GROUPS
    desc = lookup("dense-nvfp4").descriptor
    assert compiled_model(model, desc)(*a, *b, c, *sa, *sb) == word


def test_mma_sim_counts_a_zero_times_big_product_in_the_window():
    """0 x 2^127 has exponent -126 + 127 = 1: C = 2^-10 (1 + 2^-23) loses its last bit."""
    desc = lookup("dense-tf32").descriptor
    words = [0] * 8 + [0x7F000000] + [0] * 7 + [0x3A800001]
    assert compiled_model("mma-sim", desc)(*words) == 0x3A800000
    assert compiled_model("hardware", desc)(*words) == 0x3A800001


def test_exact_models_round_once():
    """1 + 2^-24 + 2^-25: RNE rounds up past the tie, RZ truncates, the window truncates."""
    desc = lookup("dense-tf32").descriptor
    one, p24, p25 = 0x3F800000, 0x33800000, 0x33000000
    words = [p24, p25] + [0] * 6 + [one, one] + [0] * 6 + [one]
    assert compiled_model("exact-rne", desc)(*words) == 0x3F800001
    assert compiled_model("exact-rz", desc)(*words) == 0x3F800000
    assert compiled_model("hardware", desc)(*words) == 0x3F800000


def test_two_stage_sums_products_below_cs_window_before_truncating():
    """Seven products of 0.75 units of 2^-15 (C = 2^10 sets the window): the hardware drops
    each; two-stage sums them in their own window first, 5 units, one F32 ulp."""
    desc = lookup("dense-tf32").descriptor
    mid, one, big = 0x37C00000, 0x3F800000, 0x44800000
    words = [mid] * 7 + [0] + [one] * 7 + [0] + [big]
    assert compiled_model("two-stage", desc)(*words) == 0x44800001
    assert compiled_model("hardware", desc)(*words) == 0x44800000


def test_exact_sum_is_wide_enough_for_every_tf32_input():
    fmt = FORMATS["tf32"]
    total = exact_fixed_point(SCALAR, fmt, fmt, FORMATS["f32"], [SCALAR.const(0, 32)] * 8,
                              [SCALAR.const(0, 32)] * 8, SCALAR.const(0, 32))
    assert total.lsb == -272 and total.value.width == 535


def test_applicability_table():
    by_name = {row["name"]: set(row["datapaths"]) for row in candidate_table()}
    assert by_name["window-no-clamp"] == {"dense-tf32", "dense-bf16", "sparse-tf32",
                                          "sparse-bf16"}
    assert by_name["nvfp4-k16"] == by_name["nvfp4-per-product"] == {
        "dense-nvfp4", "dense-mxf4nvf4-4x-ue4m3", "sparse-nvfp4", "sparse-mxf4nvf4-4x-ue4m3"}
    assert "mixed-e2m1-e4m3-f16" in by_name["exact-rne"] and "dense-nvfp4" not in \
        by_name["exact-rne"]
    assert not any(n.startswith(("sparse", "i8")) for n in by_name["mma-sim"])
    assert {"dense-mx-e4m3", "dense-mxf4", "dense-nvfp4", "dense-tf32"} <= by_name["mma-sim"]
    with pytest.raises(ValueError, match="does not apply"):
        get_candidate("nvfp4-k16", lookup("dense-tf32").descriptor)
    with pytest.raises(ValueError, match="unknown model"):
        get_candidate("exact-rn", lookup("dense-tf32").descriptor)


def test_parametric_names_are_parameter_values():
    desc = lookup("dense-bf16").descriptor
    rows = _random_words("dense-bf16", 40, 5)
    assert [compiled_model("window-25", desc)(*r) for r in rows] == \
        [compiled_dot(desc)(*r) for r in rows]
    assert [compiled_model("two-stage-25-25", desc)(*r) for r in rows] == \
        [compiled_model("two-stage", desc)(*r) for r in rows]
    fa = desc.a_format
    for words in rows[:10]:
        a, b, c, _, _ = _split(desc, words)
        assert compiled_model("two-stage-24-27", desc)(*words) == oracle.two_stage_model(
            a, b, c, a_format=fa, product_window=24, c_window=27)
    with pytest.raises(ValueError, match="unknown model 'window-99'"):
        get_candidate("window-99", desc)
