"""Hypothesis strategies of raw words for every format and datapath (SEMANTICS.md section 1).

Each comes in three categories: ``raw`` (any 32-bit word), ``finite`` (the
container decodes finite; junk in ignored bits) and ``edge`` (zeros,
subnormal and normal extremes, one, infinities, NaNs, payloads that
clearing turns into Inf). :func:`dot_inputs` draws every input word of one
dot product of a named datapath (:func:`dot_words` of a descriptor), in
``input_layout`` order::

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

from tcspec.campaign import SCALE_NAN, edge_pool
from tcspec.ref.inputs import UNIT_SCALE
from tcspec.spec.catalog import descriptor_of, input_layout
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat, IntFormat
from tcspec.spec.sparse import LEGAL_SELECTORS

__all__ = ["CATEGORIES", "dot_inputs", "dot_words", "float_words", "int_words",
           "metadata_words", "operand_words", "s32_words", "scale_bytes", "split_inputs"]

CATEGORIES = ("raw", "finite", "edge")

WORD = st.integers(0, (1 << 32) - 1)


def _is_finite(fmt: FloatFormat, word: int) -> bool:
    bits = word & ((1 << fmt.container_bits) - 1)
    exp = (bits >> (fmt.cleared_bits + fmt.frac_bits)) & fmt.exp_max_field
    frac = (bits >> fmt.cleared_bits) & ((1 << fmt.frac_bits) - 1)
    if fmt.specials == "ieee":
        return exp != fmt.exp_max_field
    if fmt.specials == "max_nan":
        return not (exp == fmt.exp_max_field and frac == (1 << fmt.frac_bits) - 1)
    return True


def float_words(fmt: FloatFormat, category: str) -> st.SearchStrategy[int]:
    """32-bit words for ``fmt`` of one category; narrow formats get junk above the container."""
    junk = st.integers(0, (1 << (32 - fmt.container_bits)) - 1) if fmt.container_bits < 32 \
        else st.just(0)
    if category == "raw":
        return WORD
    if category == "finite":
        return WORD.filter(lambda w: _is_finite(fmt, w))
    pool = edge_pool(fmt)
    return st.one_of(
        st.tuples(st.sampled_from(pool), junk).map(
            lambda p: p[0] | (p[1] << fmt.container_bits)),
        WORD.filter(lambda w: _is_finite(fmt, w)),
    )


def int_words(fmt: IntFormat, category: str) -> st.SearchStrategy[int]:
    if category != "edge":
        return WORD
    return st.tuples(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF]),
                     st.integers(0, (1 << 24) - 1)).map(lambda p: p[0] | (p[1] << 8))


def s32_words(category: str) -> st.SearchStrategy[int]:
    if category != "edge":
        return WORD
    return st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FFFFF00, 0x80000100])


def scale_bytes(name: str, category: str) -> st.SearchStrategy[int]:
    """Scale bytes: any byte, any non-NaN byte, or edge bytes (unit, extremes, NaN, tiny)."""
    nan = SCALE_NAN[name]
    if category == "raw":
        return st.integers(0, 255)
    finite = st.integers(0, 255).filter(lambda s: s != nan and not (
        name == "ue4m3" and s & 0x7F == 0x7F))
    if category == "finite":
        return finite
    unit = UNIT_SCALE[name]
    pool = [unit, 0x00, 0x01, nan, unit + 1, unit - 1, unit + 5, unit - 9]
    pool += [0xFE, 0x10, 0xE0] if name == "ue8m0" else [0x7E, 0x08, 0xB8, 0x02]
    return st.one_of(st.sampled_from(pool), finite)


def metadata_words(rule: str) -> st.SearchStrategy[int]:
    """A 32-bit metadata word of eight legal selectors (SEMANTICS.md section 5)."""
    return st.lists(st.sampled_from(LEGAL_SELECTORS[rule]), min_size=8, max_size=8).map(
        lambda nibbles: sum(s << (4 * i) for i, s in enumerate(nibbles)))


def operand_words(name: str, category: str) -> st.SearchStrategy[int]:
    fmt = FORMATS[name]
    if isinstance(fmt, IntFormat):
        return int_words(fmt, category)
    return float_words(fmt, category)


def _lane_pool(name: str, draw: st.DrawFn) -> st.SearchStrategy[int]:
    """A few edge words of ``name`` and their negations: lanes that meet and cancel."""
    pool = draw(st.lists(operand_words(name, "edge"), min_size=1, max_size=4))
    fmt = FORMATS[name]
    if isinstance(fmt, FloatFormat) and fmt.signed:
        pool += [w ^ (1 << (fmt.container_bits - 1)) for w in pool]
    return st.sampled_from(pool)


@st.composite
def dot_words(draw: st.DrawFn, desc: Descriptor, category: str) -> list[int]:
    """Input words for one dot product of ``desc``, in ``input_layout`` order.

    In the ``edge`` category each dot product draws its lanes from a small
    pool of edge words and their negations, so specials, exact cancellations
    and ties meet often.
    """
    if category == "edge" and draw(st.booleans()):
        a_lanes, b_lanes = _lane_pool(desc.a_format, draw), _lane_pool(desc.b_format, draw)
    else:
        a_lanes = operand_words(desc.a_format, category)
        b_lanes = operand_words(desc.b_format, category)
    c_words = s32_words(category) if desc.d_type == "s32" else float_words(
        FORMATS[desc.d_type], category)  # type: ignore[arg-type]
    words = []
    for spec in input_layout(desc):
        if spec.role == "a":
            words.append(draw(a_lanes))
        elif spec.role == "b":
            words.append(draw(b_lanes))
        elif spec.role == "c":
            words.append(draw(c_words))
        elif spec.role in ("scale_a", "scale_b"):
            assert desc.scaling is not None
            words.append(draw(scale_bytes(desc.scaling, category)))
        else:
            assert spec.role == "metadata" and desc.sparse_chunk is not None
            words.append(draw(metadata_words(desc.sparse_chunk[1])))
    return words


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
