"""The trust verdict's thresholds: one documented model, read by the run config's ``trust:``
section, the ``jurybox analyze`` flags and the rules in ``jurybox.analysis.trust``.

Kept in the bottom layer beside ``config`` so the CLI can parse them without loading the
analysis stack.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TrustThresholds(BaseModel):
    """Every threshold behind the trust levels, in one place: the run config's ``trust:`` section
    and ``jurybox analyze`` flags set them; the report echoes them (``options.thresholds``).

    The rules that read them are in ``jurybox.analysis.trust``. Defaults follow common practice:
    accuracy 0.70 as the bar a judge's interval must clear, κ 0.40 "moderate" (Landis & Koch
    1977), swap consistency 0.80 (Zheng et al. 2023 report 0.65-0.9 for strong judges), ICC 0.50
    ("poor" below, Koo & Li 2016).

    Rates and accuracies are shares in [0, 1]; bias effects are differences of error rates in
    [-1, 1] (see ``jurybox.stats.conditional_preference``); p-values are Holm-adjusted across the
    judges of the report before they are compared with ``alpha``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_accuracy: float = Field(
        0.70, ge=0, le=1, description="`trusted` needs the accuracy CI's lower bound ≥ this."
    )
    fail_accuracy: float = Field(
        0.60, ge=0, le=1, description="Accuracy (failures counted) below this: `not_trusted`."
    )
    min_kappa: float = Field(
        0.40, ge=-1, le=1, description="`trusted` on ordinal scores needs κ's CI low ≥ this."
    )
    fail_kappa: float = Field(0.20, ge=-1, le=1, description="κ below this: `not_trusted`.")
    warn_failure_rate: float = Field(
        0.05, ge=0, le=1, description="Share of failed calls above this: a warning."
    )
    fail_failure_rate: float = Field(
        0.50, ge=0, le=1, description="Share of failed calls above this: `not_trusted`."
    )
    warn_swap_consistency: float = Field(
        0.80,
        ge=0,
        le=1,
        description="Same verdict in both orders (failures count as "
        "inconsistent) below this: a warning.",
    )
    fail_swap_consistency: float = Field(
        0.60, ge=0, le=1, description="Swap consistency below this: `not_trusted`."
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="Family-wise level of the position and length tests."
    )
    warn_bias_effect: float = Field(
        0.10, ge=0, le=1, description="A significant position/length effect this large: warning."
    )
    fail_bias_effect: float = Field(
        0.30,
        ge=0,
        le=1,
        description="A significant effect this large (labels known): "
        "`not_trusted`; without labels a length effect is only ever a warning.",
    )
    warn_retest_agreement: float = Field(
        0.80, ge=0, le=1, description="Same verdict on a repeated judgment below this: warning."
    )
    fail_retest_agreement: float = Field(
        0.50, ge=0, le=1, description="Test-retest agreement below this: `not_trusted`."
    )
    warn_retest_icc: float = Field(
        0.50,
        ge=0,
        le=1,
        description="ICC(2,1) of repeated scores below this: a warning ('poor', Koo & Li 2016).",
    )
    fail_retest_icc: float = Field(
        0.20, ge=0, le=1, description="ICC(2,1) of repeated scores below this: `not_trusted`."
    )

    @model_validator(mode="after")
    def _warn_before_fail(self) -> TrustThresholds:
        pairs = (  # (name, the laxer limit, the stricter limit)
            ("accuracy", self.fail_accuracy, self.min_accuracy),
            ("kappa", self.fail_kappa, self.min_kappa),
            ("failure_rate", self.warn_failure_rate, self.fail_failure_rate),
            ("swap_consistency", self.fail_swap_consistency, self.warn_swap_consistency),
            ("bias_effect", self.warn_bias_effect, self.fail_bias_effect),
            ("retest_agreement", self.fail_retest_agreement, self.warn_retest_agreement),
            ("retest_icc", self.fail_retest_icc, self.warn_retest_icc),
        )
        for name, low, high in pairs:
            if low > high:
                raise ValueError(f"{name}: the limits are in the wrong order ({low} > {high})")
        return self
