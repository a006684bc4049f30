"""Rubric model: dimensions with behavioural anchors, weights, ceilings and gates, loaded from YAML.

Rubrics are data, not code. A rubric file names its dimensions, each with a description, the
"what it measures / how to score / what good looks like / failure modes" guidance, anchors per
score band, a weight and a scale. Weights must sum to 1; ``JURYBOX_WEIGHT_<DIMENSION>`` variables
override them, and the overridden weights must still sum to 1 (we refuse rather than renormalise,
because silently rescaling the other weights hides a typo in one variable).
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jurybox.config import load_yaml
from jurybox.errors import ConfigError

WEIGHT_TOLERANCE = 1e-6
WEIGHT_ENV_PREFIX = "JURYBOX_WEIGHT_"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_BAND = re.compile(r"^\s*(-?\d+)\s*(?:[-–]\s*(-?\d+)\s*)?$")
# Keys the answer formats use next to dimension names: a dimension may not shadow them.
RESERVED_NAMES = frozenset(
    {"score", "scores", "overall", "overall_score", "rating", "reasoning", "confidence"}
)


class _Frozen(BaseModel):
    # defer_build: the validators are built on first use, so a run that loads no rubric or
    # criterion file (a plain pairwise run) does not build them before its first request.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


def parse_band(band: str) -> tuple[int, int]:
    """``"4-6"`` -> (4, 6); ``"0"`` -> (0, 0). Raises ValueError on anything else."""
    match = _BAND.match(band)
    if match is None:
        raise ValueError(f"anchor band {band!r} is not 'N' or 'N-M'")
    low = int(match[1])
    high = int(match[2]) if match[2] is not None else low
    if low > high:
        raise ValueError(f"anchor band {band!r} runs backwards")
    return low, high


class Dimension(_Frozen):
    """One scored dimension of a rubric."""

    name: str = Field(description="Identifier used as the JSON key in the judge's answer.")
    description: str = Field(min_length=1, description="One-line summary shown to the judge.")
    what_it_measures: str = ""
    scoring: str = Field("", description="How to score: what to check, in which order.")
    good: str = Field("", description="What a top-band response looks like.")
    failure_modes: tuple[str, ...] = ()
    anchors: dict[str, str] = Field(description="Score band ('1-2', '0', ...) -> behaviour.")
    weight: float = Field(ge=0.0, le=1.0)
    scale: tuple[int, int] = Field(description="Inclusive (min, max) integer scale.")
    gate: bool = Field(False, description="A score at the scale minimum is a gate failure.")

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"dimension name {name!r} must match {_NAME.pattern}")
        if name.lower() in RESERVED_NAMES:
            raise ValueError(f"dimension name {name!r} is reserved ({sorted(RESERVED_NAMES)})")
        return name

    @model_validator(mode="after")
    def _anchors_fit_scale(self) -> Dimension:
        low, high = self.scale
        if low >= high:
            raise ValueError(f"dimension '{self.name}': scale {self.scale} must have min < max")
        if not self.anchors:
            raise ValueError(f"dimension '{self.name}': at least one anchor is required")
        bands = sorted(parse_band(band) for band in self.anchors)
        for (_, a_high), (b_low, _) in itertools.pairwise(bands):
            if b_low <= a_high:
                raise ValueError(f"dimension '{self.name}': anchor bands overlap at {b_low}")
        if bands[0][0] < low or bands[-1][1] > high:
            raise ValueError(f"dimension '{self.name}': anchors lie outside the scale {self.scale}")
        return self


class CeilingRule(_Frozen):
    """``dimension`` scored below ``below`` caps the overall score at ``cap``."""

    dimension: str
    below: float
    cap: float


class Rubric(_Frozen):
    """A validated rubric; every dimension shares one scale, on which the overall is reported."""

    name: str = Field(min_length=1)
    description: str = ""
    dimensions: tuple[Dimension, ...] = Field(min_length=1)
    confidence_scale: tuple[int, int] | None = None
    ceilings: tuple[CeilingRule, ...] = ()
    gate_cap: float = Field(0.0, description="Overall score given to a gate failure.")

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        names = [d.name.lower() for d in self.dimensions]
        if len(set(names)) != len(names):
            raise ValueError(f"dimension names must be unique (case-insensitive): {names}")
        scales = {d.scale for d in self.dimensions}
        if len(scales) != 1:
            # The overall is a weighted mean reported on the dimensions' scale; mixed scales
            # would make it (and the ceiling caps) meaningless.
            raise ValueError(f"all dimensions must share one scale, got {sorted(scales)}")
        check_weights_sum(self.dimensions)
        for rule in self.ceilings:
            if rule.dimension not in {d.name for d in self.dimensions}:
                raise ValueError(f"ceiling names unknown dimension '{rule.dimension}'")
        confidence = self.confidence_scale
        if confidence is not None and confidence[0] >= confidence[1]:
            raise ValueError(f"confidence_scale {self.confidence_scale} must have min < max")
        return self

    @property
    def scale(self) -> tuple[int, int]:
        """The common scale of every dimension and of the overall score."""
        return self.dimensions[0].scale

    @property
    def dimension_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions)

    def dimension(self, name: str) -> Dimension:
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(f"rubric '{self.name}' has no dimension '{name}'")

    def scale_of(self, dimension: str) -> tuple[int, int]:
        return self.dimension(dimension).scale

    def overall_max(self) -> float:
        return float(self.scale[1])


def check_weights_sum(dimensions: tuple[Dimension, ...], context: str = "") -> None:
    """Raise ValueError naming every weight unless they sum to 1 within ``WEIGHT_TOLERANCE``."""
    total = math.fsum(d.weight for d in dimensions)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        listing = ", ".join(f"{d.name}={d.weight:g}" for d in dimensions)
        raise ValueError(f"{context}weights must sum to 1, got {total:.6g} ({listing})")


def weight_env_var(dimension: str) -> str:
    """``task_success`` -> ``JURYBOX_WEIGHT_TASK_SUCCESS``."""
    return WEIGHT_ENV_PREFIX + re.sub(r"[^A-Z0-9]", "_", dimension.upper())


def apply_weight_overrides(rubric: Rubric, env: Mapping[str, str], source: str) -> Rubric:
    """Apply ``JURYBOX_WEIGHT_*`` overrides; refuse (ConfigError) unless weights still sum to 1.

    A variable naming no dimension of this rubric is an error: a misspelt name would otherwise
    leave the weight it meant to change as it was, silently.
    """
    _check_override_names(rubric, env, source)
    overrides: dict[str, float] = {}
    for dim in rubric.dimensions:
        var = weight_env_var(dim.name)
        if var in env:
            overrides[dim.name] = _parse_weight(var, env[var], source, dim.name)
    if not overrides:
        return rubric
    dims = tuple(
        d.model_copy(update={"weight": overrides.get(d.name, d.weight)}) for d in rubric.dimensions
    )
    used = ", ".join(f"{weight_env_var(n)}={w:g}" for n, w in overrides.items())
    try:
        check_weights_sum(dims, context=f"after the environment overrides {used}, ")
    except ValueError as exc:
        raise ConfigError(
            f"{exc}; set the variables so that all weights sum to 1", path=source, field="weight"
        ) from None
    return rubric.model_copy(update={"dimensions": dims})


def _check_override_names(rubric: Rubric, env: Mapping[str, str], source: str) -> None:
    known = {weight_env_var(dim.name) for dim in rubric.dimensions}
    unknown = sorted(var for var in env if var.startswith(WEIGHT_ENV_PREFIX) and var not in known)
    if unknown:
        raise ConfigError(
            f"environment variable {', '.join(unknown)} names no dimension of rubric "
            f"'{rubric.name}' (known: {', '.join(sorted(known))})",
            path=source,
            field="weight",
        )


def _parse_weight(var: str, raw: str, source: str, dim: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ConfigError(
            f"environment variable {var}={raw!r} must be a number between 0 and 1",
            path=source,
            field=f"dimensions.{dim}.weight",
        )
    return value


def is_rubric_path(name_or_path: str) -> bool:
    return any(sep in name_or_path for sep in ("/", "\\")) or name_or_path.endswith(
        (".yaml", ".yml")
    )


def _builtin_dir() -> Any:
    return resources.files("jurybox.rubrics").joinpath("builtin")


def builtin_rubric_names() -> list[str]:
    """Names of the rubrics shipped in ``rubrics/builtin``."""
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in _builtin_dir().iterdir()
        if entry.name.endswith(".yaml")
    )


def _read_source(name_or_path: str, base_dir: Path | None) -> tuple[str, str]:
    """(YAML text, label for error messages) of a built-in name or a file path."""
    if not is_rubric_path(name_or_path):
        names = builtin_rubric_names()
        if name_or_path not in names:
            raise ConfigError(
                f"unknown built-in rubric '{name_or_path}' (built-in: {', '.join(names)}); "
                "give a path to a .yaml file for your own rubric",
                field="rubric",
            )
        entry = _builtin_dir().joinpath(f"{name_or_path}.yaml")
        return entry.read_text(encoding="utf-8"), f"builtin:{name_or_path}"
    path = Path(name_or_path)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except FileNotFoundError:
        raise ConfigError("rubric file not found", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not valid UTF-8 ({exc.reason})", path=str(path)) from None


def read_yaml_mapping(text: str, source: str) -> dict[str, Any]:
    """Parse YAML text that must hold a mapping; errors name the file and line."""
    data = load_yaml(text, source)  # not YAML, or a duplicate key: a ConfigError naming lines
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", path=source)
    return data


def validation_error(exc: ValidationError, source: str) -> ConfigError:
    """The first pydantic error as a ConfigError naming the file and the field path."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"]) or None
    message = str(error["msg"]).removeprefix("Value error, ")
    return ConfigError(message, path=source, field=field)


