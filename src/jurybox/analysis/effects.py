"""Treatment effects: does the treatment arm beat control?

Scores: the unit is the item. Each arm's score on an item is the mean over judges, presentation
orders and repeats (retests excluded), so items are the independent replicates. Per dimension
and for the total: Wilcoxon signed-rank (treatment vs control), paired Cohen's d_z and the
matched-pairs rank-biserial r, overall and per item category and difficulty (item metadata);
Holm's adjustment across the dimensions of each subgroup. Items marked ``metadata.normal`` get a
TOST equivalence test (margin ``AnalysisOptions.equivalence_margin`` score points). Gate failures
(an arm fails on an item when most of its judgments report a gate failure) get McNemar's test.

Pairwise: the win rate of treatment over control from consolidated verdicts (a verdict that flips
with the order is a tie; ties count half), per judge and for the panel's majority verdict; the
length-controlled rate beside it where items give lengths; with human gold labels on some items,
each judge's rate on the others corrected by its confusion matrix on the labelled ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any, cast

import pandas as pd
from numpy.typing import ArrayLike

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    fresh_scores,
    in_values,
    json_safe,
    majority_vote,
    skipped,
    win_rate,
    with_fields,
)
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.effects import (
    ByMetadata,
    EffectPreferences,
    Effects,
    EffectScores,
    Equivalence,
    GateFailures,
    HolmWilcoxon,
    PairedTests,
    PreferenceWinRate,
    Subgroup,
)
from jurybox.analysis.model.metrics import (
    CorrectedWinRateMetric,
    EffectSizeMetric,
    HeterogeneityMetric,
    LengthControlledMetric,
    RankBiserialMetric,
    TOSTMetric,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated
from jurybox.records import ARMS_ARE_TREATMENTS


def resolve_contrast(frame: AnalysisFrame, options: AnalysisOptions) -> tuple[str, str] | str:
    """(control, treatment), or the reason there is no two-arm contrast."""
    arms = frame.arms
    if len(arms) < 2:
        return f"a single arm ({', '.join(arms) or 'none'}): no treatment to compare"
    items = frame.items
    if not items.empty and not items["treatment_arms"].all():
        return (
            f"the arms ({', '.join(arms)}) are the benchmark's own numbering of two responses, "
            f"not a treatment and a control (item metadata {ARMS_ARE_TREATMENTS}: false): "
            "no treatment effect to compute"
        )
    control = options.control_arm or arms[0]
    treatment = options.treatment_arm or (arms[1] if len(arms) == 2 else None)
    if treatment is None:
        return (
            f"{len(arms)} arms ({', '.join(arms)}): name the treatment arm in "
            "AnalysisOptions.treatment_arm"
        )
    return control, treatment


def item_arm_scores(frame: AnalysisFrame, dimension: str, judge: str | None = None) -> pd.DataFrame:
    """Items x arms of one dimension's score (panel mean, or one judge's)."""

    def build() -> pd.DataFrame:
        scores = judge_scores(frame, dimension)
        if judge is not None:
            scores = scores[scores["judge"] == judge]
        return scores.groupby(["query_id", "arm"])["score"].mean().unstack("arm")

    return frame.memo(f"item_arm_scores|{dimension}|{judge}", build)


def paired_tests(
    wide: pd.DataFrame, control: str, treatment: str, options: AnalysisOptions
) -> PairedTests | Skipped:
    """Wilcoxon, d_z and rank-biserial of treatment minus control over items with both arms."""
    if not {control, treatment} <= set(wide.columns):
        return skipped(f"no item has scores for both '{control}' and '{treatment}'")
    both = wide[[control, treatment]].dropna()
    x, y, n = both[treatment].to_numpy(), both[control].to_numpy(), len(both)
    return PairedTests.model_validate(
        json_safe(
            {
                "n": n,
                "control_mean": float(y.mean()) if n else None,
                "treatment_mean": float(x.mean()) if n else None,
                "mean_difference": float((x - y).mean()) if n else None,
                "wilcoxon": attempt(HolmWilcoxon, stats.wilcoxon_signed_rank, x, y, n=n),
                "cohens_d": attempt(
                    EffectSizeMetric,
                    stats.cohens_d_paired,
                    x,
                    y,
                    n=n,
                    confidence=options.confidence,
                ),
                "rank_biserial": attempt(RankBiserialMetric, stats.rank_biserial, x, y, n=n),
            }
        )
    )


def _holm(dims: dict[str, PairedTests | Skipped], alpha: float) -> dict[str, PairedTests | Skipped]:
    """Holm across the rubric dimensions (not the total) of one subgroup: ``p_holm`` on every
    test, ``significant`` where there is a p-value."""
    tested = {
        d: t.wilcoxon.p_value
        for d, t in dims.items()
        if d != TOTAL and isinstance(t, PairedTests) and t.wilcoxon.p_value is not None
    }
    result = stats.holm(list(tested.values()), alpha=alpha) if tested else None
    adjusted = dict(zip(tested, result.adjusted, strict=True)) if result else {}
    reject = dict(zip(tested, result.reject, strict=True)) if result else {}
    out: dict[str, PairedTests | Skipped] = {}
    for dim, test in dims.items():
        if isinstance(test, Skipped):
            out[dim] = test
            continue
        p = test.wilcoxon.p_value
        significant = reject.get(dim)
        if dim == TOTAL and p is not None and tested:
            # Unadjusted (the total is not in the Holm family), and only beside tested dimensions.
            significant = p < alpha
        out[dim] = _adjusted(test, adjusted.get(dim), significant)
    return out


def _adjusted(test: PairedTests, p_holm: float | None, significant: bool | None) -> PairedTests:
    """``test`` with its Holm p-value, and ``significant`` where it was tested."""
    test = with_fields(test, wilcoxon=with_fields(test.wilcoxon, p_holm=p_holm))
    return test if significant is None else with_fields(test, significant=bool(significant))


def _subgroup(
    frame: AnalysisFrame,
    qids: ArrayLike | None,
    contrast: tuple[str, str],
    options: AnalysisOptions,
) -> Subgroup:
    dims: dict[str, PairedTests | Skipped] = {}
    for dim in (*frame.dimensions, TOTAL):
        wide = item_arm_scores(frame, dim)
        if qids is not None:
            wide = wide[in_values(wide.index, qids)]
        dims[dim] = paired_tests(wide, *contrast, options)
    return Subgroup(
        n_items=max((t.n if isinstance(t, PairedTests) else 0 for t in dims.values()), default=0),
        dimensions=_holm(dims, options.alpha),
    )


def _by_metadata(
    frame: AnalysisFrame, column: str, contrast: tuple[str, str], options: AnalysisOptions
) -> ByMetadata:
    if frame.items.empty or frame.items[column].isna().all():
        return ByMetadata.skip(f"no item has metadata.{column}")
    groups = frame.items.dropna(subset=[column]).groupby(column)["query_id"].unique()
    out: dict[str, Subgroup | Skipped] = {}
    for value, qids in groups.items():
        if len(qids) < options.min_items:
            out[str(value)] = skipped(
                f"{len(qids)} item(s), fewer than min_items={options.min_items}"
            )
        else:
            out[str(value)] = _subgroup(frame, qids, contrast, options)
    tested = {str(v): q for v, q in groups.items() if len(q) >= options.min_items}
    return ByMetadata.of(groups=out, heterogeneity=_heterogeneity(frame, tested, contrast, options))


def _heterogeneity(
    frame: AnalysisFrame,
    groups: dict[str, Any],
    contrast: tuple[str, str],
    options: AnalysisOptions,
) -> dict[str, HeterogeneityMetric]:
    """Per dimension: Kruskal-Wallis of the per-item effects (treatment minus control) across
    the subgroups with at least min_items items, each subgroup's Wilcoxon Holm-adjusted."""
    control, treatment = contrast
    out: dict[str, HeterogeneityMetric] = {}
    for dim in (*frame.dimensions, TOTAL):
        wide = item_arm_scores(frame, dim)
        if not {control, treatment} <= set(wide.columns):
            continue
        diff = (wide[treatment] - wide[control]).dropna()
        found = {name: diff[in_values(diff.index, q)].to_numpy() for name, q in groups.items()}
        samples: dict[Hashable, ArrayLike] = {name: d for name, d in found.items() if len(d)}
        n_items = int(sum(len(d) for d in found.values()))
        out[dim] = attempt(
            HeterogeneityMetric, _plain_heterogeneity, samples, options.alpha, n=n_items
        )
    return out


