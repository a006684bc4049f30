"""``analyze_records``: judgments -> one JSON-serialisable report.

Report structure (``schema_version`` 1; JSON Schema in ``report_schema.json`` beside this file,
``report_schema()`` loads it). Top-level keys, in order:

- ``schema_version`` (int), ``generated_by`` ({package, version}), ``options`` (echo of
  ``AnalysisOptions``).
- ``summary``: n_records, n_ok, ``excluded`` ({total, by_status: {status: n},
  holistic_fallback}), judges ([{name, model, vendor, family, n_records, n_ok, local_judge}]),
  modes, arms, control_arm, treatment_arm, dimensions, n_items, n_retest_records,
  human_labels ({preferences, annotators, scores, verdicts}: counts), local_judge_used,
  failures ({judge: {n_records, n_failed, failure_rate, parse_failure_rate, by_status}}).
- ``verdict``: level (trusted | use_with_caution | not_trusted | insufficient_evidence),
  trustworthy (true / false / null), answer (plain language), reasons ([str]), checks
  ([{check, judge, status pass|warn|fail|skipped, value, threshold, message}]),
  judges ({judge: {level, reasons}}).
- Families, each ``{"status": "computed" | "skipped", "reason": str | null, ...}``:
  ``agreement`` (preferences / scores.dimensions.<dim> / verdicts blocks: krippendorff_alpha,
  fleiss_kappa, percent_agreement, pairs [{raters, cohen_kappa, percent_agreement}]),
  ``bias`` (position.judges.<judge> {swap_consistency, first_position_rate,
  score_order_effect}, position.top_position_rate; verbosity.judges.<judge> {scores {spearman,
  partial_spearman, ols, detected, direction}, preferences {longer_preferred, logit, detected}};
  self_enhancement.judges.<judge> {family, own_mean, other_mean, ratio, difference, raw_test,
  relative_test, detected} (scores; empty with scores_reason when there are none),
  self_enhancement.by_author, self_enhancement.preferences.judges.<judge> {family,
  own_win_rate, neutral_pick_rate, excess, relative_test, detected}; leniency {judges, range,
  kruskal_wallis}),
  ``effects`` (control_arm, treatment_arm, scores {overall, by_category, by_difficulty: {groups},
  per_judge, equivalence, gate_failures}, preferences {judges, panel, by_category,
  by_difficulty}), where a subgroup is {n_items, dimensions: {<dim> | total: {n, control_mean,
  treatment_mean, mean_difference, wilcoxon (+ p_holm), cohens_d, rank_biserial,
  significant}}},
  ``reliability`` (test_retest {dimensions, judges, preferences, verdicts},
  internal_consistency {pooled, judges}, confidence_calibration {preferences, scores}),
  ``human_calibration`` (inter_annotator {..agreement block.., majority_counts, no_majority},
  preferences.judges.<judge> {orders, pooled, consolidated}, scores.judges.<judge>
  {dimensions, total_icc}, criterion.judges.<judge> {tpr_tnr, human_pass_rate,
  judge_pass_rate, corrected_pass_rate}),
  ``panels`` (majority_vote, scores, borda, dawid_skene, win_rates),
  ``accuracy_vs_gold`` (judges.<judge> {orders.<order>, pooled, consolidated,
  both_orders_correct}: {value, n, correct, n_total, accuracy_all, ci_low, ci_high}).

A metric is a flattened ``jurybox.stats`` result: ``value`` (headline number), ``n``, ``method``,
``reason`` (why ``value`` is null) and the result's own fields (ci_low, ci_high, p_value ...).
Numbers are never NaN: a missing value is null with a reason. Nothing is rounded here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata, resources
from typing import Any

import pandas as pd

from jurybox.analysis._common import Json, json_safe, skipped
from jurybox.analysis.agreement import analyze_agreement
from jurybox.analysis.bias import analyze_bias
from jurybox.analysis.calibration import analyze_accuracy, analyze_human
from jurybox.analysis.effects import analyze_effects, resolve_contrast
from jurybox.analysis.frame import AnalysisFrame, build_frame
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.panels import analyze_panels
from jurybox.analysis.reliability import analyze_reliability
from jurybox.analysis.verdict import build_verdict
from jurybox.records import Item, JudgeRecord, Status

REPORT_SCHEMA_VERSION = 1
FAMILIES = (
    "agreement",
    "bias",
    "effects",
    "reliability",
    "human_calibration",
    "panels",
    "accuracy_vs_gold",
)
_PARSE_FAILURES = {Status.UNPARSED.value, Status.TRUNCATED.value}
_NO_ANSWER = {Status.PROVIDER_ERROR.value, Status.SKIPPED.value}


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every report validates against."""
    text = resources.files("jurybox.analysis").joinpath("report_schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _version() -> str:
    try:
        return metadata.version("jurybox")
    except metadata.PackageNotFoundError:
        return "unknown"


def _failures(records: pd.DataFrame) -> Json:
    out: Json = {}
    for judge, rows in records.groupby("judge"):
        status = rows["status"]
        counted = status != Status.SKIPPED.value
        answered = ~status.isin(_NO_ANSWER)
        failed = int((counted & ~rows["ok"]).sum())
        parse = int(status.isin(_PARSE_FAILURES).sum())
        out[str(judge)] = {
            "n_records": len(rows),
            "n_failed": failed,
            "failure_rate": failed / int(counted.sum()) if counted.any() else None,
            "parse_failure_rate": parse / int(answered.sum()) if answered.any() else None,
            "by_status": {str(k): int(v) for k, v in status.value_counts().items()},
        }
    return out


def _judges(records: pd.DataFrame) -> list[Json]:
    out = []
    for judge, rows in records.groupby("judge"):
        first = rows.iloc[0]
        out.append(
            {
                "name": str(judge),
                "model": first["model"],
                "vendor": first["vendor"],
                "family": first["family"] or None,
                "n_records": len(rows),
                "n_ok": int(rows["ok"].sum()),
                "local_judge": bool(rows["local_judge"].any()),
            }
        )
    return out


def summarize(frame: AnalysisFrame, options: AnalysisOptions) -> Json:
    """The ``summary`` section: what went in, and what was excluded and why."""
    r = frame.records
    not_ok = r.loc[~r["ok"], "status"].value_counts() if len(r) else pd.Series(dtype=int)
    holistic = int((r["ok"] & r["holistic_fallback"]).sum()) if len(r) else 0
    contrast = resolve_contrast(frame, options) if len(r) else "no records"
    labels = frame.labels
    return {
        "n_records": len(r),
        "n_ok": int(r["ok"].sum()) if len(r) else 0,
        "excluded": {
            "total": int(not_ok.sum()) + holistic,
            "holistic_fallback": holistic,
            "by_status": {str(k): int(v) for k, v in not_ok.items()},
        },
        "judges": _judges(r) if len(r) else [],
        "modes": sorted(str(m) for m in r["mode"].dropna().unique()) if len(r) else [],
        "arms": list(frame.arms),
        "control_arm": contrast[0] if isinstance(contrast, tuple) else None,
        "treatment_arm": contrast[1] if isinstance(contrast, tuple) else None,
        "dimensions": list(frame.dimensions),
        "n_items": int(r["query_id"].nunique()) if len(r) else 0,
        "n_retest_records": int(r["retest"].sum()) if len(r) else 0,
        "human_labels": {
            "preferences": len(labels.preferences),
            "annotators": int(labels.annotators["annotator"].nunique()),
            "scores": len(labels.scores),
            "verdicts": len(labels.verdicts),
        },
        "local_judge_used": bool(r["local_judge"].any()) if len(r) else False,
        "failures": _failures(r) if len(r) else {},
    }


def analyze_frame(frame: AnalysisFrame, options: AnalysisOptions | None = None) -> dict[str, Any]:
    """Every metric family over an already-built frame (see the module docstring)."""
    options = options or AnalysisOptions()
    report: Json = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "generated_by": {"package": "jurybox", "version": _version()},
        "options": options.to_dict(),
        "summary": summarize(frame, options),
        "verdict": {},
    }
    if frame.records.empty:
        report.update({name: skipped("no records") for name in FAMILIES})
    elif not frame.records["ok"].any():
        report.update(
            {name: skipped("no successful judgment: every record failed") for name in FAMILIES}
        )
    else:
        report.update(
            agreement=analyze_agreement(frame, options),
            bias=analyze_bias(frame, options),
            effects=analyze_effects(frame, options),
            reliability=analyze_reliability(frame, options),
            human_calibration=analyze_human(frame, options),
            panels=analyze_panels(frame, options),
            accuracy_vs_gold=analyze_accuracy(frame, options),
        )
    report["verdict"] = build_verdict(report, options)
    safe: dict[str, Any] = json_safe(report)
    return safe


def analyze_records(
    records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    options: AnalysisOptions | None = None,
) -> dict[str, Any]:
    """Analyse judge records into a JSON-serialisable report.

    Args:
        records: ``JudgeRecord`` objects, their ``to_dict()`` mappings, or a DataFrame of them
            (e.g. ``pd.read_json("judgments.jsonl", lines=True)``). Every status is welcome:
            failures are counted in ``summary`` and excluded from the metrics.
        human: Labels by query id (see ``jurybox.analysis.labels``); a DataFrame needs a
            ``query_id`` column. Overrides ``Item.human`` field by field.
        items: The dataset items: response lengths (verbosity), authors (self-enhancement),
            metadata category / difficulty / normal (effects), ``human`` labels, arm order.
        options: ``AnalysisOptions``; defaults apply when None.

    Returns:
        The report dict (module docstring; validates against ``report_schema()``).
    """
    options = options or AnalysisOptions()
    frame = build_frame(records, human=human, items=items, options=options)
    return analyze_frame(frame, options)
