"""The answer of ``jurybox compare``: per paired judge, did run B do better than run A?

Each judge's headline is the figure that says whether its judgments are right: accuracy against
the gold/human label, item by item (the mean per-item difference, its adjusted Wald interval
over items and the sign test over items; ``analysis.compare``), or, for a judge
that only scores, the absolute error of its total score against the human score per response,
paired, with Student's paired t test. A difference counts ("better" / "worse") when the test's
p-value, Holm-adjusted over the judges of the comparison, is below 1 − confidence; otherwise the
answer is "no evidence", never a guess. Beside it: each run's trust level for the judge (the
verdict ``jurybox analyze`` gives, default thresholds) and what differs between the two runs'
configs, their own instructions and templates shown as a diff.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jurybox.analysis._common import TOTAL
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model.compare import (
    ConfigChange,
    Headline,
    JudgeComparison,
    JudgeTrust,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.report import analyze_frame
from jurybox.stats import holm
from jurybox.stats.paired import mean_difference

# Settings whose difference says nothing about the judgments (where results and caches went).
_NOT_COMPARED = frozenset({"paths.output_dir", "pipeline.cache_path"})
# Shown as the text they were read as (the manifest's ``prompt``), not as the config's path.
_PROMPT_SETTINGS = frozenset({"task.instructions", "task.template"})


def trust_levels(frame: AnalysisFrame, options: AnalysisOptions | None = None) -> list[JudgeTrust]:
    """Each judge's trust level in one run, as ``jurybox analyze`` decides it."""
    verdict = analyze_frame(frame, options or AnalysisOptions()).verdict
    return [
        JudgeTrust(judge=judge, level=found.level, reason=found.reason)
        for judge, found in verdict.judges.items()
    ]


def headlines(
    judges: Sequence[JudgeComparison],
    frames: tuple[AnalysisFrame, AnalysisFrame],
    trust: tuple[Sequence[JudgeTrust], Sequence[JudgeTrust]],
    confidence: float,
) -> list[Headline]:
    """One headline per paired judge, Holm-adjusted over those that could be tested."""
    found = [_figure(judge, frames, confidence) for judge in judges]
    tested = [i for i, one in enumerate(found) if one.get("p_value") is not None]
    adjusted = holm([found[i]["p_value"] for i in tested]).adjusted if tested else ()
    for i, p in zip(tested, adjusted, strict=True):
        found[i].update(p_adjusted=p, n_tested=len(tested))
    levels_a = {one.judge: one.level for one in trust[0]}
    levels_b = {one.judge: one.level for one in trust[1]}
    return [
        Headline.given(
            judge_a=judge.judge_a,
            judge_b=judge.judge_b,
            answer=_answer(figure, 1 - confidence),
            trust_a=levels_a.get(judge.judge_a),
            trust_b=levels_b.get(judge.judge_b),
            **figure,
        )
        for judge, figure in zip(judges, found, strict=True)
    ]


def _answer(figure: Mapping[str, Any], alpha: float) -> str:
    p, difference = figure.get("p_adjusted"), figure.get("difference")
    if p is None or difference is None or p >= alpha or difference == 0:
        return "no evidence"
    improved = difference > 0 if figure["measure"] == "accuracy" else difference < 0
    return "better" if improved else "worse"


def _figure(
    judge: JudgeComparison, frames: tuple[AnalysisFrame, AnalysisFrame], confidence: float
) -> dict[str, Any]:
    """The judge's headline figure and its test, as ``Headline`` fields."""
    verdicts = judge.verdicts
    if verdicts is not None and verdicts.accuracy is not None:
        accuracy = verdicts.accuracy
        test = accuracy.mcnemar
        return {
            "measure": "accuracy",
            "n_items": accuracy.n_items,
            # the mean over items of each run's share: B − A is their difference
            "value_a": accuracy.difference.p_x,
            "value_b": accuracy.difference.p_y,
            "difference": accuracy.difference.value,
            "ci_low": accuracy.difference.ci_low,
            "ci_high": accuracy.difference.ci_high,
            "p_value": test.p_value,
            "test": test.method,
            "reason": test.reason if test.p_value is None else None,
        }
    errors = _score_errors(judge, frames)
    if errors is not None:
        return _error_figure(*errors, confidence)
    if verdicts is not None:
        return {"reason": verdicts.accuracy_skipped or "no verdict to score"}
    return {"reason": "no human scores for the responses both runs scored"}


