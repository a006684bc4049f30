"""Trust levels from evidence values: one test per rule of issue #12."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from jurybox.analysis.trust import (
    BiasTest,
    Estimate,
    JudgeEvidence,
    TrustThresholds,
    assess_judge,
    assess_panel,
    panel_line,
)

GOOD = JudgeEvidence(
    judge="good",
    n_items=100,
    n_judgments=200,
    failure_rate=0.0,
    has_labels=True,
    accuracy=Estimate(0.90, 0.85, 0.94),
    accuracy_parsed=Estimate(0.90, 0.85, 0.94),
    swap_consistency=0.92,
    swap_consistency_parsed=0.92,
    position=BiasTest(effect=0.02, p_adjusted=0.8),
    length=BiasTest(effect=-0.01, p_adjusted=0.9),
    retest_agreement=0.95,
)
UNLABELLED = replace(
    GOOD, judge="unlabelled", has_labels=False, accuracy=None, accuracy_parsed=None
)


def check(evidence: JudgeEvidence, name: str) -> str:
    return next(c.status for c in assess_judge(evidence).checks if c.check == name)


def test_accurate_consistent_judge_is_trusted() -> None:
    verdict = assess_judge(GOOD)
    assert verdict.level == "trusted"
    assert verdict.reason.startswith("accuracy 0.90 (95% CI 0.85–0.94), failures counted")
    assert verdict.reasons == ()
    assert {c.check for c in verdict.checks} == {
        "accuracy",
        "failure_rate",
        "swap_consistency",
        "position",
        "length",
        "retest",
    }


def test_trusted_needs_the_ci_lower_bound_to_clear_the_threshold() -> None:
    # 0.80 on few items: the point clears 0.70 but the interval does not.
    uncertain = replace(GOOD, accuracy=Estimate(0.80, 0.66, 0.90))
    verdict = assess_judge(uncertain)
    assert verdict.level == "use_with_caution"
    assert "not shown to clear 0.70" in verdict.reason
    higher_bar = TrustThresholds(min_accuracy=0.9)
    assert assess_judge(GOOD, higher_bar).level == "use_with_caution"


def test_accuracy_below_sixty_percent_is_not_trusted() -> None:
    weak = replace(GOOD, accuracy=Estimate(0.55, 0.48, 0.62), accuracy_parsed=None)
    verdict = assess_judge(weak)
    assert verdict.level == "not_trusted" and "below 0.60" in verdict.reason


def test_failures_counted_is_the_headline_not_the_parsed_figure() -> None:
    # Right on what it answers, but a third of the calls failed: counted as wrong it is 0.60.
    flaky = replace(
        GOOD,
        failure_rate=0.33,
        accuracy=Estimate(0.60, 0.55, 0.65),
        accuracy_parsed=Estimate(0.90, 0.85, 0.94),
    )
    verdict = assess_judge(flaky)
    assert verdict.level == "use_with_caution"
    accuracy = next(c for c in verdict.checks if c.check == "accuracy")
    assert accuracy.value == 0.60 and "0.90 over parsed verdicts" in accuracy.message
    assert check(flaky, "failure_rate") == "warn"


def test_without_labels_at_most_caution_and_accuracy_untested_said_plainly() -> None:
    verdict = assess_judge(UNLABELLED)
    assert verdict.level == "use_with_caution"
    assert verdict.reason.startswith("accuracy untested")
    assert verdict.checks[0].check == "accuracy" and verdict.checks[0].status == "skipped"


def test_nothing_testable_is_insufficient_evidence() -> None:
    bare = JudgeEvidence(
        judge="rubric", n_items=30, n_judgments=30, failure_rate=0.0, has_labels=False
    )
    verdict = assess_judge(bare)
    assert verdict.level == "insufficient_evidence" and "accuracy untested" in verdict.reason
    assert assess_judge(replace(bare, n_judgments=0, n_items=0)).level == "insufficient_evidence"


def test_consistency_checks_only_lower_a_level() -> None:
    # Perfect consistency does not lift an unlabelled judge, nor a weakly accurate one.
    assert assess_judge(replace(UNLABELLED, swap_consistency=1.0)).level == "use_with_caution"
    middling = replace(GOOD, accuracy=Estimate(0.75, 0.65, 0.83))
    assert assess_judge(replace(middling, retest_agreement=1.0)).level == "use_with_caution"
    # A warning lowers trusted to caution; a failure lowers anything to not_trusted.
    assert assess_judge(replace(GOOD, swap_consistency=0.7)).level == "use_with_caution"
    assert assess_judge(replace(GOOD, swap_consistency=0.3)).level == "not_trusted"
    assert assess_judge(replace(GOOD, retest_agreement=0.7)).level == "use_with_caution"
    assert assess_judge(replace(UNLABELLED, retest_agreement=0.4)).level == "not_trusted"


def test_position_bias_needs_significance_and_size() -> None:
    small = replace(GOOD, position=BiasTest(effect=0.05, p_adjusted=0.001))
    assert check(small, "position") == "pass"
    moderate = replace(GOOD, position=BiasTest(effect=0.15, p_adjusted=0.01))
    assert assess_judge(moderate).level == "use_with_caution"
    not_significant = replace(GOOD, position=BiasTest(effect=0.5, p_adjusted=0.2))
    assert assess_judge(not_significant).level == "trusted"
    first_shown = replace(GOOD, position=BiasTest(effect=1.0, p_adjusted=1e-12))
    verdict = assess_judge(first_shown)
    assert verdict.level == "not_trusted" and "first-shown" in verdict.reason


def test_position_is_skipped_where_positions_never_existed() -> None:
    rating = replace(
        GOOD,
        positions_shown=False,
        position=BiasTest(effect=0.9, p_adjusted=1e-9),  # an artefact of tie-breaking
        swap_consistency=None,
        swap_consistency_parsed=None,
    )
    verdict = assess_judge(rating)
    assert verdict.level == "trusted"
    position = next(c for c in verdict.checks if c.check == "position")
    assert position.status == "skipped" and "never saw both" in position.message


def test_length_conditioned_on_labels_can_fail_but_a_raw_one_only_warns() -> None:
    longer = BiasTest(effect=0.8, p_adjusted=1e-9)
    assert assess_judge(replace(GOOD, length=longer)).level == "not_trusted"
    raw = BiasTest(effect=0.8, p_adjusted=1e-9, conditioned_on_truth=False)
    verdict = assess_judge(replace(UNLABELLED, length=raw))
    assert verdict.level == "use_with_caution"
    length = next(c for c in verdict.checks if c.check == "length")
    assert length.status == "warn" and "not conditioned on labels" in length.message
    assert verdict.reason.startswith("accuracy untested") and "longer" in verdict.reason


def test_an_accurate_judge_is_not_downgraded_by_a_raw_length_effect() -> None:
    # On data whose gold is mostly the shorter, being right looks like a taste for brevity.
    raw = BiasTest(effect=-0.6, p_adjusted=1e-9, conditioned_on_truth=False)
    verdict = assess_judge(replace(GOOD, length=raw))
    assert verdict.level in ("trusted", "use_with_caution")
    assert check(replace(GOOD, length=raw), "length") == "warn"


def test_failure_rate_is_a_check_and_all_failed_is_not_trusted() -> None:
    assert check(replace(GOOD, failure_rate=0.02), "failure_rate") == "pass"
    assert assess_judge(replace(GOOD, failure_rate=0.1)).level == "use_with_caution"
    assert assess_judge(replace(GOOD, failure_rate=0.6)).level == "not_trusted"
    silent = JudgeEvidence(
        judge="silent",
        n_items=100,
        n_judgments=200,
        failure_rate=1.0,
        has_labels=True,
        accuracy=Estimate(0.0, 0.0, 0.02),
    )
    verdict = assess_judge(silent)
    assert verdict.level == "not_trusted" and "every one of its 200 calls failed" in verdict.reason
    unlabelled = replace(silent, has_labels=False, accuracy=None)
    assert assess_judge(unlabelled).level == "not_trusted"


def test_kappa_stands_in_for_accuracy_on_ordinal_scores() -> None:
    scored = replace(GOOD, accuracy=None, accuracy_parsed=None, kappa=Estimate(0.6, 0.5, 0.7))
    verdict = assess_judge(scored)
    assert verdict.level == "trusted" and verdict.reason.startswith("κ vs humans 0.60")
    weak = replace(scored, kappa=Estimate(0.1, 0.0, 0.2))
    assert assess_judge(weak).level == "not_trusted"
    assert assess_judge(replace(scored, kappa=Estimate(0.45, 0.3, 0.6))).level == (
        "use_with_caution"
    )


def test_reasons_are_ordered_by_severity() -> None:
    mixed = replace(
        GOOD,
        failure_rate=0.08,  # warn
        swap_consistency=0.4,  # fail
        retest_agreement=0.7,  # warn
    )
    verdict = assess_judge(mixed)
    statuses = [c.status for c in verdict.checks]
    assert statuses == sorted(statuses, key=["fail", "warn", "skipped", "pass"].index)
    assert verdict.checks[0].check == "swap_consistency"
    assert verdict.reason == verdict.checks[0].message
    assert [c.check for c in verdict.checks[1:3]] == ["failure_rate", "retest"]


def test_panel_line_names_the_trusted_judges() -> None:
    panel = assess_panel(
        [
            replace(GOOD, judge="GPT-4"),
            replace(GOOD, judge="PaLM2", accuracy=Estimate(0.5, 0.45, 0.55)),
            replace(UNLABELLED, judge="ChatGPT"),
            replace(GOOD, judge="LLaMA2", swap_consistency=0.2),
        ]
    )
    assert panel.line == "1 of 4 judges can be trusted: GPT-4"
    assert panel.trusted == ("GPT-4",)
    assert [j.judge for j in panel.judges] == ["GPT-4", "ChatGPT", "LLaMA2", "PaLM2"]
    assert panel_line(panel.judges[1:2]) == "0 of 1 judge can be trusted"
    with pytest.raises(ValueError, match="no judges"):
        assess_panel([])


def test_bad_evidence_and_thresholds_are_refused() -> None:
    with pytest.raises(ValueError, match="interval"):
        Estimate(0.9, 0.5, 0.8)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        BiasTest(effect=1.5, p_adjusted=0.1)
    with pytest.raises(ValueError, match="rates"):
        replace(GOOD, failure_rate=1.2)
    with pytest.raises(ValueError, match="has_labels"):
        replace(GOOD, has_labels=False)
    with pytest.raises(ValidationError):
        TrustThresholds(min_accuracy=1.5)
    with pytest.raises(ValidationError, match="wrong order"):
        TrustThresholds(fail_accuracy=0.8, min_accuracy=0.7)
    with pytest.raises(ValidationError):
        TrustThresholds(unknown=1)  # type: ignore[call-arg]


def test_each_check_names_the_limit_its_status_was_decided_against() -> None:
    """A judge failed at swap consistency 0.30 is not trusted below 0.60, not "(limit 0.80)"."""

    def found(evidence: JudgeEvidence, name: str) -> tuple[str, float | None, float | None, str]:
        c = next(c for c in assess_judge(evidence).checks if c.check == name)
        return c.status, c.threshold, c.applied, c.message

    status, threshold, applied, message = found(
        replace(GOOD, swap_consistency=0.3), "swap_consistency"
    )
    assert (status, threshold, applied) == ("fail", 0.8, 0.6)
    assert message.endswith("(limit 0.60)")
    assert found(replace(GOOD, swap_consistency=0.7), "swap_consistency")[2:] == (
        0.8,
        "swap consistency 0.70 (0.92 over parsed pairs), failures counted (limit 0.80)",
    )
    assert found(replace(GOOD, failure_rate=0.6), "failure_rate")[2:] == (
        0.5,
        "60% of calls failed (limit 50%)",
    )
    assert found(replace(GOOD, retest_agreement=0.4), "retest")[2:] == (
        0.5,
        "test-retest agreement 0.40 (limit 0.50)",
    )
    assert found(replace(GOOD, accuracy=Estimate(0.5, 0.4, 0.6)), "accuracy")[1:3] == (0.7, 0.6)
    assert found(GOOD, "accuracy")[1:3] == (0.7, 0.7)
    strong = replace(GOOD, position=BiasTest(effect=0.5, p_adjusted=0.001))
    assert found(strong, "position")[:3] == ("fail", 0.1, 0.3)
