"""The config's mode name -> the mode's class. The pipeline looks modes up here only."""

from __future__ import annotations

from collections.abc import Mapping

from jurybox.config import RunConfig
from jurybox.errors import ConfigError
from jurybox.modes.base import JudgingMode
from jurybox.modes.criterion import CriterionMode
from jurybox.modes.pairwise import PairwiseMode
from jurybox.modes.ranking import RankingMode
from jurybox.modes.rubric import RubricMode
from jurybox.prompts import PromptSources

# Code criteria are not a config mode: ``CriterionMode`` hands their units to ``modes.code``.
MODES: Mapping[str, type[JudgingMode]] = {
    mode.name: mode for mode in (PairwiseMode, RubricMode, RankingMode, CriterionMode)
}


def mode_class(name: str) -> type[JudgingMode]:
    try:
        return MODES[name]
    except KeyError:
        raise ConfigError(f"unknown judging mode {name!r} (known: {sorted(MODES)})") from None


def build_mode(
    config: RunConfig,
    *,
    env: Mapping[str, str] | None = None,
    prompt: PromptSources | None = None,
) -> JudgingMode:
    """The run's mode with its rubric / criteria loaded (``env`` default: ``os.environ``) and
    its own prompt read from the config's files, or ``prompt`` (as a manifest kept it)."""
    return mode_class(config.task.mode).from_config(config, env=env, prompt=prompt)
