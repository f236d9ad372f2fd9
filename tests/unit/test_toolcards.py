"""Questions, plans and fetched pages are shown as a reader expects (issue 22 item 8): a question with its header,
its options in order and the chosen ones marked (our harness's ``answers`` JSON and Claude Code's sentence), a plan
and a fetched page as rendered Markdown (never Markdown source in a monospace block, never JSON), the same in the
Markdown export; everything escaped."""

from __future__ import annotations

from assembler.render.toolbodies import tool_kind_body, tool_text_parts
from assembler.render.toolcards import asked, question_html
from assembler.views import TextBlockView, ToolData, ToolResultView

COLOR = {"questions": [{"id": "color", "question": "Which color do you **prefer**?", "header": "Pick one",
                        "multi_select": True, "options": [{"label": "Blue", "description": "A cool hue."},
                                                          {"label": "Green", "description": "A restful hue."}]}]}


def call(name: str, args: object, result: str | None, error: bool = False) -> ToolData:
    res = None if result is None else ToolResultView(seq=3, time=0, isError=error,
                                                     blocks=[TextBlockView(text=result)])
    return ToolData(kind="tool", callId="c", name=name, arguments=args, turn=1, step=1, status="done", callSeq=2,
                    **({"result": res} if res is not None else {}))


def test_a_question_shows_its_options_and_marks_the_answer() -> None:
    answer = '{"answers":[{"id":"color","selected":["Blue"],"custom":"Include accessibility notes"}]}'
    html = tool_kind_body(call("ask_user_question", COLOR, answer), answer, error=False)
    assert html is not None
    assert '<span class="badge">Pick one</span>' in html and "<strong>prefer</strong>" in html
    assert html.index("Blue") < html.index("Green")
    assert '<li class="option chosen">☑ <span class="option-label">Blue</span>' in html
    assert '<li class="option">☐ <span class="option-label">Green</span>' in html
    assert "several may be chosen" in html and "Include accessibility notes" in html
    assert '"answers"' not in html  # the answer JSON is read, not dumped


def test_claude_codes_answer_sentence_marks_its_option() -> None:
    args = {"questions": [{"question": "Which library?", "header": "Lib", "multiSelect": False,
                           "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}]}
    text = 'User has answered your questions: "Which library?"="B". You can now continue.'
    html = question_html(args, text, error=False)
    assert html is not None and '<li class="option chosen">☑ <span class="option-label">B</span>' in html


def test_a_rejected_question_shows_the_error_and_no_choice() -> None:
    html = tool_kind_body(call("AskUserQuestion", COLOR, "the user dismissed it", True), "the user dismissed it",
                          error=True)
    assert html is not None and "option chosen" not in html and "the user dismissed it" in html and "is-error" in html


def test_a_plan_and_a_fetched_page_are_rendered_markdown() -> None:
    plan = {"plan": "## Plan\n\n1. **Do** it <script>alert(1)</script>"}
    html = tool_kind_body(call("ExitPlanMode", plan, "User approved"), "User approved", error=False)
    assert html is not None and "<h2>Plan</h2>" in html and "<strong>Do</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    page = "# Fields\n\n- `path` - the file\n"
    fetched = tool_kind_body(call("WebFetch", {"url": "https://example.com/x", "prompt": "fields?"}, page), page,
                             error=False)
    assert fetched is not None and "<h1>Fields</h1>" in fetched and "<code>path</code>" in fetched
    assert 'href="https://example.com/x"' in fetched


def test_the_markdown_export_writes_them_as_markdown() -> None:
    answer = '{"answers":[{"id":"color","selected":["Green"]}]}'
    parts = tool_text_parts(call("ask_user_question", COLOR, answer), answer, error=False)
    assert parts is not None
    [(label, text, lang)] = parts
    assert label == "Asked" and lang == "markdown"
    assert "- [ ] Blue — A cool hue." in text and "- [x] Green — A restful hue." in text
    plan = tool_text_parts(call("exit_plan_mode", {"plan": "## Plan\n\n1. step"}, None), None, error=False)
    assert plan == [("Plan", "## Plan\n\n1. step", "markdown")]


def test_a_plain_question_string_is_one_question_with_no_options() -> None:
    [q] = asked({"question": "Install as a tool or a library?"})
    assert q["question"] == "Install as a tool or a library?" and q["options"] == []
