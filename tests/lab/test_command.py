"""`membank lab`: the command line it starts, and bad input refused before anything starts."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from compaction_support import run
from lab_browser import _wait_healthy, free_port, membank_script

from flows.cli import main
from lab.command import APP, port_free, streamlit_command


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


def test_a_busy_port_is_exit_2_before_any_url_is_printed(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run("--data", str(tmp_path / "db"), "lab", "--port", str(port))
    assert code == 2 and f"port {port} of 127.0.0.1 is in use" in err
    assert "http://" not in out  # no URL of someone else's server


@pytest.mark.slow
def test_sigterm_stops_the_lab_and_its_streamlit_server(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [membank_script(), "--data", str(tmp_path / "db"), "lab", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process)
        process.send_signal(signal.SIGTERM)  # to membank only, as a service manager would
        assert process.wait(timeout=30) != 0
        assert port_free(port)  # Streamlit stopped with it
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
