"""``compare_runs`` on runs with planted differences: the paired figures find them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.analysis import build_frame
from jurybox.analysis.compare import CompareOptions, RunInput, compare_runs, pair_judges
from jurybox.analysis.score_study import score_study
from jurybox.records import Item, JudgeRecord, Status
from jurybox.reporting.render.compare import render_compare_html, render_compare_markdown
from jurybox.stats.paired import paired_proportion_difference, paired_share_difference

ARMS = ("control", "treatment")
ORDERS = {"control_first": ARMS, "treatment_first": ARMS[::-1]}


def _pairwise(judge: str, qid: str, order: str, winner: str) -> JudgeRecord:
    shown = ORDERS[order]
    return JudgeRecord(
        key=f"{qid}|{judge}|{order}|r0",
        run_id="run",
        query_id=qid,
        judge_name=judge,
        judge_model="m",
        judge_vendor="fake",
        mode="pairwise",
        presentation_order=order,
        positions={"A": shown[0], "B": shown[1]},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        preference="A" if shown[0] == winner else "B",
        preferred_arm=winner,
    )


def _pairwise_run(judge: str, n_right: int, n_items: int = 40) -> list[JudgeRecord]:
    """Gold is control everywhere; the judge picks it on the first ``n_right`` items."""
    return [
        _pairwise(judge, f"q{i:02d}", order, "control" if i < n_right else "treatment")
        for i in range(n_items)
        for order in ORDERS
    ]


def _run(label: str, records: list[JudgeRecord], **frame_args: Any) -> RunInput:
    return RunInput(label, f"{label}.jsonl", build_frame(records, **frame_args), len(records))


GOLD = {f"q{i:02d}": {"preferred_arm": "control"} for i in range(40)}


def test_judges_pair_by_name_then_by_order() -> None:
    pairs, unpaired = pair_judges(["x", "y", "z"], ["y", "w"])
    assert [(p.judge_a, p.judge_b, p.matched_by) for p in pairs] == [
        ("y", "y", "name"),
        ("x", "w", "order"),
    ]
    assert unpaired == ["A:z"]


def test_planted_accuracy_gain_is_found_over_items_with_the_sign_test() -> None:
    a = _run("A", _pairwise_run("judge_v1", 20), human=GOLD)
    b = _run("B", _pairwise_run("judge_v2", 32), human=GOLD)
    report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
    (judge,) = report.comparisons[0].judges
    assert (judge.judge_a, judge.judge_b, judge.matched_by) == ("judge_v1", "judge_v2", "order")
    verdicts = judge.verdicts
    assert verdicts is not None and verdicts.accuracy is not None
    acc = verdicts.accuracy
    assert (acc.n_items, acc.n_judgments_a, acc.n_judgments_b) == (40, 80, 80)
    assert (acc.accuracy_a.value, acc.accuracy_b.value) == (0.5, 0.8)
    assert acc.accuracy_a.n_clusters == 40
    assert acc.difference.value == pytest.approx(0.3)
    assert acc.difference.n == 40
    assert acc.difference.ci_low is not None and acc.difference.ci_high is not None
    assert 0 < acc.difference.ci_low < 0.3 < acc.difference.ci_high
    # 12 items (24 judgments) changed, all in B's favour: the sign test over items,
    # exact binomial p = 2 · 0.5^12 (over the 24 judgments it was 2 · 0.5^24)
    assert (acc.mcnemar.b, acc.mcnemar.c) == (0, 12)
    assert acc.mcnemar.p_value == pytest.approx(2 * 0.5**12)
    assert acc.mcnemar.method is not None and acc.mcnemar.method.startswith("sign test over")
    assert "exact" in acc.mcnemar.method
    assert verdicts.n_changed == 24
    assert [u.item_id for u in verdicts.changed[:2]] == ["q20", "q20"]
    assert verdicts.changed[0].gold == "control"
    # every item has the same winner in both orders in both runs: no position change to test
    assert verdicts.position is not None
    assert verdicts.position.difference.value == 0.0
    assert verdicts.position.mcnemar.value is None
    assert "no discordant pairs" in (verdicts.position.mcnemar.reason or "")
    text = json.dumps(report.model_dump(mode="json"), allow_nan=False)
    assert '"matched_by": "order"' in text


def test_many_changed_items_use_the_asymptotic_sign_test() -> None:
    a = _run("A", _pairwise_run("j", 5), human=GOLD)
    b = _run("B", _pairwise_run("j", 40), human=GOLD)
    acc = compare_runs([a, b]).comparisons[0].judges[0].verdicts.accuracy  # type: ignore[union-attr]
    assert acc is not None and acc.mcnemar.n_discordant == 35
    assert acc.mcnemar.method is not None and "asymptotic" in acc.mcnemar.method
    assert acc.mcnemar.p_value == pytest.approx(sps.chi2.sf(35.0, 1))


def test_the_accuracy_change_counts_items_not_their_two_orders() -> None:
    """20 items, both orders alike: the interval is the one over 20 items, wider than the
    paired interval over the 40 judgments it replaced, and the figures say (<30 items)."""
    gold = {f"q{i:02d}": {"preferred_arm": "control"} for i in range(20)}
    a = _run("A", _pairwise_run("j", 10, n_items=20), human=gold)
    b = _run("B", _pairwise_run("j", 14, n_items=20), human=gold)
    report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
    acc = report.comparisons[0].judges[0].verdicts.accuracy  # type: ignore[union-attr]
    assert acc is not None and acc.n_items == acc.difference.n == 20
    x = np.array([1.0] * 10 + [0.0] * 10)
    y = np.array([1.0] * 14 + [0.0] * 6)
    by_item = paired_share_difference(x, y)
    assert (acc.difference.ci_low, acc.difference.ci_high) == pytest.approx(
        (by_item.ci_low, by_item.ci_high)
    )
    by_judgment = paired_proportion_difference(np.repeat(x, 2) > 0, np.repeat(y, 2) > 0)
    assert by_item.ci_high - by_item.ci_low > 1.2 * (by_judgment.ci_high - by_judgment.ci_low)
    markdown = render_compare_markdown(report)
    row = next(line for line in markdown.splitlines() if line.startswith("| j | 20 (40 / 40)"))
    assert row.count("(<30 items)") == 3  # accuracy A, B and B − A
    (headline,) = report.comparisons[0].headlines or []
    assert headline.n_items == 20 and headline.n_units is None


def test_retests_count_in_their_items_share() -> None:
    """A retest of an item (a third and fourth judgment) weighs inside its item, not as more
    items: B got q05 wrong on a retest, so q05's share in B is 2/4."""
    a_records = _pairwise_run("j", 10, n_items=20)
    retests = [
        dataclasses.replace(
            _pairwise("j", "q05", order, "treatment"),
            retest=True,
            key=f"q05|j|{order}|r0|retest",
        )
        for order in ORDERS
    ]
    gold = {f"q{i:02d}": {"preferred_arm": "control"} for i in range(20)}
    a = _run("A", a_records, human=gold)
    b = _run("B", a_records + retests, human=gold)
    acc = compare_runs([a, b]).comparisons[0].judges[0].verdicts.accuracy  # type: ignore[union-attr]
    assert acc is not None
    assert (acc.n_items, acc.n_judgments_a, acc.n_judgments_b) == (20, 40, 42)
    assert acc.difference.value == pytest.approx(-0.5 / 20)
    assert (acc.mcnemar.b, acc.mcnemar.c) == (1, 0)


