"""Bias section: position, verbosity, self-enhancement and leniency tables."""

from __future__ import annotations

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    add_parts,
    cell,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
    get,
    label,
    p_cell,
    rate_with_counts,
    skip_reason,
    yes_no,
)

# --- bias ----------------------------------------------------------------------------------


def _bias_parts(section: Section, node: Json) -> None:
    parts = (
        ("position", _position_tables),
        ("verbosity", _verbosity_tables),
        ("self_enhancement", _self_table),
        ("leniency", _leniency_table),
    )
    add_parts(section, node, parts)


def _position_tables(section: Section, position: Json) -> None:
    _position_table(section, position)
    _order_effect_table(section, position)
    _top_position_table(section, position)


def _position_table(section: Section, position: Json) -> None:
    table = section.table(
        Table(
            id="bias-position",
            title="Position bias per judge",
            columns=(
                "Judge",
                "Swap consistency (consistent/pairs)",
                "Pairs failed (one/both)",
                "First-position rate [95% CI]",
                "p (Holm)",
                "Ties",
            ),
        )
    )
    for judge, entry in (position.get("judges") or {}).items():
        swap = entry.get("swap_consistency") or {}
        first = entry.get("first_position_rate") or {}
        failed = (
            f"{swap.get('one_failed', '—')} / {swap.get('both_failed', '—')}"
            if "one_failed" in swap
            else "—"
        )
        table.add(
            str(judge),
            rate_with_counts(table, swap, "consistent"),
            failed,
            cell(table, first),
            p_cell(first, "p_holm"),
            fmt_num(first.get("ties")),
        )
    table.note(
        "Swap consistency: the same verdict when the two responses trade places, over pairs "
        "judged successfully in both orders. First-position rate: share of decisive verdicts "
        "for the response shown first (0.5 = no position bias), exact binomial test, Holm "
        "across judges."
    )


def _order_effect_table(section: Section, position: Json) -> None:
    rows = [
        (judge, dim, metric)
        for judge, entry in (position.get("judges") or {}).items()
        for dim, metric in (entry.get("score_order_effect") or {}).items()
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
            fmt_num(metric.get("n")),
            fmt_score(metric.get("mean_difference")),
            p_cell(metric),
        )


def _top_position_table(section: Section, position: Json) -> None:
    tops = position.get("top_position_rate") or {}
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
            str(name), cell(table, metric), fmt_rate(metric.get("null_proportion")), p_cell(metric)
        )


def _verbosity_tables(section: Section, node: Json) -> None:
    judges = node.get("judges") or {}
    scored = {j: e["scores"] for j, e in judges.items() if isinstance(e.get("scores"), dict)}
    preferred = {
        j: e["preferences"] for j, e in judges.items() if isinstance(e.get("preferences"), dict)
    }
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
            ols = entry.get("ols") or {}
            table.add(
                str(judge),
                cell(table, entry.get("spearman")),
                p_cell(entry.get("spearman")),
                cell(table, entry.get("partial_spearman")),
                cell(table, ols, 2),
                _detected(entry),
            )
            if ols.get("length_unit_chars"):
                table.note(f"OLS unit: {ols['length_unit_chars']} characters of response.")
    if preferred:
        _verbosity_pref_table(section, preferred)


def _detected(entry: Json) -> str:
    found = entry.get("detected")
    if found is None:
        return "—"
    if not found:
        return "not significant"
    direction = entry.get("direction")
    return f"significant ({direction} favoured)" if direction else "significant"


def _verbosity_pref_table(section: Section, preferred: dict[str, Json]) -> None:
    table = section.table(
        Table(
            id="bias-verbosity-preferences",
            title="Verbosity bias: does the longer response win?",
            columns=(
                "Judge",
                "Longer wins (wins/decisive) [95% CI]",
                "p",
                "Logit coefficient [95% CI]",
                "Length effect",
            ),
        )
    )
    for judge, entry in preferred.items():
        longer = entry.get("longer_preferred") or {}
        text = rate_with_counts(table, longer, "successes")
        interval = get(longer, "ci_low"), get(longer, "ci_high")
        if longer.get("value") is not None and None not in interval:
            text += f" [{fmt_rate(interval[0])}, {fmt_rate(interval[1])}]"
        table.add(
            str(judge), text, p_cell(longer), cell(table, entry.get("logit"), 3), _detected(entry)
        )
    table.note(
        "Longer wins: share of decisive consolidated verdicts won by the longer response "
        "(0.5 = no length preference), exact binomial test."
    )


def _self_table(section: Section, node: Json) -> None:
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
    for judge, entry in (node.get("judges") or {}).items():
        if skip_reason(entry):
            table.add(str(judge), fmt_text(entry.get("family")), *["—"] * 6)
            table.note(f"{judge}: {skip_reason(entry)}")
            continue
        rel = entry.get("relative_test") or {}
        table.add(
            str(judge),
            fmt_text(entry.get("family")),
            fmt_score(entry.get("own_mean")),
            fmt_score(entry.get("other_mean")),
            fmt_score(entry.get("difference")),
            fmt_score(rel.get("excess")),
            p_cell(rel),
            yes_no(entry.get("detected")),
        )
    table.note(
        "Excess: the judge's score minus the other judges' mean on the same response, "
        "own-family responses minus the rest (Kruskal–Wallis)."
    )


def _leniency_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="bias-leniency",
            title="Leniency: mean total score per judge",
            columns=("Judge", "Mean total", "Responses"),
        )
    )
    for judge, entry in (node.get("judges") or {}).items():
        table.add(str(judge), fmt_score(entry.get("mean")), fmt_num(entry.get("n")))
    spread = node.get("range") or {}
    if spread.get("value") is not None:
        table.note(
            f"Range {fmt_score(spread['value'])} (most lenient: {spread.get('most_lenient')}, "
            f"most severe: {spread.get('most_severe')})."
        )
    kw = node.get("kruskal_wallis") or {}
    if kw.get("value") is not None:
        table.note(
            f"Kruskal–Wallis across judges: H = {fmt_score(kw['value'])}, "
            f"p = {fmt_p(kw.get('p_value'))}."
        )
    if node.get("method"):
        table.note(f"Method: {node['method']}.")


BIAS = Family(
    key="bias",
    title="Bias diagnostics",
    question="Do the judges favour a position, longer answers, their own family?",
    build=_bias_parts,
    plots=("position_bias", "verbosity_scatter", "vendor_bias"),
)
