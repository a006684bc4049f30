"""What a recorded judgment's judge was sent: its system and user text, rebuilt exactly.

A record keeps the ``prompt_hash`` of its request, not the text. ``RunPrompts`` rebuilds the
request from what the run kept (the config snapshot and the run's own instructions / template
in ``manifest.json``, the dataset the manifest names) through the same ``request_for`` the run
called, and hands it out only when its hash is the record's: what it returns is byte for byte
what the provider adapter was given (``jurybox show``; the report's explorer). A dataset, rubric
or criterion file changed since the run gives another hash, and ``PromptUnavailable`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.config import RunConfig
from jurybox.errors import JuryboxError
from jurybox.modes import build_mode
from jurybox.pipeline.runner import RunInputs, request_for
from jurybox.prompts import PromptSources
from jurybox.records import POSITION_LETTERS, Item, JudgeRecord, WorkUnit


class PromptUnavailable(JuryboxError):
    """A record's prompt cannot be rebuilt exactly (the reason is the message)."""


@dataclass(frozen=True, slots=True)
class SentPrompt:
    """The request text one judgment's call carried, as sent (hash checked)."""

    system: str
    user: str
    response_schema: Mapping[str, Any] | None
    schema_name: str
    prompt_hash: str
    units: int = 1  # judgments answered by this one call (a batch pairwise prompt holds several)


def unit_of(record: JudgeRecord) -> WorkUnit:
    """The work unit a record answers: its item, judge, order shown, repeat and criterion."""
    letters = POSITION_LETTERS[: len(record.positions)]
    try:
        order = tuple(record.positions[letter] for letter in letters)
    except KeyError:
        raise PromptUnavailable(f"record {record.key} names no arm in order") from None
    return WorkUnit(
        item_id=record.query_id,
        judge=record.judge_name,
        ordering=record.presentation_order,
        order=order,
        repeat=record.repeat,
        retest=record.retest,
        criterion=record.criterion,
    )


class RunPrompts:
    """Rebuilds the prompts of one run's records (build once per run: it loads the mode).

    ``records`` (the run's, in file order) are needed only for batch pairwise runs, whose calls
    hold several judgments: a call's records are the judge's records with its prompt hash.
    """

    def __init__(
        self,
        config: RunConfig,
        items: Mapping[str, Item],
        prompt: PromptSources | None,
        records: Iterable[JudgeRecord] = (),
    ) -> None:
        mode = build_mode(config, prompt=prompt)
        self.inputs = RunInputs(config, items, (), mode, Path(config.paths.dataset))
        self.batched = mode.batch_size(config.task) > 1
        self._calls: dict[tuple[str, str | None, int, bool], list[JudgeRecord]] = {}
        if self.batched:
            for record in records:
                self._calls.setdefault(_call_key(record), []).append(record)

    def of(self, record: JudgeRecord) -> SentPrompt:
        """The prompt ``record``'s call sent. Raises PromptUnavailable when it cannot be
        rebuilt with the record's hash (say why: no hash, unknown item or judge, changed file)."""
        if record.prompt_hash is None:
            raise PromptUnavailable(
                f"record {record.key} keeps no prompt hash (imported verdicts were never sent "
                "by jurybox)"
            )
        units = self._units(record)
        missing = sorted({unit.item_id for unit in units} - set(self.inputs.items))
        if missing:
            raise PromptUnavailable(
                f"item(s) {', '.join(missing)} are not in the dataset the run's manifest names"
            )
        if record.judge_name not in self.inputs.config.judges:
            raise PromptUnavailable(f"judge {record.judge_name!r} is not in the run's config")
        request = request_for(self.inputs, units)
        digest = request.prompt_hash()
        if digest != record.prompt_hash:
            raise PromptUnavailable(
                f"the prompt rebuilt for record {record.key} does not match the hash it keeps "
                f"({digest[:12]} here, {record.prompt_hash[:12]} recorded): the dataset, rubric "
                "or criterion file changed since the run"
            )
        return SentPrompt(
            request.system,
            request.user,
            request.response_schema,
            request.schema_name,
            digest,
            len(units),
        )

    def _units(self, record: JudgeRecord) -> Sequence[WorkUnit]:
        if not self.batched:
            return [unit_of(record)]
        call = self._calls.get(_call_key(record)) or [record]
        return [unit_of(one) for one in call]


def _call_key(record: JudgeRecord) -> tuple[str, str | None, int, bool]:
    return (record.judge_name, record.prompt_hash, record.repeat, record.retest)
