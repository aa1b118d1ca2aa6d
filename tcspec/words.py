"""Words in and out of the command line: hex parsing, result words for people, progress.

Shared by the command line and the workflows that print words (explain, the
tour, the reports). :class:`UsageError` is bad input from the command line:
``tcspec`` prints it as one line ``tcspec: error: ...`` and exits with
:data:`EXIT_USAGE`.
"""

from __future__ import annotations

import struct
import sys
import time
from collections.abc import Sequence

EXIT_MISMATCH = 1
EXIT_USAGE = 2


class UsageError(ValueError):
    """Bad input from the command line."""


def parse_hex_word(text: str, what: str, bits: int = 32) -> int:
    """``0x3f800000`` or ``3f800000`` -> int, checked against ``bits``."""
    token = text.strip()
    digits = token[2:] if token[:2].lower() == "0x" else token
    if not digits or any(ch not in "0123456789abcdefABCDEF_" for ch in digits):
        raise UsageError(f"{what}: {token!r} is not a hex word")
    value = int(digits.replace("_", ""), 16)
    if value >= 1 << bits:
        raise UsageError(f"{what}: {token} does not fit in {bits} bits")
    return value


MAX_WORDS_FILE = 1 << 20
"""Largest ``@file`` of words read (bytes)."""


def words_text(text: str, what: str) -> str:
    """``text``, or the contents of FILE for ``@FILE`` (``#`` starts a comment)."""
    if not text.startswith("@"):
        return text
    path = text[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            data = handle.read(MAX_WORDS_FILE + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: cannot read {path}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > MAX_WORDS_FILE:
        raise UsageError(f"{what}: {path} is larger than {MAX_WORDS_FILE} bytes")
    return " ".join(line.split("#", 1)[0] for line in data.splitlines())


def parse_hex_list(text: str, what: str, bits: int = 32) -> list[int]:
    """Comma- or space-separated hex words, or ``@FILE`` holding them."""
    text = words_text(text, what)
    parts = [p for p in text.replace(" ", ",").replace("\t", ",").split(",") if p.strip()]
    if len(parts) > 4096:
        raise UsageError(f"{what}: {len(parts)} words; no datapath reads more than 4096")
    if not parts:
        raise UsageError(f"{what}: no words given")
    return [parse_hex_word(p, f"{what}[{i}]", bits) for i, p in enumerate(parts)]


def describe_word(word: int, d_type: str) -> str:
    """A human reading of a result word (host floats are used here for display only)."""
    if d_type == "s32":
        return str(word - (1 << 32) if word >> 31 else word)
    if d_type == "f16":
        value = struct.unpack("<e", struct.pack("<H", word))[0]
    else:
        value = struct.unpack("<f", struct.pack("<I", word))[0]
    if value != value:
        return "NaN"
    return repr(value)


def hex_word(word: int, d_type: str = "f32") -> str:
    return f"0x{word:04X}" if d_type == "f16" else f"0x{word:08X}"


def format_words(words: Sequence[int], limit: int = 8) -> str:
    shown = ",".join(f"0x{w:X}" for w in words[:limit])
    return f"[{shown}{',...' if len(words) > limit else ''}] ({len(words)})"


class ProgressLine:
    """Prints ``NAME: N cases checked`` to stderr at most every ``every`` seconds."""

    def __init__(self, name: str, every: float = 2.0, verb: str = "checked") -> None:
        self.name = name
        self.verb = verb
        self.every = every
        self.started = self.last = time.monotonic()

    def __call__(self, cases: int) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            print(f"  {self.name}: {cases} cases {self.verb} ({now - self.started:.0f}s)",
                  file=sys.stderr, flush=True)


