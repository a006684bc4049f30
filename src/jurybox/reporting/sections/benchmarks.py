"""The "as the benchmark reports it" section: imported verdicts' figures by each benchmark's rules.

Shown only when the report carries ``benchmarks`` (verdicts imported from LLMBar, JudgeBench,
AlpacaEval or PandaLM); the numbers are the ones a reader can put beside the paper's table.
"""

from __future__ import annotations

from jurybox.analysis.model import Report
from jurybox.analysis.model.benchmarks import (
    AlpacaEvalBenchmark,
    Count,
    JudgeBenchBenchmark,
    LLMBarBenchmark,
    PandaLMBenchmark,
)
from jurybox.reporting.view.format import MISSING, fmt_count, fmt_num, fmt_rate
from jurybox.reporting.view.tables import Section, Table, ordered_items

TITLE = "As the benchmark reports it"


def benchmarks_section(report: Report) -> Section | None:
    """The section, or None when the report holds no benchmark's figures."""
    figures = report.benchmarks
    if figures is None:
        return None
    section = Section(
        id="benchmarks",
        title=TITLE,
        question="What do the benchmark's own rules say about these verdicts?",
    )
    if figures.llmbar is not None:
        _llmbar(section, figures.llmbar)
    if figures.judgebench is not None:
        _judgebench(section, figures.judgebench)
    if figures.alpacaeval is not None:
        _alpacaeval(section, figures.alpacaeval)
    if figures.pandalm is not None:
        _pandalm(section, figures.pandalm)
    return section


def _count(count: Count | None) -> str:
    """``147/200 (73.5%)``, as the benchmarks print their counts."""
    if count is None:
        return MISSING
    percent = f" ({fmt_num(count.percent, 1)}%)" if count.percent is not None else ""
    return fmt_count(count.count, count.n) + percent


def _llmbar(section: Section, node: LLMBarBenchmark) -> None:
    columns = (
        "Subset",
        "Judge",
        "correct_False",
        "correct_True",
        "correct_average",
        "both",
        "equal",
    )
    table = section.table(Table("benchmark-llmbar", "LLMBar (statistics.json)", columns))
    for subset, judges in ordered_items(node.subsets):
        for judge, entry in ordered_items(judges):
            table.add(
                subset,
                judge,
                _count(entry.correct_False),
                _count(entry.correct_True),
                fmt_num(entry.correct_average, 2),
                _count(entry.correct_both),
                _count(entry.equal),
            )
    table.note(
        "LLMBar's rules: correct_False / correct_True = accuracy with output_1 / output_2 shown "
        "first, a failed verdict counting wrong; equal = the same winner in both orders."
    )


def _judgebench(section: Section, node: JudgeBenchBenchmark) -> None:
    table = section.table(Table("benchmark-judgebench", "JudgeBench score", ("Judge", "Score")))
    for judge, entry in ordered_items(node.judges):
        table.add(judge, _count(entry.score))
    table.note(
        "JudgeBench's rule: +1 per order picking the labelled answer, −1 per order picking the "
        "other; a pair is right when the sum is positive (a tie or failed call counts 0)."
    )


def _alpacaeval(section: Section, node: AlpacaEvalBenchmark) -> None:
    columns = ("Annotator", "Comparison", "Win rate (%)", "Wins", "Losses", "Draws", "n")
    table = section.table(Table("benchmark-alpacaeval", "AlpacaEval win rate", columns))
    for annotator, comparisons in ordered_items(node.judges):
        for comparison, rate in ordered_items(comparisons):
            table.add(
                annotator,
                comparison,
                fmt_num(rate.win_rate, 2),
                str(rate.n_wins),
                str(rate.n_wins_base),
                str(rate.n_draws),
                str(rate.n_total),
            )
    table.note("AlpacaEval's rule: a draw counts half; unreadable preferences are left out.")


def _pandalm(section: Section, node: PandaLMBenchmark) -> None:
    pairs = section.table(
        Table("benchmark-pandalm-annotators", "PandaLM annotator agreement", ("Pair", "Cohen κ"))
    )
    for pair, kappa in ordered_items(node.annotator_kappa):
        why = node.annotator_kappa_undefined.get(pair)
        pairs.add(pair, fmt_rate(kappa) if why is None else f"{fmt_rate(kappa)} ({why})")
    columns = ("Judge", "Accuracy", "Precision", "Recall", "F1")
    judges = section.table(
        Table("benchmark-pandalm-judges", "PandaLM: judges against the majority label", columns)
    )
    for judge, entry in ordered_items(node.judges):
        judges.add(
            judge,
            _count(entry.accuracy),
            fmt_rate(entry.precision),
            fmt_rate(entry.recall),
            fmt_rate(entry.f1),
        )
    judges.note("Macro precision / recall / F1 over tie, 1 and 2; a failed verdict counts wrong.")
