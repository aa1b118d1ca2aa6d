"""Candidate models of tcgen05 arithmetic, for probes (SEMANTICS.md sections 7 and 10).

Every candidate is a model of one dot product written over the same ``ops``
as the hardware model, so it runs on every backend and lowers to the solver.
Most are parameter values of the landed definitions (``window_dot``'s
``window`` and ``clamp``, :class:`spec.blockscaled.BlockRules`); the rest
are small modules of their own. ``hardware`` is the model of SEMANTICS.md
sections 2-5 on every datapath (``window`` is its alias on the unscaled ones).

A candidate is defined on dense datapaths; on a sparse datapath it runs on
the active operands that the metadata selects (section 5), like the
hardware model. On the architecture datapaths of section 10 ``hardware`` is their own
definition (MMA-Sim's rules until hardware words say otherwise), and ``b200-zeros``,
``b200-clamp`` and ``b200-rules`` put B200's rules beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.blockscaled import NVFP4_RULES, BlockRules, block_scaled_dot
from tcspec.spec.catalog import DotInputs, build_dot, compact_sparse
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.exact import exact_dot
from tcspec.spec.formats import FORMATS, FloatFormat
from tcspec.spec.mmasim import mma_sim_dot
from tcspec.spec.twostage import two_stage_dot
from tcspec.spec.window import WINDOW_BITS, WINDOW_CLAMP, default_clamp, window_dot

DenseModel = Callable[[Ops, Descriptor, DotInputs], BV]
"""A model of a dense datapath: ``(ops, dense descriptor, inputs) -> result word``."""

HARDWARE = "hardware"
NVIDIA_FUSED = ("fused-dot", "fused-dot-block")
NVIDIA_ARCH_PATHS = "NVIDIA fused dot-add datapaths of other architectures (section 10)"
NVFP4_PATHS = "dense-nvfp4, dense-mxf4nvf4-4x-ue4m3 and their sparse siblings"
UNSCALED_FLOAT = "unscaled float datapaths (tf32, bf16, f16, f8f6f4, mixed), F32 and F16 D"
ALIASES = {"window": HARDWARE}


@dataclass(frozen=True)
class Candidate:
    """A named model: where it applies (section 7's table) and its dense definition."""

    name: str
    summary: str
    applies_to: str
    applies: Callable[[Descriptor], bool]
    dense: DenseModel


def is_unscaled_float(desc: Descriptor) -> bool:
    """tf32, bf16, f16, the f8f6f4 formats and their mixed pairs (F32 or F16 D)."""
    return desc.family == "window"


def is_tf32_or_bf16(desc: Descriptor) -> bool:
    return desc.family == "window" and desc.a_format in ("tf32", "bf16")


def _float_formats(desc: Descriptor) -> tuple[FloatFormat, FloatFormat, FloatFormat]:
    fa, fb, fd = FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.d_type]
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fd, FloatFormat)
    return fa, fb, fd


def window_model(window: int = WINDOW_BITS, clamped: bool = True,
                 align_rounding: str = "rz") -> DenseModel:
    """Section 2 with ``window`` fraction bits, with or without the -133 clamp, with terms
    truncated (``"rz"``) or rounded to nearest even (``"rne"``) when aligned."""

    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        fa, fb, fd = _float_formats(desc)
        clamp = default_clamp(fa, fb) if clamped else None
        return window_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c, window=window,
                          clamp=clamp, align_rounding=align_rounding)

    return dense


def exact_model(rounding: str) -> DenseModel:
    """C and every product summed exactly, rounded once to D with ``rounding`` (section 7)."""

    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        fa, fb, fd = _float_formats(desc)
        return exact_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c, rounding=rounding)

    return dense


def two_stage_model(product_window: int = WINDOW_BITS, c_window: int = WINDOW_BITS
                    ) -> DenseModel:
    """Products through their own window, then that sum and C through a second one."""

    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        fa, fb, fd = _float_formats(desc)
        return two_stage_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c,
                             product_window=product_window, c_window=c_window)

    return dense


def is_ue4m3_nvfp4(desc: Descriptor) -> bool:
    """NVFP4 arithmetic: dense-nvfp4, dense-mxf4nvf4-4x-ue4m3 and their sparse siblings."""
    return desc.family == "block" and desc.scaling == "ue4m3"


