"""Settings from the environment (MEMBANK_*): storage URI, account, models. Secrets stay in env."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory.errors import InvalidInput
from memory.validation import check_one_line

DEFAULT_URI = ".membank"


class Settings(BaseSettings):
    """Runtime settings; each field reads MEMBANK_<FIELD> from the environment."""

    model_config = SettingsConfigDict(env_prefix="MEMBANK_", extra="ignore")

    uri: str = DEFAULT_URI
    """LanceDB URI: a local folder (default `.membank`) or object storage (s3://, gs://), its
    credentials and endpoint from the store's own environment variables (AWS_*, ...). Not
    memory://: lancedb and pylance keep separate in-memory stores, so reads find nothing."""
    account: str = "local"
    """The account every bank and read is scoped to."""
    llm_model: str = "membank/extractive"
    """litellm model used for compaction summaries (offline extractive by default)."""
    judge_model: str = "membank/heuristic-judge"
    """litellm model that judges summaries (the offline heuristic judge by default)."""
    neighbour_index: bool = True
    """A conversation turn's full-text index also carries the turn before it (recall; every
    deletion then also rewrites the turns carrying a deleted one, see bench/RESULTS.md
    issue 14). False: new turns carry nothing (set MEMBANK_NEIGHBOUR_INDEX=0)."""
    neighbour_within_hours: float = Field(6.0, gt=0, le=1_000_000)
    """A turn carries the turn before it only when that is at most this many hours earlier
    (the same exchange; a key resuming later starts afresh). It also keeps retention of a
    conversation bank as cheap as without carried text (bench/RESULTS.md "gap24")."""
    rerank_model: str | None = None
    """litellm model that reorders search hits (`memory.rerank`); None (default): off."""
    llm_timeout: float = 60.0
    llm_retries: int = 2
    api_rate_limit: int = 0
    """Requests each API key may make per `api_rate_window` seconds (REST; 0: no limit)."""
    api_rate_window: int = 60
    """The window of `api_rate_limit`, in seconds."""
    api_job_retry_after: int = 5
    """Seconds a 429 for too many jobs asks a client to wait, when the pool says nothing."""
    leases: str = "none"
    """The lease service that makes locks on object storage hold across machines:
    `prefect` (Prefect's global concurrency limits) or `none` (default: per-process locks
    there; local folders always use file locks). See `memory.leases`."""
    lease_url: str | None = None
    """The Prefect API the leases come from; unset: PREFECT_API_URL."""
    lease_seconds: float = 60.0
    """How long a lease lasts unrenewed (at least 60, Prefect's floor): how long a holder
    that died keeps the others waiting."""
    lease_wait_seconds: float = 30.0
    """How long a busy or unreachable lease service is asked again before a lock fails."""
    jobs: str = "process"
    """Where the API's long work runs: `process` (a thread pool in each API process, the
    offline default; jobs are lost with the process) or `prefect` (flow runs of the
    `membank-job` deployments, kept by the Prefect server; `memory.ops.prefect_jobs`)."""
    jobs_url: str | None = None
    """The Prefect API of `jobs=prefect`; unset: PREFECT_API_URL."""
    jobs_running: int | None = Field(None, ge=1, le=1000)
    """Jobs of one account running at once, so one account cannot take every worker while
    others wait (unset: half the API's job threads with `jobs=process`, 2 with `prefect`,
    where it is a Prefect global concurrency limit per account shared by every worker)."""
    exports_dir: str | None = None
    """Where the API keeps finished export files (unset: a temporary folder per process;
    with `jobs=prefect` or several API workers, a folder every process and worker sees)."""
    task_runner: str = "threads"
    """How a sweep runs its tasks: `threads` (Prefect's thread pool, default) or `dask`
    (prefect-dask against `dask_address`, or a local cluster of `dask_workers`)."""
    dask_address: str | None = None
    """The Dask scheduler (tcp://host:8786) of `task_runner=dask`; unset: a local cluster."""
    dask_workers: int = 2
    """Worker processes of the local Dask cluster when no `dask_address` is given."""


def checked_uri(given: str | None, settings: Settings) -> str:
    """Return the storage URI to open: `given` (--data) or MEMBANK_URI, checked.

    A local path has `~` expanded (`~/banks`, `~user/banks`); URIs (s3://, gs://) are
    returned as given.

    Raises:
        InvalidInput: the URI is blank, is `memory://` (its data would vanish with the
            process), or names a file, or a path under a file, where a folder is expected.
    """
    source = "--data" if given is not None else "MEMBANK_URI"
    uri = given if given is not None else settings.uri
    if not uri.strip():
        raise InvalidInput(f"{source} is empty: give a folder or an s3:// or gs:// URI")
    if uri.startswith("memory://"):
        raise InvalidInput(
            f"{source} {uri!r} is not supported (its data would vanish when the process ends): "
            "give a folder or an s3:// or gs:// URI"
        )
    if "://" in uri:
        return uri
    folder = os.path.expanduser(uri)
    blocker = _file_in_the_way(Path(folder))
    if blocker == Path(folder):
        raise InvalidInput(f"{source} {uri!r} is a file, not a folder: give the storage folder")
    if blocker is not None:
        raise InvalidInput(
            f"{source} {uri!r} is under {str(blocker)!r}, which is a file, not a folder: "
            "give a storage folder path whose parents are folders"
        )
    return folder


def _file_in_the_way(folder: Path) -> Path | None:
    """Return `folder` or the nearest existing parent of it when that is not a folder."""
    for candidate in (folder, *folder.parents):
        try:
            mode = candidate.stat().st_mode
        except OSError:  # missing, under a file (ENOTDIR), or not ours to look at
            continue
        return None if stat.S_ISDIR(mode) else candidate
    return None


MAX_ACCOUNT_LENGTH = 200


def checked_account(given: str | None, settings: Settings) -> str:
    """Return the account to scope every read and write to: `given` or MEMBANK_ACCOUNT.

    Raises:
        InvalidInput: the account is blank, too long or not one line (an empty
            MEMBANK_ACCOUNT would otherwise put banks in an account no listing shows).
    """
    source = "account" if given is not None else "MEMBANK_ACCOUNT"
    account = given if given is not None else settings.account
    if not account.strip() or len(account) > MAX_ACCOUNT_LENGTH:
        raise InvalidInput(
            f"{source} must be 1-{MAX_ACCOUNT_LENGTH} characters, not blank: unset "
            "MEMBANK_ACCOUNT for the default account 'local', or name one"
        )
    check_one_line(source, account)
    return account
