"""Ranking (listwise, council) mode: N anonymised responses, rubric scores for each; the ranking
comes from the overall scores, the judge's own order only breaking ties."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jurybox.config import TaskConfig
from jurybox.errors import ConfigError
from jurybox.modes.base import (
    JudgingMode,
    Presentation,
    item_of,
    single,
)
from jurybox.prompts import PromptParts, ranking_prompt
from jurybox.records import POSITION_LETTERS, Completion, Item, WorkUnit, ranking_ordering

if TYPE_CHECKING:
    from jurybox.modes.results import Judgment

# Start-up (issue #19): the result types and the scoring are imported where an answer is read.


class RankingMode(JudgingMode):
    name = "ranking"

    @classmethod
    def uses_rubric(cls, task: TaskConfig) -> bool:
        return True

    @classmethod
    def check_arms(cls, task: TaskConfig, arms: tuple[str, ...]) -> None:
        if len(arms) < 2:
            raise ConfigError(
                f"ranking mode needs at least two arms, got {list(arms)}", field="task.arms"
            )

    @classmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        return [Presentation(ranking_ordering(order), order) for order in orders]

    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        unit = single(units)
        return ranking_prompt(
            item_of(items, unit),
            unit.order,
            self.ctx.require_rubric(),
            reference_guided=self.ctx.task.reference_guided,
            sources=self.ctx.prompt,
        )

    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        from jurybox.modes import results, scoring  # noqa: PLC0415 - after the first request
        from jurybox.parsing import parse_ranking  # noqa: PLC0415 - after the first request

        letters = list(POSITION_LETTERS[: len(unit.order)])
        judged = parse_ranking(
            completion.text, completion.structured, letters, self.ctx.require_rubric()
        )
        positions = unit.positions()
        arms = scoring.scored_arms(
            self.ctx, item, {positions[letter]: judged.evaluations[letter] for letter in letters}
        )
        judge_rank = {positions[letter]: index for index, letter in enumerate(judged.ranking)}
        overall = arms.overall
        ranking = sorted(overall, key=lambda arm: (-overall[arm], judge_rank[arm]))
        return results.RankingResult(judged.method, arms, tuple(ranking))
