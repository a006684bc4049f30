"""The trust verdict: a plain-language answer to "can these judges be trusted for this
comparison?", built from the computed families.

Critical checks (a failure means "not trusted"): parse failure rate, swap consistency,
first-position preference significantly different from 0.5 (Holm across judges), judge-human
kappa. Warning checks (a failure means "use with caution"): provider failure rate, inter-judge
agreement, verbosity bias, self-enhancement, test-retest reliability, the bundled local judge.
A check whose input is absent is listed as skipped and named in the answer as untested.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jurybox.analysis._common import TOTAL, Json, value_of
from jurybox.analysis.options import AnalysisOptions

_CRITICAL = {"parse_failure_rate", "swap_consistency", "first_position_bias", "human_kappa"}
_LEVEL_WORDS = {
    "trusted": "Yes",
    "use_with_caution": "With caution",
    "not_trusted": "No",
    "insufficient_evidence": "Not enough evidence to say",
}


def _check(
    name: str,
    judge: str | None,
    ok: bool | None,
    numbers: tuple[float | None, float | None],
    message: str,
) -> Json:
    """One check; ``numbers`` is (observed value, threshold)."""
    value, threshold = numbers
    if ok is None:
        status = "skipped"
    elif ok:
        status = "pass"
    else:
        status = "fail" if name in _CRITICAL else "warn"
    return {
        "check": name,
        "judge": judge,
        "status": status,
        "value": value,
        "threshold": threshold,
        "message": message,
    }


def _section(report: Json, *path: str) -> Json:
    node: Any = report
    for key in path:
        if not isinstance(node, dict) or node.get("status") == "skipped":
            return {}
        node = node.get(key, {})
    return node if isinstance(node, dict) else {}


def _failure_checks(report: Json, t: Any) -> Iterator[Json]:
    for judge, f in report["summary"]["failures"].items():
        parse = f["parse_failure_rate"]
        yield _check(
            "parse_failure_rate",
            judge,
            None if parse is None else parse <= t.parse_failure_max,
            (parse, t.parse_failure_max),
            f"{judge}: {_pct(parse)} of answers could not be parsed",
        )
        rate = f["failure_rate"]
        if rate is not None and rate > t.parse_failure_max:
            yield _check(
                "failure_rate",
                judge,
                False,
                (rate, t.parse_failure_max),
                f"{judge}: {_pct(rate)} of judgments failed (all statuses but ok)",
            )


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _untested(section: Json, what: str) -> str:
    return f"{what} untested ({section.get('reason') or 'no data'})"


def _position_checks(report: Json, t: Any, alpha: float) -> Iterator[Json]:
    for judge, entry in _section(report, "bias", "position", "judges").items():
        swap = entry.get("swap_consistency", {})
        value = value_of(swap)
        message = (
            f"{judge}: same verdict in both orders on {_pct(value)} of {swap.get('n', 0)} pairs"
            if value is not None
            else _untested(swap, f"{judge}: swap consistency")
        )
        yield _check(
            "swap_consistency",
            judge,
            None if value is None else value >= t.swap_consistency_min,
            (value, t.swap_consistency_min),
            message,
        )
        first = entry.get("first_position_rate", {})
        p = first.get("p_holm")
        message = (
            f"{judge}: picks the first-shown response in {_pct(value_of(first))} of decisive "
            f"verdicts (Holm p = {p:.3g})"
            if p is not None
            else _untested(first, f"{judge}: first-position preference")
        )
        yield _check(
            "first_position_bias",
            judge,
            None if p is None else p >= alpha,
            (value_of(first), alpha),
            message,
        )


def _human_checks(report: Json, t: Any) -> Iterator[Json]:
    prefs = _section(report, "human_calibration", "preferences", "judges")
    for judge, entry in prefs.items():
        kappa = value_of(entry.get("pooled"))
        yield _check(
            "human_kappa",
            judge,
            None if kappa is None else kappa >= t.human_kappa_min,
            (kappa, t.human_kappa_min),
            f"{judge}: Cohen's kappa with human preferences = "
            f"{'n/a' if kappa is None else f'{kappa:.2f}'}",
        )
    scores = _section(report, "human_calibration", "scores", "judges")
    for judge, entry in scores.items():
        for dim, metric in entry.get("dimensions", {}).items():
            # Scores are ordinal: near misses count, so the quadratic-weighted kappa is judged.
            kappa = value_of(metric.get("weighted_quadratic"))
            yield _check(
                "human_kappa",
                judge,
                None if kappa is None else kappa >= t.human_kappa_min,
                (kappa, t.human_kappa_min),
                f"{judge}: quadratic-weighted kappa with human {dim} scores = "
                f"{'n/a' if kappa is None else f'{kappa:.2f}'}",
            )
    if not prefs and not scores:
        yield _check(
            "human_kappa",
            None,
            None,
            (None, t.human_kappa_min),
            "no human labels: agreement with humans is untested",
        )


def _agreement_checks(report: Json, t: Any) -> Iterator[Json]:
    blocks = {"preferences": _section(report, "agreement", "preferences")}
    blocks[f"{TOTAL} scores"] = _section(report, "agreement", "scores", "dimensions", TOTAL)
    for name, block in blocks.items():
        alpha = value_of(block.get("krippendorff_alpha"))
        if alpha is not None:
            yield _check(
                "inter_judge_agreement",
                None,
                alpha >= t.inter_judge_alpha_min,
                (alpha, t.inter_judge_alpha_min),
                f"judges' Krippendorff alpha on {name} = {alpha:.2f}",
            )


def _content_checks(report: Json) -> Iterator[Json]:
    for judge, entry in _section(report, "bias", "verbosity", "judges").items():
        for kind in ("scores", "preferences"):
            found = entry.get(kind, {}).get("detected")
            if found is not None:
                yield _check(
                    "verbosity_bias",
                    judge,
                    not found,
                    (None, None),
                    f"{judge}: {'significant' if found else 'no significant'} "
                    f"length effect on {kind}",
                )
    self_section = _section(report, "bias", "self_enhancement")
    by_preference = _section(report, "bias", "self_enhancement", "preferences", "judges")
    for kind, judges in (
        ("scores", self_section.get("judges", {})),
        ("preferences", by_preference),
    ):
        for judge, entry in judges.items():
            found = entry.get("detected")
            if found is None:
                continue
            excess = entry.get("excess", entry.get("relative_test", {}).get("excess"))
            yield _check(
                "self_enhancement",
                judge,
                not found,
                (excess, None),
                f"{judge}: {'favours' if found else 'does not favour'} its own family "
                f"({entry.get('family')}) on {kind}",
            )


def _retest_checks(report: Json, t: Any) -> Iterator[Json]:
    for judge, metric in _section(report, "reliability", "test_retest", "judges").items():
        icc = value_of(metric)
        if icc is not None:
            yield _check(
                "test_retest",
                judge,
                icc >= t.retest_icc_min,
                (icc, t.retest_icc_min),
                f"{judge}: test-retest ICC of the total = {icc:.2f}",
            )


def _local_checks(report: Json) -> Iterator[Json]:
    for judge in report["summary"]["judges"]:
        if judge.get("local_judge"):
            yield _check(
                "local_judge",
                judge["name"],
                False,
                (None, None),
                f"{judge['name']}: the bundled local judge (SmolLM2-135M) is a weak "
                "judge, fit for demos only",
            )


def _level(checks: list[Json]) -> str:
    statuses = {c["status"] for c in checks}
    if "fail" in statuses:
        return "not_trusted"
    if "warn" in statuses:
        return "use_with_caution"
    return "trusted" if "pass" in statuses else "insufficient_evidence"


def build_verdict(report: Json, options: AnalysisOptions) -> Json:
    """The ``verdict`` section of a report whose other sections are already computed."""
    t = options.thresholds
    checks = [
        *_failure_checks(report, t),
        *_position_checks(report, t, options.alpha),
        *_human_checks(report, t),
        *_agreement_checks(report, t),
        *_content_checks(report),
        *_retest_checks(report, t),
        *_local_checks(report),
    ]
    level = _level(checks)
    bad = [c["message"] for c in checks if c["status"] == "fail"]
    bad += [c["message"] for c in checks if c["status"] == "warn"]
    untested = sorted({c["message"] for c in checks if c["status"] == "skipped"})
    judges = {
        j["name"]: [c for c in checks if c["judge"] == j["name"]]
        for j in report["summary"]["judges"]
    }
    return {
        "level": level,
        "trustworthy": {"trusted": True, "not_trusted": False}.get(level),
        "answer": _answer(level, bad, untested),
        "reasons": bad,
        "checks": checks,
        "judges": {
            name: {
                "level": _level(cs),
                "reasons": [c["message"] for c in cs if c["status"] in ("fail", "warn")],
            }
            for name, cs in judges.items()
        },
    }


def _answer(level: str, bad: list[str], untested: list[str]) -> str:
    head = _LEVEL_WORDS[level]
    if level == "trusted":
        text = f"{head}: every check that could be run passed."
    elif level == "insufficient_evidence":
        text = f"{head}: no trust check could be run on these records."
    else:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        text = f"{head}: {shown}."
    if untested:
        text += " Untested: " + "; ".join(untested) + "."
    return text
