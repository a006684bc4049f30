"""The records pass leaves the objects already alive out of the cyclic GC's passes (issue #19)
and puts them back after, without undoing a freeze that was there before it."""

from __future__ import annotations

import gc

import pytest

from jurybox.reporting.render.records_pass import alive_left_alone


def test_objects_alive_are_frozen_during_the_pass_and_back_after() -> None:
    assert gc.get_freeze_count() == 0
    alive = [[] for _ in range(1_000)]
    with alive_left_alone():
        assert gc.get_freeze_count() >= len(alive)
    assert gc.get_freeze_count() == 0


def test_back_after_an_error_too() -> None:
    with pytest.raises(RuntimeError), alive_left_alone():
        raise RuntimeError("part way")
    assert gc.get_freeze_count() == 0


def test_a_freeze_made_before_is_kept() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with alive_left_alone():
            pass
        # A frozen object that dies meanwhile leaves the count (a few, in a long test session);
        # an unfreeze would have emptied it.
        assert before - 100 < gc.get_freeze_count() <= before
    finally:
        gc.unfreeze()
