"""Seeded hardware campaigns: the same cases on the GPU machine and here, only D words travel.

:func:`campaign_cases` draws a harness's cases from NumPy's PCG64 seeded
``[seed, crc32(harness name)]``, a quarter of the rows from each category:
``raw``, ``finite``, ``edge`` (:mod:`tcspec.campaign`) and ``zero-times-huge``
(finite lanes, one with A = +-0 against the largest finite B or the reverse:
the zero-in-the-window-maximum rule of SEMANTICS.md section 7). A harness
whose K is below its datapath's takes the first K lanes; the comparison pads
the rest with +0 (no candidate's word changes). :func:`compare` regenerates
the cases, evaluates every candidate model of SEMANTICS.md section 7 that
applies (NumPy lowering) and counts agreement per candidate and per
category: the findings, per datapath and per rule.
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcspec.hw.selftest import model_words
from tcspec.hw.table import Harness, descriptor_of
from tcspec.ref.batch import NUMPY
from tcspec.spec.candidates import HARDWARE, build_model, candidate_names
from tcspec.spec.catalog import input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat

CATEGORIES = ("raw", "finite", "edge", "zero-times-huge")


def _largest_finite(fmt: str, rng: np.random.Generator, n: int) -> np.ndarray:
    spec = FORMATS[fmt]
    assert isinstance(spec, FloatFormat)
    exp = spec.exp_max_field - (1 if spec.specials == "ieee" else 0)
    frac = rng.integers(0, 1 << spec.frac_bits, size=n, dtype=np.uint64)
    if spec.specials == "max_nan":
        frac = np.minimum(frac, np.uint64((1 << spec.frac_bits) - 2))
    word = (np.uint64(exp) << np.uint64(spec.frac_bits) | frac) << np.uint64(spec.cleared_bits)
    return word | rng.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(
        spec.container_bits - 1)


def _zero_times_huge(desc: Descriptor, rng: np.random.Generator, n: int, k: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from tcspec.campaign import generate

    block = generate(desc, n, ["finite"], rng)
    a, b = block.a[:, :k].copy(), block.b[:, :k].copy()
    lane = rng.integers(0, k, size=n)
    rows = np.arange(n)
    flip = rng.random(n) < 0.5
    zero_a = _signed_zero(desc.a_format, rng, n)
    zero_b = _signed_zero(desc.b_format, rng, n)
    a[rows, lane] = np.where(flip, _largest_finite(desc.a_format, rng, n), zero_a)
    b[rows, lane] = np.where(flip, zero_b, _largest_finite(desc.b_format, rng, n))
    return a, b, block.c


def _signed_zero(fmt: str, rng: np.random.Generator, n: int) -> np.ndarray:
    spec = FORMATS[fmt]
    assert isinstance(spec, FloatFormat)
    return rng.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(spec.container_bits - 1)


def campaign_cases(h: Harness, count: int, seed: int) -> tuple[np.ndarray, ...]:
    """``(a[n, K], b[n, K], c[n], category[n])`` of ``h``'s seeded campaign."""
    from tcspec.campaign import generate

    desc = descriptor_of(h)
    if desc is None:
        raise ValueError(f"{h.name} has no catalog datapath to draw cases for")
    rng = np.random.default_rng([seed, zlib.crc32(h.name.encode())])
    floats = desc.family == "window"
    names = CATEGORIES if floats else CATEGORIES[:3]
    parts = []
    for index, name in enumerate(names):
        n = count // len(names) + (index < count % len(names))
        if name == "zero-times-huge":
            a, b, c = _zero_times_huge(desc, rng, n, h.k)
        else:
            block = generate(desc, n, [name], rng)
            a, b, c = block.a[:, :h.k], block.b[:, :h.k], block.c
        parts.append((a, b, c, np.full(n, index, dtype=np.uint8)))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


