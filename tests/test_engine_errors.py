"""A storage engine's error reaches the user without the engine's source paths, and a full
disk is said plainly (issue 25: "disk full: free space", not `.../commit.rs:1663:50`)."""

from __future__ import annotations

from memory.types.problems import engine_text

ENOSPC = (
    "LanceError(IO): Generic LocalFileSystem error: Unable to copy data to file: No space left "
    "on device (os error 28), /home/runner/work/lance/lance/rust/lance-table/src/io/commit.rs"
    ":1663:50"
)


def test_a_full_disk_says_disk_full_and_free_space_without_engine_paths() -> None:
    text = engine_text(OSError(ENOSPC))
    assert text.startswith("disk full: free space")
    assert "No space left on device" in text  # the engine's own words stay, after ours
    assert ".rs:" not in text and "/home/runner" not in text


def test_other_engine_errors_keep_their_words_and_lose_only_the_source_paths() -> None:
    raw = "LanceError(IO): Not found: db/x.lance/_versions/3.manifest, /a/b/lance/src/io.rs:12:5"
    assert (
        engine_text(RuntimeError(raw))
        == "LanceError(IO): Not found: db/x.lance/_versions/3.manifest"
    )
    assert engine_text("commit conflict") == "commit conflict"