def block_model(rules: BlockRules) -> DenseModel:
    """Section 4's block-scaled definition with other :class:`BlockRules` values."""

    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        fa, fb, fs = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling])
        assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
        assert isinstance(fs, FloatFormat) and desc.scale_block is not None
        return block_scaled_dot(ops, fa, fb, fs, inputs.a, inputs.b, inputs.c, inputs.scale_a,
                                inputs.scale_b, block=desc.scale_block, rules=rules)

    return dense


def is_nvidia_fused(desc: Descriptor) -> bool:
    """The NVIDIA fused dot-add architecture datapaths (section 10): ``fused-dot`` and
    ``fused-dot-block``."""
    return desc.family == "arch" and desc.algorithm in NVIDIA_FUSED  # type: ignore[attr-defined]


def is_nvidia_fused_tf32_or_bf16(desc: Descriptor) -> bool:
    return is_nvidia_fused(desc) and desc.a_format in ("tf32", "bf16")


def arch_rules_model(**rules: object) -> DenseModel:
    """An architecture datapath's own definition with other parameter values (section 10):
    the B200-derived rules as candidates beside MMA-Sim's."""

    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        changed = replace(desc, params=replace(desc.params, **rules))  # type: ignore[call-arg,attr-defined]
        return build_dot(ops, changed, inputs)

    return dense


def is_dense_float(desc: Descriptor) -> bool:
    """Dense unscaled float and block-scaled datapaths (MMA-Sim models no sparse ones)."""
    return not desc.sparse and desc.family in ("window", "block")


def _everywhere(desc: Descriptor) -> bool:
    return True


def _mma_sim_applies(desc: Descriptor) -> bool:
    return is_dense_float(desc) or is_nvidia_fused(desc)


