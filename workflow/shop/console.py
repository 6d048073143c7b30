"""``weekly-shop``: the weekly shop in a terminal, one answer per run if need be.

The first run writes basket 1, prints it and exits ("Waiting for approval."). The next run resumes
from the latest checkpoint, shows the same basket without a model call and asks about it. End of
input leaves the basket waiting. When the workflow ends, the session is deleted, so the next run
starts a new week. A basket saved by a version of the graph that has since been removed says so
and, if asked, starts the same week again. ``--new`` starts the given week even when a basket is
waiting, once the person has agreed to discard it; a week typed while a basket waits says so
and how to start it. ``--history`` prints the last weeks' outcomes (kept in an outcome log beside
the checkpoints, ``workflow.shop.outcomes``) and what waits now; with ``--verbose``, the waiting
session's checkpoints and what wrote each (``workflow.shop.console_history``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from workflow.engine.events import (
    ExecutorFailedEvent,
    OutputEvent,
    RequestInfoEvent,
    WorkflowErrorEvent,
)
from workflow.engine.runner import Run, RunStatus
from workflow.errors import WorkflowError, WorkflowVersionRemoved
from workflow.persistence.folder_store import FolderCheckpointStore
from workflow.persistence.session import SessionCheckpoints
from workflow.persistence.signing import CheckpointSigner
from workflow.persistence.store import CheckpointStore

from .basket import Basket, ShopProgress, ShopRequest, aisle_groups
from .console_history import history
from .decision import APPROVE_WORDS, REJECT_WORDS, BasketDecision
from .executors import UNCHANGED_STEP
from .graph import DEFAULT_MAX_ROUNDS, shop_versions
from .offline import default_shopper
from .outcomes import OutcomeLog, ended_week, outcome_log
from .records import SHOP_PREFIX, SHOP_RECORDS
from .run_state import shop_request
from .shopper import Shopper

TENANT = "local"
SESSION = "weekly-shop"
EXAMPLE_WEEK = (
    "Dinners this week: chicken stir-fry on Monday, lentil soup on Wednesday, "
    "homemade pizza on Saturday. We have rice, onions and olive oil."
)
WAITING = "Waiting for approval. Run again to answer."
QUESTION = "Approve this basket? (y, n or a change) "
LAST_QUESTION = "Approve this basket? (y or n: it is the last one) "
RETIRED = (
    "This basket was saved by a version of weekly-shop that has since been retired, "
    "so it can't be answered any more."
)
AGAIN = "Start the same week again? (y or n) "
KEPT = "The retired basket is left as it is. Run again to start over."
DISCARD = "A basket is waiting for approval. Discard it and start the new week? (y or n) "
KEPT_WAITING = "The waiting basket is kept. Run again without --new to answer it."
DISCARDED = "The waiting basket is discarded."
EXAMPLE = 'No week given, so this is the example week (give yours: weekly-shop "tacos on Friday").'
NEW_WEEK_WAITS = (
    'A basket is waiting for your answer, so "{given}" was not started. Answer this one, or '
    'start the new week with: weekly-shop --new "{given}"'
)
# The console places no order anywhere: what an approval ordered is the list it printed.
SENT_NOWHERE = (
    "The console sends the order nowhere: the basket above is your list. (The Slack bot sends "
    "it to a canvas, Instacart or a webhook.)"
)
CONFIRM = ("y", "yes")  # what a yes-or-no question takes as yes; anything else, or none, is no


def state_dir() -> Path:
    """``$XDG_STATE_HOME/weekly-shop``, else ``~/.local/state/weekly-shop``: never the cwd."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "weekly-shop"


def signing_key() -> CheckpointSigner:
    """``CHECKPOINT_SIGNING_KEY``, else a random key kept (0600) in the state directory."""
    configured = os.environ.get("CHECKPOINT_SIGNING_KEY")
    if configured:
        return CheckpointSigner(configured.encode())
    path = state_dir() / "signing.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return CheckpointSigner(path.read_text().strip().encode())


