"""The follow stream split as bytes (``web/sseframes.mjs``), run in the page: the server's frames come out with
their data byte for byte whatever the chunking (a UTF-8 sequence split between chunks, bytes that are not UTF-8 at
all), with the splitter keeping no view of a chunk it returned from (the page transfers those buffers to the worker),
and the event-stream rules an EventSource applied (line endings, comments, ``event``, ``id``, ``retry``, several
``data`` lines, a leading BOM, a last event without its blank line dropped)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assembler.records import encode

if TYPE_CHECKING:
    from conftest import Viewer

# Runs the splitter over `chunks` (lists of byte values) as the page does: after each push the chunk's buffer and its
# events' buffers are transferred away (detached here). Returns the events (data as byte values, read before the
# transfer) and the splitter's last event ID and retry at the end.
SPLIT = """async (chunks) => {
    const { SseSplitter } = await import("./sseframes.mjs");
    const splitter = new SseSplitter();
    const frames = [];
    for (const values of chunks) {
        const chunk = Uint8Array.from(values);
        const got = splitter.push(chunk);
        frames.push(...got.map((f) => ({ event: f.event, id: f.id, data: Array.from(f.data) })));
        const buffers = [...new Set([chunk.buffer, ...got.map((f) => f.data.buffer)])];
        structuredClone(buffers, { transfer: buffers });
    }
    splitter.end();
    return { frames, lastEventId: splitter.lastEventId, retry: splitter.retry };
}"""

TEXT = "Grüße, 漢字 and 🙂 in one delta"


def _split(viewer: Viewer, stream: bytes, cuts: list[int]) -> dict[str, Any]:
    bounds = [0, *cuts, len(stream)]
    chunks = [list(stream[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    return dict(viewer.page.evaluate(SPLIT, chunks))


def _server_frames() -> tuple[bytes, list[bytes]]:
    """Three frames as the server writes them (``id:`` the seq, one ``data:`` line of JSON) and their data."""
    datas = [encode({"type": "event", "event": {"type": "assistant/chunk", "seq": seq, "time": seq,
                                                "data": {"chunk": {"type": "text", "delta": f"{TEXT} {seq}"}}}})
             for seq in (7, 8, 9)]
    stream = b": keep-alive\n\n" + b"".join(b"id: %d\ndata: %s\n\n" % (7 + i, d) for i, d in enumerate(datas))
    return stream, datas


def test_server_frames_arrive_byte_for_byte_however_the_stream_is_cut(viewer: Viewer) -> None:
    stream, datas = _server_frames()
    multibyte = stream.index("🙂".encode()) + 2  # inside the four bytes of one character
    for cuts in ([], [multibyte], [stream.index(b"\n\n") + 1], list(range(1, len(stream)))):
        got = _split(viewer, stream, cuts)
        assert [bytes(f["data"]) for f in got["frames"]] == datas, cuts
        assert [(f["event"], f["id"]) for f in got["frames"]] == [("message", "7"), ("message", "8"),
                                                                  ("message", "9")]
        assert got["lastEventId"] == "9"


def test_bytes_that_are_not_utf8_are_passed_on_as_they_are(viewer: Viewer) -> None:
    """A string would have replaced them with U+FFFD; the worker's decoder is the one to say they are bad."""
    data = b'{"type":"event","bad":"\xff\xfe\xc3"}'
    got = _split(viewer, b"id: 3\ndata: " + data + b"\n\n", [14])
    assert [bytes(f["data"]) for f in got["frames"]] == [data]


def test_the_event_stream_rules(viewer: Viewer) -> None:
    stream = (b"\xef\xbb\xbf"  # a BOM, dropped
              b"retry: 2500\r\n"
              b"event: error\r\ndata: {\"following\":false}\r\n\r\n"  # CRLF
              b"data: one\rdata:two\r\rid: 12\n\n"  # CR; two data lines, the second without its space
              b"id: 13\n\n"  # an ID without data: no event, the last event ID is set
              b"retry: soon\n"  # not digits: ignored
              b"data: never\n")  # no blank line before the end: dropped
    for cuts in ([], [1, 2], [14, 15], list(range(1, len(stream)))):
        got = _split(viewer, stream, cuts)
        assert [(f["event"], f["id"], bytes(f["data"])) for f in got["frames"]] == [
            ("error", "", b'{"following":false}'), ("message", "", b"one\ntwo")], cuts
        assert got["lastEventId"] == "13" and got["retry"] == 2500