def _score_errors(
    judge: JudgeComparison, frames: tuple[AnalysisFrame, AnalysisFrame]
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """|judge total − human total| per item (the mean over its responses both runs scored), for
    A and B, and how many responses (None: fewer than two items). The item is the unit: the
    arms of one item share its question, so their errors are not independent."""
    human = frames[0].labels.scores
    if human.empty:
        human = frames[1].labels.scores
    human = human[human["dimension"] == TOTAL]
    if human.empty:
        return None
    truth = human.groupby(["query_id", "arm"], as_index=False).agg(human=("score", "mean"))
    sides = []
    for frame, name in zip(frames, (judge.judge_a, judge.judge_b), strict=True):
        scores = judge_scores(frame, TOTAL)
        sides.append(scores[scores["judge"] == name][["query_id", "arm", "score"]])
    both = sides[0].merge(sides[1], on=["query_id", "arm"], suffixes=("_a", "_b"))
    both = both.merge(truth, on=["query_id", "arm"])
    both["error_a"] = (both["score_a"] - both["human"]).abs()
    both["error_b"] = (both["score_b"] - both["human"]).abs()
    by_item = both.groupby("query_id")[["error_a", "error_b"]].mean()
    if len(by_item) < 2:
        return None
    return by_item["error_a"].to_numpy(float), by_item["error_b"].to_numpy(float), len(both)


def _error_figure(
    error_a: np.ndarray, error_b: np.ndarray, responses: int, confidence: float
) -> dict[str, Any]:
    figure: dict[str, Any] = {
        "measure": "score error",
        "n_units": responses,
        "n_items": int(error_a.size),
        "value_a": float(error_a.mean()),
        "value_b": float(error_b.mean()),
    }
    if np.array_equal(error_a, error_b):
        return {**figure, "difference": 0.0, "reason": "the same error on every item"}
    result = mean_difference(error_b, error_a, confidence=confidence)
    return {
        **figure,
        "difference": result.estimate,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
        "test": result.method,
    }


# --- what changed between the configs --------------------------------------------------------


def config_changes(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None
) -> tuple[list[ConfigChange], str | None]:
    """What differs between two runs' manifests: the own prompt's text first (a diff), then
    every other setting of the config snapshot. The reason instead when either has none."""
    if a is None or b is None or not all(isinstance(m.get("config"), dict) for m in (a, b)):
        return [], "a run without manifest.json (an import) keeps no config to compare"
    changes = _prompt_changes(a.get("prompt"), b.get("prompt"))
    flat_a, flat_b = _flatten(a["config"]), _flatten(b["config"])
    for setting in sorted(set(flat_a) | set(flat_b), key=_setting_order):
        if setting in _NOT_COMPARED | _PROMPT_SETTINGS or setting.startswith("task.template."):
            continue
        value_a, value_b = flat_a.get(setting), flat_b.get(setting)
        if value_a != value_b:
            changes.append(ConfigChange(setting=setting, value_a=value_a, value_b=value_b))
    return changes, None


def _setting_order(setting: str) -> tuple[int, str]:
    sections = ("judges", "task", "scoring", "pipeline", "dataset", "paths", "trust")
    head = setting.split(".", 1)[0]
    return (sections.index(head) if head in sections else len(sections), setting)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, str | None]:
    """Dotted setting -> its value as JSON text (None for null); a mapping is walked into."""
    flat: dict[str, str | None] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = None if value is None else json.dumps(value, ensure_ascii=False)
    return flat


def _prompt_changes(a: Any, b: Any) -> list[ConfigChange]:
    """The run's own instructions and templates, each as a unified diff where they differ."""
    texts_a, texts_b = _prompt_texts(a), _prompt_texts(b)
    changes = []
    for name in ("task.instructions", "task.template.system", "task.template.user"):
        old, new = texts_a.get(name), texts_b.get(name)
        if old == new:
            continue
        lines = difflib.unified_diff(
            (old or "").splitlines(), (new or "").splitlines(), "A", "B", lineterm="", n=2
        )
        changes.append(
            ConfigChange(setting=name, value_a=_size(old), value_b=_size(new), diff=list(lines))
        )
    return changes


def _prompt_texts(entry: Any) -> dict[str, str]:
    if not isinstance(entry, dict):
        return {}
    texts = {}
    if isinstance(entry.get("instructions"), str):
        texts["task.instructions"] = entry["instructions"]
    template = entry.get("template")
    for part in ("system", "user"):
        text = template.get(part, {}).get("text") if isinstance(template, dict) else None
        if isinstance(text, str):
            texts[f"task.template.{part}"] = text
    return texts


def _size(text: str | None) -> str | None:
    if text is None:
        return None
    lines = len(text.splitlines())
    return f"text, {lines} line{'s' if lines != 1 else ''}"
