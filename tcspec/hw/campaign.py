"""Seeded hardware campaigns: the same cases on the GPU machine and here, only D words travel.

:func:`campaign_cases` draws a harness's cases from NumPy's PCG64 seeded
``[seed, crc32(harness name)]``, a quarter of the rows from each category:
``raw``, ``finite``, ``edge`` (:mod:`tcspec.campaign`) and ``zero-times-huge``
(finite lanes, one with A = +-0 against the largest finite B or the reverse:
the zero-in-the-window-maximum rule of SEMANTICS.md section 7), drawn with
the operand formats' ``tcgen05`` descriptor and cut to the row's K.
:func:`compare` regenerates the cases and compares the observed words with
the datapath the row computes on the GPU that ran it
(:func:`tcspec.hw.table.catalog_datapath` with the device's ``sm``): its
specification and every candidate model of section 7 that applies (NumPy
lowering), per category; NaN by class where the datapath's ``nan_canonical``
is False. An architecture datapath has the row's K; only a ``tcgen05``
fallback of larger K pads the upper lanes with +0. A word the specification
does not give is a *finding* about the model, reported beside it with the
candidates that give every word; :func:`hardware_lines` writes the observed
words as a hardware-word file (``ref/vectors/hardware/README.md``).
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcspec.hw.lines import arch_line, gpu_label
from tcspec.hw.selftest import model_words
from tcspec.hw.table import Harness, datapath_descriptor, datapath_source, descriptor_of
from tcspec.ref.batch import NUMPY
from tcspec.spec.arch import ArchDescriptor
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


def model_batch(model: str, desc: Descriptor | ArchDescriptor, a: np.ndarray, b: np.ndarray,
                c: np.ndarray) -> np.ndarray:
    """Candidate ``model``'s words (NumPy lowering); cases whose K is below ``desc.k`` (a
    ``tcgen05`` fallback) are padded with +0 lanes."""
    if a.shape[1] > desc.k:
        raise ValueError(f"{a.shape[1]} lanes but {desc.name} has K={desc.k}")
    if model == HARDWARE:
        return model_words(desc, a, b, c)  # type: ignore[arg-type]
    n, k = a.shape
    pad = np.zeros((n, desc.k - k), dtype=np.uint64)
    columns = [*np.concatenate([a, pad], 1).T, *np.concatenate([b, pad], 1).T, c]
    layout = input_layout(desc)  # type: ignore[arg-type]
    values = [NUMPY.input(np.asarray(col, np.uint64), spec.width)
              for spec, col in zip(layout, columns, strict=True)]
    result = build_model(NUMPY, model, desc, inputs_from(layout, values))  # type: ignore[arg-type]
    return NUMPY.values(result, n).astype(np.uint32)


def _nan(d_type: str, words: np.ndarray) -> np.ndarray:
    spec = FORMATS[d_type]
    assert isinstance(spec, FloatFormat)
    exp = (words.astype(np.uint64) >> np.uint64(spec.frac_bits)) & np.uint64(spec.exp_max_field)
    frac = words.astype(np.uint64) & np.uint64((1 << spec.frac_bits) - 1)
    return (exp == spec.exp_max_field) & (frac != 0)


def disagree(desc: Descriptor | ArchDescriptor, words: np.ndarray, observed: np.ndarray
             ) -> np.ndarray:
    """Cases whose model word is not the observed one; NaN by class where the datapath's
    ``nan_canonical`` is False (SEMANTICS.md section 10)."""
    wrong = words != observed
    if not getattr(desc, "nan_canonical", True):
        wrong &= ~(_nan(desc.d_type, words) & _nan(desc.d_type, observed))
    return wrong


def sm_of(provenance: dict[str, Any]) -> int | None:
    """The compute capability a device plan ran on (``"sm": "sm_90"`` -> 90), or None."""
    text = str(provenance.get("sm", "")).removeprefix("sm_")
    return int(text) if text.isdigit() else None


def compare(h: Harness, observed: np.ndarray, seed: int,
            models: Sequence[str] | None = None, sm: int | None = None) -> dict[str, Any]:
    """Per candidate (``hardware`` is the datapath's specification): cases agreeing with the
    observed words, overall and per category, and the first few disagreeing cases (inputs
    in hex). ``sm``: the GPU that ran ``h`` (default: its target's architecture)."""
    desc = datapath_descriptor(h, sm)
    if desc is None:
        raise ValueError(f"{h.name} has no catalog datapath to compare with")
    a, b, c, category = campaign_cases(h, observed.shape[0], seed)
    names = list(models) if models else candidate_names(desc)  # type: ignore[arg-type]
    if HARDWARE not in names:
        names.insert(0, HARDWARE)
    digits = 4 if desc.d_type == "f16" else 8
    found: dict[str, Any] = {"harness": h.name, "datapath": desc.name,
                             "datapath_source": datapath_source(h, sm), "k": h.k,
                             "datapath_k": desc.k, "cases": len(c), "models": {}}
    for name in names:
        words = model_batch(name, desc, a, b, c)
        wrong = disagree(desc, words, observed)
        per = {CATEGORIES[i]: [int((~wrong & (category == i)).sum()),
                               int((category == i).sum())]
               for i in range(len(CATEGORIES)) if (category == i).any()}
        examples = [{"a": [f"0x{int(x):X}" for x in a[i]], "b": [f"0x{int(x):X}" for x in b[i]],
                     "c": f"0x{int(c[i]):X}", "observed": f"0x{int(observed[i]):0{digits}X}",
                     "model": f"0x{int(words[i]):0{digits}X}",
                     "category": CATEGORIES[int(category[i])], "case": int(i)}
                    for i in np.flatnonzero(wrong)[:3].tolist()]
        found["models"][name] = {"agree": int((~wrong).sum()), "per_category": per,
                                 "first_disagreements": examples}
    return found


def finding_text(result: dict[str, Any], gpu: str) -> str | None:
    """The finding of one comparison (None: the specification gives every observed word):
    how many words disagree with the datapath's model and which candidates give them all."""
    spec = result["models"][HARDWARE]
    wrong = result["cases"] - spec["agree"]
    if not wrong:
        return None
    survive = [m for m, got in result["models"].items() if got["agree"] == result["cases"]]
    first = spec["first_disagreements"][0]
    return (f"finding: {wrong} of {result['cases']} observed word(s) ({gpu}) of "
            f"{result['harness']} disagree with the model of {result['datapath']} "
            f"({result['datapath_source']}); candidates that give every word: "
            f"{', '.join(survive) or 'none'}; first: case {first['case']} "
            f"({first['category']}) observed {first['observed']}, model {first['model']}")


def hardware_lines(h: Harness, observed: np.ndarray, seed: int, provenance: dict[str, Any],
                   limit: int) -> list[dict[str, Any]]:
    """The observed words of ``h``'s campaign as hardware-word lines of its architecture
    datapath (none for a ``tcgen05`` fallback: those words are not that datapath's): the
    first ``limit`` cases (0: all) and every case the specification disagrees with."""
    desc = datapath_descriptor(h, sm_of(provenance))
    if not isinstance(desc, ArchDescriptor):
        return []
    a, b, c, category = campaign_cases(h, observed.shape[0], seed)
    keep = np.zeros(len(c), dtype=bool)
    keep[:limit or len(c)] = True
    keep |= disagree(desc, model_batch(HARDWARE, desc, a, b, c), observed)
    return [arch_line(desc, h, a[i].tolist(), b[i].tolist(), int(c[i]), int(observed[i]),
                      provenance, seed=seed, case_index=i,
                      category=CATEGORIES[int(category[i])])
            for i in np.flatnonzero(keep).tolist()]


def findings_markdown(results: Sequence[dict[str, Any]]) -> str:
    """The comparison table: one row per harness, agreement of each candidate (a rule);
    ``hardware`` is the datapath's specification."""
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
        fallback = " (tcgen05 fallback)" if r.get("datapath_source") == "tcgen05 fallback" else ""
        rows.append(f"| {r['harness']} | {r['datapath']}{fallback} | {r['cases']:,} | "
                    + " | ".join(cells) + " |")
    return "\n".join(head + rows) + "\n"


def hardware_file(gpu: str) -> Path:
    """The default hardware-word file of ``gpu``: ``ref/vectors/hardware/h200.jsonl``."""
    from tcspec.ref import vectorfiles

    slug = "".join(ch if ch.isalnum() else "_" for ch in gpu.lower()).strip("_")
    return vectorfiles.HARDWARE_DIR / f"{slug or 'gpu'}.jsonl"


def write_hardware_words(path: Path, lines: list[dict[str, Any]]) -> int:
    """Write ``lines`` to ``path`` atomically, keeping the lines already there that come
    from other campaigns (another harness, seed or GPU); returns the lines kept."""
    from tcspec.outputs import atomic_file

    ours = {(line["harness"], line["seed"], line["gpu"]) for line in lines}
    kept = []
    if path.exists():
        for text in path.read_text(encoding="utf-8").splitlines():
            try:
                old = json.loads(text)
                key = (old.get("harness"), old.get("seed"), old.get("gpu"))
            except (ValueError, AttributeError):
                key = None
            if text.strip() and key not in ours:
                kept.append(text)
    with atomic_file(path, replace=True) as handle:
        for text in kept:
            handle.write(text + "\n")
        for line in lines:
            handle.write(json.dumps(line) + "\n")
    return len(kept)


def compare_dir(directory: str | Path, markdown: str | None = None,
                hardware_words: str | None = None, gpu: str | None = None,
                words_per_harness: int = 256, force: bool = False) -> int:
    """``tcspec hw compare``: the D words of a device-plan directory (``words.npy``,
    ``index.json``) against the datapath each row computes on the device that ran it and
    every candidate; writes ``findings.json`` beside them and, with ``hardware_words``
    (a path, or "" for ``ref/vectors/hardware/<gpu>.jsonl``), the observed words of the
    architecture datapaths as a hardware-word file. Exit status: 0 when the specification
    gives every observed word, 1 when there are findings (reported, not failures of the
    device run), 2 for bad input."""
    from tcspec.hw.table import harness_named
    from tcspec.outputs import atomic_file
    from tcspec.words import UsageError

    directory = Path(directory)
    try:
        info = json.loads((directory / "index.json").read_text(encoding="utf-8"))
        words = np.load(directory / "words.npy", allow_pickle=False)
        campaigns = [(harness_named(e["harness"]), e["offset"], e["count"], e["seed"])
                     for e in info["campaigns"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{directory} is not a device-plan directory: {exc}") from None
    if words_per_harness < 0:
        raise UsageError(f"--words-per-harness must be 0 (all) or more, got {words_per_harness}")
    provenance = info.get("provenance") or {}
    sm, label = sm_of(provenance), gpu or gpu_label(provenance)
    if hardware_words is not None and provenance.get("source") != "hardware":
        raise UsageError(f"{directory}: its words come from {provenance.get('source')!r}, not "
                         "hardware; a hardware-word file holds only words observed on a GPU")
    results, lines = [], []
    for h, offset, count, seed in campaigns:
        observed = words[offset:offset + count]
        results.append(compare(h, observed, seed, sm=sm))
        if hardware_words is not None:
            lines += [dict(line, gpu=label) for line in hardware_lines(
                h, observed, seed, provenance, words_per_harness)]
        print(f"compared {h.name}", file=sys.stderr, flush=True)
    text = findings_markdown(results)
    findings = [f for f in (finding_text(r, label) for r in results) if f]
    print(f"provenance: {json.dumps(provenance)}\n{text}")
    for finding in findings:
        print(finding)
    print(f"{len(findings)} finding(s) in {len(results)} campaign(s) on {label}"
          + (f" (sm_{sm})" if sm is not None else "")
          + "; a finding is about the model, reported beside it, not an edited word")
    with atomic_file(directory / "findings.json", replace=True) as handle:
        json.dump(results, handle, indent=1)
    if markdown:
        from tcspec.outputs import write_text

        write_text(markdown, text, force=force)
    if hardware_words is not None:
        path = Path(hardware_words) if hardware_words else hardware_file(label)
        kept = write_hardware_words(path, lines)
        print(f"wrote {path}: {len(lines)} hardware word(s) of {label} "
              f"({len({line['datapath'] for line in lines})} architecture datapaths; "
              f"{kept} earlier line(s) kept); tcgen05-fallback rows are left out")
    return 1 if findings else 0
