"""The dataset loader skips ``clean_value`` for text that cannot hold a lone surrogate.

The skip must change nothing: every file here loads to the same items (and the same warning)
with the fast path as with ``clean_value`` run on every record.
"""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from jurybox.io.datasets import _readers, load_dataset
from jurybox.io.text import REPLACEMENT, json_text_is_clean

TRICKY = [
    "plain ascii",
    "NUL \x00 and controls \x01\x07\x1b[31m\x7f",
    "bidi \u202e override \u2066isolate\u2069 \u200f",
    "emoji \U0001f600 and accents éß 漢字",
    "zero width \u200b\ufeff joiner \u200d",
    "lone high \ud800 here",
    "lone low \udfff there",
    "reversed pair \ude00\ud83d",
    "a backslash then u-d-8: \\ud800 (not an escape)",
    "line separator \u2028 paragraph \u2029",
]


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "question": text,
            "responses": {"control": f"a {text}", "treatment": "b"},
            "metadata": {f"key {text}": [text, 1, None], "n": i},
        }
        for i, text in enumerate(TRICKY)
    ]


def _write(kind: str, path: Path, ascii_only: bool) -> Path:
    rows = _rows()
    if kind == "jsonl":
        lines = (json.dumps(row, ensure_ascii=ascii_only) for row in rows)
        text = "".join(line + "\n" for line in lines)
    elif kind == "json":
        text = json.dumps(rows, ensure_ascii=ascii_only, indent=1)
    else:
        with path.open("w", newline="", encoding="utf-8", errors="surrogatepass") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "question", "responses", "metadata"])
            for row in rows:
                cells = (json.dumps(row[k], ensure_ascii=True) for k in ("responses", "metadata"))
                question = row["question"].encode("utf-8", "backslashreplace").decode()
                writer.writerow([row["id"], question, *cells])
        return path
    # an unescaped lone surrogate cannot be written as UTF-8: such rows are always escaped
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
    return path


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv"])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_fast_path_loads_the_same_items_as_cleaning_every_record(
    tmp_path: Path,
    kind: str,
    ascii_only: bool,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(kind, tmp_path / f"items.{kind}", ascii_only)
    with caplog.at_level(logging.WARNING):
        fast = load_dataset(path)
    fast_log, _ = caplog.text, caplog.clear()
    monkeypatch.setattr(_readers, "json_text_is_clean", lambda _text: False)
    with caplog.at_level(logging.WARNING):
        slow = load_dataset(path)
    assert fast == slow
    assert fast_log == caplog.text and "unencodable code point(s)" in fast_log
    assert fast[5].responses["control"] == f"a lone high {REPLACEMENT} here"
    assert fast[1].question == TRICKY[1] and fast[2].question == TRICKY[2]


def test_only_text_with_an_escaped_surrogate_takes_the_slow_path() -> None:
    assert json_text_is_clean('{"q": "NUL \\u0000 bidi \u202e emoji \U0001f600 \\u00e9"}')
    assert not json_text_is_clean('{"q": "\\ud800"}')
    assert not json_text_is_clean('{"q": "\\uDFFF"}')
    assert not json_text_is_clean('{"q": "\\ud83d\\ude00"}')  # a valid pair: slow but right
    assert not json_text_is_clean("raw \ud800")  # surrogateescape'd text, never strict UTF-8