def _plain_heterogeneity(samples: Mapping[Hashable, ArrayLike], alpha: float) -> Any:
    """``subgroup_heterogeneity`` with its per-subgroup rows as mappings (the report's JSON
    conversion flattens dataclass fields, not tuples of dataclasses)."""
    result = stats.subgroup_heterogeneity(samples, alpha=alpha)
    rows = tuple(dataclasses.asdict(effect) for effect in result.effects)
    return dataclasses.replace(result, effects=cast(Any, rows))


def _equivalence(
    frame: AnalysisFrame, contrast: tuple[str, str], options: AnalysisOptions
) -> Equivalence:
    normal = (
        frame.items.loc[frame.items["normal"], "query_id"].unique() if not frame.items.empty else []
    )
    if len(normal) == 0:
        return Equivalence.skip("no item is marked metadata.normal")
    control, treatment = contrast
    dims: dict[str, TOSTMetric | Skipped] = {}
    for dim in (*frame.dimensions, TOTAL):
        wide = item_arm_scores(frame, dim)
        wide = wide[in_values(wide.index, normal)]
        if not {control, treatment} <= set(wide.columns):
            dims[dim] = skipped("no normal item has scores for both arms")
            continue
        both = wide[[control, treatment]].dropna()
        dims[dim] = attempt(
            TOSTMetric,
            stats.tost_paired,
            both[treatment].to_numpy(),
            both[control].to_numpy(),
            options.equivalence_margin,
            n=len(both),
            alpha=options.alpha,
        )
    return Equivalence.of(margin=options.equivalence_margin, n_items=len(normal), dimensions=dims)


