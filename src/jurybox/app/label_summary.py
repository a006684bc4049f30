"""What the labels say so far: agreement among the annotators, and each judge's verdict.

The page's summary view (and ``GET /api/summary``) shows, from the labels file as it is now:

* agreement among the annotators on the items several of them labelled: the block ``analyze``
  reports as ``human_calibration.inter_annotator`` (Cohen's κ per pair with its interval,
  Krippendorff's α with its bootstrap interval), computed by the same function;
* each judge's trust verdict as ``analyze`` computes it, with the labels the file held when the
  session started ("before") and with the labels it holds now ("after").

It names judges and their levels, so the page fetches it only when the annotator asks: it never
shows what a judge said about an item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.analysis import AnalysisOptions
from jurybox.analysis.calibration import annotator_agreement
from jurybox.analysis.labels import build_labels
from jurybox.app.analyze import build_report
from jurybox.app.label import LabelSession
from jurybox.app.sources import declared_scale, run_judges
from jurybox.io.datasets import LabelLine, merge_lines
from jurybox.io.label_screen import screen_labels


def label_summary(session: LabelSession, options: AnalysisOptions | None = None) -> dict[str, Any]:
    """Agreement and verdicts before/after (see the module docstring), JSON-ready."""
    options = options or analysis_options(session)
    now = session.lines()
    labels = merge_lines(now)
    annotators = sorted({str(line.annotator) for line in now if line.annotator is not None})
    agreement = annotator_agreement(
        build_labels(None, labels, arms_by_query={}).annotators, options
    )
    return {
        "labels_file": str(session.path),
        "annotators": annotators,
        "labels": {"before": _count(session.given_at_start), "after": _count(now)},
        "agreement": agreement.model_dump(mode="json"),
        "verdicts": _verdicts(session, merge_lines(session.given_at_start), labels, options),
    }


def analysis_options(session: LabelSession) -> AnalysisOptions:
    """The options ``analyze`` would use for the run (declared scale, judges' settings)."""
    path = session.run.judgments
    return AnalysisOptions(score_scale=declared_scale(path), run_judges=run_judges(path))


def _count(lines: list[LabelLine]) -> int:
    return len(merge_lines(lines))


def _verdicts(
    session: LabelSession,
    before: Mapping[str, Mapping[str, Any]],
    after: Mapping[str, Mapping[str, Any]],
    options: AnalysisOptions,
) -> list[dict[str, Any]]:
    then, now = _levels(session, before, options), _levels(session, after, options)
    return [{"judge": judge, "before": then.get(judge), "after": now[judge]} for judge in now]


def _levels(
    session: LabelSession, labels: Mapping[str, Mapping[str, Any]], options: AnalysisOptions
) -> dict[str, dict[str, Any]]:
    run = session.run
    arms = {arm for item in run.items for arm in item.arms}
    screened = screen_labels(labels, {item.id for item in run.items}, arms).labels
    report, _ = build_report(
        run.records, human=screened or None, items=list(run.items), options=options
    )
    out = {}
    for judge, verdict in (report.verdict.judges or {}).items():
        accuracy = verdict.accuracy
        out[judge] = {
            "level": verdict.level,
            "reason": verdict.reason,
            "accuracy": None if accuracy is None else accuracy.model_dump(mode="json"),
        }
    return out
