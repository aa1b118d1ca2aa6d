"""Breakers of the specification: how good the proofs are (issue 16, DESIGN.md "The proof
method").

A breaker is one textual change to one stage of ``spec/`` or, with ``text="rulebook"``, of
the second specification ``proofs/rulebook/`` (issue 30). Before it runs it
declares a counterexample property (a monolithic query at a small K that the
change must falsify, its model replayed on the *mutated* scalar lowering),
the rows it must kill (each must not say ``proved`` on the mutated spec), and
the rows it must keep (a control: the change leaves that property true, so
the row must still prove). A breaker that falsifies nothing any row states is
a control only; one whose counterexample no query finds in time declares
none. Both are listed in :data:`KNOWN_GAPS`.

``equals-reference`` rows (the spec's D word proved equal to the rule book's by the
equivalence engine) catch a change of either text: a breaker that changes some output
word of a datapath declares that datapath's row among its kills, and the kill counts
only when the row is ``refuted`` with input words replayed on both executable sides (the
spec's and the rule book's scalar lowerings give the two different D words the row
shows); ``unknown`` is no kill there. An *equivalent mutant* (``equivalent=True``)
changes no output word: it declares ``equals-reference`` rows among its keeps, and they
must still prove.

Each breaker runs in a scratch copy of the package, in a child process
(:func:`run_breaker`), so the installed specification is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Row = tuple[str, str, int]
"""(property, datapath, K) of the proof matrix."""


SPEC = "spec"
RULEBOOK = "rulebook"
TEXTS = {SPEC: ("spec",), RULEBOOK: ("proofs", "rulebook")}
"""The two texts a breaker may change, and where each sits in the package."""

EQUALS_REFERENCE = "equals-reference"


@dataclass(frozen=True)
class Breaker:
    """One change to ``<text>/<path>`` (``old`` must occur exactly once): ``text`` is
    :data:`SPEC` (``spec/``) or :data:`RULEBOOK` (``proofs/rulebook/``)."""

    name: str
    stage: str
    path: str
    old: str
    new: str
    witness: tuple[str, str, int] | None
    kills: tuple[Row, ...] = ()
    keeps: tuple[Row, ...] = ()
    cheap: bool = False
    words: tuple[tuple[str, int], ...] = ()
    """A counterexample found by hand, replayed on the mutant instead of a solver search (for
    properties whose monolithic query does not finish)."""
    text: str = SPEC
    equivalent: bool = False
    """An equivalent mutant: no output word changes, so its ``equals-reference`` keeps must
    still prove (the engine shows the two texts equal through the edit)."""

    def __post_init__(self) -> None:
        if self.text not in TEXTS:
            raise ValueError(f"breaker {self.name}: unknown text {self.text!r}")


def _bf16(exponent: int, fraction: int) -> int:
    return ((exponent << 7) | fraction) << 16


CLAMP_COUNTEREXAMPLE = (
    *((f"a{i}", _bf16(52, 0x7F)) for i in range(15)), ("a15", _bf16(52, 151 - 128)),
    *((f"b{i}", _bf16(52, 0x01)) for i in range(15)), ("b15", _bf16(52, 217 - 128)),
    ("c", 0))
"""dense-bf16, every product at 2^-150 (top below the clamp): 15 of 255 x 129 and one of
151 x 217, each 127/128 of a 2^-157 quantum above its units, and 4,095 units in all, so the
conversion to a subnormal D also drops 255 of them. Under a -132 clamp the error is 270.875
quanta of 2^-157 and SEMANTICS' bound (q = -158) is 264.5 of them (SEMANTICS.md 2.4)."""


def _zero_lanes(k: int) -> dict[str, int]:
    return {f"{side}{i}": 0 for side in "ab" for i in range(k)}


MXF8F6F4_C_WINDOW_COUNTEREXAMPLE = tuple({
    **_zero_lanes(64), "a0": 0x81, "b0": 0x01, "c": 0x3F800000, "scale_a0": 0x78,
    "scale_b0": 0x7F, "meta0": 0x44444444, "meta1": 0x44444444}.items())
"""sparse-mx-e4m3 at logical K=64, every chunk keeping positions 0 and 1: C = 1.0 and one
product -2^-9 x 2^-9 x 2^-7 = -2^-25 (compacted lane 0), so C dominates (rC = 0 >= P).
SEMANTICS (C window 25, q = -25): 2^25 - 1 units, D = 0x3F7FFFFF. With a C window of 24 the
product truncates to 0 units of 2^-24 and the sparse D is 0x3F800000 (section 4)."""

NVFP4_C_GROUP_COUNTEREXAMPLE = tuple({
    **_zero_lanes(128), "a0": 0x9, "b0": 0x1, "a16": 0x9, "b16": 0x1, "c": 0x47800000,
    "scale_a0": 0x01, "scale_b0": 0x01, "scale_a1": 0x38, "scale_b1": 0x38, "scale_a2": 0x38,
    "scale_b2": 0x38, "scale_a3": 0x38, "scale_b3": 0x38, "meta0": 0x44444444,
    "meta1": 0x44444444}.items())
"""sparse-nvfp4 at logical K=128, every chunk keeping pairs 0 and 1: C = 2^16 (C-dominant,
q = 16 - 35 = -19) and two products -0.5 x 0.5 x 2^-9 x 2^-9 = -2^-20 (half a quantum each)
at compacted lanes 0 and 8, one K=16 block. SEMANTICS sums the block exactly: -1 unit,
D = 0x477FFFFF. In C-dominant groups of 8 each half unit truncates to 0: D = 0x47800000."""