def _mma_sim_model(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
    """MMA-Sim's tcgen05 model; an architecture datapath's own definition (MMA-Sim's rules)."""
    if desc.family == "arch":
        return build_dot(ops, desc, inputs)
    return mma_sim_dot(ops, desc, inputs)


CANDIDATES: dict[str, Candidate] = {}


def register(candidate: Candidate) -> Candidate:
    CANDIDATES[candidate.name] = candidate
    return candidate


register(Candidate(HARDWARE, "the B200 model of SEMANTICS.md sections 2-5 (on the architecture "
                   "datapaths: their section-10 definition)", "every datapath",
                   _everywhere, build_dot))
register(Candidate("exact-rne", "C + every product summed exactly, rounded once (RNE)",
                   UNSCALED_FLOAT, is_unscaled_float, exact_model("rne")))
register(Candidate("exact-rz", "C + every product summed exactly, truncated once (RZ)",
                   UNSCALED_FLOAT, is_unscaled_float, exact_model("rz")))
for _width in (23, 24, 26, 27):
    register(Candidate(f"window-{_width}", f"section 2 with {_width} window fraction bits",
                       UNSCALED_FLOAT, is_unscaled_float, window_model(_width)))
register(Candidate("window-no-clamp", "section 2 without the -133 clamp of R",
                   "tf32 and bf16 datapaths (elsewhere it equals hardware)", is_tf32_or_bf16,
                   window_model(clamped=False)))
register(Candidate("window-rne-align", "section 2 with each term rounded to nearest even "
                   "when aligned", UNSCALED_FLOAT, is_unscaled_float,
                   window_model(align_rounding="rne")))
register(Candidate("two-stage", "products through a 25-bit window, then their sum and C "
                   "through another (both truncating)", UNSCALED_FLOAT,
                   is_unscaled_float, two_stage_model()))
register(Candidate("nvfp4-per-product", "NVFP4 with products truncated one by one",
                   NVFP4_PATHS, is_ue4m3_nvfp4,
                   block_model(replace(NVFP4_RULES, product_group=1))))
register(Candidate("nvfp4-k16", "NVFP4 with exact product groups of 16 instead of 4",
                   NVFP4_PATHS, is_ue4m3_nvfp4,
                   block_model(replace(NVFP4_RULES, product_group=16))))
register(Candidate("b200-zeros", "an architecture's fused dot-add with B200's rule: zero terms "
                   "left out of the window maximum", NVIDIA_ARCH_PATHS, is_nvidia_fused,
                   arch_rules_model(zeros_in_max=False)))
register(Candidate("b200-clamp", "an architecture's fused dot-add with B200's -133 clamp of R",
                   "tf32 and bf16 " + NVIDIA_ARCH_PATHS, is_nvidia_fused_tf32_or_bf16,
                   arch_rules_model(clamp=WINDOW_CLAMP)))
register(Candidate("b200-rules", "an architecture's fused dot-add with both B200 rules (zeros "
                   "out of the maximum, the -133 clamp)", "tf32 and bf16 " + NVIDIA_ARCH_PATHS,
                   is_nvidia_fused_tf32_or_bf16,
                   arch_rules_model(zeros_in_max=False, clamp=WINDOW_CLAMP)))
register(Candidate("mma-sim", "the published MMA-Sim model (microsoft/MMA-Sim @c785138)",
                   "every dense float and block-scaled datapath (unscaled, MXF8F6F4, MXF4, "
                   "MXF4NVF4, NVFP4); on the NVIDIA architecture datapaths of section 10 it "
                   "is their definition", _mma_sim_applies, _mma_sim_model))


def candidate_names(desc: Descriptor | None = None) -> list[str]:
    """Every candidate name, or those that apply to ``desc``."""
    return [name for name, c in CANDIDATES.items() if desc is None or c.applies(desc)]


def candidate_table() -> list[dict[str, object]]:
    """Every candidate with where it applies: name, applies_to, summary and the catalog
    datapaths it applies to (section 7's table)."""
    from tcspec.spec.catalog import CATALOG

    return [{"name": c.name, "applies_to": c.applies_to, "summary": c.summary,
             "datapaths": [n for n, d in CATALOG.items() if c.applies(d.descriptor)]}
            for c in CANDIDATES.values()]


PARAMETRIC = {
    "window-W": re.compile(r"window-(\d+)"),
    "two-stage-P-C": re.compile(r"two-stage-(\d+)-(\d+)"),
}
"""Parameter families outside the registry: ``window-W`` for any width W (section 2 with W
fraction bits) and ``two-stage-P-C`` (product window P, C window C)."""

WIDTHS = range(2, 64)


def _parametric(key: str) -> Candidate | None:
    """A ``window-W`` or ``two-stage-P-C`` candidate with widths in :data:`WIDTHS`."""
    if match := PARAMETRIC["window-W"].fullmatch(key):
        width = int(match[1])
        if width in WIDTHS:
            return Candidate(key, f"section 2 with {width} window fraction bits",
                             UNSCALED_FLOAT, is_unscaled_float, window_model(width))
    if match := PARAMETRIC["two-stage-P-C"].fullmatch(key):
        product, c = int(match[1]), int(match[2])
        if product in WIDTHS and c in WIDTHS:
            return Candidate(key, f"two-stage with a {product}-bit product window and a "
                             f"{c}-bit C window", UNSCALED_FLOAT, is_unscaled_float,
                             two_stage_model(product, c))
    return None


def candidate_named(name: str) -> Candidate:
    """The candidate called ``name`` (or an alias, or a ``window-W`` / ``two-stage-P-C``
    parameter value); ``ValueError`` naming the known ones."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key in CANDIDATES:
        return CANDIDATES[key]
    candidate = _parametric(key)
    if candidate is None:
        from tcspec.spec.names import did_you_mean

        hint = did_you_mean(name, [*CANDIDATES, *ALIASES])
        raise ValueError(f"unknown model {name!r}{hint}; known: {', '.join(CANDIDATES)}, and "
                         f"{' / '.join(PARAMETRIC)} for widths {WIDTHS.start}.."
                         f"{WIDTHS.stop - 1}")
    return candidate


def get_candidate(name: str, desc: Descriptor) -> Candidate:
    """The candidate called ``name`` (or an alias), checked to apply to ``desc``."""
    candidate = candidate_named(name)
    if not candidate.applies(desc):
        raise ValueError(f"model {candidate.name!r} does not apply to {desc.name} "
                         f"(it applies to {candidate.applies_to})")
    return candidate


def build_model(ops: Ops, name: str, desc: Descriptor, inputs: DotInputs) -> BV:
    """The result word of model ``name`` on ``desc``'s inputs (sparse: on the active lanes)."""
    candidate = get_candidate(name, desc)
    if candidate.name == HARDWARE:
        return build_dot(ops, desc, inputs)
    if desc.sparse:
        desc, inputs = compact_sparse(ops, desc, inputs)
    return candidate.dense(ops, desc, inputs)
