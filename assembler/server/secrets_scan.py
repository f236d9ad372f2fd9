"""Secrets in what ``publish`` writes: finding API keys, tokens and private keys in texts, and redacting them.

The detector is Yelp's ``detect-secrets`` (the ``publish`` extra), never a pattern of ours. Rules:

* Plugins: every plugin detect-secrets ships except ``EXCLUDED``: the generic high-entropy detectors (hex and
  base64), the keyword detector and the public-IP detector. Agent logs are full of git hashes, sha256 sums, base64
  images and archives, UUIDs, ``password = input()`` in code under review and IP addresses in tool output; those
  plugins would flag nearly every real session and make refusal meaningless. What is kept recognises a credential
  by its own shape (``AKIA`` + 16, ``ghp_`` + 36, ``xoxb-...``, ``sk_live_...``, ``-----BEGIN ... PRIVATE KEY``,
  a JWT whose parts decode, ``scheme://user:password@``, ...), so a finding is worth stopping for.
* A text is scanned whole (not line by line), with each plugin's own ``analyze_string`` deciding what is a secret
  (a JWT must decode, for example) and its own ``denylist`` patterns giving where: a finding is a whole pattern
  match that yields one of the values ``analyze_string`` reported. A private-key finding reaches from the block's
  ``-----BEGIN`` to its ``-----END ...-----`` (to the text's end when there is none): the plugin matches only the
  header, and the key is the body.
* A finding is its kind (the plugin's ``secret_type``, e.g. ``AWS Access Key``) and its span; nothing here keeps,
  returns or prints the secret's characters.
* Redaction replaces each finding (overlapping spans merged, the first kind named) with ``marker(kind)``.
  ``redact_fragments`` redacts a text held as fragments (a packed row's deltas, which a secret may straddle): the
  joined text is scanned, and the result keeps the number of fragments, none empty (the viewer joins them and
  the row's seqs stay), each marker put where its secret began, widened with ``*`` only when it must cover more
  fragments than it has characters.
* Pure functions of their arguments (no I/O); the plugins are made once, on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["EXCLUDED", "Finding", "Found", "Scanner", "find", "marker", "redact", "redact_fragments", "rules_id"]

EXCLUDED = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector"})
"""detect-secrets plugins not used (see the module rules: they flag hashes, base64, code and addresses)."""
_PEM_END = "-----END"
_DASHES = "-----"


@dataclass(frozen=True)
class Finding:
    """A secret in a text: its kind and where it is (``start``/``end``: string indices)."""

    kind: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _plugins() -> tuple[Any, ...]:
    """The detect-secrets plugins used (see ``EXCLUDED``), one instance each, in a fixed order."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes: Any = get_mapping_from_secret_type_to_class().values()
    return tuple(cls() for cls in sorted(classes, key=lambda c: c.__name__)
                 if cls.__name__ not in EXCLUDED and getattr(cls, "denylist", None))


def rules_id() -> str:
    """What decides the findings (detect-secrets' version and the plugins used), for a published session's
    fingerprint: a site published under other rules is scanned again."""
    from detect_secrets.__version__ import VERSION

    return f"detect-secrets {VERSION}: " + ",".join(type(p).__name__ for p in _plugins())


def _values(match: Any) -> list[str]:
    """What ``re.findall`` yields for a match (the plugins' ``analyze_string`` reads their patterns that way)."""
    groups = [g for g in match.groups() if g]
    return groups if match.re.groups else [match.group(0)]


def _pem_span(text: str, start: int, end: int) -> tuple[int, int]:
    """A private key's block around its header match: from ``-----BEGIN`` to the end of ``-----END ...-----``."""
    if text.startswith(_DASHES, start - len(_DASHES)):
        start -= len(_DASHES)
    close = text.find(_PEM_END, end)
    if close < 0:
        return start, len(text)
    tail = text.find(_DASHES, close + len(_PEM_END))
    return start, len(text) if tail < 0 else tail + len(_DASHES)


def find(text: str) -> list[Finding]:
    """The secrets in ``text``, by start, none overlapping (see the module rules)."""
    spans: list[Finding] = []
    for plugin in _plugins():
        matches = [m for pattern in plugin.denylist for m in pattern.finditer(text)]
        if not matches:
            continue
        reported = set(plugin.analyze_string(text))
        for match in matches:
            if not reported.intersection(_values(match)):
                continue
            start, end = match.span()
            if plugin.secret_type == "Private Key":
                start, end = _pem_span(text, start, end)
            spans.append(Finding(plugin.secret_type, start, end))
    spans.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in spans:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.kind, last.start, max(last.end, f.end))
        else:
            merged.append(f)
    return merged


def marker(kind: str) -> str:
    """What a redacted secret becomes in the published copy."""
    return f"[REDACTED:{kind}]"


def redact(text: str, findings: Sequence[Finding]) -> str:
    """``text`` with each finding (``find``'s answer for it) replaced by its marker."""
    parts: list[str] = []
    at = 0
    for f in findings:
        parts += [text[at:f.start], marker(f.kind)]
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def _widened(mark: str, pieces: int) -> str:
    """A marker long enough to give each of ``pieces`` fragments at least one character."""
    return mark if len(mark) >= pieces else mark[:-1] + "*" * (pieces - len(mark)) + mark[-1]