def _criterion(qid: str, arm: str, verdict: str) -> JudgeRecord:
    return JudgeRecord(
        key=f"{qid}|judge|{arm}|r0|c:helpful",
        run_id="run",
        query_id=qid,
        judge_name="judge",
        judge_model="m",
        judge_vendor="fake",
        mode="criterion",
        presentation_order=arm,
        positions={"A": arm},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        criterion="helpful",
        verdict=verdict,
    )


def _one_order(records: list[JudgeRecord]) -> list[JudgeRecord]:
    return [r for r in records if r.presentation_order == "control_first"]


def test_the_runs_agreement_counts_items_not_their_two_orders() -> None:
    """40 items, both orders alike in each run: agreement and kappa between the runs over the
    80 units have the intervals of the 40 items alone, not the narrower ones of 80 units."""
    mixed = [*range(0, 40, 3), *range(1, 40, 5)]
    a_records = _pairwise_run("j", 25)
    b_records = [  # B flips the winner on some items (both orders), so kappa is neither 0 nor 1
        _pairwise(r.judge_name, r.query_id, r.presentation_order or "", "treatment")
        if int(r.query_id[1:]) in mixed
        else r
        for r in a_records
    ]

    def verdicts(a: list[JudgeRecord], b: list[JudgeRecord]) -> Any:
        report = compare_runs([_run("A", a), _run("B", b)], CompareOptions(n_bootstrap=400))
        return report.comparisons[0].judges[0].verdicts

    both, single = (
        verdicts(a_records, b_records),
        verdicts(_one_order(a_records), _one_order(b_records)),
    )
    assert (both.n_units, both.n_items, single.n_units, single.n_items) == (80, 40, 40, 40)
    assert both.kappa.value == pytest.approx(single.kappa.value)
    assert 0 < both.kappa.value < 1
    for metric in ("kappa", "agreement"):
        two, one = getattr(both, metric), getattr(single, metric)
        assert (two.ci_low, two.ci_high) == pytest.approx((one.ci_low, one.ci_high)), metric
    assert both.kappa.method is not None and "bootstrap over items" in both.kappa.method
    assert both.agreement.n_clusters == 40


