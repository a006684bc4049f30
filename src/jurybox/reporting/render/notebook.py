"""HTML for a notebook cell: what ``jurybox.run`` and ``jurybox.analyze`` return, shown as the
report's trust verdict and a run's counts (their ``_repr_html_``). Autoescaped like report.html;
no script, no link outside the page."""

from __future__ import annotations

from typing import Any

from jurybox.analysis.model import Report
from jurybox.pipeline.summary import RunSummary
from jurybox.reporting.render.html import _environment, _table
from jurybox.reporting.sections import LEVEL_TITLES, judge_verdict_table
from jurybox.reporting.view.format import fmt_rate

_TABLE = """\
<table>
<thead><tr>{% for column in table.columns %}<th style="text-align:left">{{ column }}</th>\
{% endfor %}</tr></thead>
<tbody>{% for row in table.rows %}<tr>{% for cell in row %}\
<td style="text-align:left">{{ cell.text }}</td>{% endfor %}</tr>{% endfor %}</tbody>
</table>"""

_REPORT = (
    """\
<div class="jurybox-report">
<p><strong>{{ line }}</strong> — {{ level }}</p>
"""
    + _TABLE
    + """
<p><small>{{ where }}</small></p>
</div>"""
)

_RUN = """\
<div class="jurybox-run">
<p><strong>{{ title }}</strong></p>
<table><tbody>{% for name, value in rows %}<tr><th style="text-align:left">{{ name }}</th>\
<td style="text-align:left">{{ value }}</td></tr>{% endfor %}</tbody></table>
</div>"""


def report_html(report: Report) -> str:
    """The panel line, the panel's level and the per-judge table (level, reason, figures)."""
    verdict = report.verdict
    return (
        _environment()
        .from_string(_REPORT)
        .render(
            line=verdict.line,
            level=LEVEL_TITLES.get(verdict.level, verdict.level),
            table=_table(judge_verdict_table(report)),
            where=f"{report.summary.n_records:,} records, {report.summary.n_items:,} items; "
            "every figure: report.html and analysis_report.json",
        )
    )


def run_html(summary: RunSummary) -> str:
    """Where the run wrote, what its judgments hold, its cost and the failures by kind."""
    counts = ", ".join(f"{name} {n:,}" for name, n in summary.status_counts.items() if n)
    failed = ", ".join(f"{kind} {n:,}" for kind, n in summary.failures_by_kind.items() if n)
    rows: list[tuple[str, Any]] = [
        ("folder", str(summary.output_dir)),
        ("records", counts or "none"),
        ("judged now", f"{summary.units_run:,} of {summary.units_total:,} units"),
        ("already done", f"{summary.units_skipped:,}"),
        ("provider calls", f"{summary.provider_calls:,}"),
        _cost_row(summary),
        ("cache share of input", fmt_rate(summary.cache_input_share)),
        ("failures", failed or "none"),
    ]
    rows += [("no verdict at all", judge.reason_line()) for judge in summary.failed_judges]
    title = f"dry run: {summary.units_total:,} work units" if summary.dry_run else "jurybox run"
    return _environment().from_string(_RUN).render(title=title, rows=rows)


def _cost_row(summary: RunSummary) -> tuple[str, str]:
    """The cost in the one wording every output uses (``pricing.format_cost``); a dry run's
    is its estimate and its bound."""
    if not summary.dry_run:
        return ("cost", summary.cost)
    from jurybox.pipeline.dryrun import estimated_cost  # noqa: PLC0415 - dry runs only

    cost, most = estimated_cost(summary.estimates)
    return ("estimated cost", f"{cost}, at most {most}")
