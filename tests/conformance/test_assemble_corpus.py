"""Every real log assembles, and packed and scalar folds give byte-identical canonical JSON (DESIGN rule 2)."""

from __future__ import annotations

import pytest
from conversation_support import assemble_page, page
from corpus import corpus_params, require_corpus

from assembler.store.jsonl import read_session
from assembler.transcript import canonical_json, digest


@pytest.mark.parametrize("path", corpus_params())
def test_packed_and_scalar_assemble_identically(path):
    require_corpus()
    result = read_session(path)
    assert result.ok, result.error
    outs = [canonical_json(assemble_page(page(result.records, mode))) for mode in ("packed", "scalar")]
    assert outs[0] == outs[1]
    assert digest(outs[0]) == digest(outs[1])


@pytest.mark.parametrize("path", corpus_params())
def test_paged_windows_assemble_identically(path):
    require_corpus()
    result = read_session(path)
    for k in (1, 2):
        packed = canonical_json(assemble_page(page(result.records, "packed", k)))
        scalar = canonical_json(assemble_page(page(result.records, "scalar", k)))
        assert packed == scalar


def test_corpus_transcripts_show_the_assistant_text():
    require_corpus()
    from corpus import FIXTURES

    path = FIXTURES / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
    if not path.exists():
        pytest.skip("scenario not in this corpus copy")
    t = assemble_page(page(read_session(path).records, "packed"))
    kinds = [n.kind for n in t.chat]
    assert "input-message" in kinds and "tool" in kinds and "compaction" in kinds and "turn-tail" in kinds
    texts = [b.text for n in t.chat if n.kind == "assistant-step" for b in n.data.blocks if hasattr(b, "text")]
    assert "COMPACTION RECOVERED" in texts
    assert t.turns[0].status == "closed"
