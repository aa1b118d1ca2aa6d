"""Outputs of every command that writes: atomic, protected, one writer at a time.

The rules (issue 19; every writer of the command line goes through here):

- an output is written under a temporary name in its target's directory and
  moved into place only when the whole command has succeeded; on an error,
  Ctrl-C or SIGTERM the temporary output is removed and the target is left
  as it was;
- a user-named target that already exists is refused unless ``force``
  (``--force``); the project's own committed files (``proofs/REPORT.*``,
  ``proofs/MUTANTS.md``) are regenerated with ``replace``, atomically;
- an exclusive lock file ``.NAME.lock`` beside the target is held for the
  whole run, so a second writer of the same path fails at once; without
  ``force`` the final step is a hard link (a file) or a rename (a directory)
  onto a path that must not exist yet, so two writers can never both report
  success.

Problems are :class:`OutputError` (a ``ValueError``: ``tcspec`` prints one
line ``tcspec: error: ...`` and exits 2).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


class OutputError(ValueError):
    """An output that cannot or must not be written."""


def lock_path(target: str | Path) -> Path:
    """The lock file of ``target``: ``.NAME.lock`` in the same directory."""
    target = Path(target)
    return target.with_name(f".{target.name}.lock")


def _owner(lock: Path) -> int | None:
    try:
        return int(lock.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@contextlib.contextmanager
def locked(target: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``target`` for the block. A lock left by a process that
    no longer runs is taken over; one held by a live process is an :class:`OutputError`."""
    target = Path(target)
    lock = lock_path(target)
    for attempt in (0, 1):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            pid = _owner(lock)
            if attempt == 0 and pid is not None and not _alive(pid):
                with contextlib.suppress(OSError):
                    lock.unlink()
                continue
            owner = f"process {pid}" if pid is not None else "another process"
            raise OutputError(f"{target} is being written by {owner} (lock file {lock}); "
                              "wait for it, or remove the lock if no tcspec runs") from None
        except OSError as exc:
            raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)
    try:
        yield lock
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()


def _check_target(target: Path, overwrite: bool, directory: bool) -> None:
    parent = target.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {target}: no such directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {target}: directory {parent} is not writable")
    if not (target.exists() or target.is_symlink()):
        return
    if directory and not target.is_dir():
        raise OutputError(f"{target} exists and is not a directory")
    if not directory and target.is_dir():
        raise OutputError(f"{target} is a directory; name a file")
    if directory and not any(target.iterdir()):
        return
    if not overwrite:
        raise OutputError(f"{target} already exists; give --force to replace it")


def check_targets(targets: Sequence[str | Path], *, force: bool = False,
                  directory: bool = False) -> None:
    """Refuse at once what :func:`atomic_paths` would refuse at its start (a missing or
    unwritable directory, an existing target without ``force``), before a long run."""
    for target in targets:
        _check_target(Path(target), force, directory)


def _temporary(target: Path, directory: bool) -> Path:
    prefix, suffix = f".{target.name}.", ".part"
    try:
        if directory:
            return Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=target.parent))
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)
    return Path(name)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _commit(temp: Path, target: Path, overwrite: bool, directory: bool) -> None:
    """Move ``temp`` onto ``target``: without ``overwrite`` onto a path that must not exist."""
    try:
        if not directory:
            if overwrite:
                os.replace(temp, target)
                return
            try:
                os.link(temp, target)
            except FileExistsError:
                raise OutputError(f"{target} appeared while this run wrote it; it was not "
                                  "replaced (give --force to replace it)") from None
            except OSError:
                if target.exists():
                    raise
                os.rename(temp, target)
                return
            temp.unlink()
            return
        old = None
        if target.exists():
            if not overwrite and any(target.iterdir()):
                raise OutputError(f"{target} appeared while this run wrote it; it was not "
                                  "replaced (give --force to replace it)")
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old",
                                        dir=target.parent))
            os.rename(target, old / "previous")
        os.rename(temp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def atomic_paths(targets: Sequence[str | Path], *, force: bool = False, replace: bool = False,
                 directory: bool = False) -> Iterator[list[Path]]:
    """Temporary paths, one per target, to write into; on success each is moved onto its
    target, on any exception all are removed. ``force``: a user-named target may be
    replaced (``--force``); ``replace``: a project file, always replaced atomically.
    ``directory``: the targets are directories (an existing empty one counts as absent)."""
    paths = [Path(t) for t in targets]
    if len({p.resolve() for p in paths}) != len(paths):
        raise OutputError("the same output path is named twice")
    overwrite = force or replace
    with contextlib.ExitStack() as stack:
        for path in paths:
            _check_target(path, True, directory)
        for path in paths:
            stack.enter_context(locked(path))
        for path in paths:
            _check_target(path, overwrite, directory)
        temps: list[Path] = []
        try:
            for path in paths:
                temps.append(_temporary(path, directory))
            yield temps
            for temp, path in zip(temps, paths, strict=True):
                _commit(temp, path, overwrite, directory)
        finally:
            for temp in temps:
                if temp.exists() or temp.is_symlink():
                    _remove(temp)


@contextlib.contextmanager
def atomic_file(target: str | Path, *, force: bool = False, replace: bool = False,
                mode: str = "w") -> Iterator[IO[Any]]:
    """An open handle (``mode`` ``w`` text UTF-8, or ``wb``) whose file appears at
    ``target`` only when the block finishes (:func:`atomic_paths`)."""
    with atomic_paths([target], force=force, replace=replace) as (temp,):
        encoding = None if "b" in mode else "utf-8"
        with open(temp, mode, encoding=encoding) as handle:
            yield handle


def write_texts(texts: dict[str | Path, str], *, force: bool = False,
                replace: bool = False) -> None:
    """Write every ``{path: text}`` atomically: all appear, or none changes."""
    with atomic_paths(list(texts), force=force, replace=replace) as temps:
        for temp, text in zip(temps, texts.values(), strict=True):
            temp.write_text(text, encoding="utf-8")


def write_text(target: str | Path, text: str, *, force: bool = False,
               replace: bool = False) -> None:
    """``text`` to ``target`` atomically (:func:`write_texts`)."""
    write_texts({target: text}, force=force, replace=replace)
