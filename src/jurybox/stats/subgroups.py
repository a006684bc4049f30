"""Does a treatment effect differ across subgroups? (treatment × subgroup heterogeneity)

Each item contributes one paired difference (treatment arm minus control arm). An omnibus
Kruskal–Wallis test compares the differences' distributions across subgroups; each subgroup's
own effect is a Wilcoxon signed-rank test, Holm-adjusted within the family of subgroups.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from jurybox.stats._validate import numeric_1d
from jurybox.stats.hypothesis import holm, kruskal_wallis, wilcoxon_signed_rank
from jurybox.stats.results import KruskalResult

__all__ = ["SubgroupEffect", "SubgroupHeterogeneity", "subgroup_heterogeneity"]


@dataclass(frozen=True, slots=True)
class SubgroupEffect:
    """One subgroup's paired differences: median, Wilcoxon p-value and its Holm adjustment.

    ``p_value`` and ``p_holm`` are 1.0 when every difference is zero (no effect to test).
    """

    subgroup: Hashable
    n: int
    median_difference: float
    p_value: float
    p_holm: float


@dataclass(frozen=True, slots=True)
class SubgroupHeterogeneity:
    """Omnibus test that the effect differs across subgroups, with per-subgroup effects."""

    headline: ClassVar[str] = "p_value"

    statistic: float
    df: int
    p_value: float
    epsilon_squared: float
    effects: tuple[SubgroupEffect, ...]
    alpha: float
    method: str


def subgroup_heterogeneity(
    differences: Mapping[Hashable, ArrayLike], *, alpha: float = 0.05
) -> SubgroupHeterogeneity:
    """Kruskal–Wallis on per-item paired differences across subgroups, Holm within subgroups.

    Args:
        differences: Subgroup name → that subgroup's per-item differences (treatment minus
            control, e.g. score under arm B minus arm A); at least 2 subgroups.
        alpha: Family-wise error rate of the Holm adjustment over the subgroups' tests.

    Returns:
        ``SubgroupHeterogeneity``: the tie-corrected H statistic, its p-value and epsilon² across
        subgroups (heterogeneity), and per subgroup the median difference with the two-sided
        Wilcoxon signed-rank p-value (zeros dropped) and its Holm-adjusted value.

    References:
        Kruskal, W. H. & Wallis, W. A. (1952). JASA 47, 583–621. Wilcoxon, F. (1945).
        Biometrics Bulletin 1, 80–83. Holm, S. (1979). Scand. J. Statist. 6, 65–70.
    """
    if len(differences) < 2:
        raise ValueError(f"need at least 2 subgroups, got {len(differences)}")
    samples = {k: numeric_1d(v, f"differences[{k!r}]") for k, v in differences.items()}
    omnibus: KruskalResult = kruskal_wallis(*samples.values())
    raw = [_signed_rank_p(d) for d in samples.values()]
    adjusted = holm(raw, alpha=alpha)
    effects = tuple(
        SubgroupEffect(
            subgroup=name,
            n=int(d.size),
            median_difference=float(np.median(d)),
            p_value=p,
            p_holm=q,
        )
        for (name, d), p, q in zip(samples.items(), raw, adjusted.adjusted, strict=True)
    )
    return SubgroupHeterogeneity(
        statistic=omnibus.statistic,
        df=omnibus.df,
        p_value=omnibus.p_value,
        epsilon_squared=omnibus.epsilon_squared,
        effects=effects,
        alpha=adjusted.alpha,
        method="Kruskal-Wallis H across subgroups on paired differences; per-subgroup "
        "Wilcoxon signed-rank (zeros dropped), Holm step-down within the subgroups",
    )


def _signed_rank_p(diff: np.ndarray) -> float:
    if not np.any(diff != 0):
        return 1.0  # no nonzero difference: nothing to test, and no evidence of an effect
    return wilcoxon_signed_rank(diff).p_value
