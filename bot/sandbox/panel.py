"""The "Checkpoints" side panel: each session as the household sees it, then as the store holds it.

A card leads with the household's words: the channel, the request's first words and the basket's
number (from its outcome record, its waiting basket's receipt, or its latest checkpoint), where it
is (:class:`Status`: waiting for an answer, approved and held for its undo window with the time
its order goes, ordered, ...) and who asked and answered, named as the page names them
(``people``), not by their IDs. One click away (the page's "How it is stored"), the mechanism:
every superstep appends a checkpoint, a click takes the lock, and the pending request in the
latest checkpoint is the basket on screen; each checkpoint says what wrote it (the workflow's
name and graph version, the document format and the record version: docs, "Changing the
workflow"). :func:`timers` lists what Scheduler will fire: each waiting or held basket's next
timer and each workspace's weekly run with its next time (``scheduler_player``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bot.records.history import MAX_MS, Ended, session_of
from bot.records.receipts import Waiting
from bot.runtime import Runtime
from bot.steps.home import LISTED
from workflow.errors import WorkflowError
from workflow.persistence.checkpoint import written_with
from workflow.persistence.s3_store import S3CheckpointStore

Name = Callable[[str], str]  # a user ID -> how the page names them


class Status(StrEnum):
    """Where a session is: its outcome record says how it ended; until then its latest
    checkpoint says whether a basket waits for an answer (or the lock that a turn is running)."""

    WAITING = "waiting"  # the latest checkpoint has a pending request: a basket with buttons
    HELD = "held"  # approved, its order held for the undo window (its timer orders it)
    WORKING = "working"  # no basket waits and it has not ended: the shopper writes a basket
    ORDERED = "ordered"
    REJECTED = "rejected"
    EXPIRED = "expired"
    FAILED = "failed"  # the shopper could not write the first basket


def status(ended: Ended | None, state: dict[str, Any] | None) -> Status:
    """The session's status from its outcome record, else from its latest checkpoint's state
    (``state``: the checkpoint document; None when it has none)."""
    if ended is not None:
        return Status(ended.kind)
    if state is None:
        return Status.WORKING
    if state.get("requests"):
        return Status.HELD if held(state) else Status.WAITING
    decision = _last_decision(state)
    if decision is None or decision.get("change"):  # not answered yet, or the next basket
        return Status.WORKING
    if decision.get("approved"):
        return Status.ORDERED
    return Status.EXPIRED if decision.get("expired_at") is not None else Status.REJECTED


def held(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The approval that holds the waiting basket for its undo window (``hold_until``, its
    ``approvals``), from the checkpoint's shared state, as ``workflow.shop.run_state.held_of``
    reads it; None when the basket waits for an answer."""
    shop = ((state or {}).get("state") or {}).get("n:shop") or {}
    counted = (shop.get("approvals") or {}).get("v")
    asked = [r.get("data", {}).get("v", {}).get("round") for r in (state or {}).get("requests", [])]
    if not isinstance(counted, dict) or counted.get("hold_until") is None:
        return None
    return counted if counted.get("round") in asked else None


def _last_decision(state: dict[str, Any]) -> dict[str, Any] | None:
    answered = list((state.get("answered") or {}).values())
    value = answered[-1].get("response", {}).get("v") if answered else None
    return value if isinstance(value, dict) else None


