"""Bias section: position, verbosity, self-enhancement and leniency tables."""

from __future__ import annotations

from jurybox.analysis.model import Skipped
from jurybox.analysis.model.bias import (
    Bias,
    Leniency,
    Position,
    SwapConsistency,
    Verbosity,
    VerbosityPreferences,
    VerbosityScores,
)
from jurybox.analysis.model.self_enhancement import SelfEnhancement
from jurybox.reporting.explorer.links import items_href
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Cell,
    Link,
    Part,
    Section,
    Table,
    add_parts,
    cell,
    few_items,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
    label,
    method_note,
    metric_items,
    present,
    rate_with_counts,
    skip_reason,
    yes_no,
)

# --- bias ----------------------------------------------------------------------------------


def _bias_parts(section: Section, node: Bias) -> None:
    parts = (
        Part("position", node.position, _position_tables),
        Part("verbosity", node.verbosity, _verbosity_tables),
        Part("self_enhancement", node.self_enhancement, _self_table),
        Part("leniency", node.leniency, _leniency_table),
    )
    add_parts(section, parts)


def _position_tables(section: Section, position: Position) -> None:
    _position_table(section, position)
    _order_effect_table(section, position)
    _top_position_table(section, position)


def _position_table(section: Section, position: Position) -> None:
    table = section.table(
        Table(
            id="bias-position",
            title="Position bias per judge",
            columns=(
                "Judge",
                "Swap consistency (consistent/pairs)",
                "Flipped (items)",
                "Pairs failed (one/both)",
                "First-position rate [95% CI]",
                "p (Holm)",
                "Ties",
                "Paired: first both times, of flips [95% CI]",
                "Paired p (Holm)",
            ),
        )
    )
    for judge, entry in (position.judges or {}).items():
        swap = present(entry.swap_consistency)
        first = present(entry.first_position_rate)
        paired = present(entry.paired_position_test)
        failed: Cell = f"{swap.one_failed} / {swap.both_failed}" if swap else "—"
        if swap and swap.one_failed + swap.both_failed:
            failed = Link(str(failed), items_href(judge=str(judge), filter="failed"))
        table.add(
            str(judge),
            rate_with_counts(table, entry.swap_consistency, lambda m: m.consistent),
            _flipped_cell(str(judge), swap),
            failed,
            cell(table, entry.first_position_rate),
            fmt_p(first.p_holm if first else None),
            fmt_num(first.ties if first else None),
            cell(table, entry.paired_position_test),
            fmt_p(paired.p_holm if paired else None),
        )
    table.note(
        "Swap consistency: the same verdict when the two responses trade places, over pairs "
        "judged successfully in both orders. First-position rate: share of decisive verdicts "
        "for the response shown first (0.5 = no position bias), exact binomial test, Holm "
        "across judges. Paired (the primary test where pairs were judged in both orders): "
        "among pairs whose winner flipped with the order, the share that went to the "
        "first-shown response both times, exact sign test, Holm across judges."
    )


def _flipped_cell(judge: str, swap: SwapConsistency | None) -> Cell:
    """``85 of 200``: pairs whose verdict changed with the order, linked to those items."""
    if swap is None or swap.n is None or swap.consistent is None:
        return "—"
    flipped = swap.n - swap.consistent
    return Link(f"{flipped} of {swap.n}", items_href(judge=judge, filter="flipped"))


def _order_effect_table(section: Section, position: Position) -> None:
    rows = [
        (judge, dim, metric)
        for judge, entry in (position.judges or {}).items()
        for dim, metric in entry.score_order_effect.items()
    ]
    if not rows:
        return
    table = section.table(
        Table(
            id="bias-order-effect",
            title="Score order effect (score shown first minus shown second)",
            columns=("Judge", "Dimension", "Pairs", "Mean difference", "Wilcoxon p"),
        )
    )
    for judge, dim, metric in rows:
        table.add(
            str(judge),
            label(dim),
            fmt_num(metric.n),
            fmt_score(metric.mean_difference),
            fmt_p(metric.p_value),
        )


def _top_position_table(section: Section, position: Position) -> None:
    tops = position.top_position_rate or {}
    if not tops:
        return
    table = section.table(
        Table(
            id="bias-top-position",
            title="Ranking: response shown first ranked best",
            columns=("Judge | k", "Rate [95% CI]", "Chance (1/k)", "p"),
        )
    )
    for name, metric in tops.items():
        table.add(
            str(name), cell(table, metric), fmt_rate(metric.null_proportion), fmt_p(metric.p_value)
        )


def _verbosity_tables(section: Section, node: Verbosity) -> None:
    judges = node.judges or {}
    scored = {j: e.scores for j, e in judges.items() if e.scores is not None}
    preferred = {j: e.preferences for j, e in judges.items() if e.preferences is not None}
    if scored:
        table = section.table(
            Table(
                id="bias-verbosity-scores",
                title="Verbosity bias: response length vs score",
                columns=(
                    "Judge",
                    "Spearman ρ [95% CI]",
                    "p",
                    "Partial ρ (arm held) [95% CI]",
                    "OLS slope per unit [95% CI]",
                    "Length effect",
                ),
            )
        )
        for judge, entry in scored.items():
            ols = entry.ols
            table.add(
                str(judge),
                cell(table, entry.spearman),
                fmt_p(entry.spearman.p_value),
                cell(table, entry.partial_spearman),
                cell(table, ols, 2),
                _detected(entry),
            )
            if ols.length_unit_chars:
                table.note(f"OLS unit: {ols.length_unit_chars} characters of response.")
    if preferred:
        _verbosity_pref_table(section, preferred)


