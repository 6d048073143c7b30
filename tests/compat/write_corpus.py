"""Write the compatibility corpus: checkpoint records as the code of the moment writes them.

    .venv/bin/python -m tests.compat.write_corpus FOLDER

Run once, when a checkpoint format, a record version, a payload schema or the graph changes, into
a new folder named for what changed (``format1/`` holds what main wrote before versioning
existed). Never run it over an existing folder: those files are what deployed code wrote, and
``tests/test_compat.py`` proves the current code still resumes every one of them.

Each file is one session's latest checkpoint, exactly as it sits in S3 (the SHOP_RECORDS bytes
at its key), signed with :data:`KEY`, plus what a test needs to answer it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.orders.kroger_values import product_of
from bot.sandbox.anthropic_tools import basket_items
from bot.sandbox.kroger_catalogue import at_store, search
from workflow.engine.runner import Run
from workflow.persistence.memory_store import InMemoryCheckpointStore
from workflow.persistence.s3_keys import S3Keys
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.shop.basket import Item, ShopRequest
from workflow.shop.decision import BasketDecision
from workflow.shop.graph import shop_versions
from workflow.shop.household import Household
from workflow.shop.pricing import Where
from workflow.shop.products import Offer
from workflow.shop.records import SHOP_PREFIX, SHOP_RECORDS
from workflow.shop.shopper import ShopperReply

KEY = b"compat-corpus-signing-key-000000"  # CHECKPOINT_SIGNING_KEY for the corpus tests
TENANT = "T0TEAM"
REQUESTER = "U0ALICE"
# From ShopRequest@2 (the workspace's household in each week's request; format2-request2 on).
HOUSEHOLD = Household(people=4, avoid="pork", staples="oat milk")
STORE_ID = "01400943"  # the stand-in's Kroger Over-the-Rhine (ZIP 45202)
BASKET = "500 g chicken breast\n2 bell peppers\n1 head broccoli\n2 pizza bases\n250 g mozzarella"


class Shopper:
    """Basket 1 as BASKET, each revision one item shorter; ``fail`` makes the next call raise."""

    label = "corpus"

    def __init__(self) -> None:
        self.fail = False

    async def write(self, brief: Any) -> ShopperReply:
        if self.fail:
            raise ConnectionError("the model call failed (as a crashed or unreachable shopper)")
        lines = list(brief.last_basket)[:-1] if brief.change is not None else BASKET.splitlines()
        return ShopperReply(items=basket_items("\n".join(lines)), output_tokens=42)


class Pricer:
    """Prices at one stand-in store from its catalogue, offline (graph version 5 on: every
    basket's prices are in its checkpoint, ``PricedBasket@1``), with a weekly budget of $50."""

    def where(self) -> Where:
        return Where(STORE_ID, "Kroger Over-the-Rhine", budget_cents=5_000)

    async def offers(self, items: Sequence[Item]) -> list[Sequence[Offer]]:
        return [
            [product_of(at_store(found, STORE_ID)) for found in search(item.name)[:10]]
            for item in items
        ]


async def session(
    name: str,
    changes: int,
    fail_revision: bool = False,
    approved_by: str = "",
    held_until: int | None = None,
    edited: bool = False,
) -> dict[str, Any]:
    """One session's latest checkpoint: basket 1 changed ``changes`` times (then a revision
    that fails, with ``fail_revision``), and approved by ``approved_by`` as one of a quorum of
    two (graph version 2 on: the basket waits for the second approval); or, with
    ``held_until``, as the one approval it needs, held for the undo window (graph version 3
    on: the basket waits for its order timer, or an Undo); or, with ``edited``, edited by hand
    (graph version 4 on: its last item removed and oat milk added, the same round)."""
    store, shopper = InMemoryCheckpointStore(), Shopper()
    # As the bot resumes: every version this code keeps (with prices, from graph version 5).
    workflow = shop_versions(shopper, 3, Pricer())
    signer = CheckpointSigner(KEY)
    sid = f"compat-{name}"
    request = ShopRequest(text="tacos on Friday", requested_by=REQUESTER, household=HOUSEHOLD)
    run = Run.start(workflow, request, _cp(store, sid))
    [e async for e in run.watch()]
    for n in range(changes + (1 if fail_revision else 0)):
        run = await Run.resume(workflow, SessionCheckpoints(store, signer, TENANT, sid))
        assert run is not None
        ((request_id, request),) = run.pending_requests.items()
        shopper.fail = fail_revision and n == changes
        decision = BasketDecision(
            approved=False, change=f"change {n + 1}", round=request.data.round
        )
        run.respond(request_id, decision, answered_by="U0BOB")
        [e async for e in run.watch()]
    if approved_by:
        run = await Run.resume(workflow, SessionCheckpoints(store, signer, TENANT, sid))
        assert run is not None
        ((request_id, request),) = run.pending_requests.items()
        approval = BasketDecision(
            approved=True,
            round=request.data.round,
            approvals=(approved_by,),
            needed=1 if held_until else 2,
            hold_until=held_until,
        )
        run.respond(request_id, approval, answered_by=approved_by)
        [e async for e in run.watch()]
    if edited:
        run = await Run.resume(workflow, SessionCheckpoints(store, signer, TENANT, sid))
        assert run is not None
        ((request_id, request),) = run.pending_requests.items()
        items = [*request.data.items[:-1], Item(name="oat milk", quantity=1, unit="l")]
        run.respond(
            request_id, BasketDecision.edited_to(items, request.data.round), answered_by="U0BOB"
        )
        [e async for e in run.watch()]
    latest = store.latest(TENANT, sid)
    assert latest is not None
    run = await Run.resume(workflow, SessionCheckpoints(store, signer, TENANT, sid))
    assert run is not None
    ((request_id, request),) = run.pending_requests.items()
    return {
        "name": name,
        "tenant": TENANT,
        "session": sid,
        "key": S3Keys(SHOP_PREFIX).checkpoint(TENANT, sid, latest.sequence),
        "checkpoint_id": latest.checkpoint_id,
        "request_id": request_id,
        "round": request.data.round,
        "items": request.data.to_json()["items"],
        "answered": len(run.answered),
        **({"held_until": held_until} if held_until else {}),
        "bytes": base64.b64encode(SHOP_RECORDS.to_bytes(latest)).decode(),
    }


def _cp(store: InMemoryCheckpointStore, sid: str) -> SessionCheckpoints:
    return SessionCheckpoints(store, CheckpointSigner(KEY), TENANT, sid)


def settings_document(target: Path, commit: str) -> None:
    """A workspace's settings document as this code saves it (``settings-v<n>/``), signed with
    the settings key a deploy with :data:`KEY` derives, with what a test needs to read it."""
    from bot.records.order_choice import OrderChoice
    from bot.records.weekly import WeeklyRun
    from bot.records.workspace_settings import ChosenStore, WorkspaceSettings
    from bot.records.workspace_settings_store import SCHEMA_VERSION, encode
    from bot.runtime import Runtime
    from bot.settings import Settings

    settings = Settings.from_env(
        {
            "SLACK_SIGNING_SECRET": "compat-corpus-signing-secret",
            "SLACK_BOT_TOKEN": "xoxb-compat",
            "CHECKPOINT_BUCKET": "compat-bucket",
            "CHECKPOINT_SIGNING_KEY": KEY.decode(),
        }
    )
    key = Runtime.from_settings(settings, web=object()).records.lasting_key(
        b"weekly-shop settings v1"
    )
    saved = WorkspaceSettings(
        approvers=("U0CAROL", "U0DAVE"),
        approvals_needed=2,
        no_self_approval=True,
        rounds=4,
        remind_after=4 * 3600,
        max_reminders=3,
        expire_after=5 * 86400,
        order_delay=5 * 60,  # schema 2 on: the undo window
        # schema 3 on: where orders go; 5 on: a Kroger cart, and whose
        orders=OrderChoice(destination="kroger", kroger_cart="U0DAVE", kroger_modality="DELIVERY"),
        weekly=WeeklyRun("C0WEEKLY", "sat", "09:30", "Europe/London", "dinners for four"),
        household=HOUSEHOLD,
        # schema 4 on: the household's store and weekly budget
        store=ChosenStore(
            location_id=STORE_ID, name="Kroger Over-the-Rhine", address="1420 Vine St"
        ),
        budget_cents=5_500,
        admins=("U0ERIN",),
    ).saved_by("U0CAROL", 1_796_000_000, "approvers, approvals needed")
    generation = 7  # settings-v3-generation on: the save's signed generation (its 7th save)
    record = {
        "tenant": TENANT,
        "schema": SCHEMA_VERSION,
        "generation": generation,
        "settings": saved.to_json(),
        "bytes": base64.b64encode(encode(key, TENANT, saved, generation)).decode(),
        "written_by": f"weekly-shop at {commit}",
    }
    (target / "settings.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{target.name}/settings.json: schema {SCHEMA_VERSION}")


def main(folder: str) -> None:
    target = Path(__file__).parent / folder
    if target.exists():
        raise SystemExit(f"{target} exists: a corpus folder is written once, never again")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    target.mkdir()
    if folder.startswith("settings-"):
        settings_document(target, commit)
        return
    cases = {
        "pending-round-1": session("round1", 0),
        "pending-round-3": session("round3", 2),
        "revision-failed-at-the-model": session("failed", 0, fail_revision=True),
        "answered-in-the-audit-trail": session("answered", 1),
        # From graph version 2 (a quorum): one approval of two counted, the basket asked again.
        "approved-by-one-of-two": session("quorum", 0, approved_by="U0CAROL"),
        # From graph version 3 (the undo window): approved, held until its order timer fires.
        "held-for-undo": session("held", 0, approved_by="U0CAROL", held_until=1_900_000_000),
        # From graph version 4 (Edit items): edited by hand, waiting for approval again.
        "edited-by-hand": session("edited", 0, edited=True),
    }
    for name, made in cases.items():
        record = asyncio.run(made)
        record["written_by"] = f"weekly-shop at {commit}"
        (target / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        print(f"{target.name}/{name}.json: round {record['round']}, {record['answered']} answered")


if __name__ == "__main__":
    main(sys.argv[1])
