"""Calibrated scores and the default threshold: a nonsense query finds nothing, real queries
keep their hits (the real offline MiniLM embedder, real LanceDB); `--min-score` on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import banks, entries, search
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.providers.embed import MiniLMEmbedder
from memory.store.lance import LanceStore
from tests.compaction_support import run

TURNS = [
    ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "That's great! I signed up for a pottery class last week."),
    ("Caroline", "I'm researching adoption agencies, I want to give a kid a loving home."),
    ("Melanie", "We took the kids camping at the beach, they loved roasting marshmallows."),
    ("Caroline", "My friends gave me a necklace from Sweden, my home country."),
    ("Melanie", "I ran a charity race for mental health on Saturday."),
]
REAL = {
    "What did Melanie sign up for?": 1,
    "Where is Caroline's necklace from?": 4,
    "adoption agencies": 2,
    "charity race": 5,
}
NONSENSE = ["xqzv blorft wibblequark", "zzyzx plonkered frimble", "qwpoiu mnbvc"]
_MINILM: list[MiniLMEmbedder] = []


def _minilm(_mode: object) -> MiniLMEmbedder:
    if not _MINILM:
        _MINILM.append(MiniLMEmbedder())
    return _MINILM[0]


@pytest.fixture
def chat(tmp_path: Path) -> tuple[Context, Bank, list[str]]:
    ctx = Context(store=LanceStore(str(tmp_path / "db")), account="acme", embedder=_minilm)
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    written = entries.write(ctx, bank, [EntryIn(key="c1", speaker=s, content=t) for s, t in TURNS])
    return ctx, bank, [e.id for e in written]


@pytest.mark.parametrize("method", ["hybrid", "vector", "fts"])
def test_nonsense_finds_nothing_above_the_default(
    chat: tuple[Context, Bank, list[str]], method: str
) -> None:
    ctx, bank, _ = chat
    for text in NONSENSE:
        assert search.search(ctx, bank, SearchQuery(text=text, method=method)) == [], text  # type: ignore[arg-type]
        # without a threshold the same query does return the bank's entries, all weak
        weak = search.search(ctx, bank, SearchQuery(text=text, method=method, min_score=0))  # type: ignore[arg-type]
        assert all(h.score < search.DEFAULT_MIN_SCORE for h in weak)
        assert method == "fts" or len(weak) == len(TURNS)


def test_real_queries_keep_their_hits(chat: tuple[Context, Bank, list[str]]) -> None:
    ctx, bank, ids = chat
    for text, answer in REAL.items():
        hits = search.search(ctx, bank, SearchQuery(text=text, k=3))
        assert hits and hits[0].entry.id == ids[answer], text
        assert hits[0].score >= 3 * search.DEFAULT_MIN_SCORE, text


def test_min_score_drops_weak_hits_and_keeps_the_order(
    chat: tuple[Context, Bank, list[str]],
) -> None:
    ctx, bank, _ = chat
    query = SearchQuery(text="What did Melanie sign up for?", k=6, min_score=0)
    every = search.search(ctx, bank, query)
    assert len(every) == len(TURNS)
    cut = every[2].score
    strong = search.search(ctx, bank, query.model_copy(update={"min_score": cut}))
    assert strong == [h for h in every if h.score >= cut] and len(strong) >= 3
    with pytest.raises(InvalidInput, match="min_score"):
        search.search(ctx, bank, query.model_copy(update={"min_score": -0.1}))
    with pytest.raises(InvalidInput, match="min_score"):
        search.search(ctx, bank, query.model_copy(update={"min_score": float("nan")}))


def test_cli_min_score(chat: tuple[Context, Bank, list[str]]) -> None:
    ctx, _, _ = chat
    code, out, _ = run("search", "chat", "pottery class", "--min-score", "0", "--json", context=ctx)
    assert code == 0 and len(json.loads(out)) == len(TURNS)
    code, out, _ = run(
        "search", "chat", "pottery class", "--min-score", "0.3", "--json", context=ctx
    )
    hits = json.loads(out)
    assert code == 0 and [h["entry"]["content"] for h in hits] == [TURNS[1][1]]
    assert all(h["score"] >= 0.3 for h in hits)
    code, out, _ = run("search", "chat", "xqzv blorft wibblequark", "--json", context=ctx)
    assert code == 0 and json.loads(out) == []
    code, _, err = run("search", "chat", "pottery", "--min-score", "-1", context=ctx)
    assert code == 2 and "min_score" in err
    with pytest.raises(SystemExit) as stopped:  # argparse: not a number
        run("search", "chat", "pottery", "--min-score", "lots", context=ctx)
    assert stopped.value.code == 2
