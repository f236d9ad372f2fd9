"""Outputs never destroy anything (issue 9 items 1, 2 and 4): an output is never an input, never written through a
symlink or onto a device or directory, is replaced only by a complete file, and every way a write can fail is one
``FILE: error:`` line with exit status 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from big_logs import write_rows_log

from assembler.cli import main
from assembler.store.atomic import (
    OutputError,
    SameFileError,
    UnsafeOutputError,
    atomic_output,
    atomic_path,
    signals_as_exceptions,
)
from assembler.store.jsonl import read_session
from assembler.store.open import save_any
from perf.demo import write_demo

ROOT = Path(__file__).resolve().parents[2]

# Every command that writes a file, as (argv with IN and OUT placeholders, output suffix).
WRITERS = [
    (["pack", "IN", "-o", "OUT"], ".jsonl"),
    (["pack", "IN", "-o", "OUT"], ".jsonl.zst"),
    (["unpack", "IN", "-o", "OUT"], ".jsonl"),
    (["export", "IN", "-o", "OUT"], ".html"),
    (["messages", "IN", "-o", "OUT"], ".json"),
    (["convert", "IN", "OUT"], ".jsonl"),
    (["convert", "IN", "OUT"], ".sqlite"),
    (["repair", "IN", "-o", "OUT"], ".jsonl"),
]
WRITER_IDS = [f"{argv[0]}{suffix}" for argv, suffix in WRITERS]


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    write_demo(str(path))
    return path


def argv_for(argv: list[str], src: Path, out: Path) -> list[str]:
    return [str(src) if a == "IN" else str(out) if a == "OUT" else a for a in argv]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp") or "-wal" in p.name
                  or "-shm" in p.name)


# -- item 1: an output is never an input -----------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "suffix"), WRITERS, ids=WRITER_IDS)
@pytest.mark.parametrize("alias", ["same-name", "other-spelling", "hard-link", "symlinked-folder"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path: Path, demo: Path, capsys: Any,
                                                                    argv: list[str], suffix: str,
                                                                    alias: str) -> None:
    src = demo.with_name("in" + suffix)
    if suffix != ".jsonl":  # the input must be readable as a session in its own format
        assert main(["convert", str(demo), str(src)]) == 0
    else:
        src = demo
    before = src.read_bytes()
    out = {
        "same-name": src,
        "other-spelling": tmp_path / "." / ".." / tmp_path.name / src.name,
        "hard-link": tmp_path / f"link{suffix}",
        "symlinked-folder": tmp_path / "via" / src.name,
    }[alias]
    if alias == "hard-link":
        os.link(src, out)
    if alias == "symlinked-folder":
        (tmp_path / "via").symlink_to(tmp_path, target_is_directory=True)
    capsys.readouterr()
    assert main(argv_for(argv, src, out)) == 1
    err = capsys.readouterr().err
    assert f"{out}: error: is the same file as the input {src}" in err
    assert "Traceback" not in err
    assert src.read_bytes() == before and leftovers(tmp_path) == []


def test_standard_output_appending_to_the_input_is_refused(demo: Path) -> None:
    before = demo.read_bytes()
    with open(demo, "ab") as out:
        done = subprocess.run([sys.executable, "-m", "assembler", "pack", str(demo)], stdout=out,
                              stderr=subprocess.PIPE, cwd=ROOT)
    assert done.returncode == 1
    assert f"<stdout>: error: is the same file as the input {demo}" in done.stderr.decode()
    assert demo.read_bytes() == before


# -- item 2: symlinks, devices and directories are never written ---------------------------------------------------


@pytest.mark.parametrize(("argv", "suffix"), WRITERS, ids=WRITER_IDS)
def test_a_symlink_output_is_refused_and_its_target_untouched(tmp_path: Path, demo: Path, capsys: Any,
                                                              argv: list[str], suffix: str) -> None:
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    link = tmp_path / f"link{suffix}"
    link.symlink_to(target)
    assert main(argv_for(argv, demo, link)) == 1
    assert f"{link}: error: is a symbolic link" in capsys.readouterr().err
    assert link.is_symlink() and target.read_bytes() == b"keep me" and leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["directory", "device", "fifo"])
def test_directories_devices_and_fifos_are_refused(tmp_path: Path, demo: Path, capsys: Any, kind: str) -> None:
    if kind == "directory":
        out = tmp_path / "out.jsonl"
        out.mkdir()
        expected = "is a directory"
    elif kind == "device":
        out = Path("/dev/null")
        expected = "is not a regular file"
    else:
        out = tmp_path / "out.jsonl"
        os.mkfifo(out)
        expected = "is not a regular file"
    assert main(["pack", str(demo), "-o", str(out)]) == 1
    assert f"{out}: error: {expected}" in capsys.readouterr().err


# -- item 2: atomic replacement -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "suffix"), WRITERS, ids=WRITER_IDS)
def test_every_writer_replaces_an_old_output_whole_and_leaves_no_temporary(tmp_path: Path, demo: Path,
                                                                          argv: list[str], suffix: str) -> None:
    out = tmp_path / f"out{suffix}"
    out.write_bytes(b"old")
    os.chmod(out, 0o640)
    assert main(argv_for(argv, demo, out)) == 0
    assert out.read_bytes() != b"old" and out.stat().st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


def records_failing_after(n: int, exc: BaseException) -> Iterator[dict[str, Any]]:
    for i in range(n):
        yield {"type": "x/e", "seq": i, "time": i, "data": {"pad": "p" * 1000}}
    raise exc


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.zst", "out.sqlite"])
@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()], ids=["error", "interrupt"])
def test_a_failure_mid_write_keeps_the_old_output_and_no_temporary(tmp_path: Path, name: str,
                                                                   exc: BaseException) -> None:
    out = tmp_path / name
    save_any(out, {"type": "session", "id": "old"}, [{"type": "x/e", "seq": 0, "time": 0, "data": {}}])
    before = out.read_bytes()
    with pytest.raises(type(exc)):
        save_any(out, {"type": "session", "id": "new"}, records_failing_after(5000, exc))
    assert out.read_bytes() == before and leftovers(tmp_path) == []
    assert read_session(out).header == {"type": "session", "id": "old"} if name != "out.sqlite" else True


def test_the_new_file_appears_only_at_the_end(tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with atomic_output(out) as stream:
        stream.write(b"new data")
        assert out.read_bytes() == b"old"
        (temp,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert temp.name.startswith(".out.bin.") and temp.parent == tmp_path  # same folder: the rename is atomic
    assert out.read_bytes() == b"new data" and leftovers(tmp_path) == []


def test_a_new_output_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        with atomic_output(tmp_path / "new.bin") as stream:
            stream.write(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.bin").stat().st_mode & 0o777 == 0o640


def test_a_symlink_put_in_place_during_the_write_is_still_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    with pytest.raises(UnsafeOutputError):
        with atomic_output(out) as stream:
            stream.write(b"data")
            out.symlink_to(target)
    assert target.read_bytes() == b"keep" and out.is_symlink() and leftovers(tmp_path) == []


def test_atomic_path_removes_the_writers_sibling_files(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "x.db", siblings=("-wal", "-shm")) as tmp:
            Path(tmp + "-wal").write_bytes(b"w")
            raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_same_file_errors_are_output_errors() -> None:
    assert issubclass(SameFileError, OutputError) and issubclass(UnsafeOutputError, OutputError)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_write_discards_the_temporary_and_keeps_the_old_output(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    with pytest.raises(BaseException) as caught:
        with signals_as_exceptions(), atomic_output(out) as stream:
            stream.write(b"partial")
            os.kill(os.getpid(), signum)
            stream.write(b"never")  # pragma: no cover - the handler raised above
    assert isinstance(caught.value, KeyboardInterrupt if signum == signal.SIGINT else BaseException)
    assert out.read_bytes() == b"old" and leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the CLI's handlers are gone again


@pytest.mark.parametrize("writer", ["stream", "path"])
def test_a_signal_while_the_temporary_is_created_is_held_until_it_can_be_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str) -> None:
    real_open = os.open

    def open_then_interrupt(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        fd = real_open(path, flags, mode, **kw)
        if str(path).endswith(".tmp"):
            os.kill(os.getpid(), signal.SIGINT)  # arrives before the name is recorded
        return fd

    monkeypatch.setattr(os, "open", open_then_interrupt)
    with pytest.raises(KeyboardInterrupt), signals_as_exceptions():
        if writer == "stream":
            with atomic_output(tmp_path / "out.bin") as stream:
                stream.write(b"never")  # pragma: no cover - interrupted before
        else:
            with atomic_path(tmp_path / "out.db"):
                pass  # pragma: no cover - interrupted before
    assert list(tmp_path.iterdir()) == []


# -- item 4: output errors are messages ----------------------------------------------------------------------------


def one_error_line(stderr: bytes, name: str) -> str:
    text = stderr.decode()
    lines = [line for line in text.splitlines() if ": error: " in line]
    assert len(lines) == 1 and lines[0].startswith(f"{name}: error: "), text
    assert "Traceback" not in text and "Exception ignored" not in text
    return lines[0]


@pytest.mark.parametrize("command", [["pack"], ["unpack"], ["stats"], ["stats", "--json"], ["messages"],
                                     ["check", "--json"], ["page"], ["assemble"]])
def test_a_full_standard_output_is_an_error(demo: Path, command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "assembler", command[0], str(demo), *command[1:]],
                              stdout=full, stderr=subprocess.PIPE, cwd=ROOT)
    assert done.returncode == 1
    assert "No space left on device" in one_error_line(done.stderr, "<stdout>")


@pytest.mark.parametrize("command", ["unpack", "stats", "assemble"])
def test_a_closed_standard_output_is_an_error(demo: Path, command: str) -> None:
    done = subprocess.run(f"{sys.executable} -m assembler {command} {demo} >&-", shell=True, cwd=ROOT,
                          stderr=subprocess.PIPE)
    assert done.returncode == 1
    assert "standard output is closed" in one_error_line(done.stderr, "<stdout>")


def test_a_reader_that_stops_early_is_a_broken_pipe_error(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    write_rows_log(big, rows=10, per_row=2000)  # unpacked: ~2 MB, far more than a pipe holds
    proc = subprocess.Popen([sys.executable, "-m", "assembler", "unpack", str(big)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read()
    assert proc.wait() == 1
    assert "Broken pipe" in one_error_line(err, "<stdout>")


def test_a_missing_output_folder_is_an_error(tmp_path: Path, demo: Path, capsys: Any) -> None:
    out = tmp_path / "no" / "such" / "out.html"
    assert main(["export", str(demo), "-o", str(out)]) == 1
    assert f"{out}: error: cannot write: No such file or directory" in capsys.readouterr().err


@pytest.fixture()
def shared_dir() -> Iterator[Path]:
    """A folder another user can reach (pytest's own tmp folders are private to root)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="ta-outputs-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_other_user() -> Any:
    """Drop to ``nobody``'s effective uid when running as root (permissions apply then); else nothing to do."""
    import contextlib

    @contextlib.contextmanager
    def dropped() -> Iterator[None]:
        if os.geteuid() != 0:
            yield
            return
        os.seteuid(65534)
        try:
            yield
        finally:
            os.seteuid(0)

    return dropped()


@pytest.mark.parametrize(("argv", "suffix"), WRITERS, ids=WRITER_IDS)
def test_no_permission_is_an_error_naming_the_output(shared_dir: Path, argv: list[str], suffix: str,
                                                    capsys: Any) -> None:
    src = shared_dir / "in.jsonl"
    write_demo(str(src))
    src.chmod(0o644)
    locked = shared_dir / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    out = locked / f"out{suffix}"
    main(argv_for(argv, src, shared_dir / f"warm{suffix}"))  # import everything the command needs first
    capsys.readouterr()
    with as_other_user():
        code = main(argv_for(argv, src, out))
    assert code == 1
    assert f"{out}: error: cannot write: Permission denied" in capsys.readouterr().err
    assert list(locked.iterdir()) == []
