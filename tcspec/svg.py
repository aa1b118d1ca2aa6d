"""The bit-alignment picture of ``tcspec explain --svg`` (SEMANTICS.md sections 2.4-2.7, 4).

One row per nonzero aligned term, its significand bits placed at their
exponents; the window (bits at or above the quantum ``2^q``) is a band,
bits below it are shaded as lost; the exact sum and the result's kept
bits are drawn below. Everything shown comes from a recorded
:class:`tcspec.explain.Alignment`; the SVG is self-contained.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from xml.sax.saxutils import escape, quoteattr

from tcspec.explain import Alignment, hexfloat

CELL_W = 14
CELL_H = 18
LABEL_W = 120
CHAR_W = 7
TOP = 58
BELOW_WINDOW = 16
"""Columns drawn below the quantum; lower bits are counted, not drawn."""


def _bits(mag: int, lsb: int) -> tuple[int, int]:
    """``mag`` without trailing zero bits, and the exponent of its lowest bit."""
    if mag == 0:
        return 0, lsb
    zeros = (mag & -mag).bit_length() - 1
    return mag >> zeros, lsb + zeros


def _top_bit(mag: int, lsb: int) -> int:
    return lsb + mag.bit_length() - 1


KEPT = "#2563eb"
LOST = "#f87171"
LEGEND = [("#2563eb", "one-bit kept: at or above the quantum 2^q, inside the window"),
          ("#f87171", "one-bit lost: below the quantum, truncated toward zero (SEMANTICS.md "
                      "2.5)"),
          ("#dbeafe", "the window band: the bits the fixed-point sum keeps"),
          ("#e5e7eb", "below the window: every bit here is lost")]


def _clipped(mag: int, lsb: int, lo: int) -> int:
    """One-bits of ``mag * 2^lsb`` below ``2^lo`` (not drawn, counted in the note)."""
    if lsb >= lo:
        return 0
    return bin(mag & ((1 << (lo - lsb)) - 1)).count("1")


def _panel(alignment: Alignment | None, title: str, note: str = "") -> tuple[list[str], int, int]:
    """The elements of one model's picture, its width and its height (text included)."""
    if alignment is None:
        text = note or "this model records no window alignment to draw"
        lines = [f'<text x="8" y="16" font-size="13">{escape(title)}</text>',
                 f'<text x="8" y="36">{escape(text)}</text>']
        return lines, 16 + int(max(len(title) * 8, len(text) * CHAR_W)), 48
    q = alignment.quantum
    terms = [t for t in alignment.terms if t.mag]
    sum_mag = abs(alignment.total_units)
    tops = [_top_bit(t.mag, t.lsb) for t in terms] + [q]
    if sum_mag:
        tops.append(_top_bit(sum_mag, q))
    if alignment.window_top is not None:
        tops.append(alignment.window_top)
    hi = max(tops)
    lowest = min([_bits(t.mag, t.lsb)[1] for t in terms] + [q])
    lo = max(lowest, q - BELOW_WINDOW)
    notes = []
    for t in terms:
        text = f"{t.units} units; exact {hexfloat(t.value)}"
        hidden = _clipped(t.mag, t.lsb, lo)
        notes.append(f"{text}; {hidden} more one-bits below 2^{lo}" if hidden else text)
    total = alignment.total_units * Fraction(2) ** q
    sum_note = f"{alignment.total_units} units of 2^{q} = {hexfloat(total)}"
    result_drawn = alignment.result_lsb is not None and bool(alignment.result_kept)
    result_note = alignment.result_text
    if result_drawn:
        hidden = _clipped(alignment.result_kept, alignment.result_lsb, lo)  # type: ignore[arg-type]
        if hidden:
            result_note = f"{result_note}; {hidden} more one-bits below 2^{lo}"

    def x_of(exponent: int) -> int:
        return LABEL_W + (hi - exponent) * CELL_W

    band_left, band_right = x_of(hi), x_of(q) + CELL_W
    x_notes = x_of(lo) + CELL_W + 6
    window_text = (f"window: {alignment.window_bits} bits below 2^{alignment.window_top}, "
                   if alignment.window_top is not None else "window: ")
    window_text += f"units of 2^{q}; shaded bits are lost"
    longest = max(len(n) for n in [*notes, sum_note, result_note])
    width = max(x_notes + longest * CHAR_W, band_left + len(window_text) * CHAR_W,
                8 + len(title) * 8, 8 + (len(result_note) + 8) * CHAR_W) + 16
    height = TOP + (len(terms) + 3) * CELL_H + 8
    out = [f'<text x="8" y="16" font-size="13">{escape(title)}</text>']
    band_top, band_height = TOP - 4, len(terms) * CELL_H + 8
    out += [f'<rect class="window" x="{band_left}" y="{band_top}" '
            f'width="{band_right - band_left}" height="{band_height}" fill="#dbeafe" '
            f'stroke="#2563eb"/>',
            f'<text x="{band_left}" y="{TOP - 22}" fill="#1d4ed8">{escape(window_text)}</text>',
            f'<rect class="lost" x="{band_right}" y="{band_top}" '
            f'width="{x_of(lo) + CELL_W - band_right}" height="{band_height}" '
            f'fill="#e5e7eb"/>']
    for exponent in range(hi, lo - 1, -1):
        if exponent == q or (exponent % 4 == 0 and abs(exponent - q) > 2):
            out.append(f'<text x="{x_of(exponent) + 1}" y="{TOP - 8}" font-size="8" '
                       f'fill="#555">{exponent}</text>')
    y = TOP
    for term, text in zip(terms, notes, strict=True):
        out.append(_row(term.label, term.mag, term.lsb, q, lo, x_of, y, term.negative, text,
                        "term"))
        y += CELL_H
    y += CELL_H // 2
    out.append(f'<line x1="{LABEL_W}" y1="{y}" x2="{x_of(lo) + CELL_W}" y2="{y}" '
               'stroke="black"/>')
    y += 4
    out.append(_row("sum", sum_mag, q, q, lo, x_of, y, total < 0, sum_note, "sum"))
    y += CELL_H
    if result_drawn:
        out.append(_row("result", alignment.result_kept, alignment.result_lsb, q, lo,  # type: ignore[arg-type]
                        x_of, y, alignment.total_units < 0, result_note, "result"))
    else:
        out.append(f'<text x="8" y="{y + 13}">result  {escape(result_note)}</text>')
    return out, width, height


