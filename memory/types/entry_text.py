"""The text an entry's chunk is retrieved by: the same for its embedding and its full-text row."""

from __future__ import annotations

SPEAKER_SEPARATOR = ": "


def index_text(speaker: str | None, text: str) -> str:
    """Return the text a chunk is retrieved by: `speaker: text`, or the text without a speaker.

    In a conversation, who said a turn is part of what it means ("I moved to Paris" said by
    Ann is about Ann), and questions name people, so the speaker goes into the full-text
    index and into the embedded text. General entries have no speaker.
    """
    return f"{speaker}{SPEAKER_SEPARATOR}{text}" if speaker else text
