"""Atomic file writes: the one way every writer of the project (generator caches, program artifacts, reports,
deployment packages, the driver's drawings) puts a file on disk.

A file is written to a temporary file in the same folder (same file system), flushed, ``fsync``-ed and renamed over
the target with ``os.replace`` (POSIX ``rename(2)``: atomic within one file system), then the folder is
``fsync``-ed. A reader therefore sees the old file or the new one, never a part of either, whatever happens to the
writer (a kill, a full disk, a power cut after the folder's fsync). A temporary file left by a killed writer is
named ``.<target name>.<random>.tmp`` and never read by anyone.

Pure Python (standard library only): runs on the board without the generator.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

#: prefix and suffix of the temporary files and folders of :func:`atomic_path` / :func:`atomic_dir`
TMP_SUFFIX = ".tmp"


def _fsync_dir(d: Path) -> None:
    """fsync a folder so that a rename in it survives a power cut (best effort: some file systems refuse it)."""
    try:
        fd = os.open(str(d), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(p: Path) -> None:
    """fsync a file's data (a read-only descriptor suffices on Linux: a file copied read-only is fsync-ed too)."""
    fd = os.open(str(p), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path, mode: int = 0o644):
    """Context manager: a temporary path beside ``path`` for a writer that needs a file name (``savefig``,
    ``np.savez``, ``tarfile``); on a normal exit the file is fsync-ed and renamed onto ``path``; on an exception it
    is deleted and ``path`` is left as it was.

    Args:
        path: the target file (its folder must exist).
        mode: permission bits of the new file (default 0o644, as an ordinary ``open``).
    Yields:
        pathlib.Path of the temporary file (``.<name>.<random>.tmp``, created empty).
    Raises:
        OSError: the folder does not exist or is not writable, the disk is full (the target is unchanged).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, mode)
        _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def atomic_write(path, data, encoding: str = "utf-8") -> Path:
    """Write ``data`` (bytes, or str encoded with ``encoding``) to ``path`` atomically (:func:`atomic_path`).

    Returns:
        ``path`` as a pathlib.Path.
    Raises:
        OSError: as :func:`atomic_path`; the target keeps its old content (or stays absent).
        TypeError: ``data`` is neither bytes nor str.
    """
    if isinstance(data, str):
        data = data.encode(encoding)
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write({path}): data must be bytes or str, not {type(data).__name__}")
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
    return path


@contextlib.contextmanager
def atomic_dir(path):
    """Context manager: a fresh temporary folder beside ``path`` to build a whole folder in; on a normal exit its
    files are fsync-ed and it replaces ``path`` (an existing ``path`` is first renamed aside, then deleted once the
    new one is in place); on an exception the temporary folder is deleted and ``path`` is left as it was.

    The swap is two renames: a reader can find ``path`` missing for an instant between them, never a mix of the
    old and the new folder. Serialize concurrent builders of one ``path`` with :func:`lock_file`.

    Yields:
        pathlib.Path of the temporary folder (``.<name>.<random>.tmp``).
    Raises:
        OSError: the parent folder is not writable or the disk is full (``path`` unchanged).
    """
    path = Path(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent))
    try:
        yield tmp
        for root, _, files in os.walk(tmp):
            for f in files:
                _fsync_file(Path(root) / f)
            _fsync_dir(Path(root))
        old = None
        if path.exists() or path.is_symlink():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", suffix=TMP_SUFFIX, dir=path.parent))
            os.rmdir(old)
            os.replace(path, old)
        try:
            os.replace(tmp, path)
        except BaseException:
            if old is not None and not (path.exists() or path.is_symlink()):
                os.replace(old, path)          # put the old folder back: never leave ``path`` missing
            raise
        _fsync_dir(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                old.unlink()


class LockedError(OSError):
    """Another process holds the lock of :func:`lock_file` (``path``: the lock file)."""

    def __init__(self, path):
        self.path = Path(path)
        super().__init__(f"{path}: in use by another run (lock held)")


@contextlib.contextmanager
def lock_file(path, wait: bool = False):
    """Context manager: an exclusive advisory lock (``fcntl.flock``) on the file ``path`` (created if missing),
    released on exit and when the process dies (the kernel drops it: a killed run leaves no stale lock).

    Args:
        path: the lock file.
        wait: block until the lock is free (True) or raise at once (False).
    Raises:
        LockedError: ``wait`` is False and another process holds the lock.
        OSError: the lock file cannot be created.
    """
    import fcntl

    path = Path(path)
    fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise LockedError(path) from None
        yield path
    finally:
        os.close(fd)


def sha256_file(path, chunk: int = 1 << 20) -> str:
    """SHA-256 (hex, 64 digits) of a file's content, read in ``chunk``-byte pieces (FIPS 180-4).

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(chunk), b""):
            h.update(b)
    return h.hexdigest()
