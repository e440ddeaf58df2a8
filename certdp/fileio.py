"""The one file reader of certdp (capped, regular files only) and its one atomic writer.

Every file certdp reads (certificates, keys, events, case and claim files, sweep specs, sweep
manifests and outputs) goes through :func:`read_capped`. It opens without blocking (a FIFO with
no writer does not hang), refuses anything that is not a regular file (a directory, /dev/zero, a
FIFO, a socket) and kernel pseudo-files (/proc, /sys: they report size 0 and never end or change
under the reader), refuses a file whose size is above the cap before reading it, and never reads
more than the cap plus one byte. Every refusal is one line naming the flag and the path, an
InvalidArgument (exit 2; LimitExceeded for a file over the cap).

Every file certdp writes (certificates, keys, sweep cells and manifests, reports) goes through
:func:`write_atomic`: a temporary file created with O_EXCL beside the target, then a rename, with
every step relative to one descriptor of the target's folder, and the target checked to be a
regular file (or absent) right before the rename, not only before the write.

It imports nothing of certdp but the error tree: the certificate verifier uses it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from certdp.errors import InvalidArgument, LimitExceeded, fmt_value

#: roots of kernel pseudo-file systems: their "regular" files report size 0 and are generated on read
PSEUDO_ROOTS = ("/proc/", "/sys/")


def _pseudo(path: str | Path) -> bool:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return any(real.startswith(root) for root in PSEUDO_ROOTS)


def read_capped(path: str | Path, what: str, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Contract: returns the whole file when it is a regular file (not under /proc or /sys)
    of at most ``limit`` bytes; otherwise raises, before reading more than ``limit`` + 1 bytes,
    LimitExceeded (``what=path is larger than LIMIT bytes``) or InvalidArgument (``what=path is
    a directory`` / ``is not a regular file`` / ``cannot be read (...)``): one line, never a
    block on a FIFO, never an unbounded read. With ``follow_links=False`` a symbolic link is
    refused too (InvalidArgument: cannot be read).
    """
    name = f"{what}={fmt_value(str(path))}"
    if isinstance(path, str) and not path.strip():
        raise InvalidArgument(f"{what}='' must be a file path")
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags if follow_links else flags | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc.__class__.__name__
        raise InvalidArgument(f"{name} cannot be read ({reason})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InvalidArgument(f"{name} is a directory, not a regular file")
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgument(f"{name} is not a regular file (a device, FIFO or socket is never read)")
        if _pseudo(path):
            raise InvalidArgument(f"{name} is a kernel pseudo-file (/proc, /sys), not a regular file")
        if st.st_size > limit:
            raise LimitExceeded(f"{name} is larger than the limit of {limit} bytes")
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(limit + 1 - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise InvalidArgument(f"{name} cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise LimitExceeded(f"{name} is larger than the limit of {limit} bytes")
    return data


def read_text(path: str | Path, what: str, limit: int) -> str:
    """Contract: read_capped(path, what, limit) decoded as UTF-8; InvalidArgument ``what=path is
    not UTF-8 text`` otherwise."""
    data = read_capped(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgument(f"{what}={fmt_value(str(path))} is not UTF-8 text") from None


def _special(dfd: int | None, name: str) -> bool:
    """Whether ``name`` (in the folder open as ``dfd``) is something other than a regular file, or
    a symbolic link to one: a device, a FIFO, a socket, a folder. Absent (or a dangling link): False."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):  # the rename replaces the link, but its target is what was meant
            st = os.stat(name, dir_fd=dfd)
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(st.st_mode)


def write_atomic(path: str | Path, data: bytes, *, what: str = "out", mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a new temporary file in its folder and a rename.

    Why each step: the folder is opened once and every later step is relative to that descriptor,
    so a folder (or a link on the way to it) swapped during the write does not redirect the file;
    the temporary name is random and created with O_CREAT | O_EXCL | O_NOFOLLOW, so a planted file
    or link is never opened, and its mode is set before any data; the target is checked (lstat,
    and stat through a link) before any temporary file is made and again right before the rename,
    after the data is written and synced, so a device or FIFO that took the target's place during
    the write is refused, not replaced (the old check came before the write: attack review).

    Contract: ``path`` holds either its old content or all of one writer's ``data`` at ``mode``,
    never a part or a mix; an existing ``path`` that is not a regular file (a device, a FIFO, a
    folder, a link to one) is refused, never replaced: InvalidArgument ``WHAT=path is not a
    regular file; give a file path``; an OSError becomes InvalidArgument ``WHAT=path cannot be
    written (...)``; on every error no temporary file is left behind.
    """
    p = Path(path)
    shown = f"{what}={fmt_value(str(path))}"
    refused = InvalidArgument(f"{shown} is not a regular file; give a file path")
    if not p.name or "\0" in str(path):
        raise InvalidArgument(f"{shown} cannot be written (not a file path)")
    # os.replace is renameat() where os.rename is (supports_dir_fd lists rename only)
    at_fd = os.rename in os.supports_dir_fd and os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
    try:
        dfd = os.open(p.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as exc:  # a missing or unreadable folder, a file in the way
        raise InvalidArgument(f"{shown} cannot be written ({exc.__class__.__name__})") from None
    # without *at() calls (not on this platform) the names are joined to the folder's path
    rel, name = (dfd, p.name) if at_fd else (None, str(p))
    tmp: str | None = None
    try:
        if _special(rel, name):  # /dev/null is refused before a temporary file is made in /dev
            raise refused
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        for _ in range(16):  # a name taken by chance (or planted) is skipped, never opened
            candidate = f".{p.name}.{secrets.token_hex(8)}.tmp"
            candidate = candidate if at_fd else str(p.parent / candidate)
            try:
                fd = os.open(candidate, flags, 0o600, dir_fd=rel)
            except FileExistsError:
                continue
            tmp = candidate
            break
        else:
            raise FileExistsError("no free temporary name")
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)  # exact, whatever the umask; before any data
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if _special(rel, name):  # the final check, right before the rename
            raise refused
        os.replace(tmp, name, src_dir_fd=rel, dst_dir_fd=rel)
        tmp = None
        with contextlib.suppress(OSError):  # make the rename durable (best effort)
            os.fsync(dfd)
    except OSError as exc:
        raise InvalidArgument(f"{shown} cannot be written ({exc.__class__.__name__})") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=rel)
        os.close(dfd)