BREAKERS = (
    Breaker("e2m1-container-5", "decode (sign bit)", "formats.py",
            'FloatFormat("e2m1", 2, 1, 1, 4, specials="none")',
            'FloatFormat("e2m1", 2, 1, 1, 5, specials="none")',
            ("sign-symmetry", "dense-e2m1", 2),
            kills=(("sign-symmetry", "dense-e2m1", 32), ("sign-symmetry", "dense-nvfp4", 64),
                   ("equals-reference", "dense-e2m1", 32),
                   ("ignores-unread-bits", "dense-e2m1", 32)),
            keeps=(("ignores-unread-bits", "dense-e4m3", 32),), cheap=True),
    Breaker("bf16-bias-126", "decode (bias)", "formats.py",
            'FloatFormat("bf16", 8, 7, 127, 32, cleared_bits=16)',
            'FloatFormat("bf16", 8, 7, 126, 32, cleared_bits=16)',
            ("single-lane-is-rz-product", "dense-bf16", 2),
            kills=(("single-lane-is-rz-product", "dense-bf16", 16),
                   ("error-bound", "dense-bf16", 16), ("equals-reference", "dense-bf16", 16)),
            keeps=(("ignores-unread-bits", "dense-bf16", 16),), cheap=True),
    Breaker("exponent-below-max-special", "decode (specials)", "formats.py",
            "    exp_is_max = ops.eq(exp, fmt.exp_max_field)\n",
            "    exp_is_max = ops.or_(ops.eq(exp, fmt.exp_max_field),\n"
            "                         ops.eq(exp, fmt.exp_max_field - 1))\n",
            ("single-lane-is-rz-product", "dense-tf32", 2),
            kills=(("single-lane-is-rz-product", "dense-tf32", 8),
                   ("equals-reference", "dense-tf32", 8)),
            keeps=(("ignores-unread-bits", "dense-tf32", 8),), cheap=True),
    Breaker("nvfp4-c-dominant-groups-of-8", "C-dominant group size", "blockscaled.py",
            "product_group=4, c_dominant_group=16)",
            "product_group=4, c_dominant_group=8)",
            ("sparse-masking", "sparse-nvfp4", 128),
            kills=(("sparse-masking", "sparse-nvfp4", 128),
                   ("equals-reference", "dense-nvfp4", 64)),
            keeps=(("sparse-non-interference", "sparse-nvfp4", 128),),
            words=NVFP4_C_GROUP_COUNTEREXAMPLE),
    Breaker("mxf8f6f4-c-window-24", "C window", "blockscaled.py",
            "MXF8F6F4_RULES = BlockRules(product_window=25, scale_window=None, c_window=25,",
            "MXF8F6F4_RULES = BlockRules(product_window=25, scale_window=None, c_window=24,",
            ("sparse-masking", "sparse-mx-e4m3", 64),
            kills=(("sparse-masking", "sparse-mx-e4m3", 64),
                   ("equals-reference", "dense-mx-e4m3", 32)),
            keeps=(("sparse-non-interference", "sparse-mx-e4m3", 64),),
            words=MXF8F6F4_C_WINDOW_COUNTEREXAMPLE),
    Breaker("window-drops-lane-0", "window exponent", "accumulate.py",
            "    top, present = max_raw(ops, terms)\n",
            "    top, present = max_raw(ops, terms[1:])\n",
            ("sign-symmetry", "dense-tf32", 2),
            kills=(("sign-symmetry", "dense-tf32", 8), ("permutation", "dense-tf32", 8),
                   ("sparse-masking", "sparse-tf32", 16), ("error-bound", "dense-tf32", 8)),
            keeps=(("sparse-non-interference", "sparse-tf32", 16),), cheap=True),
    Breaker("align-floors-negatives", "alignment", "accumulate.py",
            "    return ops.ite(negative, ops.neg(magnitude), magnitude)\n",
            "    return ops.ite(negative, ops.sub(ops.neg(magnitude), 1), magnitude)\n",
            ("sign-symmetry", "dense-tf32", 2),
            kills=(("sign-symmetry", "dense-tf32", 8), ("sign-symmetry", "dense-nvfp4", 64),
                   ("sign-symmetry", "dense-mx-e4m3", 32), ("k-group-carry", "dense-nvfp4", 64)),
            keeps=(("permutation", "dense-tf32", 8),)),
    Breaker("group-sum-drops-abs", "exact group sum", "blockscaled.py",
            "    magnitude = ops.abs_signed(total)\n",
            "    magnitude = total\n",
            ("sign-symmetry", "dense-nvfp4", 16),
            kills=(("sign-symmetry", "dense-nvfp4", 64), ("k-group-carry", "dense-nvfp4", 64)),
            keeps=(("sparse-non-interference", "sparse-nvfp4", 128),)),
    Breaker("exact-sum-drops-first-unit", "exact sum", "accumulate.py",
            "    return ops.sum([ops.sext(u, width) for u in units])\n",
            "    return ops.sum([ops.sext(u, width) for u in units[1:]])\n",
            ("permutation", "dense-tf32", 2),
            kills=(("permutation", "dense-tf32", 8), ("sparse-masking", "sparse-tf32", 16),
                   ("error-bound", "dense-tf32", 8)),
            keeps=(("sparse-non-interference", "sparse-tf32", 16),), cheap=True),
    Breaker("tf32-clears-12-bits", "decode", "formats.py",
            'FloatFormat("tf32", 8, 10, 127, 32, cleared_bits=13)',
            'FloatFormat("tf32", 8, 10, 127, 32, cleared_bits=12)',
            ("tf32-ignores-low-bits", "dense-tf32", 2),
            kills=(("tf32-ignores-low-bits", "dense-tf32", 8), ("error-bound", "dense-tf32", 8),
                   ("ignores-unread-bits", "dense-tf32", 8)),
            keeps=(("permutation", "dense-tf32", 8), ("sparse-masking", "sparse-tf32", 16))),
    Breaker("noncanonical-nan", "specials", "specials.py",
            "    return (1 << (fmt.exp_bits + fmt.frac_bits)) - 1\n",
            "    return 1 << (fmt.exp_bits + fmt.frac_bits - 1) | (((1 << fmt.exp_bits) - 1)"
            " << fmt.frac_bits)\n",
            ("sign-symmetry", "dense-tf32", 2),
            kills=(("sign-symmetry", "dense-tf32", 8),),
            keeps=(("permutation", "dense-tf32", 8), ("error-bound", "dense-tf32", 8))),
    Breaker("product-sets-low-bit", "exact product", "accumulate.py",
            "        mag=ops.mul_wide(x.mag, y.mag),\n",
            "        mag=ops.mul_wide(x.mag, ops.bvor(y.mag, 1)),\n",
            ("single-lane-is-rz-product", "dense-tf32", 2),
            kills=(("single-lane-is-rz-product", "dense-tf32", 8),
                   ("error-bound", "dense-e4m3", 32)),
            keeps=(("permutation", "dense-tf32", 8),)),
    Breaker("sparse-0x4-keeps-upper", "sparse selection", "sparse.py",
            "        return [ops.ite(ops.eq(selector, 0xE), chunk[1], chunk[0])]\n",
            "        return [ops.ite(ops.eq(selector, 0x4), chunk[1], chunk[0])]\n",
            ("sparse-non-interference", "sparse-tf32", 4),
            kills=(("sparse-non-interference", "sparse-tf32", 16),
                   ("sparse-masking", "sparse-tf32", 16), ("error-bound", "sparse-tf32", 16)),
            keeps=(("permutation", "dense-tf32", 8),)),
    Breaker("sparse-pairs-high-odd-reversed", "sparse selection (FP4 pairs)", "sparse.py",
            "            _pick(ops, high, evens), _pick(ops, high, odds)]\n",
            "            _pick(ops, high, evens), _pick(ops, high, odds[::-1])]\n",
            None,
            kills=(("sparse-masking", "sparse-nvfp4", 128),
                   ("sparse-non-interference", "sparse-nvfp4", 128)),
            keeps=(("sparse-non-interference", "sparse-tf32", 16),)),
    Breaker("sparse-pairs-high-swapped", "sparse selection (FP4 pairs)", "sparse.py",
            "            _pick(ops, high, evens), _pick(ops, high, odds)]\n",
            "            _pick(ops, high, odds), _pick(ops, high, evens)]\n",
            None,
            keeps=(("sparse-masking", "sparse-nvfp4", 128),
                   ("sparse-non-interference", "sparse-nvfp4", 128))),
    Breaker("nvfp4-groups-of-2", "group size", "blockscaled.py",
            "product_group=4, c_dominant_group=16)",
            "product_group=2, c_dominant_group=16)",
            None,
            kills=(("permutation", "dense-nvfp4", 64), ("k-group-carry", "dense-nvfp4", 64)),
            keeps=(("sparse-non-interference", "sparse-nvfp4", 128),)),
    Breaker("mxf4-groups-of-8", "group size", "blockscaled.py",
            "product_group=16, c_dominant_group=16, group_c_merge=True",
            "product_group=8, c_dominant_group=16, group_c_merge=True",
            None,
            kills=(("permutation", "dense-mxf4", 64), ("k-group-carry", "dense-mxf4", 64)),
            keeps=(("sparse-non-interference", "sparse-mxf4", 128),)),
    Breaker("window-26-bits", "window width", "window.py",
            "WINDOW_BITS = 25\n", "WINDOW_BITS = 26\n", None,
            keeps=(("sign-symmetry", "dense-tf32", 8), ("permutation", "dense-tf32", 8))),
    Breaker("clamp-minus-132", "window clamp", "window.py",
            "WINDOW_CLAMP = -133\n", "WINDOW_CLAMP = -132\n",
            ("error-bound", "dense-bf16", 16),
            kills=(("error-bound", "dense-bf16", 16),),
            keeps=(("ignores-unread-bits", "dense-bf16", 16),), words=CLAMP_COUNTEREXAMPLE),
    Breaker("f16-d-truncates", "F16 D rounding", "convert.py",
            '    if rounding == "rz":\n', '    if rounding in ("rz", "rne"):\n',
            ("error-bound", "mixed-e4m3-e4m3-f16", 2),
            kills=(("error-bound", "mixed-e4m3-e4m3-f16", 32),
                   ("equals-reference", "mixed-e4m3-e4m3-f16", 32)),
            keeps=(("error-bound", "dense-e4m3", 32),)),
    Breaker("last-group-coarse", "K-group truncation (last group)", "blockscaled.py",
            "    units_p = [merged_units(g, q_p) for g in groups[rules.product_group]]\n",
            "    units_p = [merged_units(g, q_p) for g in groups[rules.product_group]]\n"
            "    units_p[-1] = ops.shl(align_group(ops, groups[rules.product_group][-1],\n"
            "                                      ops.add(q_p, 1), window_bound), 1)\n",
            None,
            kills=(("k-group-carry", "dense-mxf4nvf4-4x", 64),),
            keeps=(("ignores-unread-bits", "dense-mxf4nvf4-4x", 64),)),
    Breaker("mxf4-no-c-merge", "C merge", "blockscaled.py",
            "product_group=16, c_dominant_group=16, group_c_merge=True",
            "product_group=16, c_dominant_group=16, group_c_merge=False", None,
            kills=(("sparse-masking", "sparse-mxf4", 128),),
            keeps=(("permutation", "dense-mxf4", 64),)),
)

