"""The Markdown export of every real log: each user text and each assistant paragraph (as written, HTML-escaped
outside code) is in the document, one ``## Turn N`` heading per turn shown, and no raw HTML tag from the log."""

from __future__ import annotations

import re

import pytest
from conversation_support import assemble_page, page
from corpus import corpus_params, require_corpus

from assembler.display import displays_of
from assembler.render import render_markdown
from assembler.render.markdown_export import md_text
from assembler.store.jsonl import read_session
from assembler.views import AssistantStepData, InputMessageData, TextBlockView, hidden_by_default


@pytest.mark.parametrize("path", corpus_params())
def test_markdown_carries_user_texts_and_paragraphs(path):
    require_corpus()
    t = assemble_page(page(read_session(path).records, "packed"))
    md = render_markdown(t.chat, title="t", displays=displays_of(t.chat, {}))
    shown = [n for n in t.chat if not hidden_by_default(n)]
    for n in shown:
        if type(n.data) is InputMessageData and n.data.kind != "context":
            for b in n.data.blocks:
                if type(b) is TextBlockView and b.text.strip():
                    assert md_text(b.text.strip("\n")) in md
        elif type(n.data) is AssistantStepData:
            for b in n.data.blocks:
                if type(b) is TextBlockView and b.text.strip():
                    assert md_text(b.text.strip("\n")) in md
    turns = {n.location.turn for n in shown if type(n.location.turn) is int}
    assert len(re.findall(r"^## Turn \d+$", md, re.M)) >= len(turns)
    assert "<script" not in md.lower()