def test_criterion_verdicts_are_compared_per_arm_against_the_arm_label() -> None:
    """Human: control passes, treatment fails. A says Pass to everything; B gets treatment
    right on the first 10 items. Units are item × arm; there is no order to be consistent in."""
    human = {f"q{i:02d}": {"verdict": {"control": "Pass", "treatment": "Fail"}} for i in range(20)}
    a = [_criterion(f"q{i:02d}", arm, "Pass") for i in range(20) for arm in ARMS]
    b = [
        _criterion(f"q{i:02d}", arm, "Fail" if arm == "treatment" and i < 10 else "Pass")
        for i in range(20)
        for arm in ARMS
    ]
    report = compare_runs([_run("A", a, human=human), _run("B", b, human=human)])
    verdicts = report.comparisons[0].judges[0].verdicts
    assert verdicts is not None and verdicts.accuracy is not None
    assert verdicts.n_units == 40 and verdicts.n_changed == 10
    assert (verdicts.accuracy.accuracy_a.value, verdicts.accuracy.accuracy_b.value) == (0.5, 0.75)
    assert verdicts.accuracy.n_items == 20  # both arms of an item are one unit of accuracy
    assert verdicts.position is None
    assert {unit.gold for unit in verdicts.changed} == {"Fail"}


# --- ADR-016: a rubric run whose dimensions judges agree on, a holistic run they do not -------

N_ITEMS = 40


def _items(rng: np.random.Generator) -> list[Item]:
    lengths = rng.integers(40, 1200, size=N_ITEMS)
    return [
        Item(f"i{i:02d}", f"question {i}", {"only": "x" * int(n)}) for i, n in enumerate(lengths)
    ]


def _scored(judge: str, item: Item, scores: dict[str, float], arm: str = "only") -> JudgeRecord:
    overall = float(np.mean(list(scores.values())))
    return JudgeRecord(
        key=f"{item.id}|{judge}|{arm}|r0",
        run_id="run",
        query_id=item.id,
        judge_name=judge,
        judge_model="m",
        judge_vendor="fake",
        mode="rubric",
        presentation_order=arm,
        positions={"A": arm},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        scores={arm: scores},
        overall={arm: overall},
    )


def _study_runs() -> tuple[RunInput, RunInput]:
    rng = np.random.default_rng(16)
    items = _items(rng)
    quality = rng.normal(6, 1.5, size=N_ITEMS)
    lengths = np.array([len(item.responses["only"]) for item in items])
    concise = 10 - lengths / 150
    judges = ("j1", "j2", "j3")
    rubric = [
        _scored(
            judge,
            item,
            {
                "accuracy": float(quality[i] + rng.normal(0, 0.4)),
                "conciseness": float(concise[i] + rng.normal(0, 0.4)),
            },
        )
        for judge in judges
        for i, item in enumerate(items)
    ]
    holistic = [
        _scored(judge, item, {"overall": float(quality[i] + rng.normal(0, 2.5))})
        for judge in judges
        for i, item in enumerate(items)
    ]
    return _run("A", rubric, items=items), _run("B", holistic, items=items)


