"""Permutation invariance of the lane order (covers spec/window, spec/accumulate, spec/specials,
spec/convert, spec/formats, spec/blockscaled, spec/integer).

The unscaled window datapaths (SEMANTICS.md section 2) sum exactly after a
per-term alignment to one shared quantum, so the lane order cannot matter:
invariance under the swap of lanes 0 and 1 and under the rotation by one
lane covers every permutation (the two generate the symmetric group).
Block-scaled paths sum aligned *groups* (section 4): NVFP4 is invariant
under every permutation inside each K=4 group (the swap and rotation of
every group generate them), and a swap across groups can change D (a
solver-found witness, replayed).

Method ``lemmas``: both sides are traced in one DAG and put in the AC normal
form of :mod:`proofs.normal_form`; equal normal forms mean equal words for
every input, given the commutativity/associativity lemmas the normal form
used, each proved by the solver at its width. The comparison is of the whole
``build_dot`` output, so no stage is left out. When the normal forms differ
the property is asked of the solver directly (``monolithic``): a model is a
counterexample, replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tcspec.proofs.constants import product_group, scale_block
from tcspec.proofs.core import (
    MONOLITHIC,
    NORMAL_FORM,
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    every_datapath,
    layout_variables,
    run_dot,
)
from tcspec.proofs.normal_form import NormalForms, rule_queries
from tcspec.proofs.stages import traced_inputs
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import DotInputs
from tcspec.spec.descriptor import Descriptor

Reorder = Callable[[DotInputs], DotInputs]

REQUIRED = ("dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3", "dense-e2m1", "dense-nvfp4")


def lane_order(inputs: DotInputs, order: Sequence[int], operands: str = "ab") -> DotInputs:
    """Lane ``i`` of the result is lane ``order[i]`` of ``inputs`` (for the ``operands`` named)."""
    a = [inputs.a[i] for i in order] if "a" in operands else list(inputs.a)
    b = [inputs.b[i] for i in order] if "b" in operands else list(inputs.b)
    return DotInputs(a, b, inputs.c, inputs.scale_a, inputs.scale_b, inputs.metadata)


def swap(i: int, j: int, k: int) -> list[int]:
    order = list(range(k))
    order[i], order[j] = order[j], order[i]
    return order


def rotation(k: int) -> list[int]:
    return [*range(1, k), 0]


def group_rotation(start: int, size: int, k: int) -> list[int]:
    order = list(range(k))
    order[start:start + size] = [*range(start + 1, start + size), start]
    return order


def group_size(desc: Descriptor) -> int:
    """Lanes a block path may reorder freely: its exact-sum group, or (products truncated one
    by one) its scale block (SEMANTICS.md section 4, :mod:`proofs.constants`)."""
    group = product_group(desc)
    return group if group > 1 else scale_block(desc)


def reorders(desc: Descriptor, k: int) -> dict[str, Reorder]:
    """Generators of the permutations checked on ``desc``: the swap of the first two lanes and
    the rotation by one lane, of all K lanes (window and integer paths) or of each group (block
    paths; their products generate every permutation inside the groups)."""
    size = group_size(desc) if desc.family == "block" else k
    generators: dict[str, Reorder] = {}
    for start in range(0, k, size):
        first = swap(start, start + 1, k)
        turned = group_rotation(start, size, k)
        generators[f"swap-{start}-{start + 1}"] = lambda x, o=first: lane_order(x, o)
        generators[f"rotate-{start}-{start + size - 1}"] = lambda x, o=turned: lane_order(x, o)
    return generators


def unchanged_query(desc: Descriptor, k: int, name: str, reorder: Reorder) -> Query:
    """Violation: the reordered inputs give another word (monolithic form)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d, d_reordered = run_dot(ops, desc, inputs), run_dot(ops, desc, reorder(inputs))
        return ops.ne(d, d_reordered), {"d": d, "d_reordered": d_reordered}

    return Query(name, "forall", layout_variables(desc, k), body)


