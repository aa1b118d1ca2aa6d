"""The proof matrix: which rows exist, running them in parallel, and the report.

Every property family module of ``proofs/`` lists its :class:`Property`
entries in ``PROPERTIES``; :data:`FAMILIES` names those modules. A row is
(property, datapath, K); the required matrix is every property's
``required`` datapaths at the property's default K. Queries run in solver
child processes, so ``jobs`` rows run at once in threads.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import json
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcspec.proofs.core import (
    PROVED,
    REFUTED,
    UNKNOWN,
    WITNESS,
    Property,
    Row,
    Settings,
    second_opinions,
    source_key,
    timed,
)
from tcspec.smt.solve import stop_solvers
from tcspec.spec.catalog import CATALOG, lookup
from tcspec.spec.descriptor import Descriptor

FAMILIES = ("tcspec.proofs.sparse", "tcspec.proofs.carry", "tcspec.proofs.permutation",
            "tcspec.proofs.sign", "tcspec.proofs.error_bound", "tcspec.proofs.compiler_facts",
            "tcspec.proofs.equals_reference", "tcspec.proofs.families.sign_symmetry",
            "tcspec.proofs.families.unread_bits", "tcspec.proofs.families.lane_order",
            "tcspec.proofs.families.sparse_masking")
"""The property family modules, one per family (DESIGN.md layout)."""

DECIDED = (PROVED, REFUTED, WITNESS)
"""Verdicts a cached row may reuse (an unknown row is always re-decided)."""

REPORT_DIR = Path(__file__).resolve().parent
REPORT_JSON = REPORT_DIR / "REPORT.json"
REPORT_MD = REPORT_DIR / "REPORT.md"


def properties() -> dict[str, Property]:
    """Every property of every family module, by name."""
    found: dict[str, Property] = {}
    for module_name in FAMILIES:
        module = importlib.import_module(module_name)
        for prop in module.PROPERTIES:
            found[prop.name] = prop
    return found


@dataclass(frozen=True)
class RowSpec:
    """One row to decide."""

    prop: Property
    desc: Descriptor
    k: int


def datapath_names(pattern: str) -> list[str]:
    """The catalogue names a ``--datapath`` value selects: comma-separated names or shell
    patterns (``sm_*``, ``dense-mx-*``), in catalogue order; ``ValueError`` names a part
    that selects nothing."""
    chosen: set[str] = set()
    for part in (p.strip() for p in pattern.split(",")):
        if not part:
            continue
        if any(c in part for c in "*?["):
            found = {name for name in CATALOG if fnmatch.fnmatchcase(name, part)}
            if not found:
                raise ValueError(f"--datapath pattern {part!r} matches no datapath")
            chosen |= found
        else:
            chosen.add(lookup(part).descriptor.name)
    return [name for name in CATALOG if name in chosen]


def select_rows(property_name: str | None = None, datapath: str | None = None,
                k: int | None = None, fast: bool = False, every: bool = False
                ) -> list[RowSpec]:
    """The rows a ``tcspec prove`` call asks for; ``ValueError`` names bad input.

    ``property_name`` may name several properties, comma separated.
    No datapath: each property's required datapaths (or its fast rows).
    A datapath: the selected properties the matrix requires for it (``every``:
    all that apply to it).
    """
    props = properties()
    if property_name is not None:
        names = [name.strip() for name in property_name.split(",")]
        for name in names:
            if name not in props:
                from tcspec.spec.names import did_you_mean

                raise ValueError(f"unknown property {name!r}{did_you_mean(name, props)}; "
                                 f"known: {', '.join(props)}")
        chosen = [props[name] for name in dict.fromkeys(names)]
    else:
        chosen = list(props.values())
    rows: list[RowSpec] = []
    if datapath is not None and ("," in datapath or any(c in datapath for c in "*?[")):
        names = datapath_names(datapath)
        for name in names:
            desc = CATALOG[name].descriptor
            for prop in chosen:
                if prop.applies(desc) and (every or property_name is not None
                                           or desc.name in prop.required):
                    rows.append(RowSpec(prop, desc, prop.k_for(desc) if k is None else k))
        if not rows:
            raise ValueError(f"no selected property applies to the datapaths of {datapath!r}")
        for spec in rows:
            spec.prop.check_k(spec.desc, spec.k)
        return rows
    if datapath is not None:
        desc = lookup(datapath).descriptor
        usable = [p for p in chosen if p.applies(desc)]
        if not usable:
            raise ValueError(f"property {property_name} does not apply to {desc.name}"
                             if property_name else f"no property applies to {desc.name}")
        if not every and property_name is None:
            required = [p for p in usable if desc.name in p.required]
            if not required:
                raise ValueError(f"the matrix requires no property of {desc.name}; "
                                 f"--all-properties runs the {len(usable)} that apply")
            usable = required
        for prop in usable:
            row_k = prop.k_for(desc) if k is None else k
            prop.check_k(desc, row_k)
            rows.append(RowSpec(prop, desc, row_k))
        return rows
    for prop in chosen:
        pairs = prop.fast if fast else [(name, None) for name in prop.required]
        for name, fast_k in pairs:
            desc = CATALOG[name].descriptor
            row_k = k if k is not None else (fast_k or prop.k_for(desc))
            prop.check_k(desc, row_k)
            rows.append(RowSpec(prop, desc, row_k))
    return rows


def row_key_of(spec: RowSpec, settings: Settings) -> str:
    """The row's cache key: its property's own (the engine families: the traced DAGs), else
    :func:`core.source_key` (the code that decides it)."""
    if spec.prop.key is not None:
        return spec.prop.key(spec.desc, spec.k, settings)
    return source_key(spec.prop.name, spec.desc, spec.k, settings)


def cached_row(spec: RowSpec, settings: Settings,
               previous: dict[tuple[str, str, int], Row]) -> Row | None:
    """The previous run's row for ``spec`` when its property keys its rows and the key
    (traced DAGs, solver, limits) is unchanged and the verdict decided; else None."""
    old = previous.get((spec.prop.name, spec.desc.name, spec.k))
    if old is None or not old.key or old.result not in DECIDED:
        return None
    if row_key_of(spec, settings) != old.key:
        return None
    row = dataclasses.replace(old)
    row.from_cache = True  # type: ignore[attr-defined]
    return row


class RowsInterruptedError(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while rows were decided. ``rows``: the verdicts reached, in the
    order asked; after the first pass (``second_pass``) every row with its first-pass
    verdict, a row whose second opinion did not finish saying so in its detail."""

    def __init__(self, rows: list[Row], second_pass: bool) -> None:
        super().__init__()
        self.rows = rows
        self.second_pass = second_pass