def _legend(y: int) -> tuple[list[str], int, int]:
    out = [f'<text x="8" y="{y + 12}" font-weight="bold">legend</text>']
    y += 18
    for colour, text in LEGEND:
        out.append(f'<rect class="legend" x="8" y="{y}" width="{CELL_W - 1}" '
                   f'height="{CELL_H - 4}" fill="{colour}" stroke="#9ca3af" stroke-width="0.5"/>')
        out.append(f'<text x="{8 + CELL_W + 6}" y="{y + 11}">{escape(text)}</text>')
        y += CELL_H
    width = 8 + CELL_W + 6 + max(len(t) for _, t in LEGEND) * CHAR_W + 16
    return out, width, y + 8


def panels_svg(panels: list[tuple[Alignment | None, str, str]]) -> str:
    """A standalone SVG document: each ``(alignment, title, note)`` panel stacked (``--vs``
    draws both models), then the legend. Every text fits inside the canvas."""
    body, width, y = [], 0, 0
    for alignment, title, note in panels:
        elements, w, h = _panel(alignment, title, note)
        body.append(f'<g transform="translate(0,{y})">' + "\n".join(elements) + "</g>")
        width, y = max(width, w), y + h + 12
    legend, w, y = _legend(y)
    width = max(width, w)
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
                      f'viewBox="0 0 {width} {y}" font-family="monospace" font-size="11">',
                      f'<rect width="{width}" height="{y}" fill="white"/>', *body, *legend,
                      "</svg>"]) + "\n"


def alignment_svg(alignment: Alignment, title: str) -> str:
    """A standalone SVG document picturing ``alignment`` (:func:`panels_svg`, one panel)."""
    return panels_svg([(alignment, title, "")])


def _row(label: str, mag: int, lsb: int, q: int, lo: int, place: Callable[[int], int],
         y: int, negative: bool, note: str, kind: str) -> str:
    """One ``<g>`` row: label, a cell per bit from the top one down, and a note."""
    parts = [f'<g class={quoteattr(kind)} data-label={quoteattr(label)}>',
             f'<text x="8" y="{y + 13}">{escape(("-" if negative else "+") + " " + label)}'
             '</text>']
    top = _top_bit(mag, lsb) if mag else lsb
    for exponent in range(top, lsb - 1, -1):
        bit = (mag >> (exponent - lsb)) & 1
        if exponent < lo:
            break
        lost = exponent < q
        fill = (LOST if lost else KEPT) if bit else ("#f3f4f6" if lost else "#ffffff")
        x = place(exponent)
        parts.append(f'<rect x="{x}" y="{y}" width="{CELL_W - 1}" height="{CELL_H - 2}" '
                     f'fill="{fill}" stroke="#9ca3af" stroke-width="0.5"/>')
        parts.append(f'<text x="{x + 4}" y="{y + 12}" fill="{"white" if bit else "#6b7280"}">'
                     f'{bit}</text>')
    x_end = place(lo) + CELL_W + 6
    parts.append(f'<text x="{x_end}" y="{y + 13}">{escape(note)}</text>')
    parts.append("</g>")
    return "".join(parts)
