"""Nothing is lost silently: a lazy run Lambda gave up on becomes a message, once.

The records are built as Lambda's on-failure destination writes them (the original event in
``requestPayload``, the failure in ``requestContext``/``responseContext``) and delivered in an SQS
batch as the event source mapping delivers it, through the real handler.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.sandbox.aws_events import lambda_context, lost_run_record, sqs_event
from bot.sandbox.slack_requests import with_bad_signature
from bot.slack.blocks import START_AGAIN
from bot.slack.lost_said import AGAIN_LOST, RESHOP
from tests import shop_next_deploy
from tests.bot_kit import CHANNEL, TestWorld, World, objects, start_basket
from tests.fault_kit import S3Faults, op, s3_of
from workflow.shop import graph


def deliver(world: World, event: dict[str, Any]) -> dict[str, Any]:
    from bot.handler import handler

    response: dict[str, Any] = handler(json.loads(json.dumps(event)), lambda_context())
    return response


def replies_to_commands(world: World) -> list[str]:
    return [str(r.body.get("text")) for r in world.slack.responses if "/commands/" in r.path]


def metric_lines(out: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith('{"_aws"')]
    return [line for line in lines if line.get("LostLazyRuns") == 1]


def test_a_lost_start_tells_the_person_once_and_counts_it(
    world: World, s3: Any, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    world.shop()
    (lost,) = world.lam.take()  # the lazy run that never finished
    record = lost_run_record(lost.payload, condition="RetriesExhausted")
    assert deliver(world, sqs_event(record)) == {"batchItemFailures": []}
    assert replies_to_commands(world) == [RESHOP]
    deliver(world, sqs_event(record))  # SQS delivers at least once: the same record again
    assert replies_to_commands(world) == [RESHOP]
    (metric,) = metric_lines(capsys.readouterr().out)
    assert metric["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "weekly-shop"
    assert metric["condition"] == "RetriesExhausted" and metric["FunctionName"]
    assert world.claude.message_calls == 0  # it reports, it does not redo the work


def test_a_lost_approve_is_said_in_the_baskets_thread(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    deliver(world, sqs_event(lost_run_record(lost.payload, condition="EventAgeExceeded")))
    said = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])]
    assert said == ["<@U0BOB> Your approval of basket 1 didn't go through — press Approve again."]
    assert world.buttons(world.baskets()[0])  # still there to press


def test_a_lost_change_is_said_in_the_baskets_thread(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "change_basket")
    world.submit_change("no pizza")
    (lost,) = world.lam.take()
    deliver(world, sqs_event(lost_run_record(lost.payload)))
    said = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])]
    assert said == ["<@U0BOB> Your change didn't go through — press Change… again."]


def test_a_lost_start_again_is_said_in_the_retired_baskets_thread(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    basket = start_basket(world)
    monkeypatch.setattr(graph, "shop_versions", shop_next_deploy.removed)
    world.click(basket, "approve_basket")
    world.run_lazies()
    (offer,) = world.slack.thread(CHANNEL, basket["ts"])
    world.click(offer, START_AGAIN, user="U0CAROL")
    (lost,) = world.lam.take()
    deliver(world, sqs_event(lost_run_record(lost.payload)))
    said = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])][1:]
    assert said == [f"<@U0CAROL> {AGAIN_LOST}"]
    assert world.buttons(world.slack.thread(CHANNEL, basket["ts"])[0])  # still there to press


def test_a_record_not_signed_by_slack_says_nothing(world: World, s3: Any, bucket: str) -> None:
    world.shop()
    (lost,) = world.lam.take()
    before = objects(s3, bucket)
    forged = lost_run_record(with_bad_signature(lost.payload))
    assert deliver(world, sqs_event(forged)) == {"batchItemFailures": []}
    assert replies_to_commands(world) == [] and world.slack.messages(CHANNEL) == []
    assert objects(s3, bucket) == before


def test_a_report_slack_does_not_take_is_retried_by_sqs(world: World) -> None:
    basket = start_basket(world)
    world.click(basket, "approve_basket")
    (lost,) = world.lam.take()
    event = sqs_event(lost_run_record(lost.payload))
    world.slack.fail_next("chat.postMessage", status=500)  # Slack is down for this delivery
    answer = deliver(world, event)
    assert answer == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    deliver(world, event)  # SQS delivers it again after the visibility timeout
    said = [m["text"] for m in world.slack.thread(CHANNEL, basket["ts"])]
    assert said == ["<@U0BOB> Your approval of basket 1 didn't go through — press Approve again."]


def markers(s3: Any, bucket: str) -> dict[str, bytes]:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    keys = [o["Key"] for o in listed if "/lost/" in o["Key"]]
    return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def test_a_process_killed_between_claim_and_telling_is_told_by_the_redelivery(
    served: TestWorld,
) -> None:
    """The consumer dies (os._exit, like a killed Lambda) right after claiming the lost run's
    marker: nobody was told, and SQS delivers the record again (it was never deleted). That
    delivery, in another fresh process, finds the marker "claimed", not "told", and tells the
    person; a third delivery finds "told" and says nothing more."""
    world = served
    world.shop()
    (lost,) = world.lam.take()
    event = sqs_event(lost_run_record(lost.payload))
    world.in_fresh_process(event, crash_at="lost-claimed")
    s3 = s3_of(world)
    assert replies_to_commands(world) == []
    assert list(markers(s3, "bot-bucket").values()) == [b"claimed"]
    redelivered = world.in_fresh_process(event)
    assert redelivered["response"] == {"batchItemFailures": []}
    assert replies_to_commands(world) == [RESHOP]
    assert list(markers(s3, "bot-bucket").values()) == [b"told"]
    world.in_fresh_process(event)
    assert replies_to_commands(world) == [RESHOP]


def test_a_marker_from_before_the_two_states_reads_as_told(
    world: World, s3: Any, bucket: str
) -> None:
    """An empty marker (what the single-state consumer wrote once it claimed) is not told again."""
    world.shop()
    (lost,) = world.lam.take()
    record = lost_run_record(lost.payload, request_id="req-old-marker")
    s3.put_object(Bucket=bucket, Key="weekly-shop/T0TEAM/lost/req-old-marker", Body=b"")
    assert deliver(world, sqs_event(record)) == {"batchItemFailures": []}
    assert replies_to_commands(world) == []


MALFORMED = ["unsafe request ID", "fields missing", "body not JSON", "not an object"]


@pytest.mark.parametrize("kind", MALFORMED)
def test_a_malformed_record_is_its_own_failure_not_the_batchs(world: World, kind: str) -> None:
    """Three lost /shop runs in one batch, the middle one unreadable: the other two people are
    told, and only the middle record is a batch item failure (SQS delivers it again, then moves
    it to the dead-letter queue after the queue's maxReceiveCount). A raised exception would
    have made SQS deliver the whole batch again, told nobody, and ended in the dead queue."""
    for text in ("week one", "week two", "week three"):
        world.shop(text=text)
    first, middle, last = (lost_run_record(i.payload) for i in world.lam.take())
    if kind == "unsafe request ID":
        middle = lost_run_record(middle["requestPayload"], request_id="../x")
    elif kind == "fields missing":
        middle = {"version": "1.0", "requestContext": {}}
    event = sqs_event(first, middle, last)
    if kind == "body not JSON":
        event["Records"][1]["body"] = "{not json"
    elif kind == "not an object":
        event["Records"][1]["body"] = "[1, 2]"
    answer = deliver(world, event)
    assert answer == {"batchItemFailures": [{"itemIdentifier": event["Records"][1]["messageId"]}]}
    assert replies_to_commands(world) == [RESHOP, RESHOP]


def test_s3_refusing_the_claim_fails_that_record_and_tells_nobody_yet(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """S3 answers the claim's conditional PUT 503 SlowDown through every botocore attempt (six,
    standard mode): that record is the batch's only failure and nobody hears of it yet; the
    other lost run in the batch is told. SQS's redelivery, S3 back, tells the first person."""
    world.shop(text="week one")
    world.shop(text="week two")
    first, second = (lost_run_record(i.payload) for i in world.lam.take())
    claim = op("PutObject", first["requestContext"]["requestId"])
    fault = faults.add(claim, 503, "SlowDown", times=1000)
    event = sqs_event(first, second)
    answer = deliver(world, event)
    assert answer == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert fault.hits == 6  # botocore's first try and its five retries
    assert replies_to_commands(world) == [RESHOP]
    faults.clear()
    assert deliver(world, sqs_event(first)) == {"batchItemFailures": []}
    assert replies_to_commands(world) == [RESHOP, RESHOP]
    assert sorted(markers(s3, bucket).values()) == [b"told", b"told"]


def test_s3_refusing_to_mark_told_still_counts_the_record_done(
    world: World, s3: Any, bucket: str, faults: S3Faults
) -> None:
    """The person was told, then S3 refuses the If-Match PUT that marks it told: the record is
    done (SQS deletes it, so nobody is told twice by it); the marker is left "claimed"."""
    world.shop()
    (lost,) = world.lam.take()
    faults.add(op("PutObject", "/lost/", conditional="If-Match"), 500, "InternalError", times=1000)
    assert deliver(world, sqs_event(lost_run_record(lost.payload))) == {"batchItemFailures": []}
    assert replies_to_commands(world) == [RESHOP]
    assert list(markers(s3, bucket).values()) == [b"claimed"]
