"""Settings from the environment (MEMBANK_*): storage URI, account, models. Secrets stay in env."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

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
    llm_timeout: float = 60.0
    llm_retries: int = 2
