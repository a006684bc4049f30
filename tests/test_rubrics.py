"""Rubric loading, validation, weight overrides, criteria, and golden values of the scoring math."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jurybox.errors import ConfigError
from jurybox.rubrics import (
    Criterion,
    SafetyResult,
    SafetySettings,
    list_builtin_rubrics,
    load_criterion,
    load_rubric,
    overall_score,
    rubric_from_mapping,
    weight_env_var,
)

GENERAL = load_rubric("general", env={})
SIX = load_rubric("six_dimension", env={})


def _general(**overrides: float) -> dict[str, float]:
    scores = {"accuracy": 8.0, "relevance": 8.0, "completeness": 8.0, "conciseness": 8.0}
    scores["clarity"] = 8.0
    scores.update(overrides)
    return scores


def _six(**overrides: float) -> dict[str, float]:
    names = SIX.dimension_names
    return {name: float(overrides.get(name, 2.0)) for name in names}


def _write(tmp_path: Path, data: dict[str, Any], name: str = "rubric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _two_dim(weights: tuple[float, float] = (0.7, 0.3), **extra: Any) -> dict[str, Any]:
    return {
        "name": "custom",
        "description": "Two dimensions.",
        "scale": [1, 5],
        "dimensions": [
            {
                "name": "task_success",
                "weight": weights[0],
                "description": "Did it do the task?",
                "what_it_measures": "Goal achievement.",
                "scoring": "Check the goal.",
                "good": "Goal met.",
                "failure_modes": ["Stops halfway."],
                "anchors": {"1-2": "No", "3-4": "Partly", "5": "Yes"},
            },
            {
                "name": "tone",
                "weight": weights[1],
                "description": "Is the tone right?",
                "anchors": {"1-2": "Rude", "3-5": "Polite"},
            },
        ],
        **extra,
    }


# --- built-ins --------------------------------------------------------------------------------


def test_builtins_are_listed_with_descriptions() -> None:
    listed = dict(list_builtin_rubrics())
    assert set(listed) == {"general", "six_dimension"}
    assert all(description for description in listed.values())


def test_general_rubric_matches_the_specification() -> None:
    weights = {d.name: d.weight for d in GENERAL.dimensions}
    assert weights == {
        "accuracy": 0.35,
        "relevance": 0.10,
        "completeness": 0.20,
        "conciseness": 0.15,
        "clarity": 0.20,
    }
    assert GENERAL.scale == (1, 10)
    assert GENERAL.overall_max() == 10.0
    assert all(len(d.anchors) == 5 for d in GENERAL.dimensions)
    assert [(c.dimension, c.below, c.cap) for c in GENERAL.ceilings] == [
        ("accuracy", 5, 4.0),
        ("accuracy", 7, 7.0),
    ]


def test_six_dimension_rubric_has_a_gate_and_confidence() -> None:
    assert len(SIX.dimensions) == 6
    assert SIX.scale == (0, 2)
    assert SIX.confidence_scale == (1, 5)
    assert [d.name for d in SIX.dimensions if d.gate] == ["safety"]
    assert SIX.scale_of("safety") == (0, 2)


def test_unknown_builtin_lists_the_available_ones() -> None:
    with pytest.raises(ConfigError, match="general, six_dimension"):
        load_rubric("generic")


# --- golden values of the scoring math --------------------------------------------------------


def test_weighted_mean_golden() -> None:
    scores = _general(accuracy=9, relevance=10, completeness=6, conciseness=7, clarity=8)
    result = overall_score(GENERAL, scores)
    # 0.35*9 + 0.10*10 + 0.20*6 + 0.15*7 + 0.20*8 = 3.15 + 1 + 1.2 + 1.05 + 1.6
    assert result.raw_weighted == pytest.approx(8.0)
    assert result.value == pytest.approx(8.0)
    assert result.capped_by is None
    assert result.gate_failures == ()


@pytest.mark.parametrize(
    ("accuracy", "expected", "capped_by"),
    [
        (4, 4.0, "ceiling:accuracy"),  # raw 0.35*4 + 0.65*10 = 7.9 -> below 5 caps at 4.0
        (6, 7.0, "ceiling:accuracy"),  # raw 0.35*6 + 6.5 = 8.6 -> 5-6 caps at 7.0
        (7, 0.35 * 7 + 6.5, None),  # 8.95: no ceiling from 7 up
        (1, 4.0, "ceiling:accuracy"),  # raw 6.85; both rules fire, the lower cap wins
    ],
)
def test_accuracy_ceiling_golden(accuracy: int, expected: float, capped_by: str | None) -> None:
    scores = _general(accuracy=accuracy, relevance=10, completeness=10, conciseness=10, clarity=10)
    result = overall_score(GENERAL, scores)
    assert result.value == pytest.approx(expected)
    assert result.capped_by == capped_by
    assert result.raw_weighted == pytest.approx(0.35 * accuracy + 6.5)


def test_ceiling_does_not_raise_a_lower_score() -> None:
    scores = _general(accuracy=4, relevance=1, completeness=1, conciseness=1, clarity=1)
    result = overall_score(GENERAL, scores)
    assert result.value == pytest.approx(0.35 * 4 + 0.65)  # 2.05 < cap 4.0
    assert result.capped_by is None


def test_gate_failure_sets_overall_to_gate_cap() -> None:
    result = overall_score(SIX, _six(safety=0))
    assert result.raw_weighted == pytest.approx(1.8)  # 2 * (1 - 0.10)
    assert result.value == 0.0
    assert result.gate_failures == ("safety",)
    assert result.capped_by == "gate:safety"


def test_non_gate_dimension_at_minimum_is_not_a_gate_failure() -> None:
    result = overall_score(SIX, _six(task_success=0))
    assert result.gate_failures == ()
    assert result.value == pytest.approx(1.5)


def test_custom_gate_cap_caps_but_never_raises() -> None:
    data = _two_dim(gate_cap=2.0)
    data["dimensions"][1]["gate"] = True
    rubric = rubric_from_mapping(data, env={})
    capped = overall_score(rubric, {"task_success": 5, "tone": 1})  # raw 3.8
    assert (capped.value, capped.capped_by) == (2.0, "gate:tone")
    lower = overall_score(rubric, {"task_success": 1, "tone": 1})  # raw 1.0, already below
    assert (lower.value, lower.capped_by, lower.gate_failures) == (1.0, "gate:tone", ("tone",))
    passed = overall_score(rubric, {"task_success": 5, "tone": 2})
    assert (passed.gate_failures, passed.capped_by) == ((), None)


def test_safety_cap_applies_only_when_enabled() -> None:
    flagged = SafetyResult(True, "weapons", "explosive_device")
    scores = _general(accuracy=9, relevance=9, completeness=9, conciseness=9, clarity=9)
    on = overall_score(GENERAL, scores, flagged, SafetySettings(enabled=True, score_cap=1.5))
    assert (on.value, on.capped_by) == (1.5, "safety:weapons")
    off = overall_score(GENERAL, scores, flagged, SafetySettings(enabled=False, score_cap=1.5))
    assert (off.value, off.capped_by) == (pytest.approx(9.0), None)
    clean = overall_score(GENERAL, scores, SafetyResult(False), SafetySettings(True, 0.0))
    assert clean.value == pytest.approx(9.0)


def test_safety_cap_is_applied_after_ceilings_and_gates() -> None:
    flagged = SafetyResult(True, "pii", "ssn")
    result = overall_score(SIX, _six(safety=0), flagged, SafetySettings(True, 0.0))
    assert result.value == 0.0
    assert result.gate_failures == ("safety",)
    assert result.capped_by == "safety:pii"  # the last rule to set the value is reported


def test_overall_rejects_bad_scores() -> None:
    with pytest.raises(ValueError, match="missing \\['clarity'\\]"):
        overall_score(GENERAL, {k: v for k, v in _general().items() if k != "clarity"})
    with pytest.raises(ValueError, match="outside its scale"):
        overall_score(GENERAL, _general(accuracy=11))


# --- environment weight overrides -------------------------------------------------------------


def test_env_var_name() -> None:
    assert weight_env_var("task_success") == "JURYBOX_WEIGHT_TASK_SUCCESS"


def test_env_override_changes_the_weighted_mean() -> None:
    env = {"JURYBOX_WEIGHT_ACCURACY": "0.45", "JURYBOX_WEIGHT_RELEVANCE": "0.0"}
    rubric = load_rubric("general", env=env)
    assert rubric.dimension("accuracy").weight == 0.45
    assert rubric.dimension("relevance").weight == 0.0
    scores = _general(accuracy=10, relevance=1, completeness=8, conciseness=8, clarity=8)
    # 0.45*10 + 0*1 + 0.55*8 = 8.9 ; with the file weights it would be 3.5+0.1+4.4 = 8.0
    assert overall_score(rubric, scores).value == pytest.approx(8.9)
    assert overall_score(GENERAL, scores).value == pytest.approx(8.0)


def test_env_override_that_breaks_the_sum_names_the_variables() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_rubric("general", env={"JURYBOX_WEIGHT_ACCURACY": "0.5"})
    message = str(excinfo.value)
    assert "JURYBOX_WEIGHT_ACCURACY=0.5" in message
    assert "1.15" in message  # the sum the override produced
    assert "builtin:general" in message


@pytest.mark.parametrize("value", ["heavy", "nan", "-0.1", "1.5", ""])
def test_env_override_must_be_a_weight(value: str) -> None:
    with pytest.raises(ConfigError, match="JURYBOX_WEIGHT_CLARITY"):
        load_rubric("general", env={"JURYBOX_WEIGHT_CLARITY": value})


def test_env_override_naming_no_dimension_is_an_error() -> None:
    # Issue 13: a misspelt (or another rubric's) variable used to be ignored silently.
    with pytest.raises(ConfigError, match="JURYBOX_WEIGHT_ACCURACY names no dimension") as bad:
        load_rubric("six_dimension", env={"JURYBOX_WEIGHT_ACCURACY": "0.9"})
    assert "JURYBOX_WEIGHT_FACTUAL_ACCURACY" in str(bad.value)  # the names that would work


def test_env_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURYBOX_WEIGHT_ACCURACY", "0.9")
    with pytest.raises(ConfigError, match="JURYBOX_WEIGHT_ACCURACY"):
        load_rubric("general")


# --- user rubric files ------------------------------------------------------------------------


def test_user_rubric_loads_relative_to_base_dir(tmp_path: Path) -> None:
    _write(tmp_path, _two_dim())
    rubric = load_rubric("rubric.yaml", base_dir=tmp_path, env={})
    assert rubric.dimension_names == ("task_success", "tone")
    assert rubric.scale == (1, 5)
    assert rubric.dimension("task_success").failure_modes == ("Stops halfway.",)


def test_weights_not_summing_to_one_name_file_and_weights(tmp_path: Path) -> None:
    path = _write(tmp_path, _two_dim(weights=(0.7, 0.2)))
    with pytest.raises(ConfigError) as excinfo:
        load_rubric(str(path), env={})
    message = str(excinfo.value)
    assert str(path) in message
    assert "task_success=0.7" in message and "tone=0.2" in message
    assert "0.9" in message


def test_weights_within_tolerance_are_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, _two_dim(weights=(0.7, 0.3 + 5e-7)))
    assert load_rubric(str(path), env={}).name == "custom"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["dimensions"][1].update(scale=[0, 2], anchors={"0-2": "x"}), "one scale"),
        (lambda d: d["dimensions"][0].update(anchors={"0-7": "x"}), "outside the scale"),
        (lambda d: d["dimensions"][0].update(anchors={"1-3": "a", "3-5": "b"}), "overlap"),
        (lambda d: d["dimensions"][0].update(anchors={"low": "a"}), "not 'N' or 'N-M'"),
        (lambda d: d["dimensions"][0].update(anchors={}), "at least one anchor"),
        (lambda d: d["dimensions"][0].update(name="score"), "reserved"),
        (lambda d: d["dimensions"][0].update(name="task success"), "must match"),
        (lambda d: d["dimensions"][1].update(name="Task_Success"), "unique"),
        (lambda d: d.update(ceilings=[{"dimension": "tonee", "below": 2, "cap": 1}]), "tonee"),
        (lambda d: d["dimensions"][0].update(colour="red"), "colour"),
        (lambda d: d["dimensions"][0].update(weight=-0.1), "weight"),
    ],
)
def test_invalid_rubrics_raise_config_error(tmp_path: Path, mutate: Any, message: str) -> None:
    data = _two_dim()
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError, match=message) as excinfo:
        load_rubric(str(path), env={})
    assert excinfo.value.path == str(path)


def test_field_path_is_reported(tmp_path: Path) -> None:
    data = _two_dim()
    data["dimensions"][1]["description"] = ""
    with pytest.raises(ConfigError) as excinfo:
        load_rubric(str(_write(tmp_path, data)), env={})
    assert excinfo.value.field == "dimensions.1.description"


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_rubric(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid YAML") as excinfo:
        load_rubric(str(bad))
    assert excinfo.value.line is not None
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping"):
        load_rubric(str(listing))


def test_rubric_is_frozen() -> None:
    with pytest.raises(ValueError, match="frozen"):
        GENERAL.name = "x"  # type: ignore[misc]


# --- criteria ---------------------------------------------------------------------------------

CRITERION = {
    "name": "no_invented_api",
    "definition": "The response names an API function that does not exist.",
    "why_it_matters": "Users copy the code and it fails.",
    "pass_definition": "Every API named exists.",
    "fail_definition": "At least one named API does not exist.",
    "decision_rules": ["Deprecated but real APIs pass.", "Pseudo-code labelled as such passes."],
    "examples": [
        {
            "id": "train-1",
            "question": "Sort a list?",
            "response": "Use list.sort().",
            "answer": "Pass",
            "reasoning": "Real method.",
        },
        {
            "id": "train-2",
            "input": "Reverse a string?",
            "response": "Use str.reverse().",
            "answer": "fail",
            "reasoning": "str has no reverse().",
            "label": "borderline",
        },
        {"input": "x", "response": "y", "answer": "Pass", "reasoning": "z"},
    ],
    "targets": {"tpr": 0.9, "tnr": 0.85},
}


def test_load_criterion(tmp_path: Path) -> None:
    criterion = load_criterion(_write(tmp_path, CRITERION, "criterion.yaml"))
    assert isinstance(criterion, Criterion)
    assert criterion.examples[0].input == "Sort a list?"
    assert criterion.examples[1].answer == "Fail"
    assert criterion.examples[1].label == "borderline"
    assert criterion.examples[2].id is None
    assert (criterion.targets.tpr, criterion.targets.tnr) == (0.9, 0.85)
    assert len(criterion.decision_rules) == 2


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["examples"][0].update(answer="Maybe"), "examples.0.answer"),
        (lambda d: d["examples"][1].update(id="train-1"), "examples"),
        (lambda d: d["targets"].update(tpr=1.2), "targets.tpr"),
        (lambda d: d.pop("fail_definition"), "fail_definition"),
        (lambda d: d.update(extra_key=1), "extra_key"),
        (lambda d: d["examples"][0].update(id="has space"), "examples.0.id"),
    ],
)
def test_invalid_criteria(tmp_path: Path, mutate: Any, field: str) -> None:
    data = yaml.safe_load(yaml.safe_dump(CRITERION))
    mutate(data)
    path = _write(tmp_path, data, "criterion.yaml")
    with pytest.raises(ConfigError) as excinfo:
        load_criterion(path)
    assert excinfo.value.field == field
    assert excinfo.value.path == str(path)


def test_missing_criterion_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_criterion(tmp_path / "missing.yaml")
