"""Jump-forward in the server's batched engine: drafts of forced text are verified by each
request's own sampler, so the output is the one plain decoding writes. The engine is set to
verify every drafted token (``draft_all``), else on this CPU its cost model would draft almost
nothing for the embedded model (a row of logits over 262k tokens costs about a decode)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import gbnf_sampler as gs
from serve_helpers import (
    MESSAGES,
    SCHEMAS,
    Server,
    running_server,
    schema_format,
    valid_gbnf,
    valid_json,
)

openai = pytest.importorskip("openai", reason="the openai client is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

# Long forced stretches between free choices: drafts with several tokens, some refused (the
# model spells a boundary with other tokens than the tokenizer does).
FORCED_GBNF = r"""
root ::= "The capital of " country " is " city ". That is the answer to the question."
country ::= "France" | "Italy" | "Norway"
city ::= "Paris" | "Rome" | "Oslo"
"""


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=4, ctx=1024, queue=8, draft_all=True) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=600)


@pytest.fixture
def drafting(server: Server) -> Iterator[Any]:
    """The engine with jump-forward on; restored to on after a test turned it off."""
    engine = server.engine
    engine.max_draft = gs.limits.DEFAULT_MAX_DRAFT_TOKENS
    yield engine
    engine.max_draft = gs.limits.DEFAULT_MAX_DRAFT_TOKENS
    engine.draft_lookup = True


def _chat(client: Any, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"max_tokens": 120, "temperature": 0}
    options.update(kwargs)
    return client.chat.completions.create(model="default", messages=MESSAGES, **options)


def _requests() -> list[dict[str, Any]]:
    return [
        *({"response_format": schema_format(s)} for s in SCHEMAS),
        {"extra_body": {"grammar": FORCED_GBNF}},
        {"extra_body": {"guided_choice": ["The first answer", "The second answer"]}},
    ]


def _answers(client: Any, requests: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """Each request alone (one sequence per batch, as plain decoding runs it)."""
    out = []
    for request in requests:
        choice = _chat(client, **request)
        out.append(
            (choice.choices[0].message.content, choice.choices[0].finish_reason, choice.usage)
        )
    return [(text, reason, usage.completion_tokens) for text, reason, usage in out]


def test_greedy_output_is_that_of_plain_decoding(drafting: Any, client: Any) -> None:
    requests = _requests()
    before = (drafting.draft_tokens, drafting.kept_tokens)
    with_drafts = _answers(client, requests)
    drafted = drafting.draft_tokens - before[0]
    kept = drafting.kept_tokens - before[1]
    drafting.max_draft = 0
    plain = _answers(client, requests)
    assert drafting.draft_tokens - before[0] == drafted  # nothing drafted with max_draft 0
    assert with_drafts == plain
    # Drafts were evaluated, the model kept some and refused others (the rollback path ran).
    assert 0 < kept < drafted
    for (text, reason, _), request in zip(with_drafts, requests, strict=True):
        assert reason == "stop"
        if "response_format" in request:
            valid_json(text, request["response_format"]["json_schema"]["schema"])
    valid_gbnf(with_drafts[len(SCHEMAS)][0], FORCED_GBNF)


def test_streamed_text_with_drafts_is_the_whole_text(drafting: Any, client: Any) -> None:
    whole = _chat(client, extra_body={"grammar": FORCED_GBNF}).choices[0].message.content
    stream = _chat(client, extra_body={"grammar": FORCED_GBNF}, stream=True)
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert len([p for p in pieces if p]) > 1
    assert "".join(pieces) == whole
    valid_gbnf(whole, FORCED_GBNF)


@pytest.mark.parametrize("max_tokens", [3, 9, 14])
def test_max_tokens_reached_inside_a_draft(drafting: Any, client: Any, max_tokens: int) -> None:
    request = {"extra_body": {"grammar": FORCED_GBNF}, "max_tokens": max_tokens}
    drafted = _chat(client, **request)
    drafting.max_draft = 0
    plain = _chat(client, **request)
    assert drafted.choices[0].finish_reason == "length"
    assert drafted.usage.completion_tokens == max_tokens
    assert drafted.choices[0].message.content == plain.choices[0].message.content


def test_stop_string_inside_a_draft(drafting: Any, client: Any) -> None:
    request = {"extra_body": {"grammar": FORCED_GBNF}, "stop": ["answer to"]}
    drafted = _chat(client, **request)
    drafting.max_draft = 0
    plain = _chat(client, **request)
    text = drafted.choices[0].message.content
    assert drafted.choices[0].finish_reason == "stop"
    assert text.endswith("That is the ")
    assert text == plain.choices[0].message.content


def test_sampled_outputs_with_drafts_are_valid(drafting: Any, client: Any) -> None:
    before = drafting.kept_tokens
    for seed, schema in enumerate(SCHEMAS[:3]):
        out = _chat(client, response_format=schema_format(schema), temperature=1.0, seed=seed)
        if out.choices[0].finish_reason == "stop":
            valid_json(out.choices[0].message.content, schema)
        out = _chat(client, extra_body={"grammar": FORCED_GBNF}, temperature=1.0, seed=seed)
        valid_gbnf(out.choices[0].message.content, FORCED_GBNF)
    assert drafting.kept_tokens > before


def test_concurrent_requests_with_drafts(drafting: Any, client: Any) -> None:
    requests = _requests()
    with ThreadPoolExecutor(len(requests)) as pool:
        outs = list(pool.map(lambda r: _chat(client, **r), requests))
    for out, request in zip(outs, requests, strict=True):
        assert out.choices[0].finish_reason == "stop"
        text = out.choices[0].message.content
        if "response_format" in request:
            valid_json(text, request["response_format"]["json_schema"]["schema"])
        elif "grammar" in request["extra_body"]:
            valid_gbnf(text, FORCED_GBNF)
        else:
            assert text in request["extra_body"]["guided_choice"]


def test_health_reports_jump_forward(drafting: Any, server: Server, client: Any) -> None:
    _chat(client, extra_body={"grammar": FORCED_GBNF})
    report = httpx.get(server.url + "/health").json()["jump_forward"]
    assert report["max_draft"] == gs.limits.DEFAULT_MAX_DRAFT_TOKENS
    assert 0 < report["kept_tokens"] <= report["draft_tokens"]


FEW_SHOT = (
    'Order B12, lamp LMP-1, broken. JSON: {"order":"B12","item":"LMP-1","issue":"broken"}\n'
    "Order C77, lamp LMP-1, late. JSON: "
)
TICKET = {
    "type": "object",
    "properties": {
        "order": {"type": "string", "maxLength": 8},
        "item": {"type": "string", "maxLength": 8},
        "issue": {"enum": ["broken", "late", "missing"]},
    },
    "required": ["order", "item", "issue"],
    "additionalProperties": False,
}


def test_drafts_guessed_from_the_prompt(drafting: Any, client: Any) -> None:
    """A few-shot prompt: guesses from its example keep more draft tokens than forced text
    alone, and the answer is the same with both and without drafts."""

    def complete() -> tuple[str, int]:
        kept = drafting.kept_tokens
        out = client.completions.create(
            model="default",
            prompt=FEW_SHOT,
            max_tokens=40,
            temperature=0,
            extra_body={"guided_json": TICKET},
        )
        return out.choices[0].text, drafting.kept_tokens - kept

    guessed, kept_guessed = complete()
    drafting.draft_lookup = False
    forced, kept_forced = complete()
    drafting.max_draft = 0
    plain, _ = complete()
    assert guessed == forced == plain
    valid_json(guessed, TICKET)
    assert kept_guessed > kept_forced
