"""The fast depth check (``jsontext._structure_depth``) keeps the bracket walk's verdict (``_walk_depth``, which every
text went through before): on JSON texts ``check_depth`` refuses exactly what the walk refuses, and ``decode_json``
gives every text, JSON or not, the verdict it had when the walk ran first ("nesting too deep", the decoder's own
error, or the value).

Hypothesis builds JSON values whose strings are made of brackets, quotes and backslashes, nested around the limit, and
arbitrary texts over the bytes that matter (brackets, quotes, backslashes, letters), with small limits so that both
sides of the limit come up often.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.jsontext import NestingError, _structure_depth, _walk_depth, check_depth, decode_json, has_lone_surrogate

TRICKY = st.text(alphabet='[]{}"\\a\n\u00e9\ud800', max_size=8)
LEAF = st.one_of(TRICKY, st.integers(-5, 5), st.none(), st.booleans())
VALUE = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(TRICKY, inner, max_size=3)), max_leaves=40)
LIMITS = st.integers(0, 6)


def _walk_refuses(data: bytes, limit: int) -> bool:
    try:
        _walk_depth(data, limit)
    except NestingError:
        return True
    return False


def _old_verdict(data: bytes, limit: int) -> Any:
    """What ``decode_json`` answered when the walk ran before every decoder."""
    if data.count(b"[") + data.count(b"{") > limit and _walk_refuses(data, limit):
        return "nesting"
    return _verdict_after_check(data)


def _verdict_after_check(data: bytes) -> Any:
    try:
        return ("value", msgspec.json.decode(data))
    except msgspec.DecodeError as exc:
        if not has_lone_surrogate(data):
            return ("error", str(exc))
        try:
            return ("value", json.loads(data.decode("utf-8")))
        except (ValueError, RecursionError):
            return ("error", "invalid JSON")


def _new_verdict(data: bytes, limit: int) -> Any:
    try:
        return ("value", decode_json(data, msgspec.json.decode, limit=limit))
    except NestingError:
        return "nesting"
    except msgspec.DecodeError as exc:
        return ("error", str(exc))


@settings(max_examples=400, deadline=None)
@given(VALUE, LIMITS, st.sampled_from([b"", b" ", b"\n"]))
def test_json_texts_get_the_walks_verdict(value: Any, limit: int, space: bytes) -> None:
    data = json.dumps(value).encode("utf-8").replace(b", ", b"," + space)
    walk = data.count(b"[") + data.count(b"{") > limit and _walk_refuses(data, limit)
    try:
        check_depth(data, limit)
        fast = False
    except NestingError:
        fast = True
    assert fast == walk


def _depth(value: Any) -> int:
    if type(value) is list:
        return 1 + max(map(_depth, value), default=0)
    if type(value) is dict:
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(VALUE)
def test_the_structure_depth_of_a_json_text_is_its_nesting(value: Any) -> None:
    data = json.dumps(value, separators=(",", ":")).encode("utf-8")
    assert _structure_depth(data, -1) == _depth(value)


@settings(max_examples=600, deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(b'[]{}"\\a,:1 u'[x % 12] for x in b)), LIMITS)
def test_any_text_gets_the_verdict_it_had(data: bytes, limit: int) -> None:
    assert _new_verdict(data, limit) == _old_verdict(data, limit)


@settings(max_examples=200, deadline=None)
@given(VALUE, LIMITS, st.integers(0, 60), st.binary(max_size=4))
def test_a_cut_or_spoiled_json_text_gets_the_verdict_it_had(value: Any, limit: int, cut: int, junk: bytes) -> None:
    data = json.dumps(value).encode("utf-8")
    data = data[:cut] + junk + data[cut:]
    assert _new_verdict(data, limit) == _old_verdict(data, limit)
