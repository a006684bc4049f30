"""``--dry-run``: build every prompt, count units, calls and tokens, price them; call nothing."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.pipeline.runner import RunInputs, request_for
from jurybox.pipeline.summary import JudgeEstimate
from jurybox.pipeline.units import make_batches
from jurybox.pricing import completion_cost_usd
from jurybox.providers._common import estimate_tokens
from jurybox.records import Completion, WorkUnit


def estimate_run(inputs: RunInputs, units: Sequence[WorkUnit] | None = None) -> list[JudgeEstimate]:
    """Per-judge units, calls, prompt tokens (characters / 4), max output tokens and cost bound."""
    config = inputs.config
    batches = make_batches(config, inputs.units if units is None else units)
    estimates = []
    for name, judge in config.judges.items():
        mine = [batch for batch in batches if batch[0].judge == name]
        max_tokens = judge.max_tokens or config.pipeline.max_tokens
        prompt_tokens = 0
        for batch in mine:
            request = request_for(inputs, batch)
            prompt_tokens += estimate_tokens(request.system + request.user)
        max_output = max_tokens * len(mine)
        usage = Completion(text="", model="", input_tokens=prompt_tokens, output_tokens=max_output)
        estimates.append(
            JudgeEstimate(
                judge=name,
                units=sum(len(batch) for batch in mine),
                calls=len(mine),
                input_tokens=prompt_tokens,
                max_output_tokens=max_output,
                cost_usd=completion_cost_usd(judge, usage),
            )
        )
    return estimates
