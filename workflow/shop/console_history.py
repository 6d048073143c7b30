"""``weekly-shop --history``: what became of the last weeks, and what waits now, in a household's
words first (the week, the outcome, the items); the engine's own (each checkpoint, what wrote
it) only with ``--verbose``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from workflow.engine.runner import Run
from workflow.errors import WorkflowError
from workflow.persistence.checkpoint import written_with
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointStore

from .basket import Basket, count
from .graph import shop_versions
from .outcomes import outcome_log
from .run_state import shop_request
from .shopper import Shopper

LAST_OUTCOMES = 10


def _short(text: str, limit: int = 60) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


def outcomes_lines(store: CheckpointStore, signer: CheckpointSigner) -> list[str]:
    """The last weeks' outcomes, newest first: when, what became of it, the basket, the week."""
    outcomes = outcome_log(store, signer).newest(LAST_OUTCOMES)
    lines = ["Last outcomes:" if outcomes else "No week has ended yet."]
    for o in outcomes:
        at = datetime.fromtimestamp(o.at).isoformat(sep=" ", timespec="minutes")
        asked = f"  {_short(o.request)}" if o.request else ""
        lines.append(f"  {at}  {o.said} (basket {o.round}){asked}")
    return lines


async def waiting_lines(
    store: CheckpointStore,
    checkpoints: SessionCheckpoints,
    shopper: Shopper,
    max_rounds: int,
) -> list[str]:
    """What waits now, in a sentence (nothing is written: the run is only read)."""
    if not store.list(checkpoints.tenant_id, checkpoints.session_id):
        return ["No basket is waiting."]
    try:
        run = await Run.resume(shop_versions(shopper, max_rounds), checkpoints)
    except WorkflowError as exc:
        return [f"A basket is waiting, but it can't be read: {exc}"]
    pending = run.pending_requests.values() if run is not None else ()
    baskets = [p.data for p in pending if isinstance(p.data, Basket)]
    if run is None or not baskets:
        return ["No basket is waiting."]
    asked = shop_request(run)
    basket = baskets[0]
    week = f", for: {_short(asked.text)}" if asked is not None else ""
    return [
        f"Waiting for your answer: basket {basket.round} of {max_rounds}, "
        f"{count(len(basket.items))}{week}. Run weekly-shop to answer it."
    ]


def checkpoint_lines(store: CheckpointStore, tenant: str, session: str) -> list[str]:
    """``--verbose``: the waiting session's checkpoints, oldest first, and what wrote each."""
    infos = store.list(tenant, session)
    if not infos:
        return []
    lines = [f"{len(infos)} checkpoints in this week's session:"]
    for info in infos:
        try:
            record = store.read(tenant, session, info.checkpoint_id)
        except WorkflowError:  # one bad record does not hide the others
            wrote, version = "unreadable", ""
        else:
            wrote = "gone" if record is None else written_with(record.state)
            version = "" if record is None else f" · record v{record.mac}"
        at = info.created_at.isoformat(sep=" ", timespec="seconds")
        lines.append(f"  {info.sequence:>3}  {at}  {info.checkpoint_id}  {wrote}{version}")
    return lines


async def history(
    store: CheckpointStore,
    checkpoints: SessionCheckpoints,
    shopper: Shopper,
    max_rounds: int,
    say: Callable[[str], None],
    verbose: bool = False,
) -> int:
    lines = outcomes_lines(store, checkpoints.signer)
    lines += await waiting_lines(store, checkpoints, shopper, max_rounds)
    if verbose:
        lines += checkpoint_lines(store, checkpoints.tenant_id, checkpoints.session_id)
    for line in lines:
        say(line)
    return 0
