"""By-hand deployment helpers: another work pool reaches prefect.yaml's deployments, a missing
project folder is defaulted or refused, relative paths and the swept storage are named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

import flows.serve_setup as setup
from flows.paths import note_relative
from memory.store.connection import location_of

PREFECT_YAML = Path(__file__).parents[2] / "prefect.yaml"


def test_the_default_pool_deploys_prefect_yaml_itself(tmp_path: Path) -> None:
    assert setup.prefect_file_for("membank", PREFECT_YAML, tmp_path) == PREFECT_YAML
    assert not list(tmp_path.iterdir())


def test_another_pool_is_written_into_every_deployment(tmp_path: Path) -> None:
    moved = setup.prefect_file_for("other", PREFECT_YAML, tmp_path)

    assert moved.parent == tmp_path
    original = yaml.safe_load(PREFECT_YAML.read_text("utf-8"))
    config = yaml.safe_load(moved.read_text("utf-8"))
    assert {d["work_pool"]["name"] for d in config["deployments"]} == {"other"}
    assert [d["name"] for d in config["deployments"]] == [
        d["name"] for d in original["deployments"]
    ]
    assert config["pull"] == original["pull"]  # the project-folder placeholder is kept


def test_setup_outside_the_project_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["serve_setup"])

    assert setup.main() == 2
    assert "no prefect.yaml" in capsys.readouterr().err


def test_relative_paths_are_named_with_the_folder_they_resolve_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    note_relative(["/abs/in.jsonl", None, "s3://bucket/x.jsonl"])
    assert capsys.readouterr().out == ""
    note_relative(["in/notes.jsonl", "/abs/out.json"])
    out = capsys.readouterr().out
    assert "in/notes.jsonl" in out and str(tmp_path) in out and "/abs/out.json" not in out


def test_storage_location_makes_a_local_folder_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert location_of(".membank") == str(tmp_path / ".membank")
    assert location_of(f"file://{tmp_path}/db") == str(tmp_path / "db")
    assert location_of("s3://bucket/db") == "s3://bucket/db"
