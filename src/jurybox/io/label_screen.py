"""Human labels checked against the judgments they are to calibrate.

A label for a query id the judgments never mention, a preferred arm like ``"banana"``, or a
score that is no finite number (``inf``, ``NaN``, text) used to be counted as if it meant
something. ``screen_labels`` keeps only what can be matched: a label
whose id is unknown is excluded, a field whose value names no arm of the run is dropped (and the
label too when nothing is left), and both are listed so the caller can report them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

_VERDICTS = ("Pass", "Fail")


@dataclass(frozen=True)
class LabelScreen:
    """The labels kept, and what was excluded and why."""

    labels: dict[str, Mapping[str, Any]]
    unknown_ids: tuple[str, ...]
    bad_values: tuple[str, ...]  # "q1: preferred_arm 'banana' is not an arm of the run"

    unknown_arms: tuple[str, ...] = ()  # preferred_arm values that name no arm ("A", "B")

    @property
    def excluded(self) -> int:
        return len(self.unknown_ids) + len(self.bad_values)

    def value_map_hint(self, arms: Collection[str]) -> str | None:
        """The config line that reads the preferred_arm values naming no arm as arms."""
        if not self.unknown_arms:
            return None
        pairs = ", ".join(f"{value}: ARM" for value in self.unknown_arms[:4])
        return (
            f"to read {', '.join(map(repr, self.unknown_arms[:4]))} as arms, map them in the run "
            f"config and pass it with --config: `labels: {{values: {{{pairs}}}}}` (ARM: "
            f"{', '.join(arms)} or tie)"
        )


def _bad_fields(label: Mapping[str, Any], arms: Collection[str]) -> list[str]:
    bad = []
    preferred = label.get("preferred_arm")
    if preferred is not None and preferred != "tie" and preferred not in arms:
        bad.append(f"preferred_arm {preferred!r} is not an arm of the run")
    verdict = label.get("verdict")
    if isinstance(verdict, str) and verdict not in _VERDICTS:
        bad.append(f"verdict {verdict!r} is not Pass or Fail")
    if isinstance(verdict, Mapping) and not set(verdict) <= set(arms):
        bad.append(f"verdict names arms {sorted(set(verdict) - set(arms))} not in the run")
    if verdict is not None and not isinstance(verdict, str | Mapping):
        bad.append(f"verdict {verdict!r} is not Pass or Fail")
    annotators = label.get("annotators")  # several annotators' preferences (a label file)
    if isinstance(annotators, Mapping):
        named = sorted({str(v) for v in annotators.values() if v != "tie" and v not in arms})
        if named:
            bad.append(f"annotators prefer {named}, not arms of the run")
    scores = label.get("scores")
    if isinstance(scores, Mapping) and not set(scores) <= set(arms):
        bad.append(f"scores name arms {sorted(set(scores) - set(arms))} not in the run")
    bad.extend(_not_numbers(label))
    return bad


def _not_numbers(label: Mapping[str, Any]) -> list[str]:
    """Human scores that are no finite number (NaN, ±inf, text): a score must be one."""
    found: list[tuple[str, Any]] = []
    for arm, dims in (label.get("scores") or {}).items():
        if isinstance(dims, Mapping):
            found.extend((f"scores[{arm!r}][{dim!r}]", value) for dim, value in dims.items())
        else:
            found.append((f"scores[{arm!r}]", dims))
    overall = label.get("overall")
    if isinstance(overall, Mapping):
        found.extend((f"overall[{arm!r}]", value) for arm, value in overall.items())
    return [
        f"{where} {value!r} is not a finite number" for where, value in found if not _finite(value)
    ]


def _finite(value: Any) -> bool:
    if value is None:
        return True  # an absent score: nothing to use, nothing wrong
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def screen_labels(
    labels: Mapping[str, Mapping[str, Any]], known_ids: Collection[str], arms: Collection[str]
) -> LabelScreen:
    """Labels whose id is in ``known_ids`` and whose values name ``arms`` (or "tie")."""
    kept: dict[str, Mapping[str, Any]] = {}
    unknown: list[str] = []
    bad_values: list[str] = []
    unknown_arms: dict[str, None] = {}
    for query_id, label in labels.items():
        if query_id not in known_ids:
            unknown.append(query_id)
            continue
        problems = _bad_fields(label, arms)
        bad_values.extend(f"{query_id}: {problem}" for problem in problems)
        preferred = label.get("preferred_arm")
        if isinstance(preferred, str) and preferred != "tie" and preferred not in arms:
            unknown_arms[preferred] = None
        if not problems:
            kept[query_id] = label
    return LabelScreen(kept, tuple(unknown), tuple(bad_values), tuple(unknown_arms))
