"""The interface every judging mode implements, and what all modes share.

A mode answers four questions for the pipeline, which knows no mode by name:

* how an item is presented (``presentations``: which arms, in which orders, per criterion);
* how many units one call may carry (``batch_size``);
* what one call asks (``request``), and who answers it when not the judge's model (``answerer``:
  a code criterion's check runs in-process);
* what the judge said (``interpret``): one typed result per unit, from ``modes.results``.

Planning is a class method over the task config alone, so units can be planned without loading a
rubric or criterion file; everything else runs on an instance built with ``from_context``.
Bad judge text never raises from ``interpret``: it becomes a ``Failed`` result (``truncated`` when
the completion hit ``max_tokens``, ``refused`` when the judge or a content filter declined).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Self

from jurybox.config import JudgeConfig, RunConfig, ScoringConfig, TaskConfig
from jurybox.errors import ConfigError, ParseError
from jurybox.prompts import PromptParts, PromptSources, load_prompt_sources
from jurybox.providers.base import Provider
from jurybox.records import Completion, CompletionRequest, Item, Status, WorkUnit
from jurybox.rubrics.safety import SafetySettings

if TYPE_CHECKING:
    from jurybox.modes.results import Failed, Judgment, Pair
    from jurybox.rubrics.criteria import Criterion
    from jurybox.rubrics.model import Rubric


@dataclass(frozen=True, slots=True)
class JudgingContext:
    """What every prompt and every interpretation of one run needs."""

    task: TaskConfig
    scoring: ScoringConfig
    rubric: Rubric | None
    criteria: Mapping[str, Criterion] = field(default_factory=dict)
    safety: SafetySettings = field(default_factory=SafetySettings)
    # Folder of each criterion file: a code criterion's Python check is imported from there.
    criterion_dirs: Mapping[str, Path] = field(default_factory=dict)
    # The run's own instructions / template (task.instructions, task.template), as read.
    prompt: PromptSources | None = None

    @property
    def confidence_scale(self) -> tuple[int, int] | None:
        """Per-score confidence scale asked for, or None when confidence is not requested."""
        if not self.scoring.request_confidence:
            return None
        if self.rubric is not None and self.rubric.confidence_scale is not None:
            return self.rubric.confidence_scale
        return self.scoring.confidence_scale

    def require_rubric(self) -> Rubric:
        if self.rubric is None:
            raise ValueError(f"mode '{self.task.mode}' needs a rubric in the judging context")
        return self.rubric

    def criterion(self, name: str | None) -> Criterion:
        """The criterion a unit names: by file stem, else by the criterion's own ``name``."""
        if name is not None and name in self.criteria:
            return self.criteria[name]
        for criterion in self.criteria.values():
            if criterion.name == name:
                return criterion
        raise ValueError(f"unknown criterion {name!r} (loaded: {sorted(self.criteria)})")


@dataclass(frozen=True, slots=True)
class Presentation:
    """One way to show an item: ``order`` lists the arms by position; ``ordering`` names it."""

    ordering: str
    order: tuple[str, ...]
    criterion: str | None = None


def item_of(items: Mapping[str, Item], unit: WorkUnit) -> Item:
    try:
        return items[unit.item_id]
    except KeyError:
        raise ValueError(f"work unit names unknown item '{unit.item_id}'") from None


def arms_of(unit: WorkUnit) -> tuple[str, str]:
    """The two arms of a pairwise unit, in the positions shown (A first)."""
    if len(unit.order) != 2:
        raise ValueError(f"pairwise unit {unit.key} must order two arms, got {unit.order}")
    return unit.order[0], unit.order[1]


def pair_of(unit: WorkUnit) -> Pair:
    from jurybox.modes.results import Pair  # noqa: PLC0415 - after the first request

    return Pair(*arms_of(unit))


def vendor_refusal(completion: Completion) -> str | None:
    if completion.refusal:
        return f"judge refused: {completion.refusal}"
    if completion.finish_reason in ("refusal", "content_filter"):
        return f"judge refused (finish_reason={completion.finish_reason})"
    return None


def parse_failure(completion: Completion, exc: ParseError, pair: Pair | None = None) -> Failed:
    """A ParseError as a result: refused, truncated (hit max_tokens) or unparsed."""
    from jurybox.modes.results import Failed  # noqa: PLC0415 - after the first request
    from jurybox.parsing import JudgeRefusal  # noqa: PLC0415 - after the first request

    if isinstance(exc, JudgeRefusal):
        return Failed(Status.REFUSED, str(exc), pair)
    if completion.finish_reason == "length":
        return Failed(Status.TRUNCATED, f"truncated at max_tokens: {exc}", pair)
    return Failed(Status.UNPARSED, str(exc), pair)


