"""``--dry-run``: build every prompt, count units, calls and tokens, price them; call nothing.

The prompt tokens are counted from the built prompts (characters / 4). The output is not known
before a judge answers, so it is estimated at a typical length per judgment of the mode
(``TYPICAL_OUTPUT_TOKENS``), not at ``max_tokens``: answers rarely come near the cap, and an
estimate at the cap overstated a run's cost about 40 times (issue #34). The cap still bounds
the cost, and the dry run says that bound too. During a run the progress bar replaces these
defaults with the lengths the judges actually write (``progress.RunProgress``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jurybox.pipeline.runner import RunInputs, request_for
from jurybox.pipeline.summary import JudgeEstimate
from jurybox.pipeline.units import make_batches
from jurybox.pricing import format_cost, format_usd, tokens_cost_usd
from jurybox.providers._common import estimate_tokens
from jurybox.records import WorkUnit

if TYPE_CHECKING:
    from rich.console import Console

# Output tokens per judgment, by mode: the median of the records of the bundled examples
# (examples/<mode>.yaml, run as they ship; tests/pipeline/test_dry_run.py re-derives them).
# Those judges are scripted fakes that answer with the mode's JSON and a one-line reason; a real
# judge that explains itself writes more (gpt-3.5-turbo's PandaLM verdicts: ~70 tokens for a
# pairwise answer), which the running estimate of a run then shows.
TYPICAL_OUTPUT_TOKENS = {"pairwise": 24, "rubric": 131, "ranking": 161, "criterion": 19}


def typical_output_tokens(mode: str) -> int:
    """Output tokens per judgment assumed before any answer (``TYPICAL_OUTPUT_TOKENS``)."""
    return TYPICAL_OUTPUT_TOKENS[mode]


def estimate_run(inputs: RunInputs, units: Sequence[WorkUnit] | None = None) -> list[JudgeEstimate]:
    """Per-judge units, calls, prompt tokens (characters / 4), typical and most output tokens,
    and the cost of each at the judge's prices."""
    config = inputs.config
    batches = make_batches(config, inputs.units if units is None else units)
    per_unit = typical_output_tokens(config.task.mode)
    estimates = []
    for name, judge in config.judges.items():
        mine = [batch for batch in batches if batch[0].judge == name]
        max_tokens = judge.max_tokens or config.pipeline.max_tokens
        prompt_tokens = 0
        for batch in mine:
            request = request_for(inputs, batch)
            prompt_tokens += estimate_tokens(request.system + request.user)
        count = sum(len(batch) for batch in mine)
        # An answer is cut at max_tokens: a call of a batch shares one cap.
        typical = min(per_unit * count, max_tokens * len(mine))
        bound = max_tokens * len(mine)
        note = inputs.prices.get(name)
        estimates.append(
            JudgeEstimate(
                judge=name,
                units=count,
                calls=len(mine),
                input_tokens=prompt_tokens,
                output_tokens=typical,
                max_output_tokens=bound,
                cost_usd=tokens_cost_usd(judge, prompt_tokens, typical, 0),
                max_cost_usd=tokens_cost_usd(judge, prompt_tokens, bound, 0),
                prices=note.text if note is not None else "",
            )
        )
    return estimates


def print_estimates(console: Console, estimates: Sequence[JudgeEstimate], mode: str) -> None:
    """The dry-run table: work units, calls, tokens and cost per judge; then where each judge's
    prices come from, and the totals with the assumption they rest on."""
    from rich.markup import escape  # noqa: PLC0415 - start-up: see the imports
    from rich.table import Table  # noqa: PLC0415

    table = Table(title="dry run: no calls made")
    columns = ("judge", "units", "calls", "input tok", "output tok", "cost (est.)", "cost ≤")
    for column in columns:
        table.add_column(column, justify="left" if column == "judge" else "right")
    for est in estimates:
        table.add_row(
            escape(est.judge),
            str(est.units),
            str(est.calls),
            f"{est.input_tokens:,}",
            f"{est.output_tokens:,}",
            format_usd(est.cost_usd),
            format_usd(est.max_cost_usd),
        )
    console.print(table)
    for line in estimate_notes(estimates, mode):
        console.print(line, markup=False, soft_wrap=True)


def estimated_cost(estimates: Sequence[JudgeEstimate]) -> tuple[str, str]:
    """The run's estimated cost and the most it can cost, as every output writes a cost."""
    unpriced = [est.judge for est in estimates if not est.priced]
    priced = [est for est in estimates if est.priced]
    cost = sum(est.cost_usd or 0.0 for est in priced) if priced else None
    most = sum(est.max_cost_usd or 0.0 for est in priced) if priced else None
    return format_cost(cost, unpriced), format_cost(most, unpriced)


def estimate_notes(estimates: Sequence[JudgeEstimate], mode: str) -> list[str]:
    """The lines under the dry-run table: each judge's prices, the totals, the assumption."""
    lines = [
        f"'{est.judge}' {'priced by' if est.priced else 'unpriced'}: {est.prices}"
        for est in estimates
        if est.prices
    ]
    cost, most = estimated_cost(estimates)
    lines.append(
        f"{sum(est.units for est in estimates)} work units in all; estimated cost {cost}, at "
        f"most {most} (every answer at max_tokens)"
    )
    lines.append(
        f"output estimated at {typical_output_tokens(mode)} tokens per {mode} judgment: the "
        "median of the bundled examples' records (scripted judges; a judge that explains its "
        "verdict writes more). During the run the progress bar re-estimates from the answers."
    )
    return lines
