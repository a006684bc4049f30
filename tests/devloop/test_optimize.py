"""``jurybox optimize`` end to end with a scripted rule judge (right only when its system prompt
holds the rule word; else it picks the response shown first): the search, the one test pass,
the ledger, resuming, the budget, few-shot sets and the proposer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from jurybox.app.optimize import OptimizeStopped
from jurybox.cli import main
from jurybox.config import load_config
from jurybox.errors import ConfigError
from jurybox.optimize.candidates import read_variants
from jurybox.providers.fake import FakeProvider
from jurybox.records import CompletionRequest
from optimize_helpers import (
    MARKER,
    RULE,
    VARIANTS,
    questions,
    rule_judge,
    run_optimize,
    setup,
    write_optimize,
)


def _split(report: dict) -> Path:  # type: ignore[type-arg]
    return Path(report["split"]["folder"])


def test_the_rule_variant_wins_and_test_is_judged_once_after_the_search(tmp_path: Path) -> None:
    config = setup(tmp_path)
    judge = rule_judge()
    report = run_optimize(config, {"rules": judge}, budget_calls=300)

    names = {c["id"]: c["name"] for c in report["candidates"]}
    assert names[report["winner"]["id"]] == "rule"
    base = report["candidates"][0]
    assert base["name"] == "base" and base["dev"]["score"] == 0.5
    assert report["winner"]["test"]["score"] == 1.0
    assert report["winner"]["optimism_gap"] == report["winner"]["dev"]["score"] - 1.0
    assert report["winner"]["trust"]["level"] == "trusted"
    test_q = questions(_split(report) / "test.jsonl")
    users = [request.user for request in judge.requests]
    shows_test = [any(q in user for q in test_q) for user in users]
    start = shows_test.index(True)
    assert not any(shows_test[:start]) and all(shows_test[start:])
    assert len(users) - start == 2 * len(test_q) + 2  # both orders and two retests, once
    assert report["spent"]["calls"] == len(users) <= 300
    out = Path(report["files"]["winner_config"]).parent
    assert json.loads((out / "state.json").read_text("utf-8"))["stage"] == "done"
    markdown = (out / "optimize_report.md").read_text("utf-8")
    assert "optimism gap (dev − test)" in markdown and "| c00 | base |" in markdown


def test_the_winning_config_runs_as_it_is(tmp_path: Path) -> None:
    config = setup(tmp_path)
    report = run_optimize(config, {"rules": rule_judge()})
    winner = load_config(Path(report["files"]["winner_config"]))
    assert winner.task.instructions == VARIANTS[1]["text"]
    assert winner.pipeline.test_retest_count == 2  # the base config's own settings
    result = CliRunner().invoke(main, ["run", report["files"]["winner_config"], "--dry-run"])
    assert result.exit_code == 0, result.output


def test_a_finished_optimize_resumed_makes_no_call(tmp_path: Path) -> None:
    config = setup(tmp_path)
    first = run_optimize(config, {"rules": rule_judge()})
    again = rule_judge()
    out = Path(first["files"]["winner_config"]).parent
    assert run_optimize(None, {"rules": again}, resume=out) == first
    assert again.calls == 0


def test_a_second_optimize_on_the_same_data_refuses_to_judge_test_again(tmp_path: Path) -> None:
    config = setup(tmp_path)
    first = run_optimize(config, {"rules": rule_judge()})
    judge = rule_judge()
    with pytest.raises(ConfigError) as refused:
        run_optimize(config, {"rules": judge}, output_dir=tmp_path / "again")
    message = str(refused.value)
    assert "was judged" in message and "--new-split" in message
    assert f"winner 'rule': test score {first['winner']['test']['score']:.3f}" in message
    assert judge.calls == 0 and not (tmp_path / "again" / "state.json").exists()

    second = run_optimize(config, {"rules": judge}, output_dir=tmp_path / "again", new_split=True)
    assert second["split"]["seed"] == first["split"]["seed"] + 1
    ledger = (_split(first).parent / "ledger.jsonl").read_text("utf-8").splitlines()
    events = [(e["event"], e.get("status"), e["seed"]) for e in map(json.loads, ledger)]
    assert events == [
        ("split", None, 42),
        ("test", "started", 42),
        ("test", "done", 42),
        ("split", None, 43),
        ("test", "started", 43),
        ("test", "done", 43),
    ]


def test_a_stopped_search_resumes_without_asking_a_recorded_judgment_again(
    tmp_path: Path,
) -> None:
    config = setup(tmp_path)
    broken = rule_judge(fail=lambda request: "shorter" in request.system)  # variant "concise"
    with pytest.raises(OptimizeStopped) as stopped:
        run_optimize(config, {"rules": broken}, budget_calls=300)
    out = tmp_path / "results" / "optimize"
    assert stopped.value.resume == f"jurybox optimize --resume {out}"
    fixed = rule_judge()
    report = run_optimize(None, {"rules": fixed}, resume=out)
    assert {c["name"] for c in report["candidates"]} >= {"concise"}
    first = [(r.system, r.user, r.seed) for r in broken.requests]  # a retest: another seed
    ok_before = {pair for pair, request in zip(first, broken.requests, strict=True)
                 if "shorter" not in request.system}  # fmt: skip
    second = [(r.system, r.user, r.seed) for r in fixed.requests]
    assert not ok_before & set(second)  # nothing answered before is asked again
    assert len(second) == len(set(second))
    failed = {pair for pair in first if pair not in ok_before}
    assert failed and failed <= set(second)  # what failed is asked again


def test_a_variant_that_quotes_a_test_item_is_refused_before_any_call(tmp_path: Path) -> None:
    config = setup(tmp_path)
    probe = run_optimize(config, {"rules": rule_judge()})
    test_question = questions(_split(probe) / "test.jsonl")[0]
    quoting = [*VARIANTS, {"name": "leaky", "text": f"Like in '{test_question.upper()}'."}]
    leaky = write_optimize(tmp_path, quoting, name="leaky.yaml", split={"folder": "s2"})
    judge = rule_judge()
    with pytest.raises(ConfigError, match=r"instruction variant 'leaky' quotes the test item"):
        run_optimize(leaky, {"rules": judge}, output_dir=tmp_path / "leaky")
    assert judge.calls == 0 and not (tmp_path / "leaky" / "state.json").exists()


def test_a_budget_too_small_is_refused_before_any_call(tmp_path: Path) -> None:
    config = setup(tmp_path)
    result = CliRunner().invoke(main, ["optimize", str(config), "--budget-calls", "120"])
    assert result.exit_code == 2, result.output
    assert "field '--budget-calls'" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "results" / "optimize" / "state.json").exists()
    unpriced = CliRunner().invoke(main, ["optimize", str(config), "--budget-usd", "1"])
    assert unpriced.exit_code == 2 and "needs the judge's prices" in unpriced.output


def test_few_shot_examples_come_from_train_only(tmp_path: Path) -> None:
    config = setup(tmp_path, examples={"sizes": [2], "sets": 2})
    judge = rule_judge()
    report = run_optimize(config, {"rules": judge})
    split = _split(report)
    train = set(questions(split / "train.jsonl"))
    held = set(questions(split / "dev.jsonl")) | set(questions(split / "test.jsonl"))
    with_examples = [c for c in report["candidates"] if c["examples"]]
    assert len(with_examples) == 2 * (1 + len(VARIANTS))
    shown = [r.system for r in judge.requests if "## Worked examples" in r.system]
    assert shown
    for system in shown:
        assert not any(q in system for q in held)
        assert sum(q in system for q in train) == 2
    state = json.loads((split.parents[1] / "results/optimize/state.json").read_text("utf-8"))
    ids = {e["id"] for c in state["candidates"] for e in c["examples"]}
    train_ids = {json.loads(line)["id"] for line in (split / "train.jsonl").open()}
    assert ids <= train_ids


def test_the_proposer_sees_train_items_only_and_is_asked_once(tmp_path: Path) -> None:
    proposer = {"judge": {"provider": "fake"}, "rewrites": 2, "train_items": 4}
    config = setup(tmp_path, variants=VARIANTS[:1], proposer=proposer)
    answer = {"rewrites": [f"Prefer what is marked {MARKER}: {RULE}.", "Prefer kindness."]}
    asked = FakeProvider("proposer", replies=[json.dumps(answer)])
    with pytest.raises(ConfigError, match="budget"):  # refused after the proposal
        run_optimize(config, {"rules": rule_judge(), "proposer": asked}, budget_calls=50)
    report = run_optimize(config, {"rules": rule_judge(), "proposer": asked})
    assert asked.calls == 1  # the second start read the answer from the optimize's cache
    (request,) = asked.requests
    split = _split(report)
    held = questions(split / "dev.jsonl") + questions(split / "test.jsonl")
    assert not any(q in request.user or q in request.system for q in held)
    assert sum(q in request.user for q in questions(split / "train.jsonl")) == 4
    names = {c["id"]: c["name"] for c in report["candidates"]}
    assert names[report["winner"]["id"]] == "proposed-1"
    assert report["spent"]["proposer_calls"] == 1


def test_rubric_variants_are_candidates_in_rubric_mode(tmp_path: Path) -> None:
    from optimize_helpers import write_base, write_items

    write_items(tmp_path, 30)
    write_base(tmp_path, mode="rubric", rubric="general")
    rubric = load_rubric_text()
    (tmp_path / "terse.yaml").write_text(rubric.replace("Overall quality", "Terse quality"))
    config = write_optimize(tmp_path, VARIANTS[:1], rubrics=["terse.yaml"])
    report = run_optimize(config, {})
    rubrics = [c["rubric"] for c in report["candidates"]]
    assert rubrics.count(str((tmp_path / "terse.yaml").resolve())) == 2
    assert report["winner"]["test"]["items"] == len(questions(_split(report) / "test.jsonl"))


def load_rubric_text() -> str:
    from importlib.resources import files

    text: str = files("jurybox.rubrics").joinpath("builtin/general.yaml").read_text("utf-8")
    return text


def test_criterion_mode_scores_against_the_gold_verdicts(tmp_path: Path) -> None:
    lines = [
        {
            "id": f"c{i:02d}",
            "question": f"Request {i:02d}: give the next step.",
            "responses": {"assistant": f"Step {i:02d}" + (" [checked]" if i % 2 else "")},
            "human": {"verdict": "Pass" if i % 2 else "Fail"},
        }
        for i in range(30)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    criterion = {
        "name": "marked",
        "definition": "The response is marked.",
        "pass_definition": "It holds the mark.",
        "fail_definition": "It does not.",
    }
    (tmp_path / "marked.yaml").write_text(yaml.safe_dump(criterion))
    base = {
        "judges": {"rules": {"provider": "fake"}},
        "task": {"mode": "criterion", "criteria": ["marked.yaml"]},
        "paths": {"dataset": "items.jsonl"},
    }
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump(base))

    def reply(request: CompletionRequest) -> str:
        marked = RULE in request.system and MARKER in request.user.split("<untrusted_response")[1]
        return json.dumps({"reasoning": "r", "answer": "Pass" if marked else "Fail"})

    config = write_optimize(tmp_path, VARIANTS)
    report = run_optimize(config, {"rules": FakeProvider("c", reply_fn=reply)})
    names = {c["id"]: c["name"] for c in report["candidates"]}
    assert names[report["winner"]["id"]] == "rule"
    assert report["winner"]["test"]["score"] == 1.0
    assert report["candidates"][0]["dev"]["score"] == 0.5  # Fail everywhere: half right


def test_the_bundled_example_runs_and_picks_the_simplest_of_equal_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/optimize/: scripted judges that ignore the prompt tie every candidate, so the
    simplest wins (examples/README.md says so)."""
    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["optimize", "examples/optimize/optimize.yaml"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "results/optimize/optimize_report.json").read_text("utf-8"))
    assert report["split"]["items"] == {"train": 4, "dev": 9, "test": 7}
    assert len(report["candidates"]) == 8
    assert len({c["dev"]["score"] for c in report["candidates"]}) == 1
    assert report["winner"]["name"] == "variant-3"
    assert report["spent"]["calls"] <= 200


