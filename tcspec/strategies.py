"""Hypothesis strategies of raw words for every format and datapath (SEMANTICS.md section 1).

Each comes in three categories: ``raw`` (any 32-bit word), ``finite`` (the
container decodes finite; junk in ignored bits) and ``edge`` (zeros,
subnormal and normal extremes, one, infinities, NaNs, payloads that
clearing turns into Inf). :func:`dot_inputs` draws every input word of one
dot product of a named datapath, in ``input_layout`` order::

    from hypothesis import given
    from tcspec import mma_dot
    from tcspec.strategies import dot_inputs, split_inputs

    @given(dot_inputs("dense-tf32", "edge"))
    def test_my_emulator(words):
        a, b, c, scale_a, scale_b, meta = split_inputs("dense-tf32", words)
        assert my_emulator(a, b, c) == mma_dot(a, b, c, a_format="tf32")

Needs hypothesis (``pip install 'tcspec[test]'``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from tcspec.ref.strategies import (
    CATEGORIES,
    dot_words,
    float_words,
    int_words,
    metadata_words,
    operand_words,
    s32_words,
    scale_bytes,
)
from tcspec.spec.catalog import descriptor_of, input_layout

__all__ = ["CATEGORIES", "dot_inputs", "dot_words", "float_words", "int_words",
           "metadata_words", "operand_words", "s32_words", "scale_bytes", "split_inputs"]


def dot_inputs(datapath: str, category: str = "raw") -> st.SearchStrategy[list[int]]:
    """Every input word of one dot product of ``datapath`` (a catalog name), layout order."""
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    return dot_words(descriptor_of(datapath), category)


def split_inputs(datapath: str, words: list[int]) -> tuple[list[int], ...]:
    """``(a, b, [c], scale_a, scale_b, metadata)`` from words in ``input_layout`` order."""
    groups: dict[str, list[int]] = {"a": [], "b": [], "c": [], "scale_a": [], "scale_b": [],
                                    "metadata": []}
    for spec, word in zip(input_layout(descriptor_of(datapath)), words, strict=True):
        groups[spec.role].append(word)
    a, b, c = groups["a"], groups["b"], groups["c"][0]
    return a, b, c, groups["scale_a"], groups["scale_b"], groups["metadata"]