@contextmanager
def open_store(where: str | None) -> Iterator[CheckpointStore]:
    """A folder store, or ``s3://bucket/prefix`` (endpoint from boto3's own variables)."""
    if where and where.startswith("s3://"):
        from workflow.persistence.s3_store import S3CheckpointStore

        bucket, _, prefix = where[len("s3://") :].partition("/")
        yield S3CheckpointStore(bucket, prefix or SHOP_PREFIX, codec=SHOP_RECORDS)
        return
    folder = FolderCheckpointStore(where or state_dir() / "checkpoints", codec=SHOP_RECORDS)
    try:
        yield folder
    finally:
        folder.close()


class Console:
    def __init__(self, shopper: Shopper, out: TextIO, inp: TextIO, max_rounds: int) -> None:
        self.shopper = shopper
        self.out = out
        self.inp = inp
        self.max_rounds = max_rounds

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def show(self, basket: Basket) -> None:
        last = " — last one: approve or reject" if basket.round >= self.max_rounds else ""
        self.say(f"Basket {basket.round} of {self.max_rounds}{last}:")
        for aisle, items in aisle_groups(basket.items):
            if aisle:
                self.say(f"  {aisle.capitalize()}")
            for item in items:
                self.say(f"    {item.line()}" if aisle else f"  {item.line()}")

    def ask(self, question: str) -> str:
        """One line of input ("" at end of input), echoed when piped so the transcript reads."""
        self.out.write(question)
        self.out.flush()
        line = self.inp.readline()
        if not self.inp.isatty():
            self.say(line.rstrip("\n"))
        return line

    async def run(
        self,
        store: CheckpointStore,
        signer: CheckpointSigner,
        request: str,
        new: bool = False,
        given: bool = True,
    ) -> int:
        """Start the week, or answer the waiting basket; with ``new``, start the week even when
        a basket is waiting (discarded once the person confirms). ``given``: the week was typed
        (not the example), so a waiting basket says it was not started. 1 when the run failed."""
        versions = shop_versions(self.shopper, self.max_rounds)
        checkpoints = SessionCheckpoints(store, signer, TENANT, SESSION)
        week = ShopRequest(text=request)
        if new and not await self.discard_waiting(checkpoints):
            return 0
        try:
            run = await Run.resume(versions, checkpoints)
        except WorkflowVersionRemoved as removed:
            self.say(RETIRED)
            if self.ask(AGAIN).strip().lower() not in CONFIRM:
                self.say(KEPT)
                return 0
            week = shop_request(removed.snapshot) or week  # the same week, not today's default
            await checkpoints.discard()
            checkpoints = SessionCheckpoints(store, signer, TENANT, SESSION)  # a new lineage
            self.say(f"Shopping for: {week.text}")
            run = Run.start(versions, week, checkpoints)  # and the person is here to answer
        can_answer = run is not None
        waiting_for = shop_request(run) if run is not None else None
        if run is not None and given and (waiting_for is None or waiting_for.text != request):
            self.say(NEW_WEEK_WAITS.format(given=request))
        if run is None:
            if not given:
                self.say(EXAMPLE)
            self.say(f"Shopping for: {week.text}")
            run = Run.start(versions, week, checkpoints)
        waiting = await self.watch(run, can_answer)
        if run.status is RunStatus.FAILED:
            return 1
        if waiting or run.status is RunStatus.PENDING_REQUESTS:
            self.say(WAITING)
            return 0
        self.keep(run, outcome_log(store, signer))
        if run.outputs and str(run.outputs[-1]).startswith("Ordered"):
            self.say(SENT_NOWHERE)
        await checkpoints.discard()
        return 0

    def keep(self, run: Run, log: OutcomeLog) -> None:
        """The ended week in the outcome log, before its checkpoints go."""
        outcome = ended_week(run)
        try:
            if outcome is not None:
                log.add(outcome)
        except (OSError, BotoCoreError, ClientError) as exc:
            print(f"weekly-shop: the outcome was not kept: {exc}", file=sys.stderr)

    async def discard_waiting(self, checkpoints: SessionCheckpoints) -> bool:
        """``--new``: True when no basket is waiting, or the person confirmed discarding it.

        Whatever is waiting goes, without being read: a basket of a retired version, or one
        that no longer verifies, is discarded as well.
        """
        if not await checkpoints.history():
            return True
        if self.ask(DISCARD).strip().lower() not in CONFIRM:
            self.say(KEPT_WAITING)
            return False
        await checkpoints.discard()
        self.say(DISCARDED)
        return True

    def answer(self, basket: Basket) -> str:
        """The person's answer; the last basket takes only an approve or reject word (a change
        would end the week without an order)."""
        if basket.round < self.max_rounds:
            return self.ask(QUESTION)
        decisions = APPROVE_WORDS + REJECT_WORDS
        while (line := self.ask(LAST_QUESTION)) and line.strip().lower() not in decisions:
            self.say("This is the last basket, so it can't be changed: answer y or n.")
        return line

    async def watch(self, run: Run, can_answer: bool) -> bool:
        """Stream the run; True when it stopped because nobody answered (end of input)."""
        async for event in run.watch():
            if isinstance(event, ShopProgress) and event.step == UNCHANGED_STEP:
                self.say(event.detail)  # and the same basket is asked about again
            elif isinstance(event, ShopProgress):
                self.say(f"[{event.step}] {event.detail}")
            elif isinstance(event, RequestInfoEvent) and isinstance(event.data, Basket):
                self.show(event.data)
                if not can_answer:
                    continue
                line = self.answer(event.data)
                if not line:
                    return True
                run.respond(event.request_id, BasketDecision.from_answer(line, event.data.round))
            elif isinstance(event, OutputEvent):
                self.say(str(event.data))
            elif isinstance(event, ExecutorFailedEvent):
                print(f"{event.executor_id} failed: {event.error}", file=sys.stderr)
            elif isinstance(event, WorkflowErrorEvent):
                print(f"Workflow error: {event.error}", file=sys.stderr)
        return False