def _detected(entry: VerbosityScores | VerbosityPreferences) -> str:
    found = entry.detected
    if found is None:
        return "—"
    if not found:
        return "not significant"
    direction = entry.direction if isinstance(entry, VerbosityScores) else None
    return f"significant ({direction} favoured)" if direction else "significant"


def _verbosity_pref_table(section: Section, preferred: dict[str, VerbosityPreferences]) -> None:
    table = section.table(
        Table(
            id="bias-verbosity-preferences",
            title="Verbosity bias: does the longer response win?",
            columns=(
                "Judge",
                "Longer wins (wins/decisive) [95% CI]",
                "p",
                "Logit coefficient [95% CI]",
                "Logit slope (arm effect held)",
            ),
        )
    )
    for judge, entry in preferred.items():
        longer = entry.longer_preferred
        text = rate_with_counts(table, longer, lambda m: m.successes)
        if longer.value is not None and longer.ci_low is not None and longer.ci_high is not None:
            counts = fmt_count(longer.successes, longer.n)
            interval = f"[{fmt_rate(longer.ci_low)}, {fmt_rate(longer.ci_high)}]"
            few = few_items(metric_items(longer))
            text = f"{fmt_rate(longer.value)} ({counts}) {interval}{few}"
        table.add(
            str(judge), text, fmt_p(longer.p_value), cell(table, entry.logit, 3), _detected(entry)
        )
    table.note(
        "Longer wins: share of decisive consolidated verdicts won by the longer response "
        "(0.5 = no length preference), exact binomial test. It counts raw wins: a judge that is "
        "always right wins with the longer answer whenever the better one is longer. The logit "
        "slope holds the arm effect; neither conditions on gold labels. The trust verdict's "
        "length check does (the judge's pull toward the longer answer beyond the labels): see "
        "the per-judge checks."
    )


def _self_table(section: Section, node: SelfEnhancement) -> None:
    table = section.table(
        Table(
            id="bias-self-enhancement",
            title="Self-enhancement: does a judge favour its own model family?",
            columns=(
                "Judge",
                "Family",
                "Own mean",
                "Other mean",
                "Difference",
                "Excess vs other judges",
                "p (relative)",
                "Favours own family",
            ),
        )
    )
    for judge, entry in (node.judges or {}).items():
        if isinstance(entry, Skipped):
            table.add(str(judge), fmt_text(entry.family), *["—"] * 6)
            table.note(f"{judge}: {skip_reason(entry)}")
            continue
        rel = entry.relative_test
        table.add(
            str(judge),
            fmt_text(entry.family),
            fmt_score(entry.own_mean),
            fmt_score(entry.other_mean),
            fmt_score(entry.difference),
            fmt_score(rel.excess),
            fmt_p(rel.p_value),
            yes_no(entry.detected),
        )
    table.note(
        "Excess: the judge's score minus the other judges' mean on the same response, "
        "own-family responses minus the rest (Kruskal–Wallis)."
    )
    for author, fr in (node.by_author_friedman or {}).items():
        if isinstance(fr, Skipped) or fr.value is None:
            continue
        table.note(
            f"Do the judges score {author}'s responses alike? Friedman on the responses all "
            f"scored: χ² = {fmt_score(fr.value)}, p = {fmt_p(fr.p_value)}, Kendall's W = "
            f"{fmt_num(fr.kendall_w)}."
        )


def _leniency_table(section: Section, node: Leniency) -> None:
    table = section.table(
        Table(
            id="bias-leniency",
            title="Leniency: mean total score per judge",
            columns=("Judge", "Mean total", "Responses"),
        )
    )
    for judge, entry in (node.judges or {}).items():
        table.add(str(judge), fmt_score(entry.mean), fmt_num(entry.n))
    spread = present(node.range)
    if spread is not None and spread.value is not None:
        table.note(
            f"Range {fmt_score(spread.value)} (most lenient: {spread.most_lenient}, "
            f"most severe: {spread.most_severe})."
        )
    fr = present(node.friedman)
    if fr is not None and fr.value is not None:
        table.note(
            f"Friedman across judges on the responses all scored (related samples): "
            f"χ² = {fmt_score(fr.value)}, p = {fmt_p(fr.p_value)}, Kendall's W = "
            f"{fmt_num(fr.kendall_w)}."
        )
    kw = present(node.kruskal_wallis)
    if kw is not None and kw.value is not None:
        table.note(
            f"Kruskal–Wallis across judges: H = {fmt_score(kw.value)}, p = {fmt_p(kw.p_value)}."
        )
    method_note(table, node.method)


BIAS: Family[Bias] = Family(
    key="bias",
    title="Bias diagnostics",
    question="Do the judges favour a position, longer answers, their own family?",
    node=lambda report: report.bias,
    build=_bias_parts,
    plots=("position_bias", "verbosity_scatter", "vendor_bias"),
)
