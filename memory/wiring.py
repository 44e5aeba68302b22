"""The one place concrete collaborators are made: `open_context` builds a `Context` from the
settings (the LanceDB store, the embedders the banks' modes name, the completer the settings
name, the system clock).

Everything else takes the collaborators it is given: tests build a `Context` by hand with a
scripted completer or a fixed clock, and no core module constructs a store or a provider.
"""

from __future__ import annotations

from memory.config import Mode
from memory.context import Context
from memory.ports import Completer, Embedder
from memory.settings import Settings, checked_account, checked_uri


def open_context(
    uri: str | None = None, *, account: str | None = None, settings: Settings | None = None
) -> Context:
    """Return a context on the LanceDB at `uri` (default: MEMBANK_URI or `.membank`).

    Raises:
        InvalidInput: a blank or `memory://` URI, a file named as the storage folder, or a
            blank or multi-line account.
    """
    from memory.store.lance import LanceStore  # lancedb: only when storage is opened

    resolved = settings or Settings()
    store = LanceStore(checked_uri(uri, resolved))
    return Context(store=store, account=checked_account(account, resolved), settings=resolved)


def embedder_of(mode: Mode) -> Embedder:
    """Return the embedder a bank's mode names (MiniLM offline, or the hashing embedder)."""
    from memory.providers.embed import embedder_for

    return embedder_for(mode.embedder, mode.dims)


def completer_of(settings: Settings) -> Completer:
    """Return the completer `settings.llm_model` names (offline ones directly, any other
    model name through litellm)."""
    from memory.providers import completer_for

    return completer_for(settings)


def own_embedder_of(mode: Mode) -> Embedder:
    """Return a new embedder for `mode`, not the shared one: MiniLM with an onnxruntime
    session of its own, whose threads take the OS priority of the thread that makes it (the
    REST API's write pool runs large writes on low-priority threads). Others: `embedder_of`."""
    from memory.providers.embed import MINILM_NAME, MiniLMEmbedder

    return MiniLMEmbedder() if mode.embedder == MINILM_NAME else embedder_of(mode)
