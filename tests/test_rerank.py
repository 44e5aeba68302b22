"""The optional reranker: off by default, any litellm model by name, errors that say why.

Real litellm calls against the fake OpenAI-compatible server (tests/fake_llm_server.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from compaction_support import run
from fake_llm_server import Script, openai_endpoint

from memory import banks, entries, search
from memory.context import Context
from memory.errors import InvalidInput, ProviderError
from memory.models import Bank, BankCreate, EntryIn, SearchQuery

TURNS = [
    "We booked the Lisbon flight for 12 May.",
    "The Lisbon hotel is near the river.",
    "Lisbon trams are old and yellow.",
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    """The fake OpenAI-compatible server, with real model requests allowed towards it."""
    script = Script()
    with openai_endpoint(script, monkeypatch):
        yield script


@pytest.fixture
def bank(ctx: Context) -> Bank:
    created = banks.create(ctx, BankCreate(name="trips", type="general"))
    entries.write(ctx, created, [EntryIn(key="k", content=text) for text in TURNS])
    return created


def _search(ctx: Context, bank: Bank, k: int = 3) -> list[str]:
    hits = search.search(ctx, bank, SearchQuery(text="Lisbon", k=k, min_score=0.0))
    return [h.entry.content for h in hits]


def _reranking(ctx: Context, model: str = "openai/reranker") -> None:
    ctx.settings = ctx.settings.model_copy(update={"rerank_model": model})


def test_search_calls_no_model_unless_a_rerank_model_is_set(
    ctx: Context, bank: Bank, server: Script
) -> None:
    plain = _search(ctx, bank)
    assert sorted(plain) == sorted(TURNS) and server.requests == []


def test_the_model_orders_the_hits_and_scores_stay_calibrated(
    ctx: Context, bank: Bank, server: Script
) -> None:
    plain = search.search(ctx, bank, SearchQuery(text="Lisbon", min_score=0.0))
    by_text = {h.entry.content: h.score for h in plain}
    shown = [h.entry.content for h in plain]
    want = [shown[2], shown[0], shown[1]]
    server.reply = json.dumps({"order": [3, 1]})  # leaves one out: it goes last
    _reranking(ctx)
    hits = search.search(ctx, bank, SearchQuery(text="Lisbon", k=2, min_score=0.0))
    assert [h.entry.content for h in hits] == want[:2]
    assert [h.score for h in hits] == [by_text[t] for t in want[:2]]
    ((path, body),) = server.requests
    assert path.endswith("/chat/completions") and body["model"] == "reranker"
    prompt = body["messages"][0]["content"]
    assert "Lisbon" in prompt and all(f"[{n}] {shown[n - 1]}" in prompt for n in (1, 2, 3))


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I think the second one.", "without a JSON object"),
        ('{"order": "first"}', "not valid"),
    ],
)
def test_a_reply_without_an_order_is_an_error_naming_the_model(
    ctx: Context, bank: Bank, server: Script, reply: str, problem: str
) -> None:
    server.reply = reply
    _reranking(ctx)
    with pytest.raises(ProviderError, match=rf"'openai/reranker'.*{problem}"):
        _search(ctx, bank)


def test_numbers_out_of_range_or_repeated_are_ignored(
    ctx: Context, bank: Bank, server: Script
) -> None:
    plain = _search(ctx, bank)
    server.reply = json.dumps({"order": [9, 2, 2, 0, -1]})
    _reranking(ctx)
    assert _search(ctx, bank) == [plain[1], plain[0], plain[2]]


def test_an_offline_model_cannot_rerank(ctx: Context, bank: Bank) -> None:
    _reranking(ctx, "membank/extractive")
    with pytest.raises(InvalidInput, match=r"offline membank model.*litellm model name"):
        _search(ctx, bank)


def test_the_cli_flag_sets_the_model_and_a_failure_exits_with_the_reason(
    ctx: Context, bank: Bank, server: Script
) -> None:
    server.reply = json.dumps({"order": [2, 1, 3]})
    argv = ("search", "trips", "Lisbon", "--min-score", "0", "--rerank", "openai/r")
    code, out, _ = run(*argv, "--json", context=ctx)
    assert code == 0 and len(json.loads(out)) == 3 and len(server.requests) == 1
    server.status = 500
    code, _, err = run(*argv, context=ctx)
    assert code != 0 and "openai/r" in err