ARCH_BREAKERS = (
    Breaker("split-k-quarter-steps", "split-K steps", "fused_dot.py",
            "    per = desc.k // desc.params.steps\n",
            "    per = desc.k // (2 * desc.params.steps) if desc.params.steps > 1 else desc.k\n",
            ("arch-permutation", "sm_80-mma-m16n8k16-f16-f16-c32-d32", 4),
            kills=(("arch-permutation", "sm_80-mma-m16n8k16-f16-f16-c32-d32", 16),
                   ("equals-reference", "sm_80-mma-m16n8k8-tf32-tf32-c32-d32", 8),
                   ("equals-reference", "sm_80-mma-m16n8k16-f16-f16-c32-d32", 16),
                   ("equals-reference", "sm_89-mma-m16n8k32-e5m2-e5m2-c32-d32", 32)),
            keeps=(("arch-permutation", "sm_90-mma-m16n8k16-f16-f16-c32-d32", 16),)),
    Breaker("cdna3-xf32-groups-of-2", "CDNA3 group size", "cdna3.py",
            "        return 4\n", "        return 2\n",
            ("arch-permutation", "cdna3-mfma-16x16x8-xf32-xf32-c32-d32", 8),
            kills=(("arch-permutation", "cdna3-mfma-16x16x8-xf32-xf32-c32-d32", 8),),
            keeps=(("arch-permutation", "cdna3-mfma-32x32x8-f16-f16-c32-d32", 8),)),
    Breaker("arch-align-floors-negatives", "alignment (MMA-Sim window)", "accumulate.py",
            "    return ops.ite(negative, ops.neg(magnitude), magnitude)\n",
            "    return ops.ite(negative, ops.sub(ops.neg(magnitude), 1), magnitude)\n",
            ("arch-sign-symmetry", "sm_75-mma-m16n8k8-f16-f16-c32-d32", 1),
            kills=(("arch-sign-symmetry", "sm_75-mma-m16n8k8-f16-f16-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_70-mma-m8n8k4-f16-f16-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_70-mma-m8n8k4-f16-f16-c16-d16", 2),
                   ("arch-sign-symmetry", "sm_80-mma-m16n8k8-bf16-bf16-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_90-mma-m16n8k16-f16-f16-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_100-mma-m16n8k8-tf32-tf32-c32-d32", 2),
                   ("arch-sign-symmetry", "sm_120-mma-m16n8k32-e4m3-e4m3-c32-d32", 2),
                   ("arch-error-bound", "sm_70-mma-m8n8k4-f16-f16-c32-d32", 1),
                   ("error-bound", "sm_70-mma-m8n8k4-f16-f16-c32-d32", 4)),
            keeps=(("arch-permutation", "sm_75-mma-m16n8k8-f16-f16-c32-d32", 8),)),
    Breaker("arch-exact-sum-drops-first-unit", "exact sum (MMA-Sim window)", "accumulate.py",
            "    return ops.sum([ops.sext(u, width) for u in units])\n",
            "    return ops.sum([ops.sext(u, width) for u in units[1:]])\n",
            ("arch-permutation", "sm_90-mma-m16n8k16-f16-f16-c32-d32", 4),
            kills=(("arch-permutation", "sm_90-mma-m16n8k16-f16-f16-c32-d32", 16),
                   ("arch-permutation", "sm_70-mma-m8n8k4-f16-f16-c16-d16", 4),
                   ("arch-permutation",
                    "sm_120-mma_block_scale-m16n8k32-block32-e4m3-e4m3-c32-d32-ue8m0", 32),
                   ("arch-permutation", "sm_70-mma-m8n8k4-f16-f16-c32-d32", 4),
                   ("arch-permutation", "sm_75-mma-m16n8k8-f16-f16-c32-d32", 8),
                   ("arch-permutation", "sm_80-mma-m16n8k8-bf16-bf16-c32-d32", 8),
                   ("arch-permutation", "sm_80-mma-m16n8k16-f16-f16-c32-d32", 16),
                   ("arch-permutation", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 16),
                   ("arch-permutation", "sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", 32),
                   ("arch-permutation", "sm_89-mma-m16n8k32-e5m2-e5m2-c16-d16", 32),
                   ("arch-permutation", "sm_90-wgmma-m64n8k32-e4m3-e4m3-c32-d32", 32),
                   ("arch-permutation", "sm_100-mma-m16n8k8-tf32-tf32-c32-d32", 8),
                   ("arch-permutation", "sm_120-mma-m16n8k32-e4m3-e4m3-c32-d32", 32),
                   ("arch-permutation", "cdna3-mfma-32x32x8-f16-f16-c32-d32", 8),
                   ("arch-permutation", "cdna3-mfma-32x32x16-e4m3fnuz-e4m3fnuz-c32-d32", 16))),
    Breaker("fp8-window-12-bits", "window width (Ada/Hopper fp8)", "nvidia.py",
            "FP8_WINDOW_BITS = 13\n", "FP8_WINDOW_BITS = 12\n",
            ("arch-error-bound", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 1),
            kills=(("arch-error-bound", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 1),
                   ("chaining-bound", "sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", 2),
                   ("error-bound", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 16),
                   ("error-bound", "sm_90-wgmma-m64n8k32-e4m3-e4m3-c32-d32", 32)),
            keeps=(("arch-permutation", "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", 16),)),
)
"""Breakers of the architecture datapaths (issue 20 part 4): each breaks the stage a proved
row of ``tcspec prove --arch`` relies on (proofs/arch/BREAKERS.md)."""


