"""Every public estimator raises ValueError, saying why, on empty or degenerate input."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import jurybox.stats as st

NAN = np.nan
CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("percent_agreement", lambda: st.percent_agreement([], []), "empty"),
    ("percent_agreement", lambda: st.percent_agreement([1, 2], [1]), "same length"),
    ("cohen_kappa", lambda: st.cohen_kappa([], []), "empty"),
    ("cohen_kappa", lambda: st.cohen_kappa([1, 1, 1], [1, 1, 1]), "only one category"),
    ("cohen_kappa", lambda: st.cohen_kappa(np.array([1, None]), [1, 2]), "missing"),
    # issue 33: a constant rater gives kappa 0 whatever the other does; n = 1 is the same case
    ("cohen_kappa", lambda: st.cohen_kappa([1, 1, 1], [1, 2, 2], rng=0), "rater 1 gave every"),
    ("cohen_kappa", lambda: st.cohen_kappa([1, 2, 3], [2, 2, 2], rng=0), "rater 2 gave every"),
    (
        "cohen_kappa",
        lambda: st.cohen_kappa([3], [4], "linear", categories=[1, 2, 3, 4, 5]),
        "every",
    ),
    # kappa 1 from a few items: no interval rather than [1, 1]
    ("cohen_kappa", lambda: st.cohen_kappa([1, 2] * 9, [1, 2] * 9, rng=0), "agrees exactly"),
    (
        "cohen_kappa",
        lambda: st.cohen_kappa([1, 2] * 9, [1, 2] * 9, interval="asymptotic"),
        "agrees exactly",
    ),
    ("cohen_kappa", lambda: st.cohen_kappa([1, 2], [1, 2], interval="exact"), "interval must"),  # type: ignore[arg-type]
    ("cohen_kappa_table", lambda: st.cohen_kappa_table([[3, 2], [0, 0]]), "rater 1 gave every"),
    ("cohen_kappa_table", lambda: st.cohen_kappa_table([[0, 0], [0, 0]]), "empty"),
    ("cohen_kappa_table", lambda: st.cohen_kappa_table([[4, 0], [0, 0]]), "only one category"),
    ("cohen_kappa_table", lambda: st.cohen_kappa_table([[1, 2, 3]]), "square"),
    # every pair at once: degenerate pairs come back None (the reference decides them)
    ("cohen_kappa_pairs", lambda: st.cohen_kappa_pairs([[0.5, 1.0]], [1, 2]), "integer matrix"),
    ("cohen_kappa_pairs", lambda: st.cohen_kappa_pairs([[0, 2]], [1, 2]), "-1 \\(missing\\)"),
    ("cohen_kappa_tables", lambda: st.cohen_kappa_tables([[1, 2], [3, 4]], [1, 2]), "n × 2 × 2"),
    ("percent_agreement_pairs", lambda: st.percent_agreement_pairs([0, 1], 2), "integer matrix"),
    ("clustered_proportion", lambda: st.clustered_proportion([]), "empty"),
    ("clustered_proportion", lambda: st.clustered_proportion([0.5, 2.0]), r"\[0, 1\]"),
    ("clustered_proportion", lambda: st.clustered_proportion([1, 0], [1]), "one entry per"),
    ("clustered_proportion", lambda: st.clustered_proportion([1.0, np.nan]), "NaN"),
    ("effective_counts", lambda: st.effective_counts([1.0, np.inf]), "infinite"),
    ("fleiss_kappa", lambda: st.fleiss_kappa(np.empty((0, 3))), "empty"),
    ("fleiss_kappa", lambda: st.fleiss_kappa([[3, 0], [3, 0]]), "one category"),
    ("fleiss_kappa", lambda: st.fleiss_kappa([[1, 0], [0, 1]]), "at least 2 ratings"),
    ("fleiss_kappa", lambda: st.fleiss_kappa([[2, 1], [1, 1]]), "same number of ratings"),
    ("krippendorff_alpha", lambda: st.krippendorff_alpha(np.empty((2, 0))), "non-empty"),
    ("krippendorff_alpha", lambda: st.krippendorff_alpha([[1, 2, 3]]), "at least 2 raters"),
    ("krippendorff_alpha", lambda: st.krippendorff_alpha([[1, 1], [1, 1]]), "no variation"),
    ("krippendorff_alpha", lambda: st.krippendorff_alpha([[1, NAN], [NAN, 2]]), "no unit"),
    (
        "krippendorff_alpha",
        lambda: st.krippendorff_alpha([[1.0, 2.0, np.inf], [1.0, 2.0, 3.0]], "interval"),
        "infinite",
    ),
    ("krippendorff_alpha", lambda: st.krippendorff_alpha(np.array([[1.0, np.inf]] * 2)), "inf"),
    ("icc", lambda: st.icc([[1, 2], [2, 1]]), "same mean"),
    ("icc", lambda: st.icc([[1, 2], [1, 2], [1, 2]]), "neither between-target"),
    ("gwet_ac", lambda: st.gwet_ac(np.empty((2, 0))), "non-empty"),
    ("gwet_ac", lambda: st.gwet_ac([[None, None], [None, None]]), "no labels"),
    ("gwet_ac", lambda: st.gwet_ac([[1, 1], [1, 1]]), "at least 2 categories"),
    ("gwet_ac", lambda: st.gwet_ac([[1, None], [None, 2]]), "two or more ratings"),
    ("gwet_ac", lambda: st.gwet_ac([[1, 2], [1, 3]], categories=[1, 2]), "not in categories"),
    ("gwet_ac_counts", lambda: st.gwet_ac_counts([[1.5, 0], [0, 2]]), "whole numbers"),
    ("gwet_ac_counts", lambda: st.gwet_ac_counts([[2, 0]], "cubic"), "weights"),  # type: ignore[arg-type]
    ("krippendorff_alpha_ci", lambda: st.krippendorff_alpha_ci([[1, 1], [1, 1]]), "no variation"),
    (
        "krippendorff_alpha_ci",
        lambda: st.krippendorff_alpha_ci([[1, 2], [1, 2]], n_bootstrap=50),
        "n_bootstrap",
    ),
    (
        "krippendorff_alpha_ci",
        lambda: st.krippendorff_alpha_ci([[1, 1, 1, 1, 2], [1, 1, 1, 1, 2]], rng=0),
        "agrees exactly",
    ),
    ("icc", lambda: st.icc(np.empty((0, 3))), "empty"),
    ("icc", lambda: st.icc([[1], [2], [3]]), "at least 2 raters"),
    ("icc", lambda: st.icc([[2, 2], [2, 2], [2, 2]]), "zero"),
    ("icc", lambda: st.icc([[1.0, NAN], [2.0, 3.0]]), "NaN"),
    ("cronbach_alpha", lambda: st.cronbach_alpha(np.empty((0, 2))), "empty"),
    ("cronbach_alpha", lambda: st.cronbach_alpha([[1], [2]]), "at least 2 items"),
    ("cronbach_alpha", lambda: st.cronbach_alpha([[3, 3], [3, 3]]), "zero variance"),
    ("wilcoxon_signed_rank", lambda: st.wilcoxon_signed_rank([]), "empty"),
    ("wilcoxon_signed_rank", lambda: st.wilcoxon_signed_rank([1, 2], [1, 2]), "every difference"),
    ("cohens_d_paired", lambda: st.cohens_d_paired([], []), "empty"),
    ("cohens_d_paired", lambda: st.cohens_d_paired([1, 2, 3], [0, 1, 2]), "zero variance"),
    ("rank_biserial", lambda: st.rank_biserial([]), "empty"),
    ("rank_biserial", lambda: st.rank_biserial([0, 0, 0]), "every difference"),
    ("tost_paired", lambda: st.tost_paired([], [], 1.0), "empty"),
    ("tost_paired", lambda: st.tost_paired([1, 2, 3], [0, 1, 2], 1.0), "zero variance"),
    ("tost_paired", lambda: st.tost_paired([1, 2, 4], [0, 1, 2], -1.0), "positive"),
    ("mcnemar", lambda: st.mcnemar(np.empty((0, 0))), "empty"),
    ("mcnemar", lambda: st.mcnemar([[5, 0], [0, 5]]), "no discordant"),
    ("spearman", lambda: st.spearman([], []), "empty"),
    ("spearman", lambda: st.spearman([1, 1, 1, 1], [1, 2, 3, 4]), "constant"),
    ("partial_spearman", lambda: st.partial_spearman([], [], []), "empty"),
    (
        "partial_spearman",
        lambda: st.partial_spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], [1, 1, 1, 1, 1]),
        "constant",
    ),
    ("kruskal_wallis", lambda: st.kruskal_wallis([1, 2, 3]), "at least 2 groups"),
    ("kruskal_wallis", lambda: st.kruskal_wallis([], [1]), "empty"),
    ("kruskal_wallis", lambda: st.kruskal_wallis([2, 2], [2, 2]), "identical"),
    ("binomial_test", lambda: st.binomial_test(0, 0), "n must be"),
    ("binomial_test", lambda: st.binomial_test(5, 3), "exceed"),
    ("wilson_interval", lambda: st.wilson_interval(0, 0), "n must be"),
    ("tpr_tnr", lambda: st.tpr_tnr([], []), "empty"),
    ("tpr_tnr", lambda: st.tpr_tnr([1, 1, 1], [1, 0, 1]), "all pass"),
    ("tpr_tnr", lambda: st.tpr_tnr([1, 0, 2], [1, 0, 1]), "0/1"),
    ("rogan_gladen", lambda: st.rogan_gladen(0.5, 0.4, 0.5), "no better than chance"),
    ("rogan_gladen", lambda: st.rogan_gladen(1.5, 0.9, 0.9), "proportion"),
    ("corrected_pass_rate", lambda: st.corrected_pass_rate([1, 0], [1, 0], []), "empty"),
    ("corrected_pass_rate", lambda: st.corrected_pass_rate([0, 0], [1, 0], [1]), "all fail"),
    (
        "corrected_pass_rate",
        lambda: st.corrected_pass_rate([1, 0], [1, 0], [1], n_bootstrap=10),
        "at least 1000",
    ),
    ("holm", lambda: st.holm([]), "empty"),
    ("subgroup_heterogeneity", lambda: st.subgroup_heterogeneity({"a": [1.0]}), "2 subgroups"),
    ("subgroup_heterogeneity", lambda: st.subgroup_heterogeneity({"a": [], "b": [1]}), "empty"),
    (
        "subgroup_heterogeneity",
        lambda: st.subgroup_heterogeneity({"a": [1, 1], "b": [1, 1]}),
        "identical",
    ),
    ("length_controlled_win_rate", lambda: st.length_controlled_win_rate([], []), "empty"),
    (
        "length_controlled_win_rate",
        lambda: st.length_controlled_win_rate([1, 0, 2], [1, 2, 3]),
        "1 \\(win\\)",
    ),
    (
        "length_controlled_win_rate",
        lambda: st.length_controlled_win_rate([1, 0, 1], [5, 5, 5]),
        "constant",
    ),
    (
        "length_controlled_win_rate",
        lambda: st.length_controlled_win_rate([1, 1, 1], [1, 2, 3]),
        "same outcome",
    ),
    (
        "length_controlled_win_rate",
        lambda: st.length_controlled_win_rate([0, 0, 1, 1], [-2, -1, 1, 2]),
        "separated",
    ),
    ("ppi_mean", lambda: st.ppi_mean([1], [1], [1, 2]), "at least 2"),
    ("ppi_mean", lambda: st.ppi_mean([1, 2], [1, 2, 3], [1, 2]), "paired"),
    ("ppi_mean", lambda: st.ppi_mean([1, 2], [1, 2], [1, 2], lam=2.0), r"\[0, 1\]"),
    ("ppi_mean", lambda: st.ppi_mean([2, 2], [1, 2], [3, 3]), "constant"),
    ("ppi_mean", lambda: st.ppi_mean([1, 2], [1, np.inf], [1, 2]), "infinite"),
    ("corrected_win_rate", lambda: st.corrected_win_rate([], [], ["A"]), "empty"),
    ("corrected_win_rate", lambda: st.corrected_win_rate(["A"], ["A"], ["A"]), "no pair"),
    (
        "corrected_win_rate",
        lambda: st.corrected_win_rate(["A", "B", "tie"], ["A", "B", "x"], ["A"]),
        "outside classes",
    ),
    (
        "corrected_win_rate",
        lambda: st.corrected_win_rate(["A", "B"], ["A", "A"], ["A"], classes=("A", "B")),
        "singular",
    ),
    ("benjamini_hochberg", lambda: st.benjamini_hochberg([]), "empty"),
    ("benjamini_hochberg", lambda: st.benjamini_hochberg([0.2, 1.2]), r"\[0, 1\]"),
    ("friedman", lambda: st.friedman([[1, 2, 3]]), "at least 2 blocks"),
    ("friedman", lambda: st.friedman([[1, 2], [2, 3]]), "at least 3 treatments"),
    ("friedman", lambda: st.friedman([[1, 1, 1], [2, 2, 2]]), "same score"),
    ("paired_position_test", lambda: st.paired_position_test([1, 0], [0, 1]), "no discordant"),
    ("paired_position_test", lambda: st.paired_position_test([1], [0, 1]), "same length"),
    ("holm", lambda: st.holm([0.2, 1.2]), r"\[0, 1\]"),
    ("dawid_skene", lambda: st.dawid_skene(np.empty((0, 0))), "non-empty"),
    ("dawid_skene", lambda: st.dawid_skene([[1, 0, 1]]), "at least 2 judges"),
    ("dawid_skene", lambda: st.dawid_skene([[1, 1], [1, 1]]), "two distinct classes"),
    ("dawid_skene", lambda: st.dawid_skene([[None, None], [None, None]]), "no labels"),
    ("dawid_skene", lambda: st.dawid_skene([[1, 0], [0, 1]], n_starts=0), "n_starts"),
    ("borda_count", lambda: st.borda_count([]), "empty"),
    ("borda_count", lambda: st.borda_count([["a"]]), "at least 2 candidates"),
    ("win_rate_interval", lambda: st.win_rate_interval(0, 0), "no comparisons"),
    ("conditional_preference", lambda: st.conditional_preference([], []), "empty"),
    ("conditional_preference", lambda: st.conditional_preference([1, 0], [1, 1]), "lack it"),
    ("length_preference_given_truth", lambda: st.length_preference_given_truth([], []), "empty"),
    (
        "position_preference_given_truth",
        lambda: st.position_preference_given_truth([1, 0], [0, 0]),
        "have the feature",
    ),
    ("length_logit", lambda: st.length_logit([], [], []), "empty"),
    ("length_logit", lambda: st.length_logit([1, 0], [1, 0], [0.1, 0.2]), "separates"),
    (
        "krippendorff_alpha_ci",
        lambda: st.krippendorff_alpha_ci([[1, NAN, 3], [2, 5, NAN]], "interval"),
        "at least 2 units",
    ),
    (
        "alpha_difference",
        lambda: st.alpha_difference([[1, NAN, 3], [2, 5, NAN]], [[1, 2, 3], [2, 5, 1]]),
        "at least 2 units",
    ),
    ("paired_proportion_difference", lambda: st.paired_proportion_difference([], []), "empty"),
    (
        "paired_proportion_difference",
        lambda: st.paired_proportion_difference([1, 0], [1]),
        "same length",
    ),
    ("mean_difference", lambda: st.mean_difference([1, 2], [0, 1]), "same"),
    ("stratified_proportion", lambda: st.stratified_proportion([], [], {"c": 2}), "empty"),
    (
        "stratified_proportion",
        lambda: st.stratified_proportion([1.0], ["c"], {"c": 3, "s": 4}),
        "no sampled unit",
    ),
    ("hodges_lehmann", lambda: st.hodges_lehmann([1.0]), "at least 2"),
    ("kendall_tau_panel", lambda: st.kendall_tau_panel([[1, 2, 3]]), "2 judges"),
    (
        "kendall_tau_difference",
        lambda: st.kendall_tau_difference([[1, 2, 3], [3, 1, 2]], [[1, 2, 3, 4], [1, 2, 4, 3]]),
        "same units",
    ),
]


@pytest.mark.parametrize(("name", "call", "message"), CASES, ids=[f"{n}-{m}" for n, _, m in CASES])
def test_raises_value_error_saying_why(name: str, call: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_every_public_function_has_a_degenerate_case() -> None:
    public = {
        name
        for name in st.__all__
        if inspect.isfunction(getattr(st, name)) and not name[0].isupper()
    }
    covered = {name for name, _, _ in CASES}
    assert public - covered == set()


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.1])
def test_confidence_must_be_a_proportion(bad: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        st.wilson_interval(3, 10, bad)
    with pytest.raises(ValueError, match="confidence"):
        st.cohen_kappa([1, 2, 1], [1, 2, 2], confidence=bad)


def test_rng_argument_rejects_other_types() -> None:
    with pytest.raises(ValueError, match="rng"):
        st.dawid_skene([[1, 0], [0, 1]], rng="seed")  # type: ignore[arg-type]
