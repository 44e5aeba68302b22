"""An optional reranker: a litellm model reorders a search's best hits (off by default).

`MEMBANK_RERANK_MODEL` (or `membank search --rerank MODEL`) names any litellm model; with
none set, search ranks by calibrated score alone and no model is called. With one, search
fetches its best RERANK_DEPTH hits (at least k), the model orders them (prompt
`prompts/rerank.md`, a JSON reply `{"order": [...]}`), and the first k are returned. Each
hit keeps its calibrated score, so `min_score` still means the same; only the order is the
model's. A hit the model leaves out goes after the ones it ordered, in score order. A reply
that is no such JSON, or a provider failure, is a ProviderError naming the model: a search
asked to rerank does not silently fall back.

There is no offline reranker: an offline `membank/` name is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from memory import prompts
from memory.errors import InvalidInput
from memory.models import SearchHit
from memory.ports import Completer, Message
from memory.providers.json_reply import parse_json_reply

if TYPE_CHECKING:
    from memory.settings import Settings

RERANK_DEPTH = 30
"""Hits the model sees at most (k more when k is larger)."""
PASSAGE_CHARS = 600
"""Characters of a hit's best chunk shown to the model."""


class RerankReply(BaseModel):
    """The model's answer: passage numbers (1-based), best first."""

    model_config = ConfigDict(extra="ignore")

    order: list[int]


def reranker_for(settings: Settings) -> Completer | None:
    """Return the completer of `settings.rerank_model`, or None when reranking is off.

    Raises:
        InvalidInput: the name is an offline `membank/` model (there is no offline reranker).
    """
    model = (settings.rerank_model or "").strip()
    if not model:
        return None
    from memory.providers.labels import is_offline

    if is_offline(model):
        raise InvalidInput(
            f"rerank model {model!r} is an offline membank model; reranking needs a litellm "
            "model name (e.g. openai/gpt-4o-mini), or unset MEMBANK_RERANK_MODEL"
        )
    from memory.providers.llm import LiteLLMCompleter

    return LiteLLMCompleter(model, timeout=settings.llm_timeout, retries=settings.llm_retries)


def depth(k: int) -> int:
    """Return how many hits a reranked search of `k` fetches."""
    return max(k, RERANK_DEPTH)


def rerank(completer: Completer, text: str, hits: Sequence[SearchHit], k: int) -> list[SearchHit]:
    """Return the first `k` of `hits` in the order `completer` gives for the query `text`.

    Raises:
        ProviderError: the model failed or its reply is not `{"order": [numbers]}`.
    """
    if len(hits) < 2:
        return list(hits[:k])
    passages = "\n".join(f"[{number}] {_passage(hit)}" for number, hit in enumerate(hits, start=1))
    message = prompts.render("rerank", query=text, passages=passages)
    reply = completer.complete([Message(role="user", content=message)])
    order = parse_json_reply(completer.model, reply, RerankReply, "a passage order").order
    picked = list(dict.fromkeys(n - 1 for n in order if 1 <= n <= len(hits)))
    rest = sorted(set(range(len(hits))).difference(picked))
    return [hits[i] for i in [*picked, *rest][:k]]


def _passage(hit: SearchHit) -> str:
    """Return a hit's best chunk on one line, with its speaker, cut to PASSAGE_CHARS."""
    text = " ".join(hit.chunk_text.split())
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " ..."
    return f"{hit.entry.speaker}: {text}" if hit.entry.speaker else text
