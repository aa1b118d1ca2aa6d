"""Lane order inside an accumulation group never moves D (SEMANTICS.md 2.6, 3, 4, 10.3-10.6).

Where the rule text sums a set of lanes exactly (or aligns each to one shared quantum and
then sums exactly), their order cannot matter. The groups, as the rule text writes them:

- section 2 (window) and section 3 (integer): all K lanes;
- section 4: MXF8F6F4 all 32 lanes (one scale block, products truncated one by one into
  one window); NVFP4 aligned groups of 4 (summed exactly, then truncated); MXF4 and
  MXF4NVF4 aligned groups of 16;
- 10.3-10.5 (NVIDIA fused dot): the lanes of one fused step (K / steps, 10.4's split-K);
  10.6 (K=64 block scale): one chunk of 16 lanes.

For each group the second runs are the swap of its first two lanes and its rotation by
one lane (A and B together): the two generate every order of the group, and orders of
disjoint groups compose, so D equal on every second run is D equal under every order
that keeps each lane in its group. Sparse paths (lanes tied to their metadata chunk),
the FMA chains and the AMD trees (ordered adds, 11.1-11.4) are not stated.
"""

from __future__ import annotations

from tcspec.proofs.families.declare import Family, Words, as_property
from tcspec.proofs.rulebook import nvidia
from tcspec.proofs.rulebook.names import (
    BLOCK,
    FUSED_DOT,
    FUSED_DOT_BLOCK,
    INTEGER,
    WINDOW,
    Datapath,
)
from tcspec.spec.bitvec import BV, Ops

BLOCK_GROUP = {"mxf8f6f4": 32, "nvfp4": 4, "mxf4": 16, "mxf4nvf4": 16}
"""Section 4: lanes summed (or aligned) together, by instruction kind."""


def group_size(rec: Datapath) -> int | None:
    """Lanes whose order the rule text never reads (module docstring); None: not stated."""
    if rec.family in (WINDOW, INTEGER):
        return rec.k
    if rec.family == BLOCK:
        return BLOCK_GROUP[rec.kind or ""]
    if rec.family in (FUSED_DOT, FUSED_DOT_BLOCK):
        params = nvidia.parameters(rec)
        step = rec.k // params.steps
        return min(step, params.chunk) if params.chunk else step
    return None


def _reordered(words: Words, order: list[int]) -> Words:
    out = dict(words)
    for lane, source in enumerate(order):
        out[f"a{lane}"], out[f"b{lane}"] = words[f"a{source}"], words[f"b{source}"]
    return out


def group_orders(rec: Datapath) -> list[list[int]]:
    """The swap and the rotation of every group, as lane orders (lane i reads lane
    ``order[i]``)."""
    size = group_size(rec)
    assert size is not None and size >= 2 and rec.k % size == 0
    orders = []
    for start in range(0, rec.k, size):
        swap = list(range(rec.k))
        swap[start], swap[start + 1] = start + 1, start
        orders.append(swap)
        if size > 2:
            rotate = list(range(rec.k))
            rotate[start:start + size] = [*range(start + 1, start + size), start]
            orders.append(rotate)
    return orders


def reorders(ops: Ops, rec: Datapath, words: Words) -> list[Words]:
    return [_reordered(words, order) for order in group_orders(rec)]


def d_equal(ops: Ops, rec: Datapath, first: BV, second: BV) -> tuple[BV, BV]:
    return first, second


def applies(rec: Datapath) -> bool:
    size = group_size(rec)
    return size is not None and size >= 2


LANE_ORDER = Family(
    "permutation",
    "reordering the lanes inside each accumulation group (swap and rotation of every group, "
    "which generate every such order) leaves D unchanged",
    applies, reorders, d_equal, transforms=reorders,
    statement="D equal under every lane order inside each accumulation group")

PROPERTIES = (as_property(LANE_ORDER, ("spec (exact sums of every family)",)),)