def test_adr016_study_finds_the_planted_differences() -> None:
    report = compare_runs(list(_study_runs()), CompareOptions(n_bootstrap=400, seed=3))
    study = report.comparisons[0].study
    assert study is not None, report.comparisons[0].study_skipped
    assert (study.rubric_run, study.holistic_run, study.holistic_dimension) == ("A", "B", "overall")
    by_dim = {row.dimension: row for row in study.dimensions}
    assert by_dim["accuracy"].lower_variance is True
    assert by_dim["conciseness"].lower_variance is True
    diff = study.ranking_stability_difference
    assert diff.value is not None and diff.ci_low is not None and diff.ci_low > 0
    rubric = next(s for s in report.studies if s.run == "A")
    assert rubric.conciseness_dimension == "conciseness"
    rho = rubric.conciseness_length
    assert rho is not None and rho.ci_high is not None and rho.ci_high < 0
    w = rubric.concordance
    assert w.value is not None and w.value > 0.5 and w.null_expectation == pytest.approx(1 / 3)
    assert w.decision == "above chance" and w.p_value is not None and w.p_value < 0.01
    # One response per item: no item pairs a longer with a shorter response.
    assert rubric.conciseness_paired is not None and rubric.conciseness_paired.value is None
    assert rubric.conciseness_paired.reason
    holistic = next(s for s in report.studies if s.run == "B")
    alphas = {row.dimension: row.alpha.value for row in holistic.reliability}
    assert alphas["total"] is not None and alphas["total"] < by_dim["accuracy"].alpha  # type: ignore[operator]


def _variance_runs(noise_var: float, true_sd: float) -> tuple[RunInput, RunInput]:
    """Rubric run A (one dimension: true scores of SD ``true_sd``, reviewer noise variance
    ``noise_var``) and holistic run B (SD 1.5, noise variance 1), 3 judges, 60 items."""
    rng = np.random.default_rng(8)
    items = [Item(f"i{i:02d}", "q", {"only": "x"}) for i in range(60)]
    runs = []
    for dim, sd, var in (("accuracy", true_sd, noise_var), ("overall", 1.5, 1.0)):
        truth = rng.normal(6, sd, size=len(items))
        records = [
            _scored(judge, item, {dim: float(truth[i] + rng.normal(0, var**0.5))})
            for judge in ("j1", "j2", "j3")
            for i, item in enumerate(items)
        ]
        runs.append(_run("A" if dim == "accuracy" else "B", records, items=items))
    return runs[0], runs[1]


@pytest.mark.parametrize(
    ("noise_var", "true_sd", "expected"),
    [(1.0, 3.0, None), (0.5, 0.6, True)],  # the alpha rule said True, then False, here
)
def test_lower_variance_reads_inter_reviewer_variance_not_alpha(
    noise_var: float, true_sd: float, expected: bool | None
) -> None:
    report = compare_runs(list(_variance_runs(noise_var, true_sd)), CompareOptions(seed=2))
    study = report.comparisons[0].study
    assert study is not None, report.comparisons[0].study_skipped
    (row,) = study.dimensions
    assert row.lower_variance is expected
    assert row.variance.n_items == 60 and row.variance.ratio is not None
    assert row.variance.ratio == pytest.approx(noise_var, abs=0.3)


def _two_arm_conciseness(penalty: float) -> RunInput:
    """30 items × two responses of different lengths; conciseness falls by ``penalty`` points
    per 100 characters, plus an item effect both responses of the item share."""
    rng = np.random.default_rng(5)
    records, items = [], []
    for i in range(30):
        short, long_ = int(rng.integers(50, 400)), int(rng.integers(500, 900))
        item = Item(f"i{i:02d}", "q", {"a": "x" * short, "b": "y" * long_})
        items.append(item)
        shared = rng.normal(0, 2)  # what makes an item's two responses alike
        for judge in ("j1", "j2", "j3"):
            for arm, n in (("a", short), ("b", long_)):
                score = 6 + shared - penalty * n / 100 + rng.normal(0, 0.5)
                records.append(_scored(judge, item, {"conciseness": float(score)}, arm))
    return _run("A", records, items=items)


