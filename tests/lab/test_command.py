"""`membank lab`: the command line it starts, and bad input refused before anything starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from compaction_support import run

from flows.cli import main
from lab.command import APP, streamlit_command


def test_the_lab_serves_the_app_headless_on_localhost_only() -> None:
    command = streamlit_command(8600)
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(APP)]
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.address"] == "127.0.0.1"
    assert options["--server.port"] == "8600"
    assert options["--server.headless"] == "true"
    assert APP.is_file()


def test_a_bad_port_or_storage_path_is_exit_2_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:  # argparse exits for a bad option value
        main(["lab", "--port", "70000"])
    assert exited.value.code == 2 and "use 1-65535" in capsys.readouterr().err
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = run("--data", str(blocker), "lab")
    assert code == 2 and "is a file, not a folder" in err