def _er(datapath: str, k: int) -> Row:
    """The ``equals-reference`` row of ``datapath`` (at the instruction's K)."""
    return (EQUALS_REFERENCE, datapath, k)


RULEBOOK_BREAKERS = (
    Breaker("rb-window-24", "window width (rule book 2.4)", "window.py",
            "WINDOW_FRACTION_BITS = 25\n", "WINDOW_FRACTION_BITS = 24\n", None,
            kills=(_er("dense-tf32", 8),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-window-floors-negatives", "truncation direction (rule book 2.5)", "window.py",
            "    return ops.ite(negative, ops.neg(mag), mag)\n",
            "    return ops.ite(negative, ops.sub(ops.neg(mag), 1), mag)\n", None,
            kills=(_er("dense-tf32", 8),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-clamp-minus-132", "window clamp (rule book 2.4)", "window.py",
            "CLAMP_R = -133\n", "CLAMP_R = -132\n", None,
            kills=(_er("dense-tf32", 8),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-rz-zero-keeps-sign", "zero rule (rule book 2.7)", "rounding.py",
            'F32_RZ = Destination("f32-rz", dfmt("f32"), 8, 24, 127, 0, RZ, POSITIVE_ZERO)\n',
            'F32_RZ = Destination("f32-rz", dfmt("f32"), 8, 24, 127, 0, RZ, SIGNED_ZERO)\n',
            None, kills=(_er("dense-tf32", 8),), keeps=(_er("i8-s8-s8-wrap", 32),),
            text=RULEBOOK),
    Breaker("rb-inf-times-zero-one-sided", "NaN/Inf rule (rule book 2.2)", "window.py",
            "    inf_times_zero = (a.inf & b.zero) | (a.zero & b.inf)\n",
            "    inf_times_zero = a.inf & b.zero\n", None,
            kills=(_er("dense-tf32", 8),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-rne-ties-down", "F16-D RNE ties (rule book 2.7, 11.1)", "rounding.py",
            "        round_up = guard & (sticky | odd)\n",
            "        round_up = guard & sticky\n", None,
            kills=(_er("mixed-f16-f16-f16", 16), _er("cdna1-mfma-32x32x1-f32-f32-c32-d32", 1)),
            keeps=(_er("dense-tf32", 8),), text=RULEBOOK),
    Breaker("rb-s8-read-unsigned", "integer byte reading (rule book 3)", "integer.py",
            "        return ops.sext(byte, BYTE_BITS)\n",
            "        return ops.zext(byte, BYTE_BITS)\n", None,
            kills=(_er("i8-s8-s8-wrap", 32), _er("i8-u8-s8-saturate", 32)),
            keeps=(_er("i8-u8-u8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-saturate-wraps", "integer saturation (rule book 3)", "integer.py",
            "SUM_BITS = 33\n", "SUM_BITS = 32\n", None,
            kills=(_er("i8-u8-u8-saturate", 32), _er("i8-s8-s8-saturate", 32)),
            keeps=(_er("i8-u8-u8-wrap", 32), _er("i8-s8-s8-wrap", 32)), text=RULEBOOK),
    Breaker("rb-mx-window-24", "MXF8F6F4 window (rule book 4)", "block.py",
            "MX_WINDOW_FRACTION_BITS = 25\n", "MX_WINDOW_FRACTION_BITS = 24\n", None,
            kills=(_er("dense-mx-e4m3", 32), _er("dense-mx-e2m1", 32)),
            keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-scale-floor-36", "scale floor (rule book 4)", "block.py",
            "SCALE_FLOOR_FRACTION_BITS = 35\n", "SCALE_FLOOR_FRACTION_BITS = 36\n", None,
            kills=(_er("dense-mxf4", 64),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-mxf4-groups-of-8", "K-group size (rule book 4)", "block.py",
            "MXF4_GROUP = 16\n", "MXF4_GROUP = 8\n", None,
            kills=(_er("dense-mxf4", 64),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-c-dominant-groups-of-8", "C-dominant group size (rule book 4)", "block.py",
            "C_DOMINANT_GROUP = 16\n", "C_DOMINANT_GROUP = 8\n", None,
            kills=(_er("dense-nvfp4", 64),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-mxf4-merge-strict", "C merge (rule book 4)", "block.py",
            "    applies = group.nonzero & c.nonzero & ops.sge(c.r, group.g)\n",
            "    applies = group.nonzero & c.nonzero & ops.sgt(c.r, group.g)\n", None,
            kills=(_er("dense-mxf4", 64),), keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-tf32-selectors-swapped", "sparse lane selection (rule book 5)", "sparse.py",
            "        upper = ops.eq(sel, ONE_OF_TWO_UPPER)\n",
            "        upper = ops.eq(sel, ONE_OF_TWO_LOWER)\n", None,
            kills=(_er("sparse-tf32", 16),), keeps=(_er("dense-tf32", 8),), text=RULEBOOK),
    Breaker("rb-volta-window-24", "fused-dot F (rule book 10.5)", "nvidia.py",
            '    ("sm_70", "mma", "m8n8k4", "f16", None): _p(23, cite=_VOLTA),\n',
            '    ("sm_70", "mma", "m8n8k4", "f16", None): _p(24, cite=_VOLTA),\n', None,
            kills=(_er("sm_70-mma-m8n8k4-f16-f16-c32-d32", 4),),
            keeps=(_er("sm_75-mma-m8n8k4-f16-f16-c32-d32", 4),), text=RULEBOOK),
    Breaker("rb-pairwise-bf16-groups-of-4", "pairwise group size (rule book 11.4)",
            "pairwise.py", 'GROUPS = {"f16": 4, "bf16": 2}\n', 'GROUPS = {"f16": 4, "bf16": 4}\n',
            None, kills=(_er("cdna1-mfma-32x32x4-bf16-bf16-c32-d32", 4),),
            keeps=(_er("i8-s8-s8-wrap", 32),), text=RULEBOOK),
    Breaker("rb-fma-drops-sticky", "FMA-chain rounding (rule book 11.1)", "fma.py",
            "    right = ops.bvor(kept, ops.bool_to_bv(lost, width))\n",
            "    right = kept\n", None,
            kills=(_er("cdna1-mfma-32x32x1-f32-f32-c32-d32", 1),),
            keeps=(_er("sm_70-mma-m8n8k4-f16-f16-c32-d32", 4),), text=RULEBOOK),
)
"""Breakers of the second specification (issue 30): each changes the output of the
datapaths it names, so their ``equals-reference`` rows must be refuted with replayed
words; each keeps a row of a family it does not touch."""

CHAIN_BREAKERS = (
    Breaker("fma-chain-reversed", "FMA chain order (11.1)", "fma_chain.py",
            "    for k, (x, y) in enumerate(zip(a, b)):\n",
            "    for k, (x, y) in enumerate(zip(a[::-1], b[::-1])):\n", None,
            kills=(_er("sm_80-mma-m8n8k4-f64-f64-c64-d64", 4),
                   _er("cdna1-mfma-32x32x2-f32-f32-c32-d32", 2)),
            keeps=(_er("i8-s8-s8-wrap", 32),)),
    Breaker("fma-negative-term-drops-sticky", "FMA-chain rounding of negative terms (11.1)",
            "fma_chain.py",
            "        halves = ops.add(ops.shl(kept, 1), ops.bool_to_bv(sticky, width))\n",
            "        halves = ops.add(ops.shl(kept, 1), "
            "ops.bool_to_bv(ops.and_(sticky, ops.not_(negative)), width))\n", None,
            kills=(("sign-symmetry", "cdna2-mfma-32x32x2-f32-f32-c32-d32", 2),
                   _er("cdna2-mfma-32x32x2-f32-f32-c32-d32", 2)),
            keeps=(_er("i8-s8-s8-wrap", 32),)),
    Breaker("pairwise-bf16-groups-of-1", "pairwise group size (11.4)", "pairwise.py",
            'group = 4 if a_format == "f16" or one_k else 2\n',
            'group = 4 if a_format == "f16" or one_k else 1\n', None,
            kills=(_er("cdna1-mfma-4x4x2-bf16-bf16-c32-d32", 2),
                   _er("cdna1-mfma-32x32x4-bf16-bf16-c32-d32", 4)),
            keeps=(_er("i8-s8-s8-wrap", 32),)),
    Breaker("pairwise-leaf-adds-minus-zero", "pairwise leaf zero sign (11.4)", "pairwise.py",
            "fma_word(ops, F32, a[0], b[0], ops.const(0, 32))",
            "fma_word(ops, F32, a[0], b[0], ops.const(SIGN, 32))", None,
            kills=(_er("cdna1-mfma-4x4x2-bf16-bf16-c32-d32", 2),),
            keeps=(_er("i8-s8-s8-wrap", 32),)),
)
"""Breakers of the stages the chain rows rely on (each step of an FMA chain or pairwise
tree decided as a lemma with the words below it cut): their ``equals-reference`` rows
must be refuted with replayed words."""

EQUIVALENT_MUTANTS = (
    Breaker("rb-saturate-at-max-inclusive", "integer saturation (rule book 3)", "integer.py",
            "        total = ops.ite(ops.sgt(total, S32_MAX), ops.const(S32_MAX, SUM_BITS), "
            "total)\n",
            "        total = ops.ite(ops.sge(total, S32_MAX), ops.const(S32_MAX, SUM_BITS), "
            "total)\n", None,
            keeps=(_er("i8-u8-u8-saturate", 32), _er("i8-s8-s8-saturate", 32)),
            text=RULEBOOK, equivalent=True),
    Breaker("rb-window-sum-reversed", "exact sum order (rule book 2.6)", "window.py",
            "    for t in terms:\n", "    for t in reversed(terms):\n", None,
            keeps=(_er("dense-tf32", 8),), text=RULEBOOK, equivalent=True),
    Breaker("spec-exact-sum-reversed", "exact sum order", "accumulate.py",
            "    return ops.sum([ops.sext(u, width) for u in units])\n",
            "    return ops.sum([ops.sext(u, width) for u in units[::-1]])\n", None,
            keeps=(_er("dense-tf32", 8),), equivalent=True),
)
"""Equivalent mutants (issue 30): edits that change no output word (a saturation bound
tested with ``>=`` where ``>`` gives the same clamp, an exact sum in another order); the
engine must still prove ``equals-reference`` through them."""

BREAKERS = BREAKERS + ARCH_BREAKERS + RULEBOOK_BREAKERS + CHAIN_BREAKERS + EQUIVALENT_MUTANTS

KNOWN_GAPS = {
    "rb-scale-floor-36": "declared, not yet seen refuted: one run of its row on a busy 2-core "
                         "machine gave no answer in 130 s (the scale floor acts only with "
                         "scales tens of binades apart)",
    "rb-c-dominant-groups-of-8": "declared, not yet seen refuted: one run of its row gave no "
                                 "answer in 300 s (as rb-nvfp4 K=4 groups of 2, which ended "
                                 "unknown at 319 s)",
    "rb-mxf4-groups-of-8": "declared, not yet run",
    "rb-mxf4-merge-strict": "declared, not yet run",
    "nvfp4-groups-of-2": "no monolithic counterexample is declared (permutation's query finds "
                         "none in 60 s: the carries that differ need a second scale block); "
                         "the k-group-carry row is refuted with words replayed on the mutant",
    "mxf4-groups-of-8": "as nvfp4-groups-of-2",
    "window-26-bits": "a wider window keeps the error bound true (a finer quantum only "
                      "shrinks the error), so nothing proved is false on it; the error-bound "
                      "chain reads the spec's quanta and is unknown on it (window refuted)",
    "sparse-pairs-high-odd-reversed": "no monolithic counterexample is declared (the "
                                      "masking query at an NVFP4 K does not finish); the "
                                      "masking row is refuted with replayed words",
    "sparse-pairs-high-swapped": "a control: A and B lanes are selected alike, so swapping "
                                 "two compacted lanes only reorders an exact group sum; "
                                 "masking stays true and its row still proves",
    "mxf4-no-c-merge": "no monolithic counterexample is declared; sparse-masking's dense "
                       "side merges groups with C by section 4's rule (proofs/constants), "
                       "the sparse side by the broken spec",
}
"""Breakers no proved row can catch today, and why."""


def breaker_named(name: str) -> Breaker:
    for breaker in BREAKERS:
        if breaker.name == name:
            return breaker
    from tcspec.spec.names import did_you_mean

    known = [b.name for b in BREAKERS]
    raise ValueError(f"unknown breaker {name!r}{did_you_mean(name, known)}; known: "
                     f"{', '.join(known)}")


def _package_root() -> Path:
    """The top-level package's folder (already imported as this module's parent)."""
    top = sys.modules[__name__.split(".")[0]]
    return Path(str(top.__file__)).resolve().parent


def scratch_copy(breaker: Breaker, into: Path) -> Path:
    """A copy of the tcspec package under ``into`` with ``breaker`` applied to its spec."""
    import tcspec.proofs
    import tcspec.ref
    import tcspec.smt
    import tcspec.spec

    package = into / "tcspec"
    shutil.copytree(_package_root(), package, ignore=shutil.ignore_patterns("__pycache__"))
    for sub, module in (("spec", tcspec.spec), ("smt", tcspec.smt), ("ref", tcspec.ref),
                        ("proofs", tcspec.proofs)):
        source = Path(module.__file__).resolve().parent
        target = package / sub
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(
            "__pycache__", "*.jsonl.gz", "REPORT.*"))
    path = changed_file(package, breaker)
    text = path.read_text()
    if text.count(breaker.old) != 1:
        raise ValueError(f"breaker {breaker.name}: the text to change occurs "
                         f"{text.count(breaker.old)} times in {shown_path(breaker)}")
    path.write_text(text.replace(breaker.old, breaker.new))
    return package


def changed_file(package: Path, breaker: Breaker) -> Path:
    """The file ``breaker`` changes inside a copy ``package`` of the tcspec package."""
    return package.joinpath(*TEXTS[breaker.text], breaker.path)


def shown_path(breaker: Breaker) -> str:
    """``spec/<path>`` or ``proofs/rulebook/<path>``."""
    return "/".join((*TEXTS[breaker.text], breaker.path))


@dataclass
class Verdict:
    """What one breaker did: its counterexample, and each declared row's result."""

    breaker: str
    stage: str
    witness: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    text: str = SPEC
    equivalent: bool = False

    @property
    def ok(self) -> bool:
        """Every kill row killed (:func:`killed`: refuted or unknown; an ``equals-reference``
        row refuted with replayed words), every keep row proved (an equivalent mutant's
        ``equals-reference`` keeps included), the counterexample replayed; a run that
        crashed (the child process, the counterexample or a row check raising) is never ok,
        and a row that raised is never a kill."""
        if self.error or any(r["result"] == ERROR for r in self.rows):
            return False
        if self.witness is not None and not self.witness.get("replayed"):
            return False
        return all(killed(r) if r["role"] == "kill" else (r["result"] == "proved")
                   for r in self.rows)


ERROR = "error"
"""The result of a row (or counterexample) whose check raised in the mutated copy: an error
of the run, shown as such and never counted as a kill (issue 30)."""


def killed(row: dict[str, Any]) -> bool:
    """A kill: the row was decided and is not proved (refuted, or unknown with its reason).
    An ``equals-reference`` row kills only when ``refuted`` with replayed words: its input
    words, run on the two executable sides, give the two different D words it shows."""
    if row["property"] == EQUALS_REFERENCE:
        return row["result"] == "refuted" and bool(row.get("replayed"))
    return row["result"] in ("refuted", "unknown")


def replayed_difference(result: str, words: dict[str, int], detail: str) -> dict[str, Any]:
    """What an ``equals-reference`` row's words show: ``replayed`` when it is refuted, says so
    in its detail, and names a spec D word and a rule-book D word that differ (the engine
    replays the words on both scalar lowerings before it answers ``refuted``)."""
    spec, reference = words.get("d_spec"), words.get("d_reference")
    replayed = (result == "refuted" and "(replayed)" in detail and spec is not None
                and reference is not None and spec != reference)
    shown = {n: f"0x{v:X}" for n, v in words.items()}
    return {"replayed": replayed, "words": shown}


def _witness_query(prop: str, name: str, k: int) -> Any:
    """The property's monolithic violation query at a small K (real products)."""
    import dataclasses

    from tcspec.proofs import (
        arch,
        chaining,
        compiler_facts,
        error_bound,
        permutation,
        sign,
        sparse,
    )
    from tcspec.spec.catalog import lookup

    desc = lookup(name).descriptor
    if prop == "arch-permutation":
        generators = arch.in_window_generators(desc, k)
        label = next(n for n in generators if n.startswith("rotate"))
        return permutation.unchanged_query(chaining.model(desc, k), k, label,
                                           generators[label])
    if prop == "arch-sign-symmetry":
        return dataclasses.replace(arch.arch_sign_query(chaining.model(desc, k), k, "a"),
                                   cut_products=False)
    if prop == "arch-error-bound":
        return chaining.error_query(chaining.model(desc, k), k)
    if prop == "sign-symmetry":
        return dataclasses.replace(sign.sign_query(desc, k, "a"), cut_products=False)
    if prop == "permutation":
        generators = permutation.reorders(desc, k)
        label = next(n for n in generators if n.startswith("rotate"))
        return permutation.unchanged_query(desc, k, label, generators[label])
    if prop == "tf32-ignores-low-bits":
        return compiler_facts.low_bits_query(desc, k)
    if prop == "single-lane-is-rz-product":
        return compiler_facts.single_lane_query(desc, k, 0)
    if prop == "sparse-non-interference":
        return sparse.interference_query(desc, k)
    if prop == "sparse-masking":
        return sparse.masking_query(desc, k)
    if prop == "error-bound":
        return error_bound.bound_query(desc, k)
    raise ValueError(f"no counterexample query for {prop}")


REFERENCE_TIMEOUT = 300.0
"""The least time limit of an ``equals-reference`` row in a breaker's run (its engine's
output query and budget): a refutation ends at the first satisfiable query and a proof
at its last pair, so the limit costs time only on a row that ends ``unknown``; some
refutations need minutes on a busy machine (rb-clamp-minus-132: a carry of several
products below the F32 subnormal unit)."""


def child_main(name: str, timeout: float) -> dict[str, Any]:
    """Run in the scratch copy: the counterexample and every declared row."""
    from tcspec.proofs.core import REFUTED, UNKNOWN, Outcome, Settings, decide
    from tcspec.proofs.runner import properties
    from tcspec.spec.catalog import lookup

    breaker = breaker_named(name)
    settings = Settings(timeout=timeout, second_solver=None)
    reference_settings = Settings(timeout=max(timeout, REFERENCE_TIMEOUT), second_solver=None)
    out: dict[str, Any] = {"witness": None, "rows": []}
    if breaker.witness is not None:
        prop, datapath, k = breaker.witness
        started = time.monotonic()
        try:
            query = _witness_query(prop, datapath, k)
            if breaker.words:
                violated, shown = query.replay(dict(breaker.words))
                outcome = Outcome(query.name, REFUTED if violated else UNKNOWN, "replay",
                                  time.monotonic() - started,
                                  words={**dict(breaker.words), **shown} if violated else {})
            else:
                outcome = decide(query, settings.solver, timeout)
        except Exception as exc:
            outcome = Outcome(prop, ERROR, "", time.monotonic() - started,
                              f"{type(exc).__name__}: {exc}")
        out["witness"] = {"property": prop, "datapath": datapath, "k": k,
                          "result": outcome.result, "seconds": round(outcome.seconds, 2),
                          "replayed": outcome.result == REFUTED and bool(outcome.words),
                          "words": {n: f"0x{v:X}" for n, v in outcome.words.items()},
                          "detail": outcome.reason[:300]}
    from tcspec.proofs.arch import arch_properties

    props = {**properties(), **arch_properties()}
    for role, rows in (("kill", breaker.kills), ("keep", breaker.keeps)):
        for prop, datapath, k in rows:
            started = time.monotonic()
            extra: dict[str, Any] = {}
            try:
                row = props[prop].check(lookup(datapath).descriptor, k,
                                        reference_settings if prop == EQUALS_REFERENCE
                                        else settings)
                result, detail = row.result, row.detail
                if prop == EQUALS_REFERENCE:
                    extra = replayed_difference(result, row.words, detail)
            except Exception as exc:
                result, detail = ERROR, f"the check raised {type(exc).__name__}: {exc}"
            out["rows"].append({"role": role, "property": prop, "datapath": datapath, "k": k,
                                "result": result, "seconds": round(
                                    time.monotonic() - started, 2),
                                "detail": detail[:300], **extra})
    return out


def run_breaker(breaker: Breaker, timeout: float = 60.0) -> Verdict:
    """Apply ``breaker`` in a scratch copy and run :func:`child_main` there."""
    started = time.monotonic()
    verdict = Verdict(breaker.name, breaker.stage, text=breaker.text,
                      equivalent=breaker.equivalent)
    with tempfile.TemporaryDirectory(prefix="tcspec-mutant-") as tmp:
        try:
            scratch_copy(breaker, Path(tmp))
        except (OSError, ValueError) as exc:
            verdict.error = str(exc)
            return verdict
        code = (f"import sys, json; sys.path.insert(0, {tmp!r}); "
                "from tcspec.proofs.mutants import child_main; "
                f"print(json.dumps(child_main({breaker.name!r}, {timeout!r})))")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, cwd=tmp)
        try:
            found = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            verdict.error = f"error: the mutated copy failed (exit {done.returncode}): {tail}"
            verdict.seconds = time.monotonic() - started
            return verdict
    verdict.witness, verdict.rows = found["witness"], found["rows"]
    verdict.seconds = time.monotonic() - started
    crashed = [f"{r['property']} {r['datapath']}: {r['detail']}" for r in verdict.rows
               if r["result"] == ERROR]
    if verdict.witness is not None and verdict.witness["result"] == ERROR:
        crashed.insert(0, f"counterexample: {verdict.witness['detail']}")
    if crashed:
        verdict.error = "error: " + "; ".join(crashed)
    return verdict


def run_all(names: Sequence[str] | None = None, timeout: float = 60.0,
            progress: Callable[[Verdict], None] | None = None) -> list[Verdict]:
    chosen = [breaker_named(n) for n in names] if names else list(BREAKERS)
    verdicts = []
    for breaker in chosen:
        verdict = run_breaker(breaker, timeout)
        verdicts.append(verdict)
        if progress:
            progress(verdict)
    return verdicts


def datapath_family(name: str) -> str:
    """The rule-book family of a datapath (``window``, ``block``, ``fused-dot``, ...)."""
    from tcspec.proofs.rulebook.names import parse

    try:
        return parse(name).family
    except ValueError:
        return "other"


def _tally(counts: dict[str, list[int]]) -> str:
    return ", ".join(f"{key} {k}/{n}" + (f" ({e} errors, not kills)" if e else "")
                     for key, (k, n, e) in sorted(counts.items()))


def kill_table(verdicts: Sequence[Verdict]) -> str:
    """The mutation table (markdown): one line per breaker, then the kills per text (``spec``,
    ``rulebook``) and per datapath family through ``equals-reference``, the equivalent
    mutants kept, and the kills per property family."""
    lines = ["| breaker | text | stage | counterexample (replayed on the mutant) | "
             "must not prove | must still prove | ok | s |",
             "|---|---|---|---|---|---|---|---|"]
    families: dict[str, list[int]] = {}
    by_text: dict[str, list[int]] = {}
    by_family: dict[str, dict[str, list[int]]] = {}
    equivalents: dict[str, list[int]] = {}
    undeclared: dict[str, list[str]] = {}
    errors = []

    def shown_row(r: dict[str, Any]) -> str:
        result = "**ERROR** (the check raised; not a kill)" if r["result"] == ERROR \
            else r["result"]
        if r["property"] == EQUALS_REFERENCE and r["result"] == "refuted":
            words = r.get("words", {})
            result += (f" (replayed: spec D {words.get('d_spec', '?')}, rule book D "
                       f"{words.get('d_reference', '?')})" if r.get("replayed")
                       else " (**not replayed**: not a kill)")
        return f"{r['property']} {r['datapath']}: {result}"

    for v in verdicts:
        w = v.witness
        shown = ("-" if w is None else
                 f"{w['property']} {w['datapath']} K={w['k']}: "
                 + ("**ERROR**" if w["result"] == ERROR else w["result"]))
        kills = ", ".join(shown_row(r) for r in v.rows if r["role"] == "kill") or "-"
        keeps = ", ".join(shown_row(r) for r in v.rows if r["role"] == "keep") or "-"
        ok = "yes" if v.ok else f"**no** {v.error}".strip().replace("|", "/")
        gap = f" ({KNOWN_GAPS[v.breaker]})" if v.breaker in KNOWN_GAPS else ""
        text = v.text + (" (equivalent mutant)" if v.equivalent else "")
        lines.append(f"| {v.breaker}{gap} | {text} | {v.stage} | {shown} | {kills} | {keeps} | "
                     f"{ok} | {v.seconds:.0f} |")
        if v.error.startswith("error:"):
            errors.append(v.breaker)
        for r in v.rows:
            if r["role"] == "kill":
                tally = families.setdefault(r["property"], [0, 0, 0])
                tally[0] += killed(r)
                tally[1] += 1
                tally[2] += r["result"] == ERROR
        reference_kills = [r for r in v.rows
                           if r["role"] == "kill" and r["property"] == EQUALS_REFERENCE]
        for r in reference_kills:
            tally = by_family.setdefault(datapath_family(r["datapath"]), {}).setdefault(
                v.text, [0, 0, 0])
            tally[0] += killed(r)
            tally[1] += 1
            tally[2] += r["result"] == ERROR
        if v.equivalent:
            keeps_er = [r for r in v.rows
                        if r["role"] == "keep" and r["property"] == EQUALS_REFERENCE]
            tally = equivalents.setdefault(v.text, [0, 0, 0])
            tally[0] += bool(keeps_er) and all(r["result"] == "proved" for r in keeps_er)
            tally[1] += 1
            tally[2] += any(r["result"] == ERROR for r in keeps_er)
        elif reference_kills:
            tally = by_text.setdefault(v.text, [0, 0, 0])
            tally[0] += all(killed(r) for r in reference_kills)
            tally[1] += 1
            tally[2] += any(r["result"] == ERROR for r in reference_kills)
        else:
            undeclared.setdefault(v.text, []).append(v.breaker)
    lines.append("")
    lines.append("Breakers killed through equals-reference, per text (every equals-reference "
                 "row the breaker declares refuted, its words replayed on both executable "
                 "sides): " + (_tally(by_text) or "none") + ".")
    lines.append("")
    lines.append("Kills per datapath family through equals-reference (rows refuted with "
                 "replayed words / rows declared), per text: " + ("; ".join(
                     f"{family}: {_tally(texts)}" for family, texts in sorted(
                         by_family.items())) or "none") + ".")
    lines.append("")
    lines.append("Equivalent mutants whose equals-reference rows still prove, per text: "
                 + (_tally(equivalents) or "none") + ".")
    lines.append("")
    lines.append("Breakers declaring no equals-reference row: " + ("; ".join(
        f"{text} {len(names)} ({', '.join(names)})" for text, names in sorted(
            undeclared.items())) or "none") + ".")
    lines.append("")
    lines.append("Kills per property family: " + _tally(families) + ".")
    lines.append("")
    lines.append("Runs that crashed (errors, never counted as kills): "
                 + (", ".join(errors) if errors else "none") + ".")
    return "\n".join(lines)