# What --help prints: plain text (the module docstring is reST, which argparse shows as is).
DESCRIPTION = "The weekly shop in a terminal, one answer per run if need be."
EPILOG = (
    "weekly-shop sandbox runs the real bot on 127.0.0.1 instead, with Slack, Lambda and S3 "
    "played locally (weekly-shop sandbox --help)."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="weekly-shop", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument(
        "request", nargs="?", default=None, help="the week's dinners (default: an example)"
    )
    parser.add_argument(
        "--store",
        metavar="WHERE",
        help="a folder, or s3://bucket/prefix (default: the checkpoints folder in "
        "$XDG_STATE_HOME/weekly-shop, else ~/.local/state/weekly-shop)",
    )
    parser.add_argument(
        "--max-rounds",
        metavar="N",
        type=int,
        default=DEFAULT_MAX_ROUNDS,
        help="baskets a week may take; the last can only be approved or rejected (default: "
        f"{DEFAULT_MAX_ROUNDS})",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="print the last weeks' outcomes, and what waits now",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with --history: also the waiting basket's checkpoints and what wrote each",
    )
    parser.add_argument(
        "--new",
        action="store_true",
        help="start the week even if a basket is waiting (asks before discarding it)",
    )
    args = parser.parse_args(argv)
    given = args.request is not None
    request = args.request if given else EXAMPLE_WEEK
    shopper = default_shopper()
    console = Console(shopper, sys.stdout, sys.stdin, args.max_rounds)
    if shopper.label != "Claude" and not args.history:  # --history writes no basket
        console.say(f"Using the {shopper.label}.")
    try:
        with open_store(args.store) as store:
            if args.history:
                checkpoints = SessionCheckpoints(store, signing_key(), TENANT, SESSION)
                return asyncio.run(
                    history(store, checkpoints, shopper, args.max_rounds, console.say, args.verbose)
                )
            return asyncio.run(console.run(store, signing_key(), request, args.new, given))
    except (WorkflowError, BotoCoreError, ClientError) as exc:
        print(f"weekly-shop: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
