"""A cap on the size of a judge's answer that a run keeps."""

from __future__ import annotations

from dataclasses import replace

from jurybox.records import Completion


def cap_answer(completion: Completion, max_bytes: int) -> tuple[Completion, int | None]:
    """``completion`` with its text cut to ``max_bytes`` (UTF-8), and the original size when it
    was cut. A 5 MB answer was otherwise kept three times (record, cache, structured copy)."""
    if len(completion.text) * 4 <= max_bytes:  # no code point takes more than 4 bytes
        return completion, None
    data = completion.text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return completion, None
    text = data[:max_bytes].decode("utf-8", "ignore")  # never half a character
    cut = replace(completion, text=text, structured=None)  # the parse sees what is stored
    return cut, len(data)
