"""The labels file: lines by annotator (later supersedes), several annotators, the design
fields, and the append-only log (synced lines, torn tail repaired, a full disk loses nothing)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from jurybox.errors import DatasetError
from jurybox.io.datasets import load_human_labels
from jurybox.io.label_log import LabelLog
from jurybox.io.label_screen import screen_labels

DESIGN = {"stream": "uniform", "stratum": "settled", "sizes": {"contested": 2, "settled": 8}}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_later_line_by_the_same_annotator_supersedes(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "a", "annotator": "ann"},
            {"query_id": "q2", "preferred_arm": "a", "annotator": "ann"},
            {"query_id": "q1", "preferred_arm": "b", "annotator": "ann", "notes": "changed"},
            {"query_id": "q2", "skipped": True, "annotator": "ann"},
        ],
    )
    assert load_human_labels(path) == {
        "q1": {"preferred_arm": "b", "annotator": "ann", "notes": "changed"}
    }


def test_several_annotators_are_kept_apart(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "a", "annotator": "ann", "design": DESIGN},
            {"query_id": "q1", "preferred_arm": "tie", "annotator": "bob", "design": DESIGN},
            {"query_id": "q2", "scores": {"a": {"x": 2}}, "annotator": "ann"},
            {"query_id": "q2", "scores": {"a": {"x": 5}}, "annotator": "bob"},
            {"query_id": "q3", "verdict": {"a": "Pass", "b": "Fail"}, "annotator": "ann"},
            {"query_id": "q3", "verdict": {"a": "Pass", "b": "Pass"}, "annotator": "bob"},
            {"query_id": "q3", "verdict": {"a": "Fail", "b": "Pass"}, "annotator": "cy"},
        ],
    )
    labels = load_human_labels(path)
    assert labels["q1"] == {"annotators": {"ann": "a", "bob": "tie"}, "design": DESIGN}
    assert labels["q2"] == {"scores": {"a": {"x": 3.5}}}
    assert labels["q3"] == {"verdict": {"a": "Pass", "b": "Pass"}}


def test_an_item_drawn_by_any_uniform_stream_is_uniform(tmp_path: Path) -> None:
    targeted = {**DESIGN, "stream": "targeted"}
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "a", "annotator": "ann", "design": DESIGN},
            {"query_id": "q1", "preferred_arm": "a", "annotator": "bob", "design": targeted},
        ],
    )
    assert load_human_labels(path)["q1"]["design"]["stream"] == "uniform"


def test_annotators_naming_no_arm_are_screened_out(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "a", "annotator": "ann"},
            {"query_id": "q1", "preferred_arm": "banana", "annotator": "bob"},
            {"query_id": "q2", "preferred_arm": "b", "annotator": "ann"},
            {"query_id": "q2", "preferred_arm": "tie", "annotator": "bob"},
        ],
    )
    screen = screen_labels(load_human_labels(path), {"q1", "q2"}, {"a", "b"})
    assert set(screen.labels) == {"q2"}
    assert screen.bad_values == ("q1: annotators prefer ['banana'], not arms of the run",)


def test_unnamed_duplicates_are_still_an_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "a", "annotator": "ann"},
            {"query_id": "q1", "preferred_arm": "b"},
        ],
    )
    with pytest.raises(DatasetError, match="first on line 1") as caught:
        load_human_labels(path)
    assert (caught.value.line, caught.value.field) == (2, "query_id")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"design": {**DESIGN, "stream": "random"}}, "design.stream"),
        ({"design": {**DESIGN, "stratum": "other"}}, "design.stratum"),
        ({"design": {**DESIGN, "sizes": {"settled": -1}}}, "design.sizes.settled"),
        ({"design": {**DESIGN, "weight": 2}}, "design.weight"),
        ({"skipped": "yes"}, "skipped"),
        ({"skipped": True}, "skipped"),  # a skipped line with a label
        ({"labelled_at": 5}, "labelled_at"),
    ],
)
def test_bad_line_fields_are_named(tmp_path: Path, line: dict[str, Any], field: str) -> None:
    path = _write(tmp_path / "l.jsonl", [{"query_id": "q", "preferred_arm": "a", **line}])
    with pytest.raises(DatasetError) as caught:
        load_human_labels(path)
    assert (caught.value.line, caught.value.field) == (1, field)


def test_the_log_appends_synced_lines_and_repairs_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    with closing(LabelLog(path)) as log:
        log.append({"query_id": "q1", "preferred_arm": "a", "notes": "bad \ud800 text"})
        assert log.repaired == 0
    with path.open("ab") as handle:
        handle.write(b'{"query_id": "q2", "prefe')  # a crash mid-write
    with closing(LabelLog(path)) as log:
        assert log.repaired == len(b'{"query_id": "q2", "prefe')
        log.append({"query_id": "q2", "preferred_arm": "b"})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["query_id"] for line in lines] == ["q1", "q2"]
    assert json.loads(lines[0])["notes"] == "bad \ufffd text"


_FILL = """
import json, sys
from pathlib import Path
from jurybox.io.label_log import LabelLog
from jurybox.io.label_screen import screen_labels
log = LabelLog(Path(sys.argv[1]))
for index in range(10_000):
    try:
        log.append({"query_id": f"q{index}", "preferred_arm": "a", "notes": "x" * 200})
    except OSError as exc:
        print(index, exc)
        break
"""


def test_a_full_disk_loses_no_complete_label(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes a write fail part-way, as a disk that fills up does."""
    path = tmp_path / "labels.jsonl"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (5000, 5000))

    done = subprocess.run(
        [sys.executable, "-c", _FILL, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        check=True,
    )
    written, message = done.stdout.split(" ", 1)
    assert str(path) in message  # the error names the file
    data = path.read_bytes()
    assert data.endswith(b"\n")  # the short write was cut back: no torn line
    assert len(data.splitlines()) == int(written) > 0
    assert all(json.loads(line) for line in data.splitlines())


def test_the_labels_section_maps_the_users_file_not_jurybox_labels(tmp_path: Path) -> None:
    """``labels:`` describes the user's own label file; ``RUN/labels.jsonl`` holds jurybox's
    keys and the run's arm names, and is read as written. Here the user's tool showed the
    responses the other way round, so its file's arm names are swapped by ``values``."""
    from jurybox.app.sources import run_labels, run_sources
    from jurybox.config import LabelsConfig

    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("", encoding="utf-8")
    _write(tmp_path / "labels.jsonl", [{"query_id": "q1", "preferred_arm": "A", "annotator": "x"}])
    mine = _write(tmp_path / "mine.jsonl", [{"query_id": "q1", "preferred_arm": "A"}])
    swap = LabelsConfig(values={"A": "B", "B": "A"})
    labelled = run_sources(judgments, dataset=None, human=None, labels=swap)
    assert labelled.human.origin == "labelled" and labelled.labels_config == swap
    assert run_labels(labelled) == {"q1": {"preferred_arm": "A", "annotator": "x"}}
    given = run_sources(judgments, dataset=None, human=mine, labels=swap)
    assert run_labels(given) == {"q1": {"preferred_arm": "B"}}