SECOND_INTERRUPTED = "second opinion interrupted (Ctrl-C); the first-pass verdict stands"


def run_rows(rows: Sequence[RowSpec], settings: Settings,
             progress: Callable[[Row, int, int], None] | None = None,
             second_progress: Callable[[Row, int, int], None] | None = None,
             passes: dict[str, float] | None = None,
             previous: dict[tuple[str, str, int], Row] | None = None) -> list[Row]:
    """Decide every row, ``settings.jobs`` at a time; results in the order given.

    With a second solver there are two passes: the first decides every row with the first
    solver alone (``progress`` per row), the second asks the second solver of every query
    the first proved (``second_progress`` per row). ``passes`` gets each pass's wall
    seconds (``first_pass_seconds``, ``second_pass_seconds``). A row of ``previous``
    (the committed report's rows) whose key is unchanged is reused (:func:`cached_row`);
    ``passes["from_cache"]`` counts them. An interrupt raises :class:`RowsInterruptedError`
    with the verdicts reached; one during the second opinions keeps every first-pass
    verdict."""
    first = dataclasses.replace(settings, second_later=bool(settings.second_solver))

    def one(spec: RowSpec) -> Row:
        reused = cached_row(spec, settings, previous or {})
        if reused is not None:
            return reused
        row = timed(lambda: spec.prop.check(spec.desc, spec.k, first),
                    f"{spec.prop.name} {spec.desc.name} K={spec.k}")
        row.property, row.datapath, row.k, row.hardware_k = (spec.prop.name, spec.desc.name,
                                                             spec.k, spec.desc.k)
        if not row.key and spec.prop.key is None:
            row.key = source_key(spec.prop.name, spec.desc, spec.k, settings)
        return row

    start = time.monotonic()
    results = _in_pool(rows, one, settings.jobs, progress)
    middle = time.monotonic()
    if settings.second_solver:
        def again(row: Row) -> Row:
            second_opinions(row, settings)
            return row

        try:
            _in_pool(results, again, settings.jobs, second_progress)
        except KeyboardInterrupt:
            for row in results:
                if hasattr(row, "pending"):
                    del row.pending
                    row.detail = "; ".join(filter(None, [row.detail, SECOND_INTERRUPTED]))
            if passes is not None:
                passes["first_pass_seconds"] = round(middle - start, 1)
                passes["second_pass_seconds"] = round(time.monotonic() - middle, 1)
                passes["second_pass_interrupted"] = True
            raise RowsInterruptedError(results, True) from None
    if passes is not None:
        passes["first_pass_seconds"] = round(middle - start, 1)
        passes["second_pass_seconds"] = round(time.monotonic() - middle, 1)
        passes["from_cache"] = sum(bool(getattr(r, "from_cache", False)) for r in results)
    return results