@pytest.mark.parametrize(
    ("extra", "variants", "message"),
    [
        ({"bogus": 1}, None, "field 'bogus': Extra inputs are not permitted"),
        ({"split": {"train": 0.5}}, None, "field 'split': train, dev and test must sum to 1"),
        ({"judge": "zz"}, None, "field 'judge': no judge 'zz' in the base config"),
        ({"rubrics": ["r.yaml"]}, None, "rubric variants need task.mode rubric"),
        ({}, [{"name": "a", "text": "x", "file": "y.md"}], "field '[0]': give a variant's text"),
        ({}, [""], "field '[0]': an instruction variant is empty"),
        ({}, ["Same words.", " same   WORDS. "], "have the same text"),
    ],
)
def test_bad_optimize_input_is_refused_before_anything_is_written(
    tmp_path: Path,
    extra: dict,
    variants: list | None,
    message: str,  # type: ignore[type-arg]
) -> None:
    config = setup(tmp_path, variants=variants, **extra)
    result = CliRunner().invoke(main, ["optimize", str(config)])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not (tmp_path / "optimize_split").exists() and not (tmp_path / "results").exists()


def test_a_dollar_budget_bounds_the_plan_with_the_judges_prices(tmp_path: Path) -> None:
    from optimize_helpers import write_base

    config = setup(tmp_path, search={"min_items": 4})
    prices = {"price_input_per_mtok": 1.0, "price_output_per_mtok": 4.0, "max_tokens": 200}
    write_base(tmp_path, judge={"provider": "fake", **prices})
    report = run_optimize(config, {"rules": rule_judge()}, budget_usd=0.2)
    state = json.loads((Path(report["files"]["winner_config"]).parent / "state.json").read_text())
    reserved, plan = state["reserved"]["test_usd"], state["plan"]
    assert reserved > 0 and plan["usd"] + reserved <= 0.2
    assert len(plan["rungs"]) > 1  # 0.2 USD does not buy every candidate every dev item
    assert report["budget"] == {"calls": None, "usd": 0.2}
    assert report["spent"]["usd"] <= 0.2


@pytest.mark.parametrize("command", ["optimize", "calibrate"])
def test_a_config_that_is_not_utf8_is_named_not_a_traceback(tmp_path: Path, command: str) -> None:
    """The optimize and devloop configs are read as the run config is (config.read_yaml_mapping):
    bytes that are not UTF-8 name the file, exit 2."""
    config = tmp_path / "bad.yaml"
    config.write_bytes(b"base: run\xff.yaml\n")
    result = CliRunner().invoke(main, [command, str(config)])
    assert result.exit_code == 2, result.output
    assert f"{config}: not valid UTF-8" in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"- x\xff\n", "not valid UTF-8"), (b"- [unclosed\n", ":2: invalid YAML")],
)
def test_a_variants_file_that_is_not_yaml_is_named(
    tmp_path: Path, content: bytes, message: str
) -> None:
    """Instruction variants are read as every YAML file is (config.read_yaml_file)."""
    variants = tmp_path / "variants.yaml"
    variants.write_bytes(content)
    with pytest.raises(ConfigError) as refused:
        read_variants(variants)
    assert str(refused.value).startswith(str(variants)) and message in str(refused.value)
