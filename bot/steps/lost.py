"""Where a lazy run Lambda gave up on becomes a message to the person who was waiting for it.

A lazy run that fails every retry, or ages out of the async queue (``maximumEventAge``), is sent by
Lambda's on-failure destination to the lost-lazy-runs queue, which this function also consumes
(an SQS event source, a few records a batch, partial batch failures reported). Each record is the
destination's invocation record (docs.aws.amazon.com, "Capturing records of Lambda asynchronous
invocations")::

    {"version": "1.0", "timestamp": …,
     "requestContext": {"requestId": …, "functionArn": …, "condition": "RetriesExhausted" |
                        "EventAgeExceeded", "approximateInvokeCount": 3},
     "requestPayload": <the original event>,
     "responseContext": {"statusCode": 200, "executedVersion": "$LATEST",
                         "functionError": "Unhandled"},
     "responsePayload": …}

The original event is the signed Slack request Bolt re-invoked itself with (or the weekly
schedule's event). Its signature is checked again (not its age: it is minutes old by now), so
nobody who can write to the queue can make the bot say anything. What it was becomes one message
where it belongs (a marker object per failed request ID, ``<prefix><tenant>/lost/<request ID>``):

    /shop           "I couldn't finish writing your basket — try /shop again."  (to the person,
                    through the command's response_url, which works for 30 minutes)
    Approve/Reject  "<@…> Your approval of basket 2 didn't go through — press Approve again."
                    (in the basket's thread)
    a change        "<@…> Your change didn't go through — press Change… again." (in the thread)
    the schedule    "The weekly basket couldn't be written this time. Try /shop." (the channel:
                    SHOP_CHANNEL, or a workspace's weekly run's own, if its payload verifies)

A basket's timer (``bot.records.timers``: a reminder or the expiry, lost because its session stayed
busy or S3 or Scheduler failed through every retry) is not a message: it is armed again, to fire
``TIMER_RETRY_SECONDS`` from now, under its own name, if its payload verifies (its schedule is
gone: Scheduler deletes a one-time schedule once it fired), at most ``MAX_ATTEMPTS`` times. If the
basket was answered meanwhile, the timer fires and does nothing.

The marker has two states (``bot.records.lost_markers``): a process killed anywhere never leaves
a lost run untold. So a person hears of a lost run at least once, and twice only if a process
dies between telling and marking told (or two deliveries of one record run at the same moment). A
marker without a body (written before the two states) reads as told. A record that cannot be read
(not JSON, a field missing, a request ID not safe in a key) is that record's batch item failure,
never the batch's: SQS delivers it again and, after the queue's ``maxReceiveCount``
(serverless.yml), moves it to the dead-letter queue for a person to read.

Each is counted in the ``LostLazyRuns`` CloudWatch metric (embedded metric format, one JSON log
line), on which serverless.yml sets an alarm.

(A little over 300 lines: every kind of lost run is read, said and marked here, so that one
place decides what a person hears of a run Lambda gave up on.)
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

from botocore.exceptions import BotoCoreError, ClientError
from slack_sdk.signature import SignatureVerifier

from bot.records.drafts import S3Drafts
from bot.records.lost_markers import LostMarkers
from bot.records.receipts import Receipts
from bot.records.timers import MAX_ATTEMPTS, BadTimer, TimerError, Timers, from_payload, is_timer
from bot.records.weekly import BadWeeklyPayload, WeeklySchedules, is_weekly
from bot.records.weekly import from_payload as weekly_from_payload
from bot.slack.lost_said import (
    HOME_UNDO_LOST,
    SCHEDULE_LOST,
    Said,
    home_undo_of,
    lost_change,
    lost_click,
    lost_command,
)
from bot.slack.outbox import Outbox
from workflow.errors import InvalidIdentifier, StoreError
from workflow.persistence.store import validate_id

from .drafting import said_lost

log = logging.getLogger(__name__)

METRIC_NAMESPACE = "weekly-shop"
METRIC = "LostLazyRuns"
TIMER_RETRY_SECONDS = 300


class MalformedRecord(ValueError):
    """An SQS record that is not a Lambda invocation record (not JSON, a field missing)."""


class LostRuns:
    def __init__(
        self,
        outbox: Outbox,
        signing_secret: str,
        metadata_key: bytes,
        *,
        s3: Any,
        bucket: str,
        prefix: str,
        schedule_channel: str = "",
        schedule_tenant: Any = None,
        timers: Timers | None = None,
        weekly: WeeklySchedules | None = None,
        outbox_for: Callable[[str], Outbox] | None = None,
        forget: Callable[[str, float | None], Any] | None = None,
        receipts: Receipts | None = None,
        drafts: S3Drafts | None = None,
    ) -> None:
        self.receipts = receipts  # where a held basket's lost Home-tab Undo is said
        self.drafts = drafts  # a lost /shop's draft message, said lost too
        self.forget = (
            forget  # bot.steps.uninstall.forget_workspace, for a removal Lambda gave up on
        )
        self.timers = timers
        self.weekly = weekly
        self.outbox = outbox
        # The outbox of a lost run's workspace (with many workspaces, its own token).
        self.outbox_for = outbox_for or (lambda tenant: outbox)
        self.verifier = SignatureVerifier(signing_secret)
        self.metadata_key = metadata_key
        self.markers = LostMarkers(s3, bucket, prefix)
        self.schedule_channel = schedule_channel
        self.schedule_tenant = schedule_tenant  # () -> the bot's team ID, asked only if needed

    def handle(self, event: dict[str, Any], function_name: str) -> dict[str, Any]:
        """The SQS batch; the records to try again (Slack or S3 failed, or the record could
        not be read) as batchItemFailures. One record's failure is never the batch's."""
        failures = []
        for record in event["Records"]:
            try:
                done = self._one(record, function_name)
            except (ClientError, BotoCoreError, OSError, StoreError) as exc:
                log.error("a lost run could not be reported yet: %s", type(exc).__name__)
                done = False
            except (MalformedRecord, InvalidIdentifier) as exc:
                log.error("a lost-run record that cannot be read: %s", exc)
                done = False
            except Exception:  # noqa: BLE001 - a bug on one record must not fail the others
                log.exception("a lost-run record failed")
                done = False
            if not done:
                failures.append({"itemIdentifier": record.get("messageId", "")})
        return {"batchItemFailures": failures}

    def _one(self, record: dict[str, Any], function_name: str) -> bool:
        """Report one record; False to have SQS deliver it again (Slack did not take it)."""
        try:
            lost = json.loads(record.get("body") or "")
            request_id = str(lost["requestContext"]["requestId"])
            condition = str(lost["requestContext"].get("condition", ""))
            original = lost["requestPayload"]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MalformedRecord("not a Lambda invocation record") from exc
        validate_id(request_id, "request ID")
        if isinstance(original, dict) and is_timer(original):
            return self._rearm(original, condition, function_name)
        removed = self._removal(original) if isinstance(original, dict) else None
        if removed is not None and self.forget is not None:
            # A workspace's removal Lambda gave up on: done again here (it is idempotent, and
            # keeps a newer installation); an exception makes SQS deliver it again.
            log.error("a workspace's removal was lost (%s); doing it now", condition)
            self.forget(*removed)
            return True
        said = self._what_to_say(original) if isinstance(original, dict) else None
        if said is None:
            log.warning("a lost run that is not ours (or not signed) was dropped")
            return True
        claim = self.markers.claim(said.tenant, request_id)
        if claim is None:
            log.info("lost run %s was reported already", request_id)
            return True
        log.error("a lazy run was lost (%s); telling the person", condition)
        if not self._say(said):
            return False  # the marker stays "claimed": SQS's next delivery tells again
        self.markers.told(claim)
        emit_metric(function_name, condition)
        return True

    def _rearm(self, original: dict[str, Any], condition: str, function_name: str) -> bool:
        """A lost timer, armed again a few minutes from now; False (SQS retries) if Scheduler
        refuses. Lambda may have run part of it: the timer's turn is safe to run again."""
        if self.timers is None:
            log.error("a basket timer was lost and no timers are configured: dropped")
            return True
        try:
            timer = from_payload(original, self.timers.key)
        except BadTimer as exc:
            log.warning("a lost timer that is not ours was dropped: %s", exc)
            return True
        if timer.attempt >= MAX_ATTEMPTS:
            log.error("a basket timer was lost %d times; given up", timer.attempt + 1)
            emit_metric(function_name, condition)
            return True
        again = replace(timer, attempt=timer.attempt + 1)  # still due when it was due
        try:
            self.timers.arm(again, fire_at=int(self.timers.clock()) + TIMER_RETRY_SECONDS)
        except TimerError as exc:
            log.error("a lost timer could not be armed again yet: %s", exc)
            return False
        log.error("a basket timer was lost (%s); armed again", condition)
        emit_metric(function_name, condition)
        return True

    def _say(self, said: Said) -> bool:
        from bot.slack.installs import NotInstalled

        try:
            outbox = self.outbox_for(said.tenant)
        except NotInstalled:  # the workspace removed the app since: nobody to tell
            log.warning("a lost run of a workspace without an installation: dropped")
            return True
        if said.session and self.drafts is not None:  # "being written" would be untrue now
            said_lost(
                self.drafts,
                outbox,
                said.tenant,
                said.session,
                said.channel,
                said.user,
                said.change_of,
            )
        if said.reply_url:
            return outbox.reply(said.reply_url, said.text)
        if said.user:
            return outbox.tell(said.channel, said.user, said.text)
        return outbox.post(said.channel, said.text, said.thread_ts)

    def _what_to_say(self, original: dict[str, Any]) -> Said | None:
        if is_weekly(original):
            return self._lost_weekly(original)
        if original.get("source") == "aws.events" and self.schedule_channel:
            tenant = str(self.schedule_tenant()) if self.schedule_tenant else ""
            return Said(tenant, self.schedule_channel, SCHEDULE_LOST) if tenant else None
        body = self._signed_body(original)
        if body is None:
            return None
        form = dict(parse_qsl(body, keep_blank_values=True))
        if "payload" not in form:
            return lost_command(form)
        try:
            payload = json.loads(form["payload"])
        except ValueError:
            return None
        if not isinstance(payload, dict):
            return None
        if payload.get("type") == "block_actions":
            undo = home_undo_of(payload)
            return lost_click(payload) if undo is None else self._lost_home_undo(*undo)
        if payload.get("type") == "view_submission":
            return lost_change(payload, self.metadata_key)
        return None

    def _lost_home_undo(self, tenant: str, user: str, value: str) -> Said | None:
        """An Undo pressed on the Home tab has no channel: it is said in the thread of the
        basket its receipt names (none: the basket was ordered or answered since)."""
        from bot.slack.blocks import Ref

        ref = Ref.from_value(value)
        try:
            held = None
            if ref is not None and self.receipts is not None:
                held = self.receipts.basket(tenant, ref.session_id)
        except InvalidIdentifier:
            return None
        if ref is None or held is None or held.request_id != ref.request_id:
            return None
        return Said(tenant, held.channel, f"<@{user}> {HOME_UNDO_LOST}", thread_ts=held.ts)

    def _lost_weekly(self, original: dict[str, Any]) -> Said | None:
        """A workspace's weekly run (``bot.records.weekly``), said in its channel if this app
        signed it (its age is not checked: it is a lost run, minutes or hours old)."""
        if self.weekly is None:
            return None
        try:
            firing = weekly_from_payload(original, self.weekly.key)
        except BadWeeklyPayload as exc:
            log.warning("a lost weekly run that is not ours: %s", exc)
            return None
        return Said(firing.team, firing.run.channel, SCHEDULE_LOST)

    def _removal(self, original: dict[str, Any]) -> tuple[str, float | None] | None:
        """(team, event time) of a signed workspace removal (``bot.steps.uninstall.removal_of``)."""
        from .uninstall import removal_of

        body = self._signed_body(original)
        if body is None or not body.startswith("{"):
            return None
        try:
            return removal_of(json.loads(body))
        except ValueError:
            return None

    def _signed_body(self, original: dict[str, Any]) -> str | None:
        """The original request's body if Slack signed it (its age is not checked)."""
        raw = str(original.get("body") or "")
        try:
            body = base64.b64decode(raw).decode() if original.get("isBase64Encoded") else raw
        except (ValueError, binascii.Error):
            return None
        headers = {str(k).lower(): str(v) for k, v in (original.get("headers") or {}).items()}
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        expected = self.verifier.generate_signature(timestamp=timestamp, body=body) or ""
        valid = hmac.compare_digest(expected.encode(), signature.encode())
        return body if timestamp and valid else None


def emit_metric(function_name: str, condition: str) -> None:
    """One lost run, in CloudWatch's embedded metric format: a JSON line on stdout."""
    line = {
        "_aws": {
            "Timestamp": int(time.time() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": METRIC_NAMESPACE,
                    "Dimensions": [["FunctionName"]],
                    "Metrics": [{"Name": METRIC, "Unit": "Count"}],
                }
            ],
        },
        "FunctionName": function_name,
        METRIC: 1,
        "condition": condition,
    }
    print(json.dumps(line), file=sys.stdout, flush=True)
