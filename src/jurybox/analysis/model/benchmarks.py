"""The ``benchmarks`` section: each benchmark's own figures, as it publishes them.

Present only for imported verdicts whose items name their benchmark (``metadata.source``); the
rules are in ``jurybox.analysis.benchmarks``.
"""

from __future__ import annotations

from pydantic import Field

from jurybox.analysis.model._base import Model


class Count(Model):
    """A count out of ``n``, and its percent, as the benchmarks print ``147 / 200 = 73.5%``."""

    count: int
    n: int
    percent: float | None

    @classmethod
    def of(cls, count: int, n: int) -> Count:
        return cls(count=count, n=n, percent=100 * count / n if n else None)


class LLMBarFigures(Model):
    """One judge on one subset, named as LLMBar's ``statistics.json`` names them."""

    correct_False: Count  # LLMBar's own key
    correct_True: Count  # LLMBar's own key
    correct_average: float | None
    correct_both: Count
    equal: Count


class LLMBarBenchmark(Model):
    """``subsets[subset][judge]``: the figures of ``statistics.json``."""

    subsets: dict[str, dict[str, LLMBarFigures]]


class JudgeBenchScore(Model):
    """JudgeBench's score of one judge: overall and per source (its categories)."""

    score: Count
    by_source: dict[str, Count]


class JudgeBenchBenchmark(Model):
    judges: dict[str, JudgeBenchScore]


class WinRate(Model):
    """AlpacaEval's head-to-head figures of ``output_2`` against ``output_1``."""

    win_rate: float | None
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int


class AlpacaEvalBenchmark(Model):
    """``judges[annotator]["<generator_2> vs <generator_1>"]``: the win rate."""

    judges: dict[str, dict[str, WinRate]]


class JudgeAgreement(Model):
    """A judge against the annotators' majority label (0 tie, 1, 2)."""

    accuracy: Count
    precision: float | None
    recall: float | None
    f1: float | None


class PandaLMBenchmark(Model):
    """Annotator kappas (``"annotator1-annotator2"``) and each judge against their majority;
    a pair whose kappa is undefined (both used one category) has None, and its reason in
    ``annotator_kappa_undefined``."""

    annotator_kappa: dict[str, float | None]
    annotator_kappa_undefined: dict[str, str] = Field(default_factory=dict)
    majority_counts: dict[str, int]
    judges: dict[str, JudgeAgreement]


class BenchmarkFigures(Model):
    """One key per benchmark the items come from (by ``metadata.source``); absent otherwise."""

    llmbar: LLMBarBenchmark | None = None
    judgebench: JudgeBenchBenchmark | None = None
    alpacaeval: AlpacaEvalBenchmark | None = None
    pandalm: PandaLMBenchmark | None = None
