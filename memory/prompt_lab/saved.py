"""Saved test runs (listed newest first) and two prompts compared on the same entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory import banks
from memory.prompt_lab.records import TestOptions, TestRun
from memory.prompt_lab.run import LabModels, Progress, models_for, run_loaded
from memory.prompt_lab.sources import load

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank
    from memory.prompt_lab.records import Source


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
    checks = {"max_tokens", "max_turns", "judge_model", "runs"}
    unknown = sorted(set(same_kwargs) - checks - {"save", "progress"})
    if unknown:
        raise TypeError(f"compare() got unexpected options: {', '.join(unknown)}")
    same = {k: v for k, v in same_kwargs.items() if k in checks}
    first, second = (TestOptions(prompt=prompt, **same) for prompt in prompts)
    models = models_for(ctx, first.judge_model)
    return compare_checked(
        ctx,
        source,
        (first, second),
        (models, models),
        save=same_kwargs.get("save", True),
        progress=same_kwargs.get("progress"),
    )


def compare_checked(
    ctx: Context,
    source: Source,
    options: tuple[TestOptions, TestOptions],
    models: tuple[LabModels, LabModels],
    *,
    bank: Bank | None = None,
    save: bool = True,
    progress: Progress | None = None,
) -> tuple[TestRun, TestRun]:
    """Run two checked option sets, each with its models, on the same entries (loaded or
    generated once, by the first's generator); `bank`: the source's, if resolved."""
    say = progress or (lambda message: None)
    say("loading entries")
    loaded = load(ctx, source, bank, models[0].generator)
    first, second = (
        run_loaded(ctx, source, loaded, chosen, used, save=save, progress=say)
        for chosen, used in zip(options, models, strict=True)
    )
    return first, second
