"""Issue 39 (attack review of the writer): the atomic write checked its target and then, after the
whole write, renamed onto it. A device or FIFO put in the target's place during the write was
replaced by the rename, and a folder link re-pointed during the write sent the file elsewhere.
certdp.fileio.write_atomic now works relative to one descriptor of the folder and checks the
target right before the rename. The races are made deterministic here: the swap happens inside
the write's fsync, between the first check and the rename.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from certdp.audit.report import write_atomic as write_report
from certdp.cert.crypto import atomic_write
from certdp.errors import InvalidArgument


def _during_fsync(monkeypatch: pytest.MonkeyPatch, action: object) -> list[int]:
    """Run ``action`` once, at the first fsync of the write (after the data, before the rename)."""
    real = os.fsync
    calls: list[int] = []

    def fsync(fd: int) -> None:
        if not calls:
            action()  # type: ignore[operator]
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


@pytest.mark.parametrize("writer", ["certificate", "report"])
def test_a_fifo_that_takes_the_targets_place_during_the_write_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    def swap() -> None:
        target.unlink()
        os.mkfifo(target)

    calls = _during_fsync(monkeypatch, swap)
    with pytest.raises(InvalidArgument, match=r"=.*out\.json.* is not a regular file"):
        if writer == "certificate":
            atomic_write(target, b"new")
        else:
            write_report(target, "new")
    assert calls, "the write never synced: the race was not exercised"
    assert target.is_fifo()  # not replaced by the rename
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temporary file left


def test_a_folder_link_repointed_during_the_write_does_not_redirect_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    link = tmp_path / "link"
    link.symlink_to(first)

    def repoint() -> None:
        link.unlink()
        link.symlink_to(second)

    calls = _during_fsync(monkeypatch, repoint)
    atomic_write(link / "cert.json", b"data")
    assert calls
    # the file went to the folder that was opened when the write began, complete, and nothing
    # (neither the file nor a temporary one) appeared in the folder the link points to now
    assert (first / "cert.json").read_bytes() == b"data"
    assert sorted(p.name for p in first.iterdir()) == ["cert.json"]
    assert list(second.iterdir()) == []


def test_links_to_special_files_are_refused_and_links_to_files_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    to_fifo = tmp_path / "to_fifo.json"
    to_fifo.symlink_to(fifo)
    with pytest.raises(InvalidArgument, match="not a regular file"):
        atomic_write(to_fifo, b"x")
    assert to_fifo.is_symlink() and fifo.is_fifo()
    plain = tmp_path / "plain"
    plain.write_bytes(b"kept")
    to_plain = tmp_path / "to_plain.json"
    to_plain.symlink_to(plain)
    atomic_write(to_plain, b"new")  # the link is replaced by the file; its old target is untouched
    assert not to_plain.is_symlink() and to_plain.read_bytes() == b"new" and plain.read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "plain", "to_fifo.json", "to_plain.json"]


@pytest.mark.parametrize("bad", ["/", "", "missing-folder/x.json"])
def test_unwritable_paths_are_one_line_errors(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^out=.* (cannot be written|is not a regular file)"):
        atomic_write(Path(bad) if bad != "missing-folder/x.json" else tmp_path / bad, b"x")
