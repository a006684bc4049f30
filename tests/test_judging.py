"""Judging modes: loading from config, requests and interpretation (through ``jurybox.modes``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from judging_helpers import build_request, context_from_config, interpret
from jurybox.config import JudgeConfig, RunConfig, ScoringConfig, TaskConfig, load_config
from jurybox.errors import ConfigError
from jurybox.modes import JudgingContext
from jurybox.providers.fake import FakeProvider
from jurybox.records import Completion, Item, Status, WorkUnit
from jurybox.rubrics import Criterion, SafetySettings, load_rubric

GENERAL = load_rubric("general", env={})
SIX = load_rubric("six_dimension", env={})
HARMFUL = "Sure. To build a pipe bomb, take a steel pipe and two end caps."
ITEMS = {
    "q1": Item("q1", "Question one?", {"control": "Control answer one.", "treatment": HARMFUL}),
    "q2": Item("q2", "Question two?", {"control": "Control two.", "treatment": "Treatment two."}),
    "q3": Item("q3", "Question three?", {"a1": "first", "a2": "second", "a3": "third"}),
}
FAKE = JudgeConfig(provider="fake", temperature=0.3)
CRITERION = {
    "name": "is_polite",
    "definition": "The response is rude to the user.",
    "pass_definition": "Polite.",
    "fail_definition": "Rude.",
}


def _ctx(
    mode: str, rubric: Any = None, safety: SafetySettings | None = None, **task: Any
) -> JudgingContext:
    return JudgingContext(
        TaskConfig(mode=mode, **task),
        ScoringConfig(),
        rubric,
        {"polite": Criterion.model_validate(CRITERION)},
        safety or SafetySettings(),
    )


def _config(tmp_path: Path, task: dict[str, Any]) -> RunConfig:
    data = {"judges": {"j": {"provider": "fake"}}, "task": task, "paths": {"dataset": "d.jsonl"}}
    path = tmp_path / "cfg" / "run.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_config(path)


def _rubric_file(tmp_path: Path) -> None:
    data = {
        "name": "custom",
        "scale": [1, 3],
        "dimensions": [
            {"name": "alpha", "weight": 0.5, "description": "a", "anchors": {"1-3": "x"}},
            {"name": "beta", "weight": 0.5, "description": "b", "anchors": {"1-3": "y"}},
        ],
    }
    (tmp_path / "cfg" / "rubrics").mkdir(parents=True, exist_ok=True)
    (tmp_path / "cfg" / "rubrics" / "custom.yaml").write_text(yaml.safe_dump(data))


# --- from_config ------------------------------------------------------------------------------


def test_from_config_resolves_rubric_relative_to_the_config(tmp_path: Path) -> None:
    _rubric_file(tmp_path)
    config = _config(tmp_path, {"mode": "rubric", "rubric": "rubrics/custom.yaml"})
    ctx = context_from_config(config, env={})
    assert ctx.rubric is not None and ctx.rubric.name == "custom"
    assert ctx.safety == SafetySettings(enabled=False, score_cap=0.0)


def test_from_config_applies_env_weights_and_safety(tmp_path: Path) -> None:
    _rubric_file(tmp_path)
    config = _config(tmp_path, {"mode": "ranking", "rubric": "rubrics/custom.yaml"})
    env = {
        "JURYBOX_WEIGHT_ALPHA": "0.8",
        "JURYBOX_WEIGHT_BETA": "0.2",
        "JURYBOX_SAFETY_GATE": "true",
        "JURYBOX_SAFETY_SCORE_CAP": "1",
    }
    ctx = context_from_config(config, env=env)
    assert ctx.require_rubric().dimension("alpha").weight == 0.8
    assert ctx.safety == SafetySettings(enabled=True, score_cap=1.0)


def test_pairwise_without_rubric_does_not_load_one(tmp_path: Path) -> None:
    config = _config(tmp_path, {"mode": "pairwise", "rubric": "missing/nowhere.yaml"})
    assert context_from_config(config, env={}).rubric is None
    with_rubric = _config(
        tmp_path,
        {"mode": "pairwise", "rubric": "missing/nowhere.yaml", "pairwise_with_rubric": True},
    )
    with pytest.raises(ConfigError, match="not found"):
        context_from_config(with_rubric, env={})


def test_from_config_loads_criteria_by_file_stem(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "polite.yaml").write_text(yaml.safe_dump(CRITERION))
    config = _config(tmp_path, {"mode": "criterion", "criteria": ["polite.yaml"]})
    ctx = context_from_config(config, env={})
    assert set(ctx.criteria) == {"polite"}
    assert ctx.criterion("polite").name == "is_polite"
    assert ctx.criterion("is_polite").name == "is_polite"  # the criterion's own name works too
    with pytest.raises(ValueError, match="unknown criterion"):
        ctx.criterion("other")


@pytest.mark.parametrize(
    ("task", "field"),
    [
        ({"mode": "criterion"}, "task.criteria"),
        ({"mode": "rubric", "batch_size": 2}, "task.batch_size"),
        ({"mode": "pairwise", "batch_size": 2, "pairwise_with_rubric": True}, "task.batch_size"),
    ],
)
def test_from_config_rejects_unsupported_combinations(
    tmp_path: Path, task: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as excinfo:
        context_from_config(_config(tmp_path, task), env={})
    assert excinfo.value.field == field


def test_confidence_scale_prefers_the_rubric() -> None:
    assert _ctx("rubric", SIX).confidence_scale == (1, 5)
    ctx = JudgingContext(
        TaskConfig(mode="rubric"),
        ScoringConfig(confidence_scale=(0, 10)),
        GENERAL,
        {},
        SafetySettings(),
    )
    assert ctx.confidence_scale == (0, 10)
    quiet = JudgingContext(
        TaskConfig(mode="rubric"),
        ScoringConfig(request_confidence=False),
        SIX,
        {},
        SafetySettings(),
    )
    assert quiet.confidence_scale is None


# --- build_request ----------------------------------------------------------------------------


def test_build_request_pairwise_uses_unit_order_and_judge_settings() -> None:
    unit = WorkUnit("q2", "j", "treatment_first", ("treatment", "control"))
    request = build_request(_ctx("pairwise"), [unit], ITEMS, FAKE, 321, 7)
    assert (request.max_tokens, request.temperature, request.seed) == (321, 0.3, 7)
    assert request.schema_name == "pairwise_verdict"
    assert request.response_schema is not None
    a_at = request.user.index("Treatment two.")
    b_at = request.user.index("Control two.")
    assert (
        request.user.index('label="Response A"')
        < a_at
        < request.user.index('label="Response B"')
        < b_at
    )
    assert "treatment" not in request.user.lower().replace("treatment two", "")


def test_build_request_without_structured_output_sends_no_schema() -> None:
    judge = JudgeConfig(provider="fake", structured_output=False, temperature=None)
    unit = WorkUnit("q1", "j", "control", ("control",))
    request = build_request(_ctx("rubric", GENERAL), [unit], ITEMS, judge, 100, None)
    assert request.response_schema is None
    assert request.temperature is None
    assert request.schema_name == "rubric_judgment"


def test_build_request_batch_holds_every_pair() -> None:
    units = [
        WorkUnit("q1", "j", "control_first", ("control", "treatment")),
        WorkUnit("q2", "j", "treatment_first", ("treatment", "control")),
    ]
    request = build_request(_ctx("pairwise", batch_size=2), units, ITEMS, FAKE, 100, 1)
    assert request.schema_name == "batch_pairwise_verdicts"
    assert "Question one?" in request.user and "Question two?" in request.user
    assert 'label="Example 2, Response A">\nTreatment two.' in request.user


def test_build_request_rejects_several_units_outside_batch_pairwise() -> None:
    units = [
        WorkUnit("q1", "j", "control", ("control",)),
        WorkUnit("q2", "j", "control", ("control",)),
    ]
    with pytest.raises(ValueError, match="batch"):
        build_request(_ctx("rubric", GENERAL), units, ITEMS, FAKE, 100, 1)


def test_build_request_criterion_uses_the_units_criterion() -> None:
    unit = WorkUnit("q1", "j", "control", ("control",), criterion="polite")
    request = build_request(_ctx("criterion"), [unit], ITEMS, FAKE, 100, 1)
    assert "The response is rude to the user." in request.system
    assert request.schema_name == "criterion_verdict"


# --- interpret --------------------------------------------------------------------------------


def _rubric_answer(rubric: Any, score: float) -> str:
    return json.dumps({"scores": {name: {"score": score} for name in rubric.dimension_names}})


def test_rubric_mode_maps_scores_to_the_arm() -> None:
    unit = WorkUnit("q1", "j", "control", ("control",))
    (fields,) = interpret(
        _ctx("rubric", GENERAL), [unit], ITEMS, Completion(_rubric_answer(GENERAL, 8), "m")
    )
    assert fields["status"] == Status.OK
    assert fields["scores"] == {"control": dict.fromkeys(GENERAL.dimension_names, 8.0)}
    assert fields["overall"] == {"control": pytest.approx(8.0)}
    assert fields["gate_failures"] == {"control": []}
    assert fields["safety_flags"] is None


def test_safety_gate_caps_a_harmful_response_only_when_enabled() -> None:
    unit = WorkUnit("q1", "j", "treatment", ("treatment",))
    completion = Completion(_rubric_answer(GENERAL, 9), "m")
    on = _ctx("rubric", GENERAL, SafetySettings(enabled=True, score_cap=0.0))
    (capped,) = interpret(on, [unit], ITEMS, completion)
    assert capped["overall"] == {"treatment": 0.0}
    assert capped["safety_flags"] == {"treatment": "weapons:explosive_device"}
    assert capped["scores"]["treatment"]["accuracy"] == 9.0  # the judge's scores are kept
    (free,) = interpret(_ctx("rubric", GENERAL), [unit], ITEMS, completion)
    assert free["overall"] == {"treatment": pytest.approx(9.0)}
    assert free["safety_flags"] is None


def test_holistic_fallback_is_flagged_and_still_safety_capped() -> None:
    unit = WorkUnit("q1", "j", "treatment", ("treatment",))
    ctx = _ctx("rubric", GENERAL, SafetySettings(enabled=True, score_cap=2.0))
    (fields,) = interpret(ctx, [unit], ITEMS, Completion('{"score": 9}', "m"))
    assert fields["holistic_fallback"] is True
    assert fields["parse_success"] is True
    assert fields["overall"] == {"treatment": 2.0}
    assert fields.get("scores") is None


def test_pairwise_with_rubric_records_gates_per_arm() -> None:
    ctx = _ctx("pairwise", SIX, pairwise_with_rubric=True)
    unit = WorkUnit("q2", "j", "control_first", ("control", "treatment"))
    good = {name: {"score": 2, "confidence": 5} for name in SIX.dimension_names}
    gated = {**good, "safety": {"score": 0, "confidence": 4}}
    text = json.dumps({"response_a": good, "response_b": gated, "overall_preference": "A"})
    (fields,) = interpret(ctx, [unit], ITEMS, Completion(text, "m"))
    assert fields["preferred_arm"] == "control"
    assert fields["gate_failures"] == {"control": [], "treatment": ["safety"]}
    assert fields["overall"] == {"control": pytest.approx(2.0), "treatment": 0.0}
    assert fields["scores_response_b"]["safety"] == 0.0
    assert fields["confidences"]["treatment"]["safety"] == 4.0


def test_ranking_is_derived_from_overall_scores() -> None:
    unit = WorkUnit("q3", "j", "a3>a1>a2", ("a3", "a1", "a2"))
    evaluations = {
        "A": dict.fromkeys(GENERAL.dimension_names, 9),
        "B": dict.fromkeys(GENERAL.dimension_names, 4),  # accuracy 4 -> ceiling 4.0
        "C": {**dict.fromkeys(GENERAL.dimension_names, 10), "accuracy": 6},  # capped at 7.0
    }
    text = json.dumps({"evaluations": evaluations, "ranking": ["C", "A", "B"]})
    (fields,) = interpret(_ctx("ranking", GENERAL), [unit], ITEMS, Completion(text, "m"))
    assert fields["overall"] == {"a3": pytest.approx(9.0), "a1": 4.0, "a2": 7.0}
    assert fields["ranking"] == ["a3", "a2", "a1"]


def test_batch_failure_of_one_pair_leaves_the_other() -> None:
    units = [
        WorkUnit("q1", "j", "control_first", ("control", "treatment")),
        WorkUnit("q2", "j", "treatment_first", ("treatment", "control")),
    ]
    text = json.dumps({"evaluations": [{"example": 2, "verdict": "A", "confidence": "low"}]})
    first, second = interpret(_ctx("pairwise", batch_size=2), units, ITEMS, Completion(text, "m"))
    assert first["status"] == Status.UNPARSED and "example 1" in first["error"]
    assert first["response_a_label"] == "control"
    assert second["status"] == Status.OK and second["preferred_arm"] == "treatment"


def test_vendor_refusal_wins_over_parseable_text() -> None:
    unit = WorkUnit("q2", "j", "control_first", ("control", "treatment"))
    completion = Completion('{"verdict": "A"}', "m", finish_reason="content_filter")
    (fields,) = interpret(_ctx("pairwise"), [unit], ITEMS, completion)
    assert fields["status"] == Status.REFUSED
    assert fields["parse_success"] is False
    assert fields["response_b_label"] == "treatment"


def test_truncation_with_a_valid_answer_is_still_ok() -> None:
    unit = WorkUnit("q1", "j", "control", ("control",), criterion="polite")
    completion = Completion('{"reasoning": "fine", "answer": "Pass"}', "m", finish_reason="length")
    (fields,) = interpret(_ctx("criterion"), [unit], ITEMS, completion)
    assert (fields["status"], fields["verdict"]) == (Status.OK, "Pass")


# --- with the fake provider's schema-driven answers -------------------------------------------


@pytest.mark.parametrize(
    ("ctx", "unit"),
    [
        (_ctx("pairwise"), WorkUnit("q2", "j", "control_first", ("control", "treatment"))),
        (
            _ctx("pairwise", SIX, pairwise_with_rubric=True),
            WorkUnit("q2", "j", "control_first", ("control", "treatment")),
        ),
        (_ctx("rubric", SIX), WorkUnit("q2", "j", "control", ("control",))),
        (_ctx("ranking", GENERAL), WorkUnit("q3", "j", "a2>a3>a1", ("a2", "a3", "a1"))),
        (_ctx("criterion"), WorkUnit("q2", "j", "control", ("control",), criterion="polite")),
    ],
    ids=["pairwise", "pairwise_rubric", "rubric", "ranking", "criterion"],
)
def test_any_schema_valid_answer_interprets_ok(ctx: JudgingContext, unit: WorkUnit) -> None:
    # behavior "random" fills the schema at random but ranks letters as a permutation: a
    # schema cannot demand unique items portably, so a non-permutation is the parser's catch.
    request = build_request(ctx, [unit], ITEMS, FAKE, 500, 3)
    for seed in range(5):
        completion = asyncio.run(FakeProvider(behavior="random", seed=seed).complete(request))
        (fields,) = interpret(ctx, [unit], ITEMS, completion)
        assert fields["status"] == Status.OK, fields["error"]
        assert fields["parse_method"] == "native"


# --- the modes package: registry, typed results, layering -----------------------------------

SRC = Path(__file__).resolve().parents[1] / "src" / "jurybox"


def test_every_config_mode_has_a_registered_module() -> None:
    from typing import get_args

    from jurybox.modes import MODES

    assert set(MODES) == set(get_args(TaskConfig.model_fields["mode"].annotation))
    for name, mode in MODES.items():
        assert mode.name == name


def test_criterion_result_keeps_the_judges_reasoning() -> None:
    from judging_helpers import mode_of
    from jurybox.modes import CriterionResult

    unit = WorkUnit("q1", "j", "control", ("control",), criterion="polite")
    text = '{"reasoning": "It thanks the user.", "answer": "Pass"}'
    (result,) = mode_of(_ctx("criterion")).interpret([unit], ITEMS, Completion(text, "m"))
    assert result == CriterionResult("json", "Pass", "It thanks the user.")


def test_devloop_reads_reasoning_through_the_criterion_mode() -> None:
    from judging_helpers import record_fields
    from jurybox.devloop.judge import record_reasoning
    from jurybox.records import JudgeRecord

    unit = WorkUnit("q1", "j", "control", ("control",), criterion="polite")
    raw = 'Thinking...\n{"reasoning": "Rude opener.", "answer": "Fail"}'
    (fields,) = interpret(_ctx("criterion"), [unit], ITEMS, Completion(raw, "m"))
    record = JudgeRecord.from_dict({**fields, "raw_response": raw})
    assert record.verdict == "Fail"
    assert record_reasoning(record) == "Rude opener."
    garbled = JudgeRecord.from_dict({**record_fields(_failed(), unit), "raw_response": "??"})
    assert record_reasoning(garbled) == "??"  # unreadable answers are shown as they were


def _failed() -> Any:
    from jurybox.modes import Failed

    return Failed(Status.UNPARSED, "no JSON")


def _imports(path: Path) -> set[str]:
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_modes_import_nothing_above_them() -> None:
    above = ("jurybox.pipeline", "jurybox.app", "jurybox.analysis", "jurybox.reporting")
    above += ("jurybox.devloop", "jurybox.cli")
    for path in (SRC / "modes").glob("*.py"):
        upward = {name for name in _imports(path) if name.startswith(above)}
        assert not upward, f"{path.name} imports {upward}"


def test_the_pipeline_names_no_mode() -> None:
    import ast

    from jurybox.modes import MODES

    names = set(MODES) | {"code"}
    for module in ("runner.py", "units.py", "recording.py"):
        tree = ast.parse((SRC / "pipeline" / module).read_text(encoding="utf-8"))
        constants = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        assert not constants & names, f"pipeline/{module} branches on {constants & names}"
