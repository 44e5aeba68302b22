"""Real litellm providers chosen by configuration alone, against a local fake model server.

`openai/...` and `ollama/...` names reach `tests/fake_llm_server.py` on 127.0.0.1 through
litellm's own providers (`OPENAI_BASE_URL`, `OLLAMA_API_BASE`): the request path is the one
a user with a real server gets. A mode from `MEMBANK_CONFIG_DIR` brings a litellm embedder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from compaction_support import config_folder, make_bank, run, write_turns
from fake_llm_server import Script, openai_endpoint

from memory import entries
from memory.config import CONFIG_DIR_ENV, get_mode, modes, templates
from memory.context import Context
from memory.errors import InvalidInput

REMOTE_MODE = """\
remote:
  description: Vectors from an OpenAI-compatible server.
  embedder: openai/text-embedding-3-small
  dims: 8
  chunk_size: 200
  chunk_overlap: 0
"""


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The fake server, with real model requests allowed and the providers pointed at it."""
    with openai_endpoint(script, monkeypatch) as url:
        monkeypatch.setenv("OLLAMA_API_BASE", url)
        yield url


@pytest.mark.parametrize(
    ("model", "path"),
    [("openai/gpt-4o-mini", "/v1/chat/completions"), ("ollama/llama3.2", "/api/generate")],
)
def test_compaction_summary_from_a_configured_model(
    model: str,
    path: str,
    server: str,
    script: Script,
    data: str,
    local: Context,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMBANK_LLM_MODEL", model)
    script.reply = "Alice ordered #1000 to #1006; totals 0 to 42 dollars."
    bank = make_bank(local, max_turns=6)
    write_turns(local, bank, "k", 9)

    code, out, err = run("compact", "chat", "--data", data, "--json")

    assert code == 0, err
    (result,) = json.loads(out)
    assert (result["status"], result["covered"]) == ("compacted", 7)
    assert result["summarizer"] == f"{model}: {model} (LLM via litellm)"
    asked = [body for seen, body in script.requests if seen == path]
    assert len(asked) == 1
    sent = json.dumps(asked[0])
    assert "Keep every fact, name, number and date." in sent  # the bank's prompt
    assert "order #1000" in sent and "order #1006" in sent and "order #1007" not in sent
    thread = entries.load(local, bank, "k")
    assert [e.kind for e in thread] == ["summary", "entry", "entry"]
    assert thread[0].content == script.reply


def test_a_failing_server_is_retried_then_leaves_every_entry(
    server: str, script: Script, data: str, local: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("MEMBANK_LLM_RETRIES", "1")
    script.status = 500
    bank = make_bank(local, max_turns=2)
    write_turns(local, bank, "k", 3)

    code, _, err = run("compact", "chat", "--data", data)

    assert code == 1
    assert "failed, entries kept" in err
    assert script.paths().count("/v1/chat/completions") == 2  # the call and one retry
    assert [e.kind for e in entries.load(local, bank, "k")] == ["entry"] * 3


def test_a_refused_request_is_not_retried(
    server: str, script: Script, data: str, local: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("MEMBANK_LLM_RETRIES", "3")
    script.status = 401  # a wrong key does not get better by asking again
    bank = make_bank(local, max_turns=2)
    write_turns(local, bank, "k", 3)

    code, _, err = run("compact", "chat", "--data", data)

    assert code == 1 and "AuthenticationError" in err
    assert script.paths() == ["/v1/chat/completions"]
    assert len(entries.load(local, bank, "k")) == 3


def test_a_server_that_never_answers_times_out_and_keeps_entries(
    server: str, script: Script, data: str, local: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("MEMBANK_LLM_RETRIES", "0")
    monkeypatch.setenv("MEMBANK_LLM_TIMEOUT", "1")
    script.hold = threading.Event()  # released only when the server stops
    bank = make_bank(local, max_turns=2)
    write_turns(local, bank, "k", 3)

    code, _, err = run("compact", "chat", "--data", data)

    assert code == 1
    assert "failed, entries kept" in err and "timed out" in err.lower()
    assert len(entries.load(local, bank, "k")) == 3


def test_a_user_mode_embeds_through_a_litellm_embedding_model(
    server: str, script: Script, data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_folder(tmp_path, monkeypatch, modes_yaml=REMOTE_MODE)

    code, out, _ = run("modes", "--json")
    assert code == 0
    listed = {m["name"]: m for m in json.loads(out)}
    assert listed["remote"]["embedder"] == "openai/text-embedding-3-small"
    assert {"fast", "balanced", "accurate"} <= set(listed)

    code, _, err = run(
        "bank", "create", "--name", "notes", "--type", "general", "--mode", "remote", "--data", data
    )
    assert code == 0, err
    for text in ("The boiler is serviced every October.", "Zoe prefers tea to coffee."):
        code, _, err = run("write", "notes", "--key", "house", text, "--data", data)
        assert code == 0, err
    code, out, err = run("search", "notes", "boiler service", "--data", data, "--json")
    assert code == 0, err

    embedded = [body["input"] for seen, body in script.requests if seen == "/v1/embeddings"]
    assert ["The boiler is serviced every October."] in embedded
    assert any("boiler service" in json.dumps(inputs) for inputs in embedded)
    assert all(body["model"] == "text-embedding-3-small" for _, body in script.requests)
    hits = json.loads(out)
    assert hits[0]["entry"]["content"] == "The boiler is serviced every October."

    monkeypatch.delenv(CONFIG_DIR_ENV)  # the folder is gone: the bank's mode is unknown
    code, _, err = run("search", "notes", "boiler", "--data", data)
    assert code == 2
    assert "unknown mode 'remote'" in err and f"{CONFIG_DIR_ENV} is unset" in err


def test_user_templates_may_use_user_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_folder(
        tmp_path,
        monkeypatch,
        modes_yaml=REMOTE_MODE,
        templates_yaml="house-notes:\n  type: general\n  mode: remote\n  retention_days: 30\n",
    )
    assert get_mode("remote").dims == 8
    assert templates()["house-notes"].mode == "remote"
    assert "customer-support" in templates()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {
                "modes_yaml": "balanced:\n  embedder: x/y\n  dims: 4\n  chunk_size: 9\n"
                "  chunk_overlap: 0\n"
            },
            "'balanced' is shipped with membank",
        ),
        ({"modes_yaml": "mine: [1, 2]\n"}, "must be a mapping of name -> settings"),
        ({"modes_yaml": "mine: {embedder: x/y, dims: 4\n"}, "cannot be read as YAML"),
        (
            {"modes_yaml": "mine: {embedder: x/y, dims: 4, chunk_size: 8, chunk_overlap: 8}\n"},
            "'mine'",
        ),
        (
            {"modes_yaml": "mine: {embedder: x/y, dims: four, chunk_size: 8, chunk_overlap: 0}\n"},
            "'mine': dims",
        ),
        (
            {"templates_yaml": "t: {type: general, mode: nowhere}\n"},
            "template 't' uses unknown mode 'nowhere'",
        ),
        (
            {
                "modes_yaml": "x: {embedder: membank/minilm-l6-int8, dims: 100, chunk_size: 16, "
                "chunk_overlap: 4}\n"
            },
            "'x': membank/minilm-l6-int8 has 384 dims, not 100",
        ),
        (
            {
                "modes_yaml": "x: {embedder: membank/nosuch, dims: 384, chunk_size: 16, "
                "chunk_overlap: 4}\n"
            },
            "'x': unknown offline embedder 'membank/nosuch'",
        ),
        (
            {"modes_yaml": "x: {embedder: a/b, dims: true, chunk_size: 16, chunk_overlap: 4}\n"},
            "'x': dims",
        ),
        ({"templates_yaml": "t: {type: general, mode: fast, max_tokens: -5}\n"}, "'t': max_tokens"),
        (
            {"templates_yaml": "t: {type: general, mode: fast, retention_days: 0}\n"},
            "'t': retention_days",
        ),
    ],
)
def test_bad_user_configs_are_refused_with_the_file_and_the_problem(
    files: dict[str, str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = config_folder(tmp_path, monkeypatch, **files)
    with pytest.raises(InvalidInput, match=message) as raised:
        modes()
        templates()
    assert str(folder) in str(raised.value)
    code, _, err = run("modes")
    assert code == 2 or "templates_yaml" in files  # `membank modes` reads no templates
    assert err.count("\n") <= 1


def test_a_config_dir_that_is_not_a_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "missing"))
    code, _, err = run("modes")
    assert code == 2
    assert f"{CONFIG_DIR_ENV}=" in err and "is not a folder" in err


def test_an_empty_config_file_adds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = set(modes())
    config_folder(tmp_path, monkeypatch, modes_yaml="# nothing yet\n")
    assert set(modes()) == shipped
