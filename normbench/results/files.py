"""How result files reach the disk so that nothing finished is lost: every file is written under a unique
temporary name, fsynced, renamed into place and its folder fsynced (a power loss leaves the old file or
the new one, never a zero-length file under the final name); one writer per run folder, by an exclusive
lock file holding the writer's pid and host."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from normbench.core.errors import NormbenchError, printable

LOCK_NAME = ".lock"


def temp_name(path: Path) -> Path:
    """A dot-file name next to `path`, unique per writer: two processes never share a temporary file."""
    return path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


# Exactly the names temp_name makes: the cleanup below removes these and nothing else.
TEMP_NAME = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp")


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """write(f) fills a temporary file; it is fsynced, renamed to `path`, and the folder fsynced. Only a
    regular file (or nothing) at `path` is replaced: a link, device or folder there is refused, never
    renamed over (results/outputs.py decides how such outputs are written)."""
    check_replaceable(path)
    tmp = temp_name(path)
    try:
        # O_EXCL: a new file of this writer's own, never a link or file someone planted at the name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with open(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def check_replaceable(path: Path) -> None:
    """Nothing at `path`, or a regular file (not through a link): what a rename may replace."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise NormbenchError(printable(f"{path}: {what}; normbench replaces only its own regular files"))


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda f: f.write(text.encode()))


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable. Not every platform or file system can open a folder: then the
    rename is as durable as the OS makes it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temporaries(folder: Path) -> None:
    """Temporary files a killed writer left behind (only call while holding the run's lock): regular
    files with the names temp_name makes, nothing else (a user's `.notes.tmp` stays)."""
    for tmp in [*folder.glob(".*.tmp"), *folder.glob("parts/.*.tmp")]:
        if TEMP_NAME.fullmatch(tmp.name) and tmp.is_file() and not tmp.is_symlink():
            with contextlib.suppress(OSError):
                tmp.unlink()


def check_own_folders(folder: Path) -> None:
    """The run's parts/ and rejected/ are real folders of the run, not symlinks: the store renames and
    moves files in them, which through a link would touch files outside the results folder."""
    for name in ("parts", "rejected"):
        if (folder / name).is_symlink():
            raise NormbenchError(
                f"{folder / name} is a symbolic link: normbench writes and moves files there only in a "
                "real folder of the run; replace the link by the folder it points to"
            )


def check_writable(folder: Path) -> None:
    """Write, fsync and remove a probe file in `folder`: a read-only folder is found before the first case
    runs, not after it."""
    probe = temp_name(folder / "write-check")  # a name no user file has
    try:
        with open(probe, "xb") as f:
            f.write(b"ok\n")
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
    except OSError as exc:
        with contextlib.suppress(OSError):
            probe.unlink()
        raise NormbenchError(f"cannot write {folder}: {exc.strerror or exc}") from None


def _holder(text: str) -> tuple[int | None, str]:
    pid, _, host = text.strip().partition(" ")
    return (int(pid) if pid.isdigit() else None), host


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except OSError:
        return False
    return True


def live_writer(folder: Path) -> int | None:
    """The pid of the process writing this run folder now (from its lock file), or None: a lock left by a
    process that is gone (kill -9, power loss) counts as no writer. Only a process on this host can be
    checked; a writer on another host is taken at its word."""
    try:
        pid, host = _holder((folder / LOCK_NAME).read_text())
    except (OSError, UnicodeDecodeError):
        return None
    if pid is None:
        return None
    if host and host != socket.gethostname():
        return pid
    return pid if pid_alive(pid) else None


def check_no_writer(folder: Path, run_id: str, doing: str) -> None:
    """Refuse early, as RunLock would, a run that a live process is writing (the lock is taken later)."""
    if (pid := live_writer(folder)) is not None:
        raise NormbenchError(
            f"run {run_id} is being written by pid {pid}; wait for it to finish (or stop it) before {doing}"
        )


class RunLock:
    """An exclusive lock on a run folder (fcntl.flock on `.lock`, which holds "pid host"). The kernel drops
    a flock when its process dies, so a lock from a killed writer is taken over, with a message; a second
    live writer gets a NormbenchError naming the pid that holds the run."""

    def __init__(
        self,
        folder: Path,
        run_id: str,
        say: Callable[[str], None] = print,
        doing: str = "resuming",
        subject: str | None = None,  # what is locked, for the messages (default: the run)
    ):
        self.folder, self.run_id, self.say, self.doing = folder, run_id, say, doing
        self.subject = subject or f"run {run_id}"
        self.fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl

        path = self.folder / LOCK_NAME
        if path.is_symlink():
            raise NormbenchError(f"{path} is a symbolic link: normbench does not write through it; remove it")
        try:
            # O_NOFOLLOW: a `.lock` that is a link is refused, never truncated through
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:
            raise NormbenchError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid, host = _holder(os.pread(fd, 200, 0).decode(errors="replace"))
            os.close(fd)
            where = f" on {host}" if host and host != socket.gethostname() else ""
            raise NormbenchError(
                f"{self.subject} is being written by pid {pid if pid is not None else '?'}{where}; "
                f"wait for it to finish (or stop it) before {self.doing}"
            ) from None
        old_pid, _ = _holder(os.pread(fd, 200, 0).decode(errors="replace"))
        if old_pid is not None and old_pid != os.getpid():
            self.say(
                f"note: {self.subject} was left locked by pid {old_pid}, which has ended; taking it over"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        os.fsync(fd)
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        import fcntl

        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)  # a clean exit leaves no pid behind: nothing to take over
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