class JudgingMode(ABC):
    """One judging mode. Subclasses set ``name`` and implement the abstract methods."""

    name: ClassVar[str]

    def __init__(self, ctx: JudgingContext) -> None:
        self.ctx = ctx

    @classmethod
    def from_config(
        cls,
        config: RunConfig,
        *,
        env: Mapping[str, str] | None = None,
        prompt: PromptSources | None = None,
    ) -> Self:
        """Load the rubric (if the mode uses one) and the run's own instructions and template,
        relative to the config file; ``prompt`` gives those as already read (a run rebuilt
        from its manifest).

        ``env`` (default ``os.environ``) supplies ``JURYBOX_WEIGHT_*`` and ``JURYBOX_SAFETY_*``.
        """
        task = config.task
        cls.check_batch(task)
        rubric = None
        if cls.uses_rubric(task):
            from jurybox.rubrics.model import load_rubric  # noqa: PLC0415 - see rubrics' doc

            base_dir = Path(config.source_path).parent if config.source_path else None
            rubric = load_rubric(task.rubric, base_dir=base_dir, env=env)
        safety = SafetySettings.from_env(env)
        sources = prompt if prompt is not None else load_prompt_sources(config)
        return cls(JudgingContext(task, config.scoring, rubric, safety=safety, prompt=sources))

    @classmethod
    def uses_rubric(cls, task: TaskConfig) -> bool:
        """Whether the task, in this mode, is judged against a rubric."""
        return False

    # --- planning (task config only) ---------------------------------------------------------

    @classmethod
    def check_batch(cls, task: TaskConfig) -> None:
        if task.batch_size > 1 and cls.batch_size(task) == 1:
            raise ConfigError(
                "batch_size > 1 is only supported for plain pairwise judging",
                field="task.batch_size",
            )

    @classmethod
    def check_task(cls, task: TaskConfig) -> None:
        """Raise ConfigError when the task config cannot be planned in this mode."""
        return None  # an optional hook: most modes can plan any task

    @classmethod
    def check_arms(cls, task: TaskConfig, arms: tuple[str, ...]) -> None:
        """Raise ConfigError when the mode cannot judge these arms."""
        return None  # an optional hook: rubric and criterion judge any arms

    @classmethod
    @abstractmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        """How one item is shown; ``orders`` are its seeded presentation orders (first = the
        retest one; only the first is passed for a retest pass)."""

    @classmethod
    def batch_size(cls, task: TaskConfig) -> int:
        """Units per call (several only where one prompt can hold several judgments)."""
        return 1

    # --- one call ----------------------------------------------------------------------------

    @abstractmethod
    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        """The prompt for one call."""

    def request(
        self,
        units: Sequence[WorkUnit],
        items: Mapping[str, Item],
        judge: JudgeConfig,
        max_tokens: int,
        seed: int | None,
    ) -> CompletionRequest:
        """The provider request; the schema is sent only for native structured output."""
        parts = self.prompt(units, items)
        return CompletionRequest(
            system=parts.system,
            user=parts.user,
            max_tokens=max_tokens,
            temperature=judge.temperature,
            response_schema=parts.schema if judge.structured_output else None,
            schema_name=parts.schema_name,
            seed=seed,
        )

    def answerer(self, unit: WorkUnit) -> Provider | None:
        """Who answers the unit's call when not the judge's model (None: the judge does)."""
        return None

    def check_prompts(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> None:
        """With a custom template, render every distinct prompt of the run once, so that a
        template that fails on any item (a response left out, a misuse in a branch only some
        items take) is refused, naming its file and line, before any call."""
        if self.ctx.prompt is None or not self.ctx.prompt.has_template:
            return
        seen: set[tuple[str, tuple[str, ...], str | None]] = set()
        for unit in units:
            shown = (unit.item_id, unit.order, unit.criterion)
            if shown not in seen and self.answerer(unit) is None:
                seen.add(shown)
                self.prompt([unit], items)

    # --- interpretation ----------------------------------------------------------------------

    def interpret(
        self, units: Sequence[WorkUnit], items: Mapping[str, Item], completion: Completion
    ) -> list[Judgment]:
        """One typed result per unit. Never raises on bad judge text."""
        refused = vendor_refusal(completion)
        if refused is not None:
            from jurybox.modes.results import Failed  # noqa: PLC0415 - after the first request

            return [Failed(Status.REFUSED, refused, self.pair_labels(unit)) for unit in units]
        unit = single(units)
        try:
            return [self.read(unit, item_of(items, unit), completion)]
        except ParseError as exc:
            return [parse_failure(completion, exc, self.pair_labels(unit))]

    def pair_labels(self, unit: WorkUnit) -> Pair | None:
        """The positions a failed record still names (pairwise only)."""
        return None

    @abstractmethod
    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        """Parse one unit's completion; raises ParseError on text it cannot read."""


def single(units: Sequence[WorkUnit]) -> WorkUnit:
    if len(units) != 1:
        raise ValueError(f"only batch pairwise takes several units, got {len(units)}")
    return units[0]
