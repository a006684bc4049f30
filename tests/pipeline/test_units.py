from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jurybox.errors import ConfigError, DatasetError
from jurybox.pipeline import plan_units
from jurybox.pipeline.units import make_batches, sample_seed

from .helpers import make_config, make_items

DATA = Path("data.jsonl")
OUT = Path("out")


def three_judges(**sections: object) -> dict[str, object]:
    judges = {name: {"provider": "fake"} for name in ("a", "b", "c")}
    return {"judges": judges, **sections}


def test_pairwise_both_count_is_items_judges_orders_plus_retest() -> None:
    config = make_config(DATA, OUT, **three_judges(pipeline={"test_retest_count": 10}))
    units = plan_units(config, make_items(39))
    assert len(units) == 39 * 3 * 2 + 10 * 3 == 264
    assert len({unit.key for unit in units}) == 264
    assert sum(unit.retest for unit in units) == 30
    per_judge = Counter(unit.judge for unit in units)
    assert per_judge == {"a": 88, "b": 88, "c": 88}


def test_both_orders_per_item_and_retest_reuses_first_order() -> None:
    config = make_config(DATA, OUT, pipeline={"test_retest_count": 39})
    units = plan_units(config, make_items(39))
    regular = [unit for unit in units if not unit.retest]
    by_item: dict[str, list[tuple[str, ...]]] = {}
    for unit in regular:
        by_item.setdefault(unit.item_id, []).append(unit.order)
    for orders in by_item.values():
        assert orders[1] == orders[0][::-1]
        assert set(orders) == {("control", "treatment"), ("treatment", "control")}
    for unit in (u for u in units if u.retest):
        assert unit.order == by_item[unit.item_id][0]
        assert unit.ordering == f"{unit.order[0]}_first"
    # The seeded first order is not always the dataset order (else "both" hides nothing).
    firsts = Counter(orders[0][0] for orders in by_item.values())
    assert firsts["control"] > 5 and firsts["treatment"] > 5


def test_random_mode_is_seeded_per_item_and_stable_under_added_items() -> None:
    config = make_config(DATA, OUT, pipeline={"position_bias_mode": "random"})
    small = {u.item_id: u.order for u in plan_units(config, make_items(20)) if not u.retest}
    large = {u.item_id: u.order for u in plan_units(config, make_items(60)) if not u.retest}
    assert len(small) == 20
    assert all(large[item_id] == order for item_id, order in small.items())
    assert 15 < Counter(order[0] for order in large.values())["control"] < 45
    other = make_config(DATA, OUT, pipeline={"position_bias_mode": "random", "random_seed": 7})
    reseeded = {u.item_id: u.order for u in plan_units(other, make_items(60)) if not u.retest}
    assert reseeded != large


def test_fixed_mode_keeps_dataset_order() -> None:
    config = make_config(DATA, OUT, pipeline={"position_bias_mode": "fixed"})
    units = plan_units(config, make_items(5))
    assert {unit.ordering for unit in units} == {"control_first"}


def test_rubric_mode_one_unit_per_arm_and_retest_every_arm() -> None:
    config = make_config(DATA, OUT, task={"mode": "rubric"}, pipeline={"test_retest_count": 1})
    units = plan_units(config, make_items(3))
    assert len(units) == 3 * 2 + 1 * 2
    assert {(u.ordering, u.order) for u in units} == {
        ("control", ("control",)),
        ("treatment", ("treatment",)),
    }


def test_ranking_mode_permutation_and_reverse() -> None:
    arms = ("m1", "m2", "m3", "m4")
    config = make_config(DATA, OUT, task={"mode": "ranking"}, pipeline={"test_retest_count": 0})
    units = plan_units(config, make_items(10, arms))
    assert len(units) == 20
    for first, second in zip(units[::2], units[1::2], strict=True):
        assert sorted(first.order) == list(arms)
        assert second.order == first.order[::-1]
        assert first.ordering == ">".join(first.order)
    assert len({unit.order for unit in units}) > 4


def test_criterion_mode_one_unit_per_criterion_and_arm() -> None:
    config = make_config(
        DATA,
        OUT,
        task={"mode": "criterion", "criteria": ["crit/concise.yaml", "crit/correct.yaml"]},
        pipeline={"test_retest_count": 0},
    )
    units = plan_units(config, make_items(4))
    assert len(units) == 4 * 2 * 2
    assert {u.criterion for u in units} == {"concise", "correct"}
    assert len({u.key for u in units}) == len(units)


def test_repeats_multiply_regular_units_only() -> None:
    config = make_config(DATA, OUT, pipeline={"repeats": 3, "test_retest_count": 2})
    units = plan_units(config, make_items(5))
    assert len(units) == 5 * 2 * 3 + 2
    assert {u.repeat for u in units if u.retest} == {0}


def test_explicit_retest_ids_and_unknown_ids() -> None:
    config = make_config(DATA, OUT, pipeline={"test_retest_query_ids": ["q004", "q001"]})
    units = plan_units(config, make_items(6))
    assert sorted(u.item_id for u in units if u.retest) == ["q001", "q004"]
    bad = make_config(DATA, OUT, pipeline={"test_retest_query_ids": ["nope"]})
    with pytest.raises(ConfigError, match="nope"):
        plan_units(bad, make_items(6))


def test_bad_arms_are_input_errors() -> None:
    config = make_config(DATA, OUT)
    with pytest.raises(ConfigError, match=r"task\.arms"):
        plan_units(config, make_items(3, ("a", "b", "c")))
    picked = make_config(DATA, OUT, task={"arms": ["a", "c"]})
    assert {u.order for u in plan_units(picked, make_items(3, ("a", "b", "c")))} <= {
        ("a", "c"),
        ("c", "a"),
    }
    missing = make_config(DATA, OUT, task={"arms": ["a", "z"]})
    with pytest.raises(DatasetError, match="'z'"):
        plan_units(missing, make_items(3, ("a", "b")))
    duplicated = make_items(2) + make_items(1)
    with pytest.raises(DatasetError, match="duplicate"):
        plan_units(config, duplicated)


def test_batches_group_one_judge_and_one_pass() -> None:
    config = make_config(
        DATA,
        OUT,
        judges={"a": {"provider": "fake"}, "b": {"provider": "fake"}},
        task={"batch_size": 4},
        pipeline={"test_retest_count": 3},
    )
    units = plan_units(config, make_items(5))
    batches = make_batches(config, units)
    assert sorted(len(b) for b in batches) == [2, 2, 3, 3, 4, 4, 4, 4]
    for batch in batches:
        assert len({(u.judge, u.repeat, u.retest) for u in batch}) == 1
    assert [u for batch in batches for u in batch] == units
    single = make_config(DATA, OUT, task={"mode": "rubric", "batch_size": 4})
    assert all(len(b) == 1 for b in make_batches(single, plan_units(single, make_items(3))))


def test_sample_seed_differs_for_repeats_and_retests() -> None:
    seeds = {sample_seed(42, r, t) for r in range(3) for t in (False, True)}
    assert len(seeds) == 6
    assert sample_seed(42, 0, False) == 42