def previous_rows(path: Path = REPORT_JSON) -> dict[tuple[str, str, int], Row]:
    """The rows of a report file by (property, datapath, K); empty when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {_row_key(row): row for row in (row_from_json(d) for d in data["rows"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _in_pool(items: Sequence[Any], work: Callable[[Any], Row], jobs: int,
             progress: Callable[[Row, int, int], None] | None) -> list[Row]:
    """``work`` on every item, ``jobs`` at a time in daemon threads (the solvers run in child
    processes); results in the order given. On an interrupt or an error the solvers are
    stopped and no item starts any more; a thread still building a formula is never waited
    for (it dies with the process). An interrupt raises :class:`RowsInterruptedError` with
    the rows finished so far."""
    results: dict[int, Row] = {}
    finished: queue.SimpleQueue[tuple[int, Row | None, BaseException | None]] = \
        queue.SimpleQueue()
    todo = iter(list(enumerate(items)))
    guard = threading.Lock()
    stopping = threading.Event()

    def worker() -> None:
        while not stopping.is_set():
            with guard:
                item = next(todo, None)
            if item is None:
                return
            try:
                finished.put((item[0], work(item[1]), None))
            except BaseException as exc:
                finished.put((item[0], None, exc))
                return

    try:
        for n in range(min(max(1, jobs), len(items))):
            threading.Thread(target=worker, name=f"prove-row-{n}", daemon=True).start()
        while len(results) < len(items):
            index, row, error = finished.get()
            if error is not None:
                raise error
            assert row is not None
            results[index] = row
            if progress:
                progress(row, len(results), len(items))
    except KeyboardInterrupt:
        stopping.set()
        stop_solvers()
        raise RowsInterruptedError([results[i] for i in sorted(results)], False) from None
    except BaseException:
        stopping.set()
        stop_solvers()
        raise
    return [results[i] for i in range(len(items))]


def describe_row(row: Row) -> str:
    """One line: property, datapath, K, result, solver, time, method, second opinion."""
    k = f"K={row.k}" + (f" (model; hardware K={row.hardware_k})" if row.model_k else "")
    second = ""
    if row.second:
        second = f"; {row.second['solver']}: {row.second['result']} " \
                 f"{row.second['seconds']:.1f}s"
    cached = " (from the cache: key unchanged)" if getattr(row, "from_cache", False) else ""
    return (f"{row.property:22} {row.datapath:26} {k:28} {row.result:8} "
            f"{row.solver} {row.seconds:.1f}s {row.method}{second}{cached}")


def summary_counts(rows: Sequence[Row]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.result] = counts.get(row.result, 0) + 1
    return counts


def _row_key(row: Row) -> tuple[str, str, int]:
    return row.property, row.datapath, row.k


def row_from_json(data: dict[str, Any]) -> Row:
    """A report row read back from ``REPORT.json``."""
    fields = {k: v for k, v in data.items() if k not in ("model_k", "run")}
    return Row(**fields)


def _record_key(data: dict[str, Any]) -> tuple[str, str, int]:
    return data["property"], data["datapath"], data["k"]


def _kept_second(new: dict[str, Any], old: dict[str, Any] | None,
                 settings: Settings) -> dict[str, Any] | None:
    """The committed second opinion a re-decided row keeps: when this run gave it none (the
    run asked for none, or it was interrupted) and the row reached the committed verdict
    again; it names the run it came from."""
    if new.get("second") or old is None or not old.get("second"):
        return None
    if new["result"] != old["result"]:
        return None
    if settings.second_solver and SECOND_INTERRUPTED not in new.get("detail", ""):
        return None
    return {**old["second"], "run": old["second"].get("run", old.get("run", 0))}


def merged_records(previous: dict[str, Any], rows: Sequence[Row], settings: Settings
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[int]]:
    """The records of the committed report ``previous`` with ``rows`` put in place of the
    records of the same (property, datapath, K) and new ones appended; the runs. Every
    other record is kept as it was written, byte for byte once dumped (evidence, second
    opinions and figures); the set holds the indices of the records this run wrote."""
    runs = list(previous.get("runs") or [dict(previous["run"], index=0)])
    records = [dict(d, run=d.get("run", 0)) for d in previous["rows"]]
    where = {_record_key(d): i for i, d in enumerate(records)}
    fresh: set[int] = set()
    for row in rows:
        key = _row_key(row)
        old = records[where[key]] if key in where else None
        if getattr(row, "from_cache", False) and old is not None:
            continue
        record = dict(row.to_json(), run=len(runs))
        second = _kept_second(record, old, settings)
        if second is not None:
            record["second"] = second
        if key in where:
            records[where[key]] = record
        else:
            where[key] = len(records)
            records.append(record)
        fresh.add(where[key])
    return records, runs, fresh


def merged_rows(previous: dict[str, Any], rows: Sequence[Row]
                ) -> tuple[list[Row], list[dict[str, Any]], dict[tuple[str, str, int], int]]:
    """The rows of the committed report ``previous`` with ``rows`` put in place of the rows
    of the same (property, datapath, K), and new ones appended; the runs each came from."""
    records, runs, _ = merged_records(previous, rows, Settings())
    return ([row_from_json(d) for d in records], runs,
            {_record_key(d): d["run"] for d in records})


def _md_line(record: dict[str, Any]) -> str:
    """The table line of one report record (its figures as the JSON holds them)."""
    k = f"{record['k']}" + (" (model)" if record.get("model_k") else "")
    second = record.get("second")
    second_text = "-" if not second else (
        f"{second['solver']} {second['result']} {second['seconds']:.1f}s"
        + (f" (run {second['run']})" if "run" in second else ""))
    detail = record.get("detail", "").replace("|", "/")
    lemmas = record.get("lemmas") or []
    if lemmas:
        detail = (detail + "; " if detail else "") + "lemmas: " + ", ".join(
            f"{lem['name']} ({lem['result']}, {lem['seconds']:.1f}s)" for lem in lemmas)
    words = record.get("words") or {}
    if words:
        detail += ("; " if detail else "") + "words: " + ", ".join(
            f"{name}=0x{value:X}" for name, value in list(words.items())[:12])
    return (f"| {record['property']} | {record['datapath']} | {k} | {record['result']} | "
            f"{record['solver']} | {record['seconds']:.1f} | {record['method']} | "
            f"{second_text} | {detail} | {record.get('run', 0)} |")


def _line_key(line: str) -> tuple[str, ...]:
    """(property, datapath, K cell) of a table line."""
    return tuple(line.split(" | ")[:3])


def _previous_lines(md_text: str | None) -> dict[tuple[str, ...], str]:
    """The table lines of a committed ``REPORT.md`` by :func:`_line_key`."""
    return {_line_key(line): line for line in (md_text or "").splitlines()
            if line.startswith("| ") and line.count(" | ") >= 3}


def report_texts(rows: Sequence[Row], settings: Settings, seconds: float,
                 previous: dict[str, Any] | None = None,
                 passes: dict[str, float] | None = None,
                 previous_md: str | None = None) -> tuple[str, str]:
    """The texts of ``REPORT.json`` (the rows) and ``REPORT.md`` (a readable table).

    With ``previous`` (the committed report), only ``rows`` are re-decided: they replace
    the rows of the same (property, datapath, K) and every other row keeps its record and
    run untouched (:func:`merged_records`); with ``previous_md`` (the committed table) its
    lines are kept too, so no figure of an untouched row is rounded again."""
    meta = {"solver": settings.solver, "timeout": settings.timeout,
            "second_solver": settings.second_solver, "second_timeout": settings.second_timeout,
            "jobs": settings.jobs, "wall_seconds": round(seconds, 1),
            "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **(passes or {})}
    if previous is None:
        records = [dict(r.to_json(), run=0) for r in rows]
        runs, fresh = [dict(meta, index=0)], set(range(len(records)))
    else:
        records, runs, fresh = merged_records(previous, rows, settings)
        runs = [*runs, dict(meta, index=len(runs), rows=len(rows))]
    json_text = json.dumps({"run": runs[-1], "runs": runs, "rows": records}, indent=1) + "\n"
    lines = ["# Proof report", ""]
    for run in runs:
        what = "every row" if "rows" not in run else f"{run['rows']} row(s) re-decided"
        lines.append(f"Run {run['index']}, {run['finished']} ({what}): {run['solver']} "
                     f"(per-query timeout {run['timeout']:g} s), second opinion "
                     f"{run['second_solver'] or 'none'} ({run['second_timeout']:g} s), "
                     f"{run['jobs']} jobs, {run['wall_seconds'] / 60:.1f} minutes wall"
                     + (f" (first pass {run['first_pass_seconds'] / 60:.1f}, second opinions "
                        f"{run['second_pass_seconds'] / 60:.1f})."
                        if "first_pass_seconds" in run else ".")
                     + (f" {run['from_cache']} row(s) reused from the cache (key unchanged)."
                        if run.get("from_cache") else "")
                     + (" Second opinions interrupted (Ctrl-C): first-pass verdicts kept."
                        if run.get("second_pass_interrupted") else ""))
    counts: dict[str, int] = {}
    for record in records:
        counts[record["result"]] = counts.get(record["result"], 0) + 1
    lines += ["", "Counts: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())),
              "", "| property | datapath | K | result | solver | s | method | second opinion "
              "| detail | run |", "|---|---|---|---|---|---|---|---|---|---|"]
    kept = _previous_lines(previous_md)
    for index, record in enumerate(records):
        line = _md_line(record)
        old = kept.get(_line_key(line))
        if index not in fresh and old is not None and old.endswith(f"| {record['run']} |"):
            line = old
        lines.append(line)
    return json_text, "\n".join(lines) + "\n"


def write_report(rows: Sequence[Row], settings: Settings, seconds: float,
                 json_path: Path = REPORT_JSON, md_path: Path = REPORT_MD) -> None:
    """Write :func:`report_texts` to ``json_path`` and ``md_path`` (the command line writes
    them atomically through ``tcspec.outputs``)."""
    json_text, md_text = report_texts(rows, settings, seconds)
    json_path.write_text(json_text, encoding="utf-8")
    md_path.write_text(md_text, encoding="utf-8")


def report_files() -> list[Path]:
    """The committed matrices: REPORT.json and every architecture's proofs/arch/REPORT-*."""
    return [REPORT_JSON, *sorted((REPORT_DIR / "arch").glob("REPORT-*.json"))]


