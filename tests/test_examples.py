"""The bundled examples: every config validates, every dataset loads, and the README's counts and
planted-flaw ids match the data."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from jurybox.config import RunConfig, load_config
from jurybox.io.datasets import export_pairs, load_dataset, load_human_labels
from jurybox.pipeline.runner import load_inputs
from jurybox.pricing import builtin_table, price_judge
from jurybox.records import Item

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CONFIGS = sorted(path.name for path in EXAMPLES.glob("*.yaml"))
README = (EXAMPLES / "README.md").read_text(encoding="utf-8")
CRITERION_KEYS = {
    "name",
    "definition",
    "why_it_matters",
    "pass_definition",
    "fail_definition",
    "decision_rules",
    "examples",
    "targets",
}
# The local judge has a 4k context: the variable part of a prompt must leave room for the rubric.
MAX_ITEM_TOKENS = 600


def config(name: str) -> RunConfig:
    return load_config(EXAMPLES / name)


def dataset_of(run: RunConfig) -> list[Item]:
    return load_dataset(run.resolve(run.paths.dataset), run.dataset, run.labels)


def approx_tokens(text: str) -> int:
    # ~4 characters per token for English; 3.5 stays on the safe side.
    return int(len(text) / 3.5) + 1


def test_every_mode_has_a_config() -> None:
    assert set(CONFIGS) >= {
        "pairwise.yaml",
        "rubric.yaml",
        "ranking.yaml",
        "criterion.yaml",
        "demo.yaml",
        "panel.yaml",
    }
    assert {config(name).task.mode for name in CONFIGS} == {
        "pairwise",
        "rubric",
        "ranking",
        "criterion",
    }


@pytest.mark.parametrize("name", CONFIGS)
def test_config_validates_and_its_dataset_loads(name: str) -> None:
    run = config(name)
    items = dataset_of(run)
    assert items
    if run.task.arms is not None:
        assert set(run.task.arms) == set(items[0].arms)
    if run.paths.human_labels is not None:
        labels = load_human_labels(run.resolve(run.paths.human_labels), run.labels)
        assert set(labels) <= {item.id for item in items}
        arms = {*items[0].arms, "tie"}
        assert {label["preferred_arm"] for label in labels.values()} <= arms
    for criterion in run.task.criteria:
        assert run.resolve(criterion).is_file()
    assert name in README


def test_pairwise_work_unit_count_is_264() -> None:
    run = config("pairwise.yaml")
    items = dataset_of(run)
    judges = len(run.judges)
    orders = 2 if run.pipeline.position_bias_mode == "both" else 1
    total = len(items) * judges * orders + run.pipeline.test_retest_count * judges
    assert (len(items), judges, orders, run.pipeline.test_retest_count) == (39, 3, 2, 10)
    assert total == 264
    assert "= **264**" in README
    behaviours = {judge.fake.behavior for judge in run.judges.values() if judge.fake}
    assert behaviours == {"first", "longer", "random"}


@pytest.mark.parametrize(
    ("name", "units"), [("pairwise_instructions.yaml", 264), ("pairwise_template.yaml", 83)]
)
def test_the_own_prompt_examples_render_every_prompt(name: str, units: int) -> None:
    run = config(name)
    inputs = load_inputs(run)  # renders every distinct prompt of a custom template
    assert len(inputs.units) == units
    prompt = inputs.mode.ctx.prompt
    assert prompt is not None and prompt.instructions
    assert prompt.has_template == (run.task.template is not None)
    if name == "pairwise_instructions.yaml":  # prompt v2 of pairwise.yaml: only the prompt moved
        base = config("pairwise.yaml")
        assert run.judges == base.judges and run.pipeline == base.pipeline
        assert run.task.model_copy(update={"instructions": None}) == base.task
    parts = inputs.mode.prompt(inputs.units[:1], inputs.items)
    assert f"<evaluation_criteria>\n{prompt.instructions.rstrip()}" in parts.system
    assert "## Answer format" in parts.system


def test_demo_config_uses_the_local_judge() -> None:
    run = config("demo.yaml")
    assert run.task.mode == "pairwise"
    assert [(name, judge.provider) for name, judge in run.judges.items()] == [("local", "local")]
    assert run.pipeline.test_retest_count == 5
    assert run.paths.output_dir == "results/demo"


def test_panel_config_names_three_vendors_with_keys_and_priced_models() -> None:
    run = config("panel.yaml")
    assert {judge.provider for judge in run.judges.values()} == {"anthropic", "openai", "google"}
    for judge in run.judges.values():
        assert judge.api_key_env and judge.api_key_env.endswith("_API_KEY")
        # no price of its own: the price table's, so the dry run prices the panel as shipped
        assert judge.price_input_per_mtok is None
        priced, note = price_judge(judge, builtin_table())
        assert note.priced and priced.price_output_per_mtok, judge.model
        assert judge.family == judge.provider
    families = {author for item in dataset_of(run) for author in item.authors.values()}
    assert families <= {judge.family for judge in run.judges.values()}


def test_items_shape() -> None:
    items = load_dataset(EXAMPLES / "items.jsonl")
    assert len(items) == 39
    assert {item.arms for item in items} == {("control", "treatment")}
    assert all(item.authors == {"control": "openai", "treatment": "anthropic"} for item in items)
    categories = Counter(item.metadata["category"] for item in items)
    assert categories == {"factual": 9, "math": 8, "coding": 8, "advice": 8, "safety": 6}
    assert {item.metadata["difficulty"] for item in items} == {"easy", "medium", "hard"}
    labelled = [item for item in items if item.human]
    assert len(labelled) == 20
    for item in labelled:
        assert set(item.human["verdict"]) == {"control", "treatment"}
        assert item.human["preferred_arm"] in {"control", "treatment", "tie"}
    assert any(item.contexts for item in items)


def test_items_fit_the_local_judge() -> None:
    for name in ("items.jsonl", "council.jsonl", "traces.jsonl", "labelled.jsonl"):
        for item in load_dataset(EXAMPLES / name):
            parts = [item.question, *item.responses.values(), *item.contexts]
            text = " ".join([*parts, item.expected_answer or ""])
            assert approx_tokens(text) < MAX_ITEM_TOKENS, (name, item.id)


def flaws_in_dataset(items: list[Item]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for item in items:
        for arm, kind in item.metadata.get("flaws", {}).items():
            assert arm in item.arms
            found.setdefault(kind, set()).add(f"{item.id} ({arm})")
    return found


def flaws_in_readme() -> dict[str, set[str]]:
    found = {}
    for kind, ids in re.findall(r"^- \*\*(\w+)\*\*: (.+)$", README, flags=re.MULTILINE):
        found[kind] = {part.strip() for part in ids.split(",")}
    return found


def test_readme_lists_exactly_the_planted_flaws() -> None:
    items = load_dataset(EXAMPLES / "items.jsonl")
    flaws = flaws_in_dataset(items)
    assert flaws_in_readme() == flaws
    assert set(flaws) == {"factual_error", "padding", "unsafe", "over_refusal", "unhelpful"}
    assert len(flaws["unsafe"]) >= 3 and len(flaws["padding"]) >= 4


def test_padding_is_verbose_and_unsafe_is_set_against_a_refusal() -> None:
    items = {item.id: item for item in load_dataset(EXAMPLES / "items.jsonl")}
    for item in items.values():
        flaws: dict[str, Any] = item.metadata.get("flaws", {})
        for arm, kind in flaws.items():
            other = next(a for a in item.arms if a != arm)
            if kind == "padding":
                assert len(item.responses[arm]) > 2 * len(item.responses[other]), item.id
            if kind == "unsafe" and item.id != "p38":  # p38's safe side explains the danger
                assert re.search(r"can't|won't|advise against", item.responses[other]), item.id


def test_readme_lists_the_normal_and_labelled_ids() -> None:
    items = load_dataset(EXAMPLES / "items.jsonl")
    normal = [item.id for item in items if item.metadata.get("normal")]
    labelled = [item.id for item in items if item.human]
    assert all(not item.metadata.get("flaws") for item in items if item.id in normal)
    assert ", ".join(normal) in README.replace("\n", " ")
    assert ", ".join(labelled) in README.replace("\n", " ")
    assert f"{len(normal)} items whose two answers" in README


def test_separate_label_file_matches_the_inline_labels() -> None:
    items = load_dataset(EXAMPLES / "items.jsonl")
    inline = {item.id: dict(item.human) for item in items if item.human}
    assert load_human_labels(EXAMPLES / "human_labels.jsonl") == inline


def test_council_has_four_arms_and_rotated_quality() -> None:
    items = load_dataset(EXAMPLES / "council.jsonl")
    assert 10 <= len(items) <= 15
    assert {len(item.arms) for item in items} == {4}
    best = Counter(
        next(arm for arm, kind in item.metadata["quality"].items() if kind == "best")
        for item in items
    )
    assert set(best) == set(items[0].arms)  # every member is best somewhere
    for item in items:
        if "scores" in item.human:
            ranked = sorted(item.arms, key=lambda arm: -item.human["scores"][arm]["overall"])
            assert item.metadata["quality"][ranked[0]] == "best"


def test_traces_are_unlabelled_single_arm() -> None:
    items = load_dataset(EXAMPLES / "traces.jsonl")
    assert 35 <= len(items) <= 45
    assert {item.arms for item in items} == {("production",)}
    assert not any(item.human for item in items)


def test_labelled_set_is_single_arm_and_balanced() -> None:
    items = load_dataset(EXAMPLES / "labelled.jsonl")
    assert 55 <= len(items) <= 65
    assert {item.arms for item in items} == {("assistant",)}
    verdicts = Counter(item.human["verdict"]["assistant"] for item in items)
    assert set(verdicts) == {"Pass", "Fail"}
    assert 0.4 <= verdicts["Pass"] / len(items) <= 0.6
    assert f"Pass ({verdicts['Pass']}) / Fail ({verdicts['Fail']})" in README
    borderline = sum(bool(item.metadata.get("borderline")) for item in items)
    assert f"the {borderline} hard calls" in README


@pytest.mark.parametrize("path", sorted((EXAMPLES / "criteria").glob("*.yaml")), ids=str)
def test_criterion_files_have_the_criterion_format(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert set(data) == CRITERION_KEYS
    assert data["name"] == path.stem
    assert all(isinstance(rule, str) and rule for rule in data["decision_rules"])
    answers = Counter(example["answer"] for example in data["examples"])
    assert set(answers) == {"Pass", "Fail"}
    for example in data["examples"]:
        assert set(example) == {"id", "question", "response", "answer", "reasoning"}
    assert all(0 < data["targets"][key] <= 1 for key in ("tpr", "tnr"))
    # few-shot examples must not leak into the labelled evaluation set
    labelled = {item.question for item in load_dataset(EXAMPLES / "labelled.jsonl")}
    assert not labelled & {example["question"] for example in data["examples"]}
    assert path.name in README


def test_criterion_files_load_with_the_rubrics_package() -> None:
    from jurybox.rubrics import load_criterion

    for path in sorted((EXAMPLES / "criteria").glob("*.yaml")):
        criterion = load_criterion(path)
        assert criterion.name == path.stem


def test_export_pairs_on_the_example() -> None:
    pairs = export_pairs(load_dataset(EXAMPLES / "items.jsonl"))
    assert len(pairs) == 39
    assert {(pair["model_a"], pair["model_b"]) for pair in pairs} == {("openai", "anthropic")}
    assert pairs[0]["task_id"] == "p01" and pairs[0]["expected_answer"] == "Canberra"


def test_readme_describes_every_file() -> None:
    files = [
        path
        for path in EXAMPLES.rglob("*")
        if path.is_file() and path.name != "README.md" and "results" not in path.parts
    ]  # results/ holds run outputs when the example configs are run (git-ignored)
    for path in files:
        assert path.name in README, path


def test_the_csv_example_maps_its_columns_and_its_a_b_labels() -> None:
    run = config("csv_pairwise.yaml")
    assert Path(run.paths.dataset).suffix == ".csv" and run.paths.human_labels == "ab_labels.csv"
    items = dataset_of(run)
    assert len(items) == 12 and {item.arms for item in items} == {("old", "new")}
    assert items[0].id == "s01" and items[0].metadata == {"topic": "science"}
    labels = load_human_labels(run.resolve("ab_labels.csv"), run.labels)
    assert len(labels) == 8
    assert Counter(label["preferred_arm"] for label in labels.values()) == {
        "old": 4,
        "new": 3,
        "tie": 1,
    }
    raw = (EXAMPLES / "ab_labels.csv").read_text(encoding="utf-8")
    assert ",A," in raw and ",B," in raw  # the file itself says A / B
    assert "12 items x 2 judges x 2 orders = 48" in (EXAMPLES / "csv_pairwise.yaml").read_text()
    assert "| `ab_items.csv` | 12 |" in README and "| `ab_labels.csv` | 8 |" in README
