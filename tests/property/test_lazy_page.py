"""The lazy page decoder (``lazy_rows``) gives the strict decoder's verdict on every page: the same records
(compared member by member) or the same error message; and folding a lazy page gives the strict page's transcript.

Hypothesis builds pages of rows with fragments drawn from escapes, quotes, backslashes, surrogate escapes, empty and
whitespace fragments, gaps that are integral floats, negative, huge or the wrong count, and non-string members, and
writes some of them with whitespace between the array members.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.errors import RecordDecodeError
from assembler.lazy_rows import LazyGaps, LazyTexts, decode_lazy_frame, decode_lazy_page, joined_fragments
from assembler.records import MAX_SAFE_INTEGER, SessionPage, decode_follow_frame, decode_page, encode
from assembler.transcript import assemble, canonical_json
from definitions import default_definitions

FRAGMENT = st.one_of(
    st.sampled_from(["", " ", "\n", "ab", '"', "\\", '\\"', "\u00e9", "\ud83d\ude00", "\u2028", " x", "\t\t"]),
    st.text(max_size=4),
)
GAP = st.one_of(st.integers(0, 20), st.integers(-5, 5), st.sampled_from([4.0, 4.5, 10**9, 10**10, MAX_SAFE_INTEGER]))


@st.composite
def row_json(draw: Any) -> str:
    n = draw(st.integers(1, 6))
    texts: list[Any] = draw(st.lists(FRAGMENT, min_size=n, max_size=n))
    if draw(st.integers(0, 9)) == 0:
        texts[draw(st.integers(0, n - 1))] = draw(st.sampled_from([1, None, ["a"]]))
    gaps = n - 1 + draw(st.sampled_from([0, 0, 0, 0, 1, -1]))
    dt = draw(st.lists(GAP, min_size=max(0, gaps), max_size=max(0, gaps)))
    kind = draw(st.sampled_from(["text", "reasoning", "tool-call"]))
    data: dict[str, Any] = {"turn": 1, "step": 1, "index": draw(st.sampled_from([0, 1.0])), "dt": dt}
    if kind == "tool-call":
        data |= {"id": "c", "args": texts}
        if draw(st.booleans()):
            data["name"] = "bash"
    else:
        data["texts"] = texts
    event = {"type": f"chunkrow/{kind}-chunks", "seq": draw(st.sampled_from([1, 5.0, MAX_SAFE_INTEGER - 2])),
             "time": draw(st.sampled_from([0, 1_700_000_000_000, MAX_SAFE_INTEGER - 10])), "data": data}
    spaced = draw(st.booleans())
    return json.dumps({"type": "chunks", "event": event}, ensure_ascii=draw(st.booleans()),
                      separators=(", ", ": ") if spaced else (",", ":"))


def _members(page: Any) -> list[Any]:
    out = []
    for record in page.records[1:]:
        data = record.event.data
        out.append((type(record.event).__name__, record.event.seq, record.event.time, list(data.fragments),
                    list(data.dt)))
    return out


def _same_verdict(buf: bytes) -> tuple[SessionPage, SessionPage] | None:
    """The lazy and strict decodings of ``buf``, which must be equal pages, or raise the same error (then None)."""
    try:
        strict = decode_page(buf)
    except RecordDecodeError as exc:
        with pytest.raises(RecordDecodeError) as got:
            decode_lazy_page(buf)
        assert str(got.value) == str(exc)
        return None
    lazy = decode_lazy_page(buf)
    assert lazy == strict
    return lazy, strict


def _same_frame_verdict(buf: bytes) -> Any:
    """The lazy and strict decodings of the follow frame ``buf``: equal frames, or the same error (then None)."""
    try:
        strict = decode_follow_frame(buf)
    except RecordDecodeError as exc:
        with pytest.raises(RecordDecodeError) as got:
            decode_lazy_frame(buf)
        assert str(got.value) == str(exc)
        return None
    lazy = decode_lazy_frame(buf)
    assert lazy == strict
    return lazy


SNAPSHOT_PARTS = st.sampled_from([
    ('{"a":1}', "7", '{"asOfSeq":7,"values":{}}', ""),
    ('{"texts":["x","y"]}', "7", '{"asOfSeq":7,"values":{}}', ""),  # a payload key in the header: uncut
    ('{"a":1}', "-2", '{"asOfSeq":7,"values":{}}', ""),
    ('{"a":1}', "7", '{"asOfSeq":7,"values":{}}', ',"error":{"detail":"x"}'),
    ('{"a":1}', "7", '{"asOfSeq":"7"}', ""),
    ("[" * 300 + "]" * 300, "7", '{"asOfSeq":7,"values":{}}', ""),
    ('{"a":' + "[" * 300 + "]" * 300 + "}", "7", '{"asOfSeq":7,"values":{}}', ""),
    ('{"a":1}', "7", '{"asOfSeq":7,"values":{"v":' + "[" * 400 + "]" * 400 + "}}", ""),
    ('{"a":"\\ud800"}', "7", '{"asOfSeq":7,"values":{}}', ""),
])


@given(st.lists(row_json(), min_size=1, max_size=4), SNAPSHOT_PARTS, st.booleans())
@settings(max_examples=300, deadline=None)
def test_lazy_and_strict_snapshots_agree(rows: list[str], parts: tuple[str, str, str, str], deep: bool) -> None:
    """A served session's first frame decodes lazily with the strict verdict, header, cursor, projections and error
    included, whether the frame nests deep enough for its events to be checked one by one or not."""
    header, cursor, projections, error = parts
    step = '{"type":"event","event":{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}}'
    if deep:  # over MAX_DEPTH brackets in all: the events are kept raw and depth-checked alone
        step += "," + ",".join([step] * 130)
    buf = (f'{{"type":"snapshot","header":{header},"cursor":{cursor},"records":[' + ",".join([step, *rows])
           + f'],"hasMore":false,"projections":{projections}{error}}}').encode("utf-8", "surrogatepass")
    _same_frame_verdict(buf)


def test_a_served_snapshot_keeps_its_rows_lazy() -> None:
    from perf.bench_browser import pages

    page = json.loads(pages(3, 600)["packed"])
    buf = encode({"type": "snapshot", "header": {"id": "s"}, "cursor": 5, "records": page["records"],
                  "hasMore": False, "projections": {"asOfSeq": 5, "values": {}}})
    lazy = _same_frame_verdict(buf)
    assert all(type(r.event.data.texts) is LazyTexts for r in lazy.records if r.event.type.startswith("chunkrow"))


def test_an_event_frame_is_decoded_strictly() -> None:
    frame = b'{"type":"event","event":{"type":"step/start","seq":3,"time":0,"data":{"turn":1,"step":1}}}'
    assert decode_lazy_frame(frame) == decode_follow_frame(frame)
    _same_frame_verdict(b'{"type":"event","event":{"type":"x","seq":-1,"time":0,"data":{}}}')


@given(st.lists(row_json(), min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_lazy_and_strict_pages_agree(rows: list[str]) -> None:
    step = '{"type":"event","event":{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}}'
    buf = ('{"records":[' + ",".join([step, *rows]) + '],"hasMore":false}').encode("utf-8", "surrogatepass")
    pages = _same_verdict(buf)
    if pages is None:
        return
    lazy, strict = pages
    assert _members(lazy) == _members(strict)
    for a, b in zip(lazy.records[1:], strict.records[1:], strict=True):
        assert joined_fragments(a.event.data.fragments) == "".join(b.event.data.fragments)
        assert encode(a) == encode(b)


def test_a_plain_row_stays_lazy_and_folds_like_the_strict_page() -> None:
    rows = [{"type": "event", "event": {"type": "step/start", "seq": 0, "time": 0, "data": {"turn": 1, "step": 1}}},
            {"type": "chunks", "event": {"type": "chunkrow/text-chunks", "seq": 1, "time": 5, "data": {
                "turn": 1, "step": 1, "index": 0, "dt": [1, 2, 0, 3], "texts": ["", " ", "\n", "hi", " there"]}}},
            {"type": "chunks", "event": {"type": "chunkrow/reasoning-chunks", "seq": 6, "time": 20, "data": {
                "turn": 1, "step": 1, "index": 1, "dt": [7], "texts": ["", "think"]}}}]
    buf = encode({"records": rows, "hasMore": False})
    lazy = decode_lazy_page(buf)
    data = lazy.records[1].event.data
    assert type(data.texts) is LazyTexts and type(data.dt) is LazyGaps
    assert data.texts.joined == " \nhi there" and data.texts.first_nonempty() == 1 and len(data.texts) == 5
    definitions = default_definitions()
    assert canonical_json(assemble(lazy.records, False, definitions)) == canonical_json(
        assemble(decode_page(buf).records, False, default_definitions()))


@pytest.mark.parametrize("depth", [10, 300, 5000])
@pytest.mark.parametrize("where", ["data", "texts"])
def test_deep_nesting_gets_the_strict_verdict(depth: int, where: str) -> None:
    deep = "[" * depth + "]" * depth
    rows = [f'{{"type":"event","event":{{"type":"x","seq":0,"time":0,"data":{deep if where == "data" else 1}}}}}',
            '{"type":"chunks","event":{"type":"chunkrow/text-chunks","seq":1,"time":0,"data":{"turn":1,"step":1,'
            f'"index":0,"dt":[1],"texts":["a",{deep if where == "texts" else chr(34) + "b" + chr(34)}]}}}}}}']
    buf = ('{"records":[' + ",".join(rows) + '],"hasMore":false}').encode()
    _same_verdict(buf)


def test_every_viewer_entry_point_works_on_a_lazy_page() -> None:
    """Records, row members, search, row text, replay and export read the lazy rows as the lists they stand for."""
    import json

    from assembler.browser import Viewer
    from perf.bench_browser import pages

    data = pages(3, 600)["packed"]
    viewer = Viewer()
    update = json.loads(viewer.load_page(data))
    assert any(type(e.event.data.fragments) is LazyTexts for e in viewer.window.assembler.window
               if hasattr(e.event, "kind"))
    step = next(n["key"] for n in update["nodes"] if n["kind"] == "assistant-step")
    records = json.loads(viewer.records(step))
    assert "error" not in records
    assert "error" not in json.loads(viewer.record_members(step, 0))
    assert "error" not in json.loads(viewer.search(" "))
    assert "error" not in json.loads(viewer.row_text(step))
    assert "error" not in json.loads(viewer.export("md"))
    replayed = json.loads(viewer.replay_window("scalar"))
    assert replayed["digest"] == json.loads(viewer.digest())["digest"]


def _page(*records: str) -> bytes:
    step = '{"type":"event","event":{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}}'
    return ('{"records":[' + ",".join([step, *records]) + '],"hasMore":false}').encode("utf-8", "surrogatepass")


def _row(texts: str, dt: str = "[1]", seq: int = 1) -> str:
    return ('{"type":"chunks","event":{"type":"chunkrow/text-chunks","seq":' + str(seq) + ',"time":0,"data":{'
            '"turn":1,"step":1,"index":0,"dt":' + dt + ',"texts":' + texts + "}}}")


@pytest.mark.parametrize("texts", [
    b'["\xc3","\xa9"]',  # a two-byte character cut by the separator: neither fragment is UTF-8 on its own
    b'["\xe2\x82","\xac"]',
    b'["\\u00","41"]',  # a \u escape cut by the separator
    b'["a\\u0","041"]',
    b'["\\\\u","0041"]',  # an escaped backslash then u: valid, taken by the strict path
    b'["\xc3\xa9","\xc3\xa9"]',  # whole characters: valid
    b'["a]","b"]',  # a bracket inside a fragment
    b'["a","]b"]',
])
def test_fragments_are_each_valid_json_on_their_own(texts: bytes) -> None:
    head, tail = _page(_row("@")).split(b"@")
    dt = b"[1]" if texts.count(b'","') == 1 else b"[]"
    _same_verdict(head.replace(b'"dt":[1]', b'"dt":' + dt) + texts + tail)


def test_a_payload_key_in_an_event_is_not_cut() -> None:
    """An event whose data has a "texts" array of strings keeps it; the rows are still cut and lazy."""
    event = '{"type":"event","event":{"type":"x/y","seq":5,"time":0,"data":{"texts":["a","b"],"args":["c"]}}}'
    buf = _page(_row('["p","q"]'), event, _row('["r","s"]', seq=6))
    pages = _same_verdict(buf)
    assert pages is not None
    lazy, strict = pages
    assert lazy.records[2].event.data == {"texts": ["a", "b"], "args": ["c"]}
    assert type(lazy.records[1].event.data.texts) is LazyTexts


def test_a_placeholder_lookalike_is_refused_like_the_strict_path() -> None:
    """A row whose texts is a string (as a cut placeholder is) gets the strict error, whatever it holds."""
    for texts in ('"0000000000000000:0"', '"x"', '0', '[]', '["a",1]', '[ "a" ]'):
        _same_verdict(_page(_row('["p","q"]'), _row(texts, seq=6)))


def test_the_benchmark_page_is_cut_and_stays_lazy() -> None:
    from assembler.lazy_rows import _cut
    from perf.bench_browser import pages

    data = pages(3, 600)["packed"]
    cut = _cut(data)
    assert cut is not None and len(cut[1].values) == 3 and b'"texts":["' not in cut[0]
    lazy = decode_lazy_page(data)
    assert lazy == decode_page(data)
    assert all(type(r.event.data.texts) is LazyTexts for r in lazy.records if r.event.type.startswith("chunkrow"))


@pytest.mark.parametrize("dt", [
    "[1,,2]", "[,1]", "[1,]", "[,]", "[01]", "[0,01]", "[00]", "[1,00]", "[0]", "[0,0]", "[10,200]", "[1, 2]",
    "[-1]", "[1.0]", "[1e3]", "[999999999]", "[1000000000]", "[[1]]", '["1"]', "[", "[1", "[1}", "[]", "[ ]",
])
def test_every_dt_array_gets_the_strict_verdict(dt: str) -> None:
    """The fast gap check reads digits and commas only; anything that is not JSON integers (an empty member, a
    leading zero, a sign, a fraction, a gap of ten digits) gets the strict decoder's verdict."""
    gaps = 0 if dt in ("[]", "[ ]") else dt.count(",") + 1
    texts = "[" + ",".join('"x"' for _ in range(gaps + 1)) + "]"
    _same_verdict(_page(_row(texts, dt=dt), _row('["p","q"]', seq=9)))


@pytest.mark.parametrize("unit", ['"texts":["a",', '{"texts":["a"', '"args":["]",'])
def test_many_payload_keys_that_never_close_are_read_once(unit: str) -> None:
    """Keys whose arrays never end (or end far away) cost one pass: 40,000 of them decode with the strict verdict
    in about the time of one page (a search per key from its own start would read ~10**10 bytes)."""
    event = '{"type":"event","event":{"type":"x","seq":5,"time":0,"data":' + unit * 40_000 + '"]}}'
    _same_verdict(_page(_row('["p","q"]'), event))