def proof_counts(paths: Path | Sequence[Path] | None = None) -> dict[str, dict[str, int]]:
    """Per datapath, how many rows of the committed reports (:func:`report_files`) are
    proved (or witnessed) / unknown / refuted."""
    counts: dict[str, dict[str, int]] = {}
    for path in report_files() if paths is None else [paths] if isinstance(paths, Path) \
            else paths:
        if not path.is_file():
            continue
        try:
            rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for row in rows:
            entry = counts.setdefault(row["datapath"],
                                      {"proved": 0, "unknown": 0, "refuted": 0})
            if row["result"] in (PROVED, "witness"):
                entry["proved"] += 1
            elif row["result"] == UNKNOWN:
                entry["unknown"] += 1
            else:
                entry["refuted"] += 1
    return counts


def property_rows(name: str, path: Path = REPORT_JSON) -> dict[str, dict[str, Any]]:
    """Datapath -> its row of property ``name`` at the instruction's K in the committed
    report."""
    try:
        rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {row["datapath"]: row for row in rows
            if row.get("property") == name and not row.get("model_k")}


def equals_reference_rows(path: Path = REPORT_JSON) -> dict[str, dict[str, Any]]:
    """Datapath -> its ``equals-reference`` row in the committed report."""
    return property_rows("equals-reference", path)


def equals_reference_results(path: Path = REPORT_JSON) -> dict[str, str]:
    """Datapath -> its ``equals-reference`` verdict in the committed report."""
    return {name: row["result"] for name, row in equals_reference_rows(path).items()}
