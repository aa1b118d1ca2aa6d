"""The first GPU session's script: self-test, probes, seeded campaigns; then the comparison.

On the GPU machine (no install, no network, no solver), from the work tree::

    python3 tcspec/hw/device_plan.py run --out "$OUT" [--cases 100000] [--only NAME,...]

It self-tests every packed harness the GPU executes (``selftest.json``), runs
every committed probe file through `hw run` (``probes.observed.jsonl``), and
runs a seeded campaign of ``--cases`` cases per harness that passed
(``words.npy``: the D words only, ``uint32``, harnesses one after another;
``index.json``: harness, offset, count, seed, seconds). Five files, a few MB.
It stops starting harnesses after ``--budget`` seconds and lists the rest in
``index.json``, so a rerun with ``--only`` does just those.

Back on this machine (inputs regenerated from the same seeds)::

    tcspec hw compare DIR [--markdown FINDINGS.md] [--hardware-words]

(:func:`tcspec.hw.campaign.compare_dir`) prints agreement per harness with the
datapath the row computes on this GPU (``tcspec hw list --arch sm_NN``) and per
candidate model (rule), the findings beside them, and writes the observed
words of the architecture datapaths to ``ref/vectors/hardware/<gpu>.jsonl``.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"tcspec": "tcspec", "tcspec.spec": "spec", "tcspec.smt": "smt", "tcspec.ref": "ref",
            "tcspec.proofs": "proofs"}
"""pyproject.toml's package-dir mapping, for a work tree that is not installed."""


class _WorkTree(importlib.abc.MetaPathFinder):
    """Finds the ``tcspec`` packages in the work tree (the GPU machine installs nothing)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in PACKAGES:
            return None
        folder = ROOT / PACKAGES[name]
        return importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)])


def _write_json(path: Path, data: Any) -> None:
    from tcspec.outputs import atomic_file

    with atomic_file(path, replace=True) as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")


def run_plan(out: Path, cases: int, seed: int, only: list[str], budget: float,
             device: Any = None) -> int:
    """Self-test, probes and campaigns on ``device`` (default: CUDA device 0); everything
    under ``out``."""
    import numpy as np

    from tcspec.hw.campaign import campaign_cases
    from tcspec.hw.device import CudaDevice
    from tcspec.hw.run import ProgressBar, report_text, run_cases, run_files
    from tcspec.hw.selftest import selftest
    from tcspec.hw.table import HARNESSES, descriptor_of

    started = time.monotonic()
    device = device or CudaDevice(0)
    out.mkdir(parents=True, exist_ok=True)
    rows = [h for h in HARNESSES if h.packed and h.runs_on(device.sm) and descriptor_of(h)
            and (not only or h.name in only)]
    tested = {}
    for h in rows:
        result = selftest(device, h)
        tested[h.name] = {"passed": result.passed, "elements": result.elements,
                          "failures": result.failures}
        print(("pass " if result.passed else "FAIL ") + h.name, flush=True)
    _write_json(out / "selftest.json", {"provenance": device.provenance, "harnesses": tested})
    probes = sorted((ROOT / "ref" / "vectors" / "probes").glob("*.jsonl"))
    report = run_files(device, probes, out / "probes.observed.jsonl", check_layouts=False)
    print(report_text(report, str(out / "probes.observed.jsonl")), flush=True)
    words, index, skipped = [], [], []
    offset = 0
    for h in rows:
        if not tested[h.name]["passed"]:
            continue
        if time.monotonic() - started > budget:
            skipped.append(h.name)
            continue
        begun = time.monotonic()
        a, b, c, _ = campaign_cases(h, cases, seed)
        d = run_cases(device, h, a, b, c, ProgressBar(len(c), h.name))
        words.append(d)
        index.append({"harness": h.name, "offset": offset, "count": len(d), "seed": seed,
                      "seconds": round(time.monotonic() - begun, 2)})
        offset += len(d)
    np.save(out / "words.npy", np.concatenate(words) if words else np.zeros(0, np.uint32))
    _write_json(out / "index.json", {"provenance": device.provenance, "campaigns": index,
                                     "not_started": skipped,
                                     "seconds": round(time.monotonic() - started, 1)})
    print(f"{len(index)} campaigns, {offset} D words in {time.monotonic() - started:.0f}s; "
          f"not started (budget): {', '.join(skipped) or 'none'}")
    from tcspec.hw.table import datapath_source

    arch = sum(datapath_source(h, device.sm) == "architecture" for h in rows)
    print(f"next, on the work machine: tcspec hw compare {out} --hardware-words  (compares "
          f"with the sm_{device.sm} datapaths: {arch} of {len(rows)} rows have one, the rest "
          f"the tcgen05 fallback; see tcspec hw list --arch sm_{device.sm})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="device_plan.py", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run",))
    parser.add_argument("--out", required=True)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", default="", help="comma-separated harness names")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds after which no further campaign starts")
    args = parser.parse_args(argv)
    only = [name for name in args.only.split(",") if name]
    from tcspec.words import UsageError

    try:
        return run_plan(Path(args.out), args.cases, args.seed, only, args.budget)
    except UsageError as exc:
        print(f"device_plan.py: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.path[:] = [p for p in sys.path if Path(p).resolve() != Path(__file__).resolve().parent]
    sys.meta_path.insert(0, _WorkTree())
    sys.exit(main())
