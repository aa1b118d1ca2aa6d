"""Atomic output files: written under a temporary name in the target's directory, renamed last.

A minimal local helper; issue 19 adds the shared ``tcspec/outputs.py``, and this
module goes into it when the two branches merge.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_text(path: str | Path) -> Iterator[IO[str]]:
    """A text handle whose file appears at ``path`` only when the block finishes; on an
    error or Ctrl-C the temporary file is removed and ``path`` is left as it was."""
    path = Path(path)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                    dir=path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
