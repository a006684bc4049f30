"""Self-enhancement in the ``bias`` family: does a judge favour its own model family?"""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import (
    FriedmanMetric,
    KruskalMetric,
    WilcoxonMetric,
    WinRateMetric,
)


class RelativeTest(KruskalMetric):
    """Kruskal-Wallis of the judge's score minus the neutral judges' mean, own vs others."""

    excess: Number | None = None


class SelfScores(Model):
    """A judge's scores of its own family's responses against the others'."""

    family: str
    own_mean: Number | None
    other_mean: Number | None
    n_own: int
    n_other: int
    n: int
    difference: Number | None
    ratio: Number | None
    raw_test: KruskalMetric
    relative_test: RelativeTest
    detected: bool | None
    p_holm: Number | None = None


class SelfScoresSkipped(Skipped):
    """A judge whose family wrote all or none of the responses it scored."""

    family: str


class SelfPreference(Model):
    """A judge's picks of its own family's response against the neutral judges' picks."""

    family: str
    own_win_rate: WinRateMetric
    neutral_pick_rate: Number | None
    excess: Number | None
    relative_test: WilcoxonMetric
    detected: bool | None
    p_holm: Number | None = None


class SelfPreferences(Section):
    """Self-enhancement on pairwise preferences."""

    judges: dict[str, SelfPreference] | None = None
    method: str | None = None


class SelfEnhancement(Section):
    """Self-enhancement on scores (``judges``, ``by_author``: Kruskal-Wallis across judges, and
    ``by_author_friedman``: Friedman with Kendall's W on the responses every judge scored, the
    related-samples test) and on preferences."""

    judges: dict[str, SelfScores | SelfScoresSkipped] | None = None
    by_author: dict[str, KruskalMetric] | None = None
    by_author_friedman: dict[str, FriedmanMetric | Skipped] | None = None
    scores_reason: str | None = None
    preferences: SelfPreferences | None = None
    multiplicity: str | None = None
