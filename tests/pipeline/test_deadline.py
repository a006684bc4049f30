"""``Deadlines`` (one timer for a judge's calls in flight) behaves as ``asyncio.timeout`` per
call: a call past its limit ends in ``TimeoutError``, the others are left alone, and a
cancellation from elsewhere stays a cancellation."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from jurybox.pipeline.deadline import Deadlines


async def _call(deadlines: Deadlines, seconds: float) -> str:
    with deadlines.bound():
        await asyncio.sleep(seconds)
    return f"answered after {seconds}"


def test_calls_past_the_limit_time_out_and_the_others_answer() -> None:
    async def main() -> list[object]:
        deadlines = Deadlines(0.2)
        runs = [_call(deadlines, seconds) for seconds in (0.01, 0.5, 0.05, 5.0, 0.1)]
        return await asyncio.gather(*runs, return_exceptions=True)

    loop_start = asyncio.new_event_loop()
    try:
        started = loop_start.time()
        results = loop_start.run_until_complete(main())
        elapsed = loop_start.time() - started
    finally:
        loop_start.close()
    assert results[0] == "answered after 0.01"
    assert results[2] == "answered after 0.05"
    assert results[4] == "answered after 0.1"
    assert isinstance(results[1], TimeoutError) and isinstance(results[3], TimeoutError)
    assert 0.2 <= elapsed < 1.0  # the 5 s call was cut at its deadline


def test_calls_started_later_get_their_own_deadline() -> None:
    async def main() -> list[object]:
        deadlines = Deadlines(0.15)
        first = asyncio.ensure_future(_call(deadlines, 0.1))
        await asyncio.sleep(0.1)
        # Started 0.1 s after the first: due at 0.25 s, not at the first one's 0.15 s.
        second = asyncio.ensure_future(_call(deadlines, 0.12))
        third = asyncio.ensure_future(_call(deadlines, 0.3))
        return await asyncio.gather(first, second, third, return_exceptions=True)

    first, second, third = asyncio.run(main())
    assert first == "answered after 0.1" and second == "answered after 0.12"
    assert isinstance(third, TimeoutError)


def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    async def main() -> None:
        deadlines = Deadlines(10.0)
        task = asyncio.ensure_future(_call(deadlines, 5.0))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


@pytest.mark.parametrize("keeper", ["deadlines", "asyncio.timeout"])
def test_a_cancellation_that_comes_with_the_deadline_is_not_a_timeout(keeper: str) -> None:
    """Both (a stop signal while the call winds down from its deadline): the task was asked to
    stop, so it stops; ``asyncio.timeout`` decides the same way (``uncancel``)."""

    async def main() -> None:
        deadlines = Deadlines(0.05)

        async def call() -> None:
            async with contextlib.AsyncExitStack() as stack:
                if keeper == "deadlines":
                    stack.enter_context(deadlines.bound())
                else:
                    await stack.enter_async_context(asyncio.timeout(0.05))
                try:
                    await asyncio.sleep(5.0)
                finally:
                    await asyncio.sleep(0.3)  # winding down: the other cancel comes meanwhile

        task = asyncio.ensure_future(call())
        await asyncio.sleep(0.1)  # past the deadline: the call is winding down
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_bound_needs_a_task() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        outside: asyncio.Future[BaseException | None] = loop.create_future()

        def callback() -> None:  # runs on the loop, in no task
            try:
                Deadlines(1.0).bound().__enter__()
            except RuntimeError as exc:
                outside.set_result(exc)
            else:
                outside.set_result(None)

        loop.call_soon(callback)
        assert "inside a task" in str(await outside)

    asyncio.run(main())


def test_deadlines_serve_one_event_loop_after_another() -> None:
    """A session kept across event loops (an embedding that runs each batch in a loop of its
    own) still times calls out in the next loop, though the first left its timer pending."""
    deadlines = Deadlines(0.05)

    async def first() -> object:
        return await _call(deadlines, 0.01)  # ends before its deadline: the timer stays

    async def second() -> list[object]:
        runs = [_call(deadlines, 0.01), _call(deadlines, 1.0)]
        return await asyncio.gather(*runs, return_exceptions=True)

    assert asyncio.run(first()) == "answered after 0.01"
    fast, slow = asyncio.run(second())
    assert fast == "answered after 0.01" and isinstance(slow, TimeoutError)
