"""What the criterion mode and code criteria share: names, planning and reading an answer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from jurybox.config import TaskConfig
from jurybox.errors import ConfigError, ParseError
from jurybox.modes.base import Presentation
from jurybox.records import Completion

if TYPE_CHECKING:
    from jurybox.modes.results import Answer, CriterionResult
    from jurybox.rubrics.criteria import Criterion


def criterion_name(path: str) -> str:
    """A criterion's name in units and records: its file's stem (``concise.yaml`` -> concise)."""
    return Path(path).stem


def criterion_presentations(task: TaskConfig, arms: tuple[str, ...]) -> list[Presentation]:
    """One unit per criterion x arm."""
    names = [criterion_name(path) for path in task.criteria]
    return [Presentation(arm, (arm,), name) for name in names for arm in arms]


_ANSWERS: dict[str, Answer] = {"Pass": "Pass", "Fail": "Fail"}


def answer_of(value: str) -> Answer:
    if value in _ANSWERS:
        return _ANSWERS[value]
    raise ParseError(f"answer {value!r} is not Pass or Fail")


def read_criterion(completion: Completion) -> CriterionResult:
    """A criterion answer (a model's or a check's) as a typed result, reasoning kept."""
    from jurybox.modes.results import CriterionResult  # noqa: PLC0415 - after the first request
    from jurybox.parsing import parse_criterion  # noqa: PLC0415 - after the first request

    judged = parse_criterion(completion.text, completion.structured)
    return CriterionResult(judged.method, answer_of(judged.answer), judged.reasoning)


def runnable_criterion(path: Path) -> Criterion:
    from jurybox.rubrics.criteria import load_criterion  # noqa: PLC0415 - see rubrics' doc

    criterion = load_criterion(path)
    if criterion.train_examples:
        # Silently dropping them would judge with a different prompt than the one calibrated.
        raise ConfigError(
            "train_examples name items of a train split; judge this criterion with `jurybox "
            "calibrate` / `jurybox estimate`, or write the examples inline under `examples`",
            path=str(path),
            field="train_examples",
        )
    return criterion