def invariance_row(prop: str, desc: Descriptor, k: int, generators: dict[str, Reorder],
                   settings: Settings) -> Row:
    """Prove ``D(reorder(x)) = D(x)`` for each generator: AC normal form + rule lemmas, or the
    monolithic query for a generator whose normal forms differ."""
    ops, inputs = traced_inputs(desc, k)
    forms = NormalForms()
    root = forms.of(run_dot(ops, desc, inputs).node)
    differing = [name for name, reorder in generators.items()
                 if forms.of(run_dot(ops, desc, reorder(inputs)).node) != root]
    if differing:
        queries = [unchanged_query(desc, k, name, generators[name]) for name in differing]
        return check_queries(prop, desc, k, queries, settings, MONOLITHIC,
                             f"AC normal forms differ for {', '.join(differing)}: "
                             "asked monolithically")
    names = list(generators)
    shown = ", ".join(names) if len(names) <= 4 else f"{len(names)} ({names[0]}, ... {names[-1]})"
    detail = (f"generators {shown}: both sides traced in one DAG have the "
              f"same normal form modulo associativity/commutativity of the reductions "
              f"(exact sums, window maximum, special-value flags); each law used is a lemma")
    return check_queries(prop, desc, k, rule_queries(forms.rules), settings, NORMAL_FORM,
                         detail)


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    return invariance_row("permutation", desc, k, reorders(desc, k), settings)


def applies(desc: Descriptor) -> bool:
    return not desc.sparse


def k_step(desc: Descriptor) -> int:
    return desc.scale_block or 2


# ---------------------------------------------------------- across NVFP4 groups

WITNESS_PINS = {"c": 0, "scale_a0": 0x01, "scale_b0": 0x01, "scale_a1": 0x78, "scale_b1": 0x78,
                "a16": 0xE, "b16": 0x6}
"""Pinned inputs of the cross-group witness query: block 0 scaled by 2^-18, lane 16 of block 1
is -4 x 4 scaled by 2^16 (so the quantum is 2^-19 and block-0 products are truncated),
C = +0, other scales 1.0 (0x38); the solver chooses the low nibbles of lanes 0-7."""

FREE_LANES = range(8)


def across_groups_query(desc: Descriptor, k: int) -> Query:
    """Witness: swapping lane 0 (group 0) with lane 4 (group 1) changes D."""
    order = swap(0, 4, k)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d = run_dot(ops, desc, inputs)
        d_swapped = run_dot(ops, desc, lane_order(inputs, order))
        pins = [ops.eq(values[name], WITNESS_PINS.get(name, 0x38))
                for name in values if name.startswith("scale") or name in WITNESS_PINS]
        for lane in range(k):
            for word in (inputs.a[lane], inputs.b[lane]):
                if lane in FREE_LANES:
                    pins.append(ops.eq(ops.extract(word, 31, 4), 0))
                elif f"a{lane}" not in WITNESS_PINS:
                    pins.append(ops.eq(word, 0))
        shown = {"d": d, "d_swapped": d_swapped}
        shown.update({f"{x}{lane}": values[f"{x}{lane}"] for lane in FREE_LANES for x in "ab"})
        return ops.and_(ops.ne(d, d_swapped), *pins), shown

    return Query("swap-0-4-changes-d", "exists", layout_variables(desc, k), body)


def check_across_groups(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("permutation-across-groups", desc, k, [across_groups_query(desc, k)],
                         settings, MONOLITHIC,
                         "swap of lanes 0 and 4 (K=4 groups 0 and 1 of scale block 0); "
                         "pinned: " + ", ".join(f"{n}=0x{v:X}" for n, v in WITNESS_PINS.items())
                         + ", other scales 0x38, lanes 8+ zero except 16")


def grouped_nvfp4(desc: Descriptor) -> bool:
    return (desc.family == "block" and not desc.sparse and desc.scaling == "ue4m3"
            and product_group(desc) == 4)


PROPERTIES = [
    # ``permutation`` itself is a declaration on the equivalence engine now
    # (:mod:`proofs.families.lane_order`); the across-groups witness stays here.
    Property("permutation-across-groups", "a swap across NVFP4 K=4 groups can change D "
             "(witness)", ("spec.blockscaled",), every_datapath(grouped_nvfp4), grouped_nvfp4,
             check_across_groups, fast=(("dense-nvfp4", 32),), k_step=lambda d: 32),
]
