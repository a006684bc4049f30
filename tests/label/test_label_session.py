"""A labelling session: order, blindness, progress from the file, forms, the targeted stream."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jurybox.app.label import LabelOptions, LabelSession, load_run
from jurybox.app.label_forms import Dimension, Form
from jurybox.errors import InputError
from jurybox.io.datasets import load_human_labels

from .world import ARMS, SECRET_NAMES

Run = tuple[Path, dict[str, str]]


def _session(run: Run, tmp_path: Path, annotator: str = "ann") -> LabelSession:
    options = LabelOptions(annotator=annotator, labels=tmp_path / "labels.jsonl")
    return LabelSession(load_run(run[0]), options)


def _better(session: LabelSession, position: int, truth: dict[str, str]) -> dict[str, int]:
    """The answer that prefers the truly better response, as the page would send it."""
    query_id = session.order[position - 1]
    return {"prefer": session.arms(query_id).index(truth[query_id]) + 1}


def test_the_order_is_the_annotators_own_and_survives_a_restart(run60: Run, tmp_path: Path) -> None:
    first = _session(run60, tmp_path)
    again = _session(run60, tmp_path)
    other = _session(run60, tmp_path, "bob")
    assert first.order == again.order != other.order
    assert sorted(first.order) == sorted(other.order) and len(first.order) == 60
    shown = [tuple(first.arms(qid)) for qid in first.order]
    assert shown == [tuple(again.arms(qid)) for qid in first.order]
    assert {s for s in shown} == {ARMS, ARMS[::-1]}  # both orders occur


def test_the_page_data_names_no_arm_judge_or_model(run60: Run, tmp_path: Path) -> None:
    session = _session(run60, tmp_path)
    session.give(1, {"prefer": 1}, "a note")
    texts = [json.dumps(session.item(p)) for p in range(1, 61)] + [json.dumps(session.state())]
    for name in SECRET_NAMES:
        assert not any(name in text for text in texts), name
    assert json.loads(texts[0])["answer"] == {"prefer": 1}


def test_progress_comes_from_the_file(run60: Run, tmp_path: Path) -> None:
    _, truth = run60
    session = _session(run60, tmp_path)
    for position in range(1, 31):
        session.give(position, _better(session, position, truth))
    session.skip(31)
    session.close()
    restarted = _session(run60, tmp_path)  # a new process would read the same file
    assert restarted.state() == {
        "annotator": "ann",
        "stream": "uniform",
        "total": 60,
        "labelled": 30,
        "skipped": 1,
        "next": 32,
    }
    assert restarted.item(31)["skipped"] is True
    restarted.give(31, {"prefer": 0}, "looked again")  # "back", then a label: supersedes
    labels = load_human_labels(tmp_path / "labels.jsonl")
    assert len(labels) == 31
    assert labels[restarted.order[30]] == {
        "preferred_arm": "tie",
        "annotator": "ann",
        "notes": "looked again",
        "design": {
            "stream": "uniform",
            "stratum": "contested",
            "sizes": {"contested": 60, "settled": 0},
        },
    }
    assert all(labels[q]["preferred_arm"] == truth[q] for q in restarted.order[:30])


@pytest.mark.parametrize(
    "answer",
    [{"prefer": 3}, {"prefer": "1"}, {"prefer": True}, {}, [1], {"prefer": -1}],
)
def test_bad_answers_are_refused_and_nothing_is_written(
    run60: Run, tmp_path: Path, answer: object
) -> None:
    session = _session(run60, tmp_path)
    with pytest.raises(InputError):
        session.give(1, answer)
    with pytest.raises(InputError, match="position"):
        session.give(61, {"prefer": 1})
    assert not (tmp_path / "labels.jsonl").read_bytes()


def test_score_and_verdict_forms_map_back_to_arms() -> None:
    scores = Form("scores", (Dimension("accuracy", "accuracy", "", (("1-2", "poor"),), 1, 5),))
    arms = ["b_arm", "a_arm"]
    label = scores.label({"scores": [{"accuracy": 4}, {"accuracy": 2}]}, arms)
    assert label == {"scores": {"b_arm": {"accuracy": 4}, "a_arm": {"accuracy": 2}}}
    assert scores.answer(label, arms) == {"scores": [{"accuracy": 4}, {"accuracy": 2}]}
    with pytest.raises(InputError, match="outside 1-5"):
        scores.label({"scores": [{"accuracy": 9}, {"accuracy": 2}]}, arms)
    verdict = Form("verdict", criterion={"name": "c"})
    label = verdict.label({"verdicts": ["Fail", "Pass"]}, arms)
    assert label == {"verdict": {"b_arm": "Fail", "a_arm": "Pass"}}
    assert verdict.answer(label, arms) == {"verdicts": ["Fail", "Pass"]}
    assert verdict.spec(2)["responses"] == ["Response 1", "Response 2"]


def test_the_targeted_stream_asks_contested_items_oversample_times_as_often(
    mixed: Run, tmp_path: Path
) -> None:
    run = load_run(mixed[0])
    sizes = run.sizes
    assert sizes["contested"] > 0 and sizes["settled"] > 0
    options = LabelOptions(
        annotator="ann", labels=tmp_path / "l.jsonl", stream="targeted", uniform_share=0.0
    )
    order = LabelSession(run, options).order
    assert sorted(order) == sorted(run.strata)
    for asked in (20, 40, 60):
        contested = sum(run.strata[q] == "contested" for q in order[:asked])
        ratio = (contested / sizes["contested"]) / ((asked - contested) / sizes["settled"])
        assert 3.0 <= ratio <= 5.5, (asked, ratio)
    mixed_in = LabelSession(run, replace(options, uniform_share=0.25))
    uniform = LabelSession(run, replace(options, stream="uniform"))
    assert uniform.order != order and sorted(mixed_in.order) == sorted(order)
    streams = [mixed_in.streams[q] for q in mixed_in.order[:40]]
    assert streams == ["targeted", "targeted", "targeted", "uniform"] * 10
    # the uniform draws are the uniform stream's own order, items asked already passed over
    drawn = [q for q in mixed_in.order if mixed_in.streams[q] == "uniform"]
    assert drawn == [q for q in uniform.order if q in set(drawn)]
