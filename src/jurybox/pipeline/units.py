"""Work-unit planning: item x judge x ordering x repeat, plus the test-retest subset.

Orderings come from a per-item RNG seeded by (``pipeline.random_seed``, item id), so adding or
removing items never reshuffles the others. With ``position_bias_mode: both`` an item's *first*
ordering is the seeded one and the second its reverse; retest units reuse the first ordering.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from jurybox.config import RunConfig
from jurybox.errors import ConfigError, DatasetError
from jurybox.modes.registry import mode_class
from jurybox.records import Item, WorkUnit


def item_rng(seed: int, item_id: str) -> random.Random:
    """An RNG private to one item: same seed and id give the same draws whatever the dataset."""
    digest = hashlib.sha256(f"{seed}\x00{item_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sample_seed(seed: int, repeat: int, retest: bool) -> int:
    """The seed sent with a request. Repeats and retests are fresh samples, so they get their own
    seed; that also keeps them apart in the response cache (the seed is part of its key)."""
    return seed + 1009 * repeat + (7919 if retest else 0)


def resolve_arms(config: RunConfig, items: Sequence[Item]) -> tuple[str, ...]:
    """The arms to judge: ``task.arms`` or the first item's; checked against every item."""
    if not items:
        raise DatasetError("the dataset has no items")
    arms = tuple(config.task.arms or items[0].arms)
    mode_class(config.task.mode).check_arms(config.task, arms)
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise DatasetError(f"duplicate item id '{item.id}': ids key the judgments")
        seen.add(item.id)
        missing = [arm for arm in arms if arm not in item.responses]
        if missing:
            raise DatasetError(f"item '{item.id}' has no response for arm(s) {missing}")
    return tuple(arms)


def item_orders(config: RunConfig, item: Item, arms: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Presentation orders of one item for pairwise / ranking, the first being the retest one."""
    mode = config.pipeline.position_bias_mode
    if mode == "fixed":
        return [arms]
    shuffled = list(arms)
    item_rng(config.pipeline.random_seed, item.id).shuffle(shuffled)
    first = tuple(shuffled)
    if mode == "random":
        return [first]
    return [first, first[::-1]]


def _item_units(
    config: RunConfig, item: Item, judge: str, arms: tuple[str, ...], *, repeat: int, retest: bool
) -> list[WorkUnit]:
    # Seeded from the item's own RNG, so drawing the orders for a mode that ignores them
    # (rubric, criterion) changes nothing for the others.
    orders = item_orders(config, item, arms)
    if retest:
        orders = orders[:1]
    shown = mode_class(config.task.mode).presentations(config.task, arms, orders)
    return [
        WorkUnit(item.id, judge, p.ordering, p.order, repeat, retest, p.criterion) for p in shown
    ]


def retest_ids(config: RunConfig, items: Sequence[Item]) -> list[str]:
    """Ids of the items judged once more: ``test_retest_query_ids`` or the first N items."""
    explicit = config.pipeline.test_retest_query_ids
    if explicit is None:
        return [item.id for item in items[: config.pipeline.test_retest_count]]
    known = {item.id for item in items}
    unknown = [qid for qid in explicit if qid not in known]
    if unknown:
        raise ConfigError(
            f"unknown query id(s) {unknown[:5]} (not in the dataset, or cut by --limit)",
            field="pipeline.test_retest_query_ids",
        )
    return list(dict.fromkeys(explicit))


def plan_units(config: RunConfig, items: Sequence[Item]) -> list[WorkUnit]:
    """Every work unit of a run, in a stable order: judge, then item, then ordering/repeat.

    The mode's ``presentations`` decide an item's units (rubric: one per arm; criterion: one per
    criterion x arm; pairwise and ranking: one per presentation order). Retest units
    (``retest=True``) re-judge the retest items once per judge, given only the first order.
    """
    mode_class(config.task.mode).check_task(config.task)
    arms = resolve_arms(config, items)
    ids = set(retest_ids(config, items))
    units: list[WorkUnit] = []
    for judge in config.judges:
        for item in items:
            for repeat in range(config.pipeline.repeats):
                units.extend(_item_units(config, item, judge, arms, repeat=repeat, retest=False))
        for item in items:
            if item.id in ids:
                units.extend(_item_units(config, item, judge, arms, repeat=0, retest=True))
    return units


def make_batches(config: RunConfig, units: Sequence[WorkUnit]) -> list[list[WorkUnit]]:
    """Units grouped into provider calls: a mode that batches (batch pairwise) puts its batch
    size of one judge's units (and one repeat / retest pass, so one request seed) in a call;
    otherwise one each."""
    size = mode_class(config.task.mode).batch_size(config.task)
    if size <= 1:
        return [[unit] for unit in units]
    groups: dict[tuple[str, int, bool], list[WorkUnit]] = {}
    for unit in units:
        groups.setdefault((unit.judge, unit.repeat, unit.retest), []).append(unit)
    return [group[i : i + size] for group in groups.values() for i in range(0, len(group), size)]