def _gate_failures(frame: AnalysisFrame, contrast: tuple[str, str]) -> GateFailures | Skipped:
    read = ["query_id", "arm", "gate_failed"]
    rows = fresh_scores(frame, TOTAL, columns=read).dropna(subset=["gate_failed"])
    if rows.empty:
        return skipped("no gate information in the records")
    failed = rows.groupby(["query_id", "arm"])["gate_failed"].mean().gt(0.5).unstack("arm")
    control, treatment = contrast
    if not {control, treatment} <= set(failed.columns):
        return skipped("no item has gate information for both arms")
    both = failed[[control, treatment]].dropna().astype(bool)
    table = pd.crosstab(both[control], both[treatment]).reindex(
        index=[False, True], columns=[False, True], fill_value=0
    )
    return with_fields(
        attempt(GateFailures, stats.mcnemar, table.to_numpy(), n=len(both)),
        table=table.to_numpy().tolist(),
        table_layout="rows: control passes/fails the gates; columns: treatment",
        control_failures=int(both[control].sum()),
        treatment_failures=int(both[treatment].sum()),
    )


def _win_rate(
    labels: pd.Series, contrast: tuple[str, str], options: AnalysisOptions
) -> PreferenceWinRate:
    control, treatment = contrast
    wins, losses = int((labels == treatment).sum()), int((labels == control).sum())
    ties = int((labels == "tie").sum())
    metric = win_rate(PreferenceWinRate, wins, losses, ties, options)
    return with_fields(metric, flip_is_tie=True)


def _preferences(
    frame: AnalysisFrame, contrast: tuple[str, str], options: AnalysisOptions
) -> EffectPreferences:
    cons = consolidated(frame)
    if cons.empty:
        return EffectPreferences.skip("no pairwise preferences in the records")
    judges = {
        str(j): _win_rate(rows["label"], contrast, options) for j, rows in cons.groupby("judge")
    }
    panel = majority_vote(cons, ["query_id", "repeat"], "label").fillna("tie")
    by: dict[str, dict[str, PreferenceWinRate]] = {}
    for column in ("category", "difficulty"):
        if not frame.items.empty and frame.items[column].notna().any():
            meta = frame.items.drop_duplicates("query_id").set_index("query_id")[column]
            groups = panel.groupby(panel.index.get_level_values("query_id").map(meta.to_dict()))
            by[f"by_{column}"] = {str(k): _win_rate(g, contrast, options) for k, g in groups}
    extra: dict[str, object] = dict(by)
    lengths = _length_difference(frame, contrast)
    if lengths is not None:
        extra["length_controlled"] = {
            str(j): _length_controlled(
                rows.set_index("query_id")["label"], lengths, contrast, options
            )
            for j, rows in cons.groupby("judge")
        }
        extra["panel_length_controlled"] = _length_controlled(
            panel.droplevel("repeat"), lengths, contrast, options
        )
    gold = frame.labels.preferences.drop_duplicates("query_id").set_index("query_id")["label"]
    if not gold.empty:
        extra["corrected"] = {
            str(j): _corrected_win_rate(rows, gold, contrast, options)
            for j, rows in cons.groupby("judge")
        }
        extra["corrected_method"] = CORRECTED_METHOD
    return EffectPreferences.of(
        judges=judges,
        panel=_win_rate(panel, contrast, options),
        panel_method="majority of the judges' consolidated verdicts; no majority = tie",
        **extra,
    )