def _with_default_scale(data: dict[str, Any]) -> dict[str, Any]:
    """A rubric-level ``scale`` applies to every dimension that does not set its own."""
    data = dict(data)
    scale = data.pop("scale", None)
    dims = data.get("dimensions")
    if scale is not None and isinstance(dims, list):
        data["dimensions"] = [
            {"scale": scale, **d} if isinstance(d, dict) and "scale" not in d else d for d in dims
        ]
    return data


def rubric_from_mapping(
    data: dict[str, Any], *, source: str = "<rubric>", env: Mapping[str, str] | None = None
) -> Rubric:
    """Validate an already-parsed rubric mapping, then apply the weight overrides in ``env``."""
    try:
        rubric = Rubric.model_validate(_with_default_scale(data))
    except ValidationError as exc:
        raise validation_error(exc, source) from None
    return apply_weight_overrides(rubric, os.environ if env is None else env, source)


def load_rubric(
    name_or_path: str, *, base_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> Rubric:
    """Load a built-in rubric by name, or a rubric YAML file by path.

    Args:
        name_or_path: a built-in name (``general``, ``six_dimension``) or a path; anything with
            a path separator or a ``.yaml``/``.yml`` suffix is a path.
        base_dir: folder that relative paths are resolved against (the config file's folder).
        env: environment for ``JURYBOX_WEIGHT_*`` overrides; ``None`` reads ``os.environ``.

    Raises:
        ConfigError: naming the file (and the field) at fault.
    """
    text, source = _read_source(name_or_path, base_dir)
    return rubric_from_mapping(read_yaml_mapping(text, source), source=source, env=env)


def list_builtin_rubrics() -> list[tuple[str, str]]:
    """(name, description) of every built-in rubric, sorted by name."""
    return [(name, load_rubric(name, env={}).description) for name in builtin_rubric_names()]
