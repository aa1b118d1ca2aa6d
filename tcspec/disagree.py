"""How often each candidate model differs from the hardware model on random inputs.

A sanity figure for the candidates of SEMANTICS.md section 7 (which quotes
B200 disagreeing with ``exact-rne`` on 144 and ``two-stage`` on 12 of 2,000
random raw TF32 cases). Inputs are uniform random words (``raw``), or words
whose container is finite (``finite``); every model runs on its compiled
lowering. Run: ``python3 -m tcspec.disagree dense-tf32 --cases 2000 --seed 0``.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from tcspec.ref.compiled import compiled_model
from tcspec.spec.candidates import HARDWARE, candidate_names
from tcspec.spec.catalog import input_layout, lookup
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat
from tcspec.spec.sparse import LEGAL_SELECTORS


def _finite(fmt: FloatFormat, word: int) -> bool:
    bits = word & ((1 << fmt.container_bits) - 1)
    exp = (bits >> (fmt.cleared_bits + fmt.frac_bits)) & fmt.exp_max_field
    return fmt.specials != "ieee" or exp != fmt.exp_max_field


def random_inputs(desc: Descriptor, cases: int, seed: int, finite: bool = False
                  ) -> list[list[int]]:
    """``cases`` input rows in ``input_layout`` order; sparse metadata is always legal."""
    rng = random.Random(seed)
    layout = input_layout(desc)
    formats = {"a": FORMATS[desc.a_format], "b": FORMATS[desc.b_format],
               "c": FORMATS.get(desc.d_type)}

    def word(role: str, width: int) -> int:
        if role == "metadata":
            rule = desc.sparse_chunk[1]  # type: ignore[index]
            return sum(rng.choice(LEGAL_SELECTORS[rule]) << (4 * i) for i in range(8))
        fmt = formats.get(role)
        while True:
            value = rng.getrandbits(width)
            if not finite or not isinstance(fmt, FloatFormat) or _finite(fmt, value):
                return value

    return [[word(spec.role, spec.width) for spec in layout] for _ in range(cases)]


def disagreements(desc: Descriptor, rows: Sequence[Sequence[int]],
                  models: Sequence[str] | None = None) -> dict[str, int]:
    """Per model, on how many ``rows`` its word differs from the hardware model's."""
    hardware = compiled_model(HARDWARE, desc)
    reference = [hardware(*row) for row in rows]
    counts = {}
    for model in models or [m for m in candidate_names(desc) if m != HARDWARE]:
        dot = compiled_model(model, desc)
        counts[model] = sum(dot(*row) != want for row, want in zip(rows, reference))
    return counts


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python3 -m tcspec.disagree", description=__doc__)
    parser.add_argument("datapath")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--finite", action="store_true", help="finite A, B and C words only")
    args = parser.parse_args(argv)
    desc = lookup(args.datapath).descriptor
    rows = random_inputs(desc, args.cases, args.seed, args.finite)
    kind = "finite" if args.finite else "raw"
    print(f"{desc.name}: {args.cases} random {kind} cases, seed {args.seed}")
    for model, count in disagreements(desc, rows).items():
        print(f"  {model:18} differs from hardware on {count:5} ({100 * count / len(rows):.1f}%)")


if __name__ == "__main__":
    main()
