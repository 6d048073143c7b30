"""Lost work is finished by Lambda's own retries, not by the next person to click.

Lambda retries a failed asynchronous invocation (crashed, out of memory, timed out) about one
minute later and again about two minutes after that (docs.aws.amazon.com, "Lambda: asynchronous
invocation"). The dead attempt's lease (LOCK_TTL_SECONDS, 90 s in serverless.yml, longer than
the 60 s timeout) is still live at the first retry. The retry carries the same event, so it does
the same *work* (the slash command's session, the click's trigger ID) and takes the dead
attempt's lock over at once: a lock of the same work taken at least LOCK_RETRY_AFTER_SECONDS (30
s) ago is a dead attempt's, a younger one the same event delivered twice at once
(``test_the_same_event_delivered_twice_at_once_is_answered_once``). Here the lease is the
deployed 90 s and the retry comes a played minute later (``bot.sandbox.clock``), inside it. Each
ends with exactly one basket or one outcome, and no lock.
"""

from __future__ import annotations

import json
import time

from tests.bot_kit import CHANNEL, World, context_text, header, start_basket
from tests.test_crash_points import check_session

LEASE = 90.0  # serverless.yml's LOCK_TTL_SECONDS
RETRY_WAIT = 60.0  # "a one-minute wait between the first two attempts"


def a_minute_later(world: World) -> None:
    """Lambda's wait before retrying a failed asynchronous invocation, played."""
    world.clock.reach(world.clock() + RETRY_WAIT)


def replies(world: World, message: dict[str, object]) -> list[str]:
    return [m["text"] for m in world.slack.thread(CHANNEL, str(message["ts"]))]


def test_a_start_killed_at_the_model_call_is_finished_by_the_retry(served: World) -> None:
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    world.shop()
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="model-call")
    assert world.baskets() == []
    a_minute_later(world)
    world.in_fresh_process(lost.payload)  # Lambda's first retry, inside the dead lease
    (basket,) = world.baskets()
    assert header(basket) == "Basket 1 of 3"
    check_session(world, json.loads(world.buttons(basket)["approve_basket"])["s"])
    world.in_fresh_process(lost.payload)  # a stray third delivery changes nothing
    assert len(world.baskets()) == 1


def test_an_approve_killed_after_reading_is_finished_by_the_retry(served: World) -> None:
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="checkpoint-read")
    a_minute_later(world)
    world.in_fresh_process(lost.payload)
    assert replies(world, basket) == ["Ordered 10 items."]
    assert "Approved by <@U0BOB>" in context_text(world.baskets()[0])
    check_session(world, json.loads(world.buttons(basket)["approve_basket"])["s"])


def test_a_change_killed_twice_is_finished_by_the_second_retry_with_its_text(
    served: World,
) -> None:
    """The typed change lives only in the event: the retries still have it."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    session = json.loads(world.buttons(basket)["approve_basket"])["s"]
    world.click(basket, "change_basket")
    world.submit_change("no pizza, we are away on Friday")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="model-call")
    a_minute_later(world)
    world.in_fresh_process(lost.payload, crash_at="model-call")  # the first retry dies too
    a_minute_later(world)  # (Lambda waits two here: one is still inside the second's lease)
    world.in_fresh_process(lost.payload)  # the second retry
    first, second = world.baskets()
    assert header(second) == "Basket 2 of 3" and world.buttons(second)
    assert "Change asked by <@U0BOB>: no pizza, we are away on Friday" in context_text(first)
    assert "no pizza, we are away on Friday" in json.dumps(world.claude.requests[-1])
    check_session(world, session)


def test_another_click_during_a_live_lease_is_still_told_at_once(served: World) -> None:
    """Only the same work takes a live lease over: someone else's click is told."""
    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    world.in_fresh_process(lost.payload, crash_at="checkpoint-read")  # holds the lock, dead
    world.click(basket, "reject_basket", user="U0CAROL")
    world.run_lazies(fresh_process=True)
    told = [e["text"] for e in world.slack.ephemerals("U0CAROL")]
    assert told == ["Someone else is answering this basket right now."]
    a_minute_later(world)
    world.in_fresh_process(lost.payload)  # and the approve's retry still finishes
    assert replies(world, basket) == ["Ordered 10 items."]


def test_the_same_event_delivered_twice_at_once_is_answered_once(served: World) -> None:
    """Lambda's queue "may deliver the same event more than once" even without an error: two
    deliveries of one Approve at once. The second meets the first's lock, of the same work but
    taken a moment ago: not a dead attempt's. It does nothing, says nothing, and raises, so
    that Lambda retries it a minute later, when it finds the work done and the channel showing
    it. Before, it took the lock over and said "Ordered" a second time."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    world = served
    world.boot(LOCK_TTL_SECONDS=str(LEASE))
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (delivery,) = world.lam.take()
    together = threading.Barrier(2, timeout=30)

    def first() -> dict[str, object]:
        together.wait()
        return world.in_fresh_process(delivery.payload, hold_lock=3.0)

    def second() -> dict[str, object]:
        together.wait()
        time.sleep(1.0)  # meets the first's lock, held
        return world.in_fresh_process(delivery.payload, fails=True)

    with ThreadPoolExecutor(2) as pool:
        done = [pool.submit(first), pool.submit(second)]
        results = [d.result() for d in done]
    assert "the same work is being done by another delivery" in str(results[1]["logs"])
    assert replies(world, basket) == ["Ordered 10 items."]
    a_minute_later(world)
    world.in_fresh_process(delivery.payload)  # Lambda's retry of the second: nothing to do
    assert replies(world, basket) == ["Ordered 10 items."]
    check_session(world, json.loads(world.buttons(basket)["approve_basket"])["s"])