def sessions(rt: Runtime, tenant: str, people: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every session of ``tenant``, newest first, with its checkpoints oldest first; a session
    that ended with no checkpoint left (a first basket that failed) from its outcome alone."""
    store = rt.records.store
    if not isinstance(store, S3CheckpointStore):  # the sandbox always runs on (moto) S3
        return []
    prefix = store.keys.tenant(tenant) + "s/"
    s3 = store.s3
    bucket = rt.settings.checkpoint_bucket
    sizes: dict[str, dict[str, int]] = {}
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                session, _, rest = obj["Key"][len(prefix) :].partition("/")
                sizes.setdefault(session, {})[rest] = int(obj["Size"])
        outcomes = _outcomes(rt, tenant)
        waiting = dict(rt.records.receipts.waiting(tenant, outcomes))
    except (ClientError, BotoCoreError, WorkflowError):
        return []

    def name(user: str) -> str:  # a person as the page names them (Alice), else their ID
        return people.get(user, user)

    found = [
        _session(rt, store, tenant, s, objects, outcomes.get(s, ("", None))[1], name)
        | _where(outcomes.get(s, ("", None))[1], waiting.get(s))
        for s, objects in sizes.items()
        # a folder with neither checkpoints nor a lock holds only markers (a first basket's
        # draft claim, bot.records.drafts): its session is shown from its outcome, if any
        if any(k.startswith("cp/") or k == "lock" for k in objects)
    ]
    found += [
        _ended_only(s, n, e, name) | _where(e, None)
        for s, (n, e) in outcomes.items()
        if s not in sizes
    ]
    return sorted(found, key=lambda s: s["updated"], reverse=True)


FIRST_WORDS = 6  # of the request, on a card: enough to tell two sessions apart


def first_words(text: str) -> str:
    """The request's first words, "…" when there is more."""
    words = text.split()
    return " ".join(words[:FIRST_WORDS]) + (" …" if len(words) > FIRST_WORDS else "")


def _where(ended: Ended | None, waiting: Waiting | None) -> dict[str, Any]:
    """Where the card's messages are: the channel, and the basket's message (``ts``) while one
    waits. The request and the basket's number come from the checkpoint (``_session``) unless
    the outcome record says them."""
    if ended is not None:
        return {
            "channel": ended.channel,
            "request": first_words(ended.request),
            "basket": ended.round,
            "ts": "",
        }
    if waiting is not None:
        return {"channel": waiting.channel, "ts": waiting.ts, "basket": waiting.round}
    return {"channel": "", "ts": ""}


def _outcomes(rt: Runtime, tenant: str) -> dict[str, tuple[str, Ended]]:
    """session -> its outcome record's name and record (one LIST, one GET per ended session)."""
    found: dict[str, tuple[str, Ended]] = {}
    for name in rt.records.history.names(tenant, LISTED):
        session = session_of(name)
        if session is None or session in found:  # names sort newest first
            continue
        ended = rt.records.history.read_name(tenant, name)
        if ended is not None:
            found[session] = (name, ended)
    return found


def _ended_only(session: str, name: str, ended: Ended, person: Name) -> dict[str, Any]:
    """A session of which only its outcome record is left; when it ended is in the record's
    name, to the millisecond (``bot.records.history.record_name``)."""
    ended_at = datetime.fromtimestamp((MAX_MS - int(name[:13])) / 1000, UTC)
    return {
        "session": session,
        "status": Status(ended.kind).value,
        "requested_by": person(ended.requested_by),
        "answered_by": person(ended.answered_by),
        "answer": "answered",
        "checkpoints": [],
        "lock": None,
        "updated": ended_at.isoformat(),
    }


def _people(ended: Ended | None, state: dict[str, Any] | None, name: Name) -> dict[str, Any]:
    """Who asked for the session's baskets, who gave its last answer and what it was
    (``answer``: "changed" for a Change, which leads to the next basket, else "answered"); and
    from the latest checkpoint, the request's first words and the basket's number."""
    shop = ((state or {}).get("state") or {}).get("n:shop") or {}
    request = (shop.get("request") or {}).get("v") or {}
    basket = (shop.get("basket") or {}).get("v") or {}
    seen = {"request": first_words(str(request.get("text", ""))), "basket": basket.get("round")}
    if ended is not None:
        who = {"requested_by": name(ended.requested_by), "answered_by": name(ended.answered_by)}
        return seen | who | {"answer": "answered"}
    answered = list(((state or {}).get("answered") or {}).values())
    by = answered[-1].get("by", "") if answered else ""
    decision = _last_decision(state or {}) or {}
    hold = held(state)
    if hold is not None:  # approved, ordering at hold_until unless someone presses Undo
        approvers = [name(str(u)) for u in dict.fromkeys(hold.get("approvals") or [])]
        seen |= {"ordering_at": int(hold["hold_until"]), "approved_by": approvers}
    return seen | {
        "requested_by": name(str(request.get("requested_by", ""))),
        "answered_by": name(by),
        "answer": "changed" if decision.get("change") else "answered",
    }


def _session(
    rt: Runtime,
    store: S3CheckpointStore,
    tenant: str,
    session: str,
    objects: dict[str, int],
    ended: Ended | None,
    name: Name,
) -> dict[str, Any]:
    try:
        infos = store.list(tenant, session)
        latest = store.latest(tenant, session)
        lease = rt.records.lock.holder(tenant, session)
    except WorkflowError as exc:
        return {"session": session, "error": str(exc), "checkpoints": [], "updated": ""}
    state = None if latest is None else json.loads(latest.state)
    pending = [f"{r['port']} {r['id'][:8]}" for r in (state or {}).get("requests", [])]
    keys = store.keys
    checkpoints = [
        {
            "id": info.checkpoint_id,
            "parent": info.parent_checkpoint_id,
            "run": info.run_id[-8:],
            "created_at": info.created_at.isoformat(timespec="seconds"),
            "size": objects.get(
                keys.checkpoint(tenant, session, info.sequence)[
                    len(keys.session(tenant, session)) :
                ],
                0,
            ),
            "pending": pending if latest and info.checkpoint_id == latest.checkpoint_id else [],
            "version": _written_by(store, tenant, session, info.checkpoint_id),
        }
        for info in infos
    ]
    return {
        "session": session,
        "status": status(ended, state).value,
        **_people(ended, state, name),
        "checkpoints": checkpoints,
        "lock": None
        if lease is None
        else {"owner": name(lease.owner.split(":")[0]), "expires_at": lease.expires_at},
        "updated": infos[-1].created_at.isoformat() if infos else "",  # newest first, to the µs
    }


def _written_by(store: S3CheckpointStore, tenant: str, session: str, checkpoint_id: str) -> str:
    try:
        record = store.read(tenant, session, checkpoint_id)
    except WorkflowError:
        return "unreadable"
    return "" if record is None else f"{written_with(record.state)} · record v{record.mac}"


def timers(rt: Runtime, tenant: str | None = None, player: Any = None) -> list[dict[str, Any]]:
    """The timers armed on (moto's) EventBridge Scheduler, the next due first: those of
    ``tenant``'s sessions (when given), each basket's, and its weekly run with its next time
    from the ``player`` (a ``SchedulePlayer``), in the run's own time zone and in UTC."""
    armed = rt.schedules.timers
    if armed is None:
        return []
    try:
        pending = armed.pending()
        upcoming = [] if player is None else player.upcoming(read=False)
    except (ClientError, BotoCoreError):
        return []
    found = [
        {"session": t.session, "kind": t.kind, "n": t.n, "at": t.at, "thread_ts": t.thread_ts}
        for t in pending
        if tenant in (None, t.tenant)
    ]
    for u in upcoming:
        if not u.name.startswith("weekly-") or tenant not in (None, u.name[len("weekly-") :]):
            continue
        try:
            run = json.loads(str(u.payload.get("weekly_shop_run")))
        except ValueError:
            continue
        found.append(
            {
                "kind": "weekly",
                "at": u.at,
                "channel": run.get("channel", ""),
                "request": first_words(str(run.get("request", ""))),
                "local": _when(u.at, u.timezone) + f" {u.timezone}",
                "utc": _when(u.at, "UTC") + " UTC",
            }
        )
    return sorted(found, key=lambda t: float(t["at"]))


def _when(at: float, zone: str) -> str:
    """``Mon 7 Dec 09:00`` in ``zone``."""
    from zoneinfo import ZoneInfo

    moment = datetime.fromtimestamp(at, ZoneInfo(zone))
    return f"{moment:%a} {moment.day} {moment:%b %H:%M}"
