"""``tcspec eval`` and ``tcspec explain``: one dot product given on the command line.

Both read the same input flags (a datapath or descriptor fields, hex A, B
and C words, scale bytes, sparse metadata), checked by :mod:`ref.inputs`:
a word that is almost surely a layout mistake (SEMANTICS.md section 1; the
table is in ``tcspec eval --help``) is refused unless ``--raw-containers``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from tcspec.explain import compare, explain, vector_line
from tcspec.outputs import write_text
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.inputs import check_layout, prepare_dot, require_scales
from tcspec.spec.catalog import is_specified, lookup
from tcspec.spec.descriptor import resolve
from tcspec.svg import panels_svg
from tcspec.words import UsageError, describe_word, hex_word, parse_hex_list, parse_hex_word


def _descriptor_from_args(args: argparse.Namespace, sparse: bool) -> Any:
    fields = {k: getattr(args, k) for k in ("a_format", "b_format", "d_type", "scaling", "kind",
                                             "scale_vec") if getattr(args, k) is not None}
    if args.saturate:
        fields["saturate"] = True
    if args.datapath:
        if fields:
            raise UsageError("give either --datapath or descriptor fields (--a-format, ...), "
                             "not both")
        desc = lookup(args.datapath).descriptor
        if desc.sparse != sparse:
            need = "needs --metadata" if desc.sparse else "is dense: drop --metadata"
            raise UsageError(f"{desc.name} {need}")
        return desc
    if "a_format" not in fields:
        raise UsageError("give --datapath NAME (see `tcspec list`) or --a-format FORMAT")
    return resolve(**fields, sparse=sparse)


def _dot_from_args(args: argparse.Namespace) -> tuple[Any, list[int], dict[str, Any]]:
    """The descriptor, the checked input words and the parsed fields of eval's input flags."""
    metadata: int | list[int] | None = None
    if args.metadata:
        words = parse_hex_list(args.metadata, "--metadata")
        metadata = words[0] if len(words) == 1 else words
    desc = _descriptor_from_args(args, sparse=metadata is not None)
    if not is_specified(desc):
        raise UsageError(f"datapath {desc.name} is not yet specified in this build")
    if args.a is None or args.b is None:
        raise UsageError("give --a and --b (comma-separated hex words)")
    fields = {"a": parse_hex_list(args.a, "--a"), "b": parse_hex_list(args.b, "--b"),
              "c": parse_hex_word(args.c, "--c"),
              "scale_a": parse_hex_list(args.scale_a, "--scale-a", 8) if args.scale_a else None,
              "scale_b": parse_hex_list(args.scale_b, "--scale-b", 8) if args.scale_b else None}
    words = prepare_dot(desc, **fields, sparse_metadata=metadata)
    require_scales(desc, fields["scale_a"], fields["scale_b"], "give them as hex bytes",
                   ("--scale-a", "--scale-b"))
    if not args.raw_containers:
        check_layout(desc, words, "--raw-containers")
    return desc, words, fields


def cmd_eval(args: argparse.Namespace) -> int:
    """``tcspec eval``: one dot product from hex words (``--json``: a vector line)."""
    desc, inputs, fields = _dot_from_args(args)
    a, b, c, scale_a, scale_b = (fields[k] for k in ("a", "b", "c", "scale_a", "scale_b"))
    result = compiled_dot(desc)(*inputs)
    if args.json:
        words = inputs[len(inputs) - desc.metadata_words:] if desc.sparse else None
        print(json.dumps({"datapath": desc.name, "descriptor": desc.fields(), "a": a, "b": b,
                          "c": c, "scale_a": scale_a, "scale_b": scale_b,
                          "sparse_metadata": words, "expected": result,
                          "expected_hex": hex_word(result, desc.d_type),
                          "source": "tcspec specification"}))
        return 0
    print(f"{desc.name}  K={desc.k}  ({desc.d_type.upper()} D)")
    print(f"D = {hex_word(result, desc.d_type)}  ({describe_word(result, desc.d_type)})")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    """``tcspec explain``: every stage of one dot product (``--vs``, ``--svg``, ``--json``)."""
    if args.line:
        if args.a or args.b or args.datapath or args.a_format:
            raise UsageError("give either --line FILE:N or the input flags, not both")
        desc, words = vector_line(args.line)
    else:
        desc, words, _ = _dot_from_args(args)
    shown = compare(desc, words, args.vs) if args.vs else explain(desc, words)
    if args.svg:
        models = [shown.left, shown.right] if args.vs else [shown]
        if all(m.alignment is None for m in models):
            raise UsageError(f"{desc.name} has no window to picture (integer sums are exact)")
        write_text(args.svg, panels_svg([(m.alignment, f"{desc.name}: {m.model}",
                                          f"{m.model} records no window alignment to draw "
                                          f"(D = {hex_word(m.word, desc.d_type)}; its stages "
                                          "are in the text output)") for m in models]),
                   force=args.force)
    print(json.dumps(shown.data(), indent=1) if args.json else shown.text())
    if args.svg and not args.json:
        print(f"wrote {args.svg}")
    return 0
