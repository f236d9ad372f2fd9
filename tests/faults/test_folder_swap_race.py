"""The folder-swap race (issue 23 item 1): a folder inside a served root flips, as fast as a thread can flip it,
between the real folder and a symlink to a folder outside the root that holds a file of the same name. A few
thousand ``/raw`` and ``/page`` requests for the session in that folder, over a real server on 127.0.0.1, must never
send one byte of the outside file: each answer is the inside session (200) or a refusal (403/404).

Both ways ``confine`` opens a file beneath its root are run: ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``
(where the kernel has it) and the walk of ``O_NOFOLLOW | O_DIRECTORY`` descriptors. The swap uses
``renameat2(RENAME_EXCHANGE)`` when the kernel has it (the two names trade places in one step, so the path always
exists), else two renames.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.records import encode
from assembler.server import confine, create_app
from assembler.store.sqlite import write_sqlite
from perf.load_follow import HEADER, LogGenerator, ServerThread

SECRET = b"TOP-SECRET-LINE"
REQUESTS = 2000  # per opening method and format, half /raw, half /page

SWAPPER = r"""
import ctypes, os, sys
folder, spare, stop = (os.fsencode(a) for a in sys.argv[1:4])
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 316, "aarch64": 276}.get(os.uname().machine)
def exchange():  # renameat2(AT_FDCWD, folder, AT_FDCWD, spare, RENAME_EXCHANGE): both names always exist
    return number is not None and libc.syscall(number, -100, folder, -100, spare, 2) == 0
atomic = exchange() and exchange()
real = folder + b".real"
flips, linked = 0, False
while not os.path.exists(stop):
    for _ in range(100):
        if atomic:
            exchange()
        elif not linked:  # two renames: the folder is missing for a moment (those requests get 404)
            os.rename(folder, real)
            os.rename(spare, folder)
        else:
            os.rename(folder, spare)
            os.rename(real, folder)
        linked = not linked
        flips += 1
if linked:  # leave the real folder in place
    exchange() if atomic else (os.rename(folder, spare), os.rename(real, folder))
print(flips, "atomic" if atomic else "renames")
"""


class Swapper:
    """A separate process (no shared GIL: it flips while the server runs) flipping ``folder`` between the real
    folder and a symlink to ``outside`` until ``stop``."""

    def __init__(self, folder: Path, outside: Path) -> None:
        self.spare = folder.with_name(folder.name + ".link")
        self.spare.symlink_to(outside, target_is_directory=True)
        self.stop_file = folder.with_name("stop-swapping")
        self.process = subprocess.Popen([sys.executable, "-c", SWAPPER, str(folder), str(self.spare),
                                         str(self.stop_file)], stdout=subprocess.PIPE, text=True)
        self.flips = 0
        self.how = ""

    def stop(self) -> None:
        self.stop_file.touch()
        out, _ = self.process.communicate(timeout=30)
        flips, self.how = out.split()
        self.flips = int(flips)


def write_session(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    if path.suffix == ".db":
        write_sqlite(path, header, pack_chunk_runs(events))
    else:
        path.write_bytes(b"".join(encode(v) + b"\n" for v in [header, *events]))


def secret_events() -> list[dict[str, Any]]:
    return [{"type": "x/secret", "seq": i, "time": i, "data": {"s": SECRET.decode()}} for i in range(50)]


@pytest.fixture(params=["openat2", "walk"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "openat2" and not confine.openat2_available():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(confine, "USE_OPENAT2", request.param == "openat2")
    yield request.param


@pytest.mark.parametrize("suffix", [".jsonl", ".db"])
def test_a_folder_flipping_to_a_symlink_never_serves_the_outside_file(tmp_path: Path, method: str,
                                                                     suffix: str) -> None:
    root = tmp_path / "served"
    (root / "sub").mkdir(parents=True)
    write_session(root / "sub" / f"nested{suffix}", HEADER, LogGenerator(3).take(60))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_session(elsewhere / f"nested{suffix}", {"type": "session", "id": "secret"}, secret_events())

    statuses: Counter[int] = Counter()
    leaked: list[str] = []
    with ServerThread(create_app([root], serve_static=False, poll_interval=0.02)) as thread:
        with httpx.Client(base_url=thread.base_url, timeout=30) as client:
            assert client.get("/api/sessions/sub/nested/raw").status_code == 200  # listed and served before
            swapper = Swapper(root / "sub", elsewhere)
            try:
                for i in range(REQUESTS):
                    route = "raw" if i % 2 else "page"
                    response = client.get(f"/api/sessions/sub/nested/{route}")
                    statuses[response.status_code] += 1
                    if SECRET in response.content:
                        leaked.append(f"request {i} ({route}): {response.status_code}")
                    else:
                        assert response.status_code in (200, 403, 404), response.text
            finally:
                swapper.stop()
    print(f"{method} {suffix}: {REQUESTS} requests, {swapper.flips} flips ({swapper.how}), statuses {dict(statuses)}, "
          f"{len(leaked)} leaked")
    assert swapper.flips > REQUESTS // 10, "the swapper hardly ran: the race was not exercised"
    assert statuses[200] > 0 and statuses[403] + statuses[404] > 0, statuses  # both sides of the flip were met
    assert leaked == [], leaked[:10]
