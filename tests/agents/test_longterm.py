"""Long-term memory: remember, recall, forget, the tag rule, agent scopes and pre-load."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import banks
from memory.agents import longterm, preload
from memory.agents.memories import MAX_TAG_CHARS, MAX_TAGS, normalise_tags
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.models import BankCreate
from memory.providers.tokens import count_tokens


def _rows(ctx: Context) -> int:
    bank = longterm.memory_bank(ctx)
    return 0 if bank is None else ctx.store.count(bank.id)


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_remember_then_recall_returns_the_closest_memory_with_its_provenance(
    ctx: Context,
) -> None:
    food = longterm.remember(
        ctx,
        user="ann",
        agent="chef",
        content="Ann is allergic to peanuts and avoids them",
        type="fact",
        tags=["Food Allergies", " health ", "health"],
    )
    longterm.remember(ctx, user="ann", content="Ann prefers concise answers", type="preference")

    found = longterm.recall(ctx, user="ann", agent="chef", query="is ann allergic to peanuts?")

    assert found[0].memory.id == food.id
    assert found[0].score > found[1].score
    top = found[0].memory
    assert (top.user, top.agent, top.scope, top.type) == ("ann", "chef", "user", "fact")
    assert top.tags == ["food-allergies", "health"]  # normalised, deduplicated, no markers
    assert top.created_at == ctx.clock.now()
    assert longterm.recall(ctx, user="ann", query="peanuts", k=1)[0].memory == food


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (["Python", "python ", "PYTHON"], ["python"]),
        (["food allergies", "food_allergies", "  Food   Allergies "], ["food-allergies"]),
        (["Zürich", "日本語", "c3po"], ["zürich", "日本語", "c3po"]),
        (["x" * MAX_TAG_CHARS], ["x" * MAX_TAG_CHARS]),
    ],
)
def test_tags_are_normalised_to_short_lowercase_keywords(
    given: list[str], stored: list[str]
) -> None:
    assert normalise_tags(given) == stored


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ([""], "empty"),
        (["   "], "empty"),
        (["x" * (MAX_TAG_CHARS + 1)], "at most"),
        (["scope:user"], "not a keyword"),
        (["c++"], "not a keyword"),
        (["-lead"], "not a keyword"),
        ([f"t{i}" for i in range(MAX_TAGS + 1)], "keep the"),
    ],
)
def test_a_bad_tag_is_refused_and_nothing_is_stored(
    ctx: Context, tags: list[str], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        longterm.remember(ctx, user="ann", content="likes tea", tags=tags)
    assert _rows(ctx) == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"content": "  "}, "empty"),
        ({"content": "word " * 300}, "256-token limit"),
        ({"type": "opinion"}, "unknown memory type"),
        ({"scope": "team"}, "unknown scope"),
        ({"scope": "agent", "agent": None}, "needs an agent"),
        ({"user": " "}, "user id"),
        ({"user": "a\nb"}, "control character"),
        ({"agent": "x" * 201}, "agent id"),
    ],
)
def test_bad_memory_arguments_are_refused_and_nothing_is_stored(
    ctx: Context, fields: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"user": "ann", "content": "likes tea", "agent": "chef", **fields}
    with pytest.raises(InvalidInput, match=message):
        longterm.remember(ctx, **args)  # type: ignore[arg-type]
    assert _rows(ctx) == 0


def test_the_same_memory_with_the_same_visibility_is_stored_once(ctx: Context) -> None:
    first = longterm.remember(ctx, user="ann", content="likes tea")
    again = longterm.remember(ctx, user="ann", agent="chef", content="likes tea")
    own = longterm.remember(ctx, user="ann", agent="chef", content="likes tea", scope="agent")
    other_user = longterm.remember(ctx, user="bob", content="likes tea")

    assert again.id == first.id
    assert len({first.id, own.id, other_user.id}) == 3
    assert _rows(ctx) == 3


def test_an_agent_sees_user_wide_memories_and_its_own_only(ctx: Context) -> None:
    wide = longterm.remember(ctx, user="ann", agent="chef", content="tea lover")
    chef = longterm.remember(ctx, user="ann", agent="chef", content="tea ceremony", scope="agent")
    coach = longterm.remember(ctx, user="ann", agent="coach", content="tea break", scope="agent")

    def seen(agent: str | None) -> set[str]:
        recalled = {h.memory.id for h in longterm.recall(ctx, user="ann", agent=agent, query="tea")}
        listed = {m.id for m in longterm.memories(ctx, user="ann", agent=agent)}
        assert recalled == listed
        return recalled

    assert seen("chef") == {wide.id, chef.id}
    assert seen("coach") == {wide.id, coach.id}
    assert seen("stranger") == {wide.id}
    assert seen(None) == {wide.id, chef.id, coach.id}  # the user's own view: all of them


def test_forget_deletes_the_memory_for_good(ctx: Context, tmp_path: Path) -> None:
    kept = longterm.remember(ctx, user="ann", content="zzkeptneedle likes tea")
    doomed = longterm.remember(ctx, user="ann", content="zzgoneneedle card 4242")
    assert _files_containing(tmp_path, b"zzgoneneedle")  # positive control

    gone = longterm.forget(ctx, user="ann", memory_id=doomed.id)

    assert gone == doomed
    assert [m.id for m in longterm.memories(ctx, user="ann")] == [kept.id]
    assert _files_containing(tmp_path, b"zzgoneneedle") == []
    assert _files_containing(tmp_path, b"zzkeptneedle")
    bank = longterm.memory_bank(ctx)
    assert bank is not None and ctx.store.old_version_count(bank.id) == 0
    with pytest.raises(NotFound, match="no memory"):
        longterm.forget(ctx, user="ann", memory_id=doomed.id)


def test_forget_refuses_another_users_or_another_agents_memory(ctx: Context) -> None:
    bobs = longterm.remember(ctx, user="bob", content="bob likes chess")
    coachs = longterm.remember(ctx, user="ann", agent="coach", content="runs", scope="agent")

    with pytest.raises(NotFound, match="of user 'ann'"):
        longterm.forget(ctx, user="ann", memory_id=bobs.id)
    with pytest.raises(NotFound, match="visible to agent 'chef'"):
        longterm.forget(ctx, user="ann", agent="chef", memory_id=coachs.id)

    assert [m.id for m in longterm.memories(ctx, user="bob")] == [bobs.id]
    assert [m.id for m in longterm.memories(ctx, user="ann")] == [coachs.id]


def test_reads_of_an_account_without_memories_find_nothing_and_make_nothing(
    ctx: Context,
) -> None:
    assert longterm.recall(ctx, user="ann", query="anything") == []
    assert longterm.memories(ctx, user="ann") == []
    with pytest.raises(NotFound):
        longterm.forget(ctx, user="ann", memory_id="x")
    assert banks.list_banks(ctx) == []


def test_a_conversation_bank_holding_the_name_is_refused(ctx: Context) -> None:
    banks.create(ctx, BankCreate(name=longterm.LONG_TERM_BANK, type="conversation"))
    with pytest.raises(InvalidInput, match="rename that bank"):
        longterm.remember(ctx, user="ann", content="likes tea")


@pytest.mark.parametrize("bad", [{"k": 0}, {"k": longterm.MAX_RECALL + 1}, {"query": " "}])
def test_recall_refuses_bad_arguments(ctx: Context, bad: dict[str, object]) -> None:
    args: dict[str, object] = {"user": "ann", "query": "tea", **bad}
    with pytest.raises(InvalidInput):
        longterm.recall(ctx, **args)  # type: ignore[arg-type]


# pre-load --------------------------------------------------------------------------------


def _many(ctx: Context, count: int) -> None:
    for i in range(count):
        longterm.remember(
            ctx,
            user="ann",
            content=f"tea fact number {i} " + "detail " * (i % 7),
            type="fact",
        )


def test_preload_keeps_the_best_memories_within_the_token_budget(ctx: Context) -> None:
    _many(ctx, 12)
    everything = preload.preload(
        ctx, user="ann", agent="chef", message="tea", max_memories=50, token_budget=10_000
    )
    assert len(everything.memories) == 12 and everything.left_out == 0

    budget = everything.tokens // 2
    tight = preload.preload(
        ctx, user="ann", agent="chef", message="tea", max_memories=50, token_budget=budget
    )

    assert 0 < len(tight.memories) < 12
    assert tight.tokens == count_tokens(tight.text()) <= budget
    assert tight.left_out == 12 - len(tight.memories)
    ranked = [m.memory.id for m in everything.memories]
    positions = [ranked.index(m.memory.id) for m in tight.memories]
    assert positions == sorted(positions)  # best first, in recall order
    for hit in tight.memories:  # provenance of each line
        line = preload.memory_line(hit)
        assert hit.memory.id in line and hit.memory.type in line and line in tight.text()


def test_preload_is_capped_by_max_memories(ctx: Context) -> None:
    _many(ctx, 6)
    capped = preload.preload(
        ctx, user="ann", agent=None, message="tea fact", max_memories=4, token_budget=10_000
    )
    assert len(capped.memories) == 4 and capped.max_memories == 4


@pytest.mark.parametrize(
    "caps", [{"max_memories": 0}, {"token_budget": 0}, {"token_budget": 5}, {"message": "  "}]
)
def test_preload_with_no_room_or_no_message_is_empty(ctx: Context, caps: dict[str, object]) -> None:
    _many(ctx, 2)
    args: dict[str, object] = {"message": "tea", "max_memories": 50, "token_budget": 1000, **caps}
    empty = preload.preload(ctx, user="ann", agent="chef", **args)  # type: ignore[arg-type]
    assert empty.memories == [] and empty.tokens == 0 and empty.text() == ""


@pytest.mark.parametrize(
    "caps", [{"max_memories": -1}, {"max_memories": 1001}, {"token_budget": -1}]
)
def test_preload_refuses_caps_out_of_range(ctx: Context, caps: dict[str, int]) -> None:
    with pytest.raises(InvalidInput):
        preload.preload(ctx, user="ann", agent="chef", message="tea", **caps)  # type: ignore[arg-type]
