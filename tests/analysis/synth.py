"""Synthetic judge records with planted effects, for the analysis tests.

Every generator is seeded. The planted effects (position bias, verbosity bias, self-enhancement,
a treatment effect on one dimension, retest noise) have known sizes, so that tests can check the
report finds each one and none of the absent ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jurybox.records import Item, JudgeRecord, Status

ARMS = ("control", "treatment")
DIMS = ("accuracy", "clarity", "depth")
STAMP = "2025-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class JudgeSpec:
    """How a synthetic judge scores: offsets added to the true quality before rounding."""

    family: str = ""
    leniency: float = 0.0
    noise: float = 0.6
    verbosity: float = 0.0  # points per SD of response length
    self_bonus: float = 0.0  # points added to its own family's responses
    first_bias: float = 0.0  # pairwise: probability of picking position A regardless
    confidence: bool = False


@dataclass
class World:
    """True qualities and response lengths behind the synthetic records."""

    items: list[Item]
    quality: dict[tuple[str, str, str], float] = field(default_factory=dict)
    length_z: dict[tuple[str, str], float] = field(default_factory=dict)
    authors: dict[tuple[str, str], str] = field(default_factory=dict)


def make_world(
    n_items: int,
    rng: np.random.Generator,
    *,
    effect: Mapping[str, float] | None = None,
    families: Sequence[str] = ("alpha", "beta"),
    human: bool = False,
) -> World:
    """Items with random lengths and authors; true quality per item x arm x dimension.

    ``effect`` adds that many points to the treatment arm on the named dimensions.
    """
    effect = {"accuracy": 1.0} if effect is None else dict(effect)
    world = World(items=[])
    for i in range(n_items):
        qid = f"q{i:04d}"
        lengths = {arm: int(rng.integers(100, 2000)) for arm in ARMS}
        fam = list(rng.permutation(list(families)))
        authors = {arm: f"{fam[k % len(fam)]}-model" for k, arm in enumerate(ARMS)}
        for arm in ARMS:
            world.authors[(qid, arm)] = authors[arm]
            world.length_z[(qid, arm)] = (lengths[arm] - 1050) / 550
            base = rng.normal(6.0, 1.2)
            for dim in DIMS:
                bump = effect.get(dim, 0.0) if arm == "treatment" else 0.0
                world.quality[(qid, arm, dim)] = base + rng.normal(0, 0.5) + bump
        meta = {
            "category": ["math", "writing"][i % 2],
            "difficulty": ["easy", "hard"][i % 3 == 0],
            "normal": i % 5 < 2,
        }
        labels: dict[str, Any] = {}
        if human:
            labels = {
                "scores": {
                    arm: {d: int(np.clip(round(world.quality[(qid, arm, d)]), 1, 10)) for d in DIMS}
                    for arm in ARMS
                }
            }
        world.items.append(
            Item(
                id=qid,
                question=f"question {i}",
                responses={a: "x" * n for a, n in lengths.items()},
                metadata=meta,
                authors=authors,
                human=labels,
            )
        )
    return world


def _own(world: World, spec: JudgeSpec, qid: str, arm: str) -> bool:
    return bool(spec.family) and world.authors[(qid, arm)].startswith(spec.family)


def _score(
    world: World, spec: JudgeSpec, cell: tuple[str, str, str], rng: np.random.Generator
) -> tuple[int, float]:
    """A score and the judge's stated confidence (1-5). With ``spec.confidence`` the judge is
    sometimes unsure: then its noise is four times larger and it says so (confidence 1)."""
    qid, arm, dim = cell
    own = _own(world, spec, qid, arm)
    unsure = spec.confidence and rng.random() < 0.3
    noise = rng.normal(0, spec.noise * (4 if unsure else 1))
    value = (
        world.quality[(qid, arm, dim)]
        + spec.leniency
        + noise
        + spec.verbosity * world.length_z[(qid, arm)]
        + (spec.self_bonus if own else 0.0)
    )
    return int(np.clip(round(value), 1, 10)), 1.0 if unsure else 5.0


def _record(**fields: Any) -> JudgeRecord:
    base: dict[str, Any] = {
        "run_id": "synthetic",
        "judge_model": fields["judge_name"] + "-m",
        "status": Status.OK,
        "parse_success": True,
        "raw_response": "{}",
        "timestamp": STAMP,
    }
    base.update(fields)
    return JudgeRecord(**base)


def rubric_records(
    world: World,
    judges: Mapping[str, JudgeSpec],
    rng: np.random.Generator,
    *,
    retest_items: int = 0,
    retest_noise: float | None = None,
) -> list[JudgeRecord]:
    """Rubric mode: one record per item x arm x judge (+ retests of the first items)."""
    out = []
    for name, spec in judges.items():
        for index, item in enumerate(world.items):
            for arm in ARMS:
                passes = [False] + ([True] if index < retest_items else [])
                for retest in passes:
                    noisy = (
                        spec
                        if not retest or retest_noise is None
                        else JudgeSpec(**{**spec.__dict__, "noise": retest_noise})
                    )
                    drawn = {d: _score(world, noisy, (item.id, arm, d), rng) for d in DIMS}
                    scores = {d: v[0] for d, v in drawn.items()}
                    key = f"{item.id}|{name}|{arm}|r0" + ("|retest" if retest else "")
                    out.append(
                        _record(
                            key=key,
                            query_id=item.id,
                            judge_name=name,
                            judge_vendor=spec.family,
                            mode="rubric",
                            presentation_order=arm,
                            positions={"A": arm},
                            retest=retest,
                            scores={arm: scores},
                            confidences={arm: {d: v[1] for d, v in drawn.items()}}
                            if spec.confidence
                            else None,
                            overall={arm: float(np.mean(list(scores.values())))},
                            gate_failures={arm: ["accuracy"] if scores["accuracy"] <= 4 else []},
                        )
                    )
    return out


def pairwise_records(
    world: World, judges: Mapping[str, JudgeSpec], rng: np.random.Generator
) -> list[JudgeRecord]:
    """Pairwise mode in both orders; the judge prefers the arm of higher true total quality
    (plus its noise), except that with probability ``first_bias`` it just picks position A."""
    out = []
    for name, spec in judges.items():
        for item in world.items:
            for order in (ARMS, ARMS[::-1]):
                totals = {
                    arm: sum(world.quality[(item.id, arm, d)] for d in DIMS)
                    + rng.normal(0, spec.noise * 3)
                    + spec.verbosity * 3 * world.length_z[(item.id, arm)]
                    + (3 * spec.self_bonus if _own(world, spec, item.id, arm) else 0.0)
                    for arm in ARMS
                }
                if rng.random() < spec.first_bias:
                    arm = order[0]
                else:
                    arm = max(totals, key=lambda a: totals[a])
                conf = None
                if spec.confidence:
                    margin = abs(totals["control"] - totals["treatment"])
                    conf = "high" if margin > 3 else "medium" if margin > 1 else "low"
                out.append(
                    _record(
                        key=f"{item.id}|{name}|{order[0]}_first|r0",
                        query_id=item.id,
                        judge_name=name,
                        judge_vendor=spec.family,
                        mode="pairwise",
                        presentation_order=f"{order[0]}_first",
                        positions={"A": order[0], "B": order[1]},
                        preference="A" if arm == order[0] else "B",
                        preferred_arm=arm,
                        confidence=conf,
                    )
                )
    return out