def redact_fragments(fragments: Sequence[str], findings: Sequence[Finding]) -> list[str]:
    """``fragments`` redacted as one joined text (``find``'s findings of it), the same number of them, none empty
    (see the module rules)."""
    bounds: list[tuple[int, int]] = []
    at = 0
    for fragment in fragments:
        bounds.append((at, at + len(fragment)))
        at += len(fragment)
    out = list(fragments)
    for f in reversed(findings):  # from the end: earlier spans keep their indices
        touched = [i for i, (a, b) in enumerate(bounds) if a < f.end and b > f.start]
        mark = _widened(marker(f.kind), len(touched))
        # the first touched fragment keeps what precedes the secret and takes the marker's bulk; each later one
        # keeps one marker character (never empty), the last also what follows the secret
        head = len(mark) - (len(touched) - 1)
        for n, i in enumerate(touched):
            a, b = bounds[i]
            text = out[i]
            before = text[:max(f.start - a, 0)] if n == 0 else ""
            after = text[f.end - a:] if f.end < b else ""
            piece = mark[:head] if n == 0 else mark[head + n - 1]
            out[i] = before + piece + after
    return out


Found = tuple[int | str, str]
"""Where a secret was found (the row's seq; outside any row, a label: ``"page"``, ``"list entry"``) and its kind."""


class Scanner:
    """The secrets in one session's published files: pages (``page``) and its list entry (``value``).

    A session's pages repeat its records (the first page, the older ones and the whole session), so each distinct text
    is scanned once (``find``'s answers are kept until the scanner is dropped), and a page of the same bytes as one
    scanned before (the whole session of a session that fits on its first page) is not walked again. A page is walked as
    decoded JSON: a row's fragments as one text (a secret's seq is its fragment's), every other string wherever it is
    (message texts, tool arguments and results, reasoning, titles, the original record an interop event keeps), dict
    keys excepted (they are the schema's names).
    """

    def __init__(self) -> None:
        self._seen: dict[str, list[Finding]] = {}
        self._pages: dict[tuple[bytes, bool], tuple[bytes, list[Found]]] = {}

    def text(self, text: str) -> list[Finding]:
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = find(text)
        return found

    def value(self, value: Any, where: int | str, found: list[Found], redacting: bool) -> Any:
        """Record the secrets in the strings of ``value`` (a decoded JSON value); with ``redacting`` the answer is
        ``value`` with them redacted (its lists and dicts changed in place), else ``value`` itself."""
        if type(value) is str:
            hits = self.text(value)
            if hits:
                found += [(where, f.kind) for f in hits]
                if redacting:
                    return redact(value, hits)
            return value
        items: Any = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
        for key, item in list(items):
            new = self.value(item, where, found, redacting)
            if new is not item:
                value[key] = new
        return value

    def _row(self, row: dict[str, Any], found: list[Found], redacting: bool) -> None:
        """A packed row (``{"seq", "data": {..., "texts"|"args": [...]}}``): its fragments as one text."""
        seq = row.get("seq")
        where: int | str = seq if type(seq) is int else "page"
        data: Any = row.get("data")
        key = next((k for k in ("texts", "args") if type(data) is dict and type(data.get(k)) is list), None)
        fragments: Any = data[key] if key is not None else None
        if fragments is None or not all(type(f) is str for f in fragments):
            self.value(row, where, found, redacting)
            return
        hits = self.text("".join(fragments))
        ends: list[int] = []
        for fragment in fragments:
            ends.append((ends[-1] if ends else 0) + len(fragment))
        for f in hits:
            member = next(i for i, end in enumerate(ends) if end > f.start)
            found.append((where + member if type(where) is int else where, f.kind))
        if hits and redacting:
            data[key] = redact_fragments(fragments, hits)
        for name, item in row.items():
            if name != "data":
                self.value(item, where, found, redacting)
        for name, item in data.items():
            if name != key:
                self.value(item, where, found, redacting)

    def page(self, data: bytes, redacting: bool) -> tuple[bytes, list[Found]]:
        """A page's secrets, and the bytes to publish: ``data`` itself unless ``redacting`` found something (then
        the page re-encoded with them redacted, a valid page still)."""
        known = self._pages.get((data, redacting))
        if known is None:
            known = self._pages[(data, redacting)] = self._page(data, redacting)
        return known[0], list(known[1])

    def _page(self, data: bytes, redacting: bool) -> tuple[bytes, list[Found]]:
        import msgspec

        from ..jsontext import decode_json
        from ..records import encode

        page = decode_json(data, msgspec.json.decode)
        found: list[Found] = []
        records = page.get("records") if type(page) is dict else None
        for record in records if type(records) is list else ():
            event = record.get("event") if type(record) is dict else None
            if type(event) is not dict:
                self.value(record, "page", found, redacting)
            elif record.get("type") == "chunks":
                self._row(event, found, redacting)
            else:
                seq = event.get("seq")
                self.value(record, seq if type(seq) is int else "page", found, redacting)
        for name, item in page.items() if type(page) is dict else ():
            if name != "records":
                self.value(item, "page", found, redacting)
        if not found or not redacting:
            return data, found
        return encode(page), found
