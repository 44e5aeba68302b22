"""Saved test runs (listed newest first) and two prompts compared on the same entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory import banks
from memory.lab.records import TestRun
from memory.lab.run import check_options, run_loaded
from memory.lab.sources import load

if TYPE_CHECKING:
    from memory.context import Context
    from memory.lab.records import Source


def list_runs(ctx: Context, *, bank: str | None = None) -> list[TestRun]:
    """Return the account's saved test runs, newest first; of one bank (id or name) if given.

    Raises:
        NotFound: an unknown bank.
    """
    bank_id = banks.get(ctx, bank).id if bank is not None else None
    bodies = ctx.store.lab_run_bodies(ctx.account, bank_id)
    return [TestRun.model_validate_json(body) for body in bodies]


def delete_runs(ctx: Context, *, bank: str | None = None) -> int:
    """Delete the account's saved runs (of one bank) for good; returns how many there were.

    Raises:
        NotFound: an unknown bank.
    """
    bank_id = banks.get(ctx, bank).id if bank is not None else None
    return ctx.store.delete_lab_runs(ctx.account, bank_id)


def compare(
    ctx: Context, source: Source, prompts: tuple[str, str], **same_kwargs: Any
) -> tuple[TestRun, TestRun]:
    """Run two prompts on the same entries (loaded or generated once); returns both runs.

    Args:
        ctx: The context.
        source: Where the entries come from.
        prompts: The two compaction prompts.
        **same_kwargs: What `run_test` takes besides the prompt (max_tokens, max_turns,
            judge_model, runs, save, progress), the same for both.

    Raises:
        InvalidInput: bad options or input (checked before anything runs).
        NotFound: an unknown bank.
        ProviderError: a model failed.
    """
    options: dict[str, Any] = {
        "max_tokens": None,
        "max_turns": None,
        "judge_model": None,
        "runs": 1,
        "save": True,
        "progress": None,
    }
    unknown = sorted(set(same_kwargs) - set(options))
    if unknown:
        raise TypeError(f"compare() got unexpected options: {', '.join(unknown)}")
    options.update(same_kwargs)
    for prompt in prompts:
        check_options(prompt, options["runs"], options["max_tokens"], options["max_turns"])
    progress = options.pop("progress") or (lambda message: None)
    progress("loading entries")
    loaded = load(ctx, source)
    first, second = (
        run_loaded(ctx, source, loaded, prompt=prompt, progress=progress, **options)
        for prompt in prompts
    )
    return first, second