def model_batch(model: str, desc: Descriptor, a: np.ndarray, b: np.ndarray,
                c: np.ndarray) -> np.ndarray:
    """Candidate ``model``'s words (NumPy lowering) on cases padded to ``desc.k`` with +0."""
    if model == HARDWARE:
        return model_words(desc, a, b, c)
    n, k = a.shape
    pad = np.zeros((n, desc.k - k), dtype=np.uint64)
    columns = [*np.concatenate([a, pad], 1).T, *np.concatenate([b, pad], 1).T, c]
    layout = input_layout(desc)
    values = [NUMPY.input(np.asarray(col, np.uint64), spec.width)
              for spec, col in zip(layout, columns, strict=True)]
    result = build_model(NUMPY, model, desc, inputs_from(layout, values))
    return NUMPY.values(result, n).astype(np.uint32)


def compare(h: Harness, observed: np.ndarray, seed: int,
            models: Sequence[str] | None = None) -> dict[str, Any]:
    """Per candidate: cases agreeing with the observed words, overall and per category, and
    the first few disagreeing cases (inputs in hex)."""
    desc = descriptor_of(h)
    assert desc is not None
    a, b, c, category = campaign_cases(h, observed.shape[0], seed)
    names = list(models) if models else candidate_names(desc)
    digits = 4 if desc.d_type == "f16" else 8
    found: dict[str, Any] = {"harness": h.name, "datapath": desc.name, "cases": len(c),
                             "models": {}}
    for name in names:
        words = model_batch(name, desc, a, b, c)
        wrong = words != observed
        per = {CATEGORIES[i]: [int((~wrong & (category == i)).sum()),
                               int((category == i).sum())]
               for i in range(len(CATEGORIES)) if (category == i).any()}
        examples = [{"a": [f"0x{int(x):X}" for x in a[i]], "b": [f"0x{int(x):X}" for x in b[i]],
                     "c": f"0x{int(c[i]):X}", "observed": f"0x{int(observed[i]):0{digits}X}",
                     "model": f"0x{int(words[i]):0{digits}X}",
                     "category": CATEGORIES[int(category[i])]}
                    for i in np.flatnonzero(wrong)[:3].tolist()]
        found["models"][name] = {"agree": int((~wrong).sum()), "per_category": per,
                                 "first_disagreements": examples}
    return found


def findings_markdown(results: Sequence[dict[str, Any]]) -> str:
    """The comparison table: one row per harness, agreement of each candidate (a rule)."""
    models = sorted({m for r in results for m in r["models"]})
    head = ["| harness | datapath | cases | " + " | ".join(models) + " |",
            "|---|---|---|" + "---|" * len(models)]
    rows = []
    for r in results:
        cells = []
        for m in models:
            got = r["models"].get(m)
            cells.append("-" if got is None else
                         "all" if got["agree"] == r["cases"] else f"{got['agree']:,}")
        rows.append(f"| {r['harness']} | {r['datapath']} | {r['cases']:,} | "
                    + " | ".join(cells) + " |")
    return "\n".join(head + rows) + "\n"


def compare_dir(directory: str | Path, markdown: str | None = None, force: bool = False) -> int:
    """``tcspec hw compare``: the D words of a device-plan directory (``words.npy``,
    ``index.json``) against every candidate; writes ``findings.json`` beside them."""
    from tcspec.hw.table import harness_named
    from tcspec.outputs import atomic_file
    from tcspec.words import UsageError

    directory = Path(directory)
    try:
        info = json.loads((directory / "index.json").read_text(encoding="utf-8"))
        words = np.load(directory / "words.npy", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{directory} is not a device-plan directory: {exc}") from None
    results = []
    for entry in info["campaigns"]:
        observed = words[entry["offset"]:entry["offset"] + entry["count"]]
        results.append(compare(harness_named(entry["harness"]), observed, entry["seed"]))
        print(f"compared {entry['harness']}", file=sys.stderr, flush=True)
    text = findings_markdown(results)
    print(f"provenance: {json.dumps(info['provenance'])}\n{text}")
    with atomic_file(directory / "findings.json", replace=True) as handle:
        json.dump(results, handle, indent=1)
    if markdown:
        from tcspec.outputs import write_text

        write_text(markdown, text, force=force)
    return 0