def test_conciseness_vs_length_is_one_sided_and_paired_by_item() -> None:
    options = CompareOptions(n_bootstrap=200)
    planted = score_study(_two_arm_conciseness(0.3), options)
    assert planted is not None and planted.conciseness_paired is not None
    test = planted.conciseness_paired
    assert (test.n, test.alternative) == (30, "less")
    assert test.method is not None and "longer response − the shorter's, one-sided" in test.method
    assert test.p_value is not None and test.p_value < 0.001
    # Longer responses scored *more* concise: the one-sided test does not call that a finding.
    reversed_ = score_study(_two_arm_conciseness(-0.3), options)
    assert reversed_ is not None and reversed_.conciseness_paired is not None
    assert reversed_.conciseness_paired.p_value is not None
    assert reversed_.conciseness_paired.p_value > 0.99


def test_conciseness_shows_its_per_item_difference_with_its_sign() -> None:
    """The study's table showed '30 items, p 0.000' under 'longer − shorter' with no
    difference: the median per-item difference is kept and shown, signed."""
    options = CompareOptions(n_bootstrap=200)
    lower = score_study(_two_arm_conciseness(0.3), options)
    higher = score_study(_two_arm_conciseness(-0.3), options)
    assert lower is not None and lower.conciseness_paired is not None
    assert higher is not None and higher.conciseness_paired is not None
    median = lower.conciseness_paired.median_difference
    assert median is not None and median < -0.5
    assert (higher.conciseness_paired.median_difference or 0) > 0.5
    report = compare_runs(
        [_two_arm_conciseness(0.3), dataclasses.replace(_two_arm_conciseness(0.3), label="B")],
        options,
    )
    markdown = render_compare_markdown(report)
    assert f"median {median:.2f}, 30 items, p" in markdown.replace("−", "-")


def test_compare_pages_escape_user_text_and_load_nothing(tmp_path: Path) -> None:
    a = _run("A", _pairwise_run("<script>alert(1)</script>", 20), human=GOLD)
    b = _run("B", _pairwise_run("<script>alert(1)</script>", 30), human=GOLD)
    b = dataclasses.replace(b, report=str(tmp_path / "runs" / "b x" / "report.html"))
    report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
    html = render_compare_html(report, tmp_path / "out")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "default-src 'none'" in html
    # B's items link to its own report, from where the page is written; A has none to link
    assert 'href="../runs/b%20x/report.html#items?item=q20">q20</a>' in html
    assert "A: no report.html found in the run folder" in html
    assert "`jurybox analyze RUN` (into RUN/report)" in html  # analyze's default folder
    markdown = render_compare_markdown(report)
    assert "<script>" not in markdown
    assert "Verdict accuracy" in markdown


def test_score_differences_count_items_not_their_responses() -> None:
    """Each item's two responses scored alike: every figure of the score table is the one of
    the items alone (one response each), not that of twice as many independent responses."""
    arms = ("left", "right")
    items = [Item(f"i{i:02d}", f"question {i}", dict.fromkeys(arms, "x")) for i in range(16)]

    def run(label: str, base: float, step: float, per_arm: tuple[str, ...]) -> RunInput:
        records = [
            _scored("j", item, {"quality": base + (i % 5) * step + (i % 3) * 0.5}, arm=arm)
            for i, item in enumerate(items)
            for arm in per_arm
        ]
        return _run(label, records, items=items)

    def scores(per_arm: tuple[str, ...]) -> Any:
        a, b = run("A", 5.0, 0.2, per_arm), run("B", 5.5, 0.3, per_arm)
        report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
        judge = report.comparisons[0].judges[0]
        return next(row for row in judge.scores if row.dimension == "quality")

    two, one = scores(arms), scores(arms[:1])
    assert (two.n_units, two.n_items, one.n_units, one.n_items) == (32, 16, 16, 16)
    for metric in ("mean_difference", "shift", "correlation"):
        got, alone = getattr(two, metric), getattr(one, metric)
        assert got.value == pytest.approx(alone.value), metric
        assert (got.ci_low, got.ci_high) == pytest.approx((alone.ci_low, alone.ci_high)), metric
    assert two.wilcoxon.p_value == pytest.approx(one.wilcoxon.p_value)
    assert two.mean_difference.p_value == pytest.approx(one.mean_difference.p_value)
