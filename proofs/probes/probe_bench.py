"""Probe benchmarks (issue targets): ``python3 -m tcspec.proofs.probes.probe_bench [--nvfp4]``.

Wall-clock seconds, including solver start-up and replay:
- one verified dense-tf32 probe, hardware vs exact-rne (target <= 10 s);
- ``--count 20`` of them (20 distinct verified probes);
- a separating suite for every candidate that applies to dense-tf32 (target <= 5 min);
- with ``--nvfp4``: the suite for hardware, nvfp4-per-product, nvfp4-k16, mma-sim.
"""

from __future__ import annotations

import sys
import time

from tcspec.proofs.probes.probe import find_probes
from tcspec.proofs.probes.separate import separating_suite
from tcspec.spec.candidates import candidate_names
from tcspec.spec.catalog import lookup


def main(argv: list[str]) -> int:
    tf32 = lookup("dense-tf32").descriptor
    started = time.monotonic()
    one = find_probes(tf32, "hardware", "exact-rne", timeout=60)
    print(f"dense-tf32 hardware vs exact-rne, 1 verified probe: {one.status}, "
          f"{time.monotonic() - started:.1f}s", flush=True)
    started = time.monotonic()
    many = find_probes(tf32, "hardware", "exact-rne", count=20, timeout=60)
    distinct = len({tuple(p.words) for p in many.probes})
    print(f"dense-tf32 hardware vs exact-rne, --count 20: {distinct} distinct verified probes, "
          f"{time.monotonic() - started:.1f}s", flush=True)
    suites = [(tf32, candidate_names(tf32))]
    if "--nvfp4" in argv:
        suites.append((lookup("dense-nvfp4").descriptor,
                       ["hardware", "nvfp4-per-product", "nvfp4-k16", "mma-sim"]))
    for desc, names in suites:
        suite = separating_suite(desc, names, timeout=240)
        print(suite.text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