CORRECTED_METHOD = (
    "one consolidated verdict per item (its first repeat); the judge's confusion matrix on the "
    "items with a human gold label corrects its verdict shares on the items without one; "
    "classes treatment/control, plus tie when the gold or the judge has ties"
)


def _corrected_win_rate(
    rows: pd.DataFrame, gold: pd.Series, contrast: tuple[str, str], options: AnalysisOptions
) -> CorrectedWinRateMetric | Skipped:
    """Treatment's win rate over the unlabelled items, corrected for the judge's
    misclassification of the labelled ones (ties count half)."""
    control, treatment = contrast
    first = rows.sort_values("repeat").drop_duplicates("query_id").set_index("query_id")["label"]
    truth = first.index.map(gold.to_dict())
    labelled = first[truth.notna()]
    unlabelled = first[truth.isna()]
    if unlabelled.empty:
        return skipped(
            "every item this judge decided has a gold label: the human rate is the answer"
        )
    if labelled.empty:
        return skipped("no item this judge decided has a gold label")
    test_labels = gold.reindex(labelled.index)
    with_tie = (test_labels == "tie").any() or (first == "tie").any()
    classes = (treatment, control, "tie") if with_tie else (treatment, control)
    return attempt(
        CorrectedWinRateMetric,
        stats.corrected_win_rate,
        test_labels.to_numpy(),
        labelled.to_numpy(),
        unlabelled.to_numpy(),
        classes=classes,
        n=len(first),
        confidence=options.confidence,
        rng=options.seed,
    )


def _length_difference(frame: AnalysisFrame, contrast: tuple[str, str]) -> pd.Series | None:
    """Per item, the treatment response's length minus the control's (None without lengths)."""
    if frame.items.empty:
        return None
    wide = frame.items.pivot_table(index="query_id", columns="arm", values="length")
    if not set(contrast) <= set(wide.columns):
        return None
    diff = (wide[contrast[1]] - wide[contrast[0]]).dropna()
    return diff if len(diff) else None


def _length_controlled(
    labels: pd.Series, lengths: pd.Series, contrast: tuple[str, str], options: AnalysisOptions
) -> LengthControlledMetric:
    """Treatment's win rate at equal length (ties half), keyed by item in ``labels``' index."""
    control, treatment = contrast
    known = labels[labels.isin([control, treatment, "tie"]) & labels.index.isin(lengths.index)]
    outcome = (known == treatment).astype(float) + 0.5 * (known == "tie").astype(float)
    return attempt(
        LengthControlledMetric,
        stats.length_controlled_win_rate,
        outcome.to_numpy(),
        lengths.reindex(known.index).to_numpy(dtype=float),
        n=len(known),
        confidence=options.confidence,
    )


def analyze_effects(frame: AnalysisFrame, options: AnalysisOptions) -> Effects:
    """The treatment-effect family (see module docstring)."""
    contrast = resolve_contrast(frame, options)
    if isinstance(contrast, str):
        return Effects.skip(contrast)
    has_scores = not frame.scores.empty
    scores = (
        EffectScores.of(
            unit="item; arm score = mean over judges, orders and repeats (retests excluded)",
            overall=_subgroup(frame, None, contrast, options),
            by_category=_by_metadata(frame, "category", contrast, options),
            by_difficulty=_by_metadata(frame, "difficulty", contrast, options),
            per_judge={
                j: paired_tests(item_arm_scores(frame, TOTAL, j), *contrast, options)
                for j in frame.judges
            },
            equivalence=_equivalence(frame, contrast, options),
            gate_failures=_gate_failures(frame, contrast),
        )
        if has_scores
        else EffectScores.skip("no scores in the records")
    )
    return Effects.of(
        control_arm=contrast[0],
        treatment_arm=contrast[1],
        scores=scores,
        preferences=_preferences(frame, contrast, options),
    )
