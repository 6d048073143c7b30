"""The Bolt app: the ack path of every Slack request, and which lazy listener does the work.

Acks do no model call and no S3 request: ``/shop`` acks "Writing your basket…", Approve and
Reject ack at once, Change… opens its modal (the trigger ID lives about three seconds and works
once, so ``views.open`` belongs here), and a submitted change is validated and acked. The work
then runs in a lazy listener, which on Lambda is a fresh asynchronous invocation of this function.

Bolt indexes into payloads as Slack shapes them (``body["actions"][0]["action_id"]``…) and answers
500 to a signed payload of another shape; :class:`ShopApp` answers 400 to those before Bolt
routes them, and every field the listeners read is type-checked (IDs against Slack's ID shape).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from slack_bolt import Ack, App, BoltRequest, BoltResponse
from slack_bolt.adapter.aws_lambda import SlackRequestHandler
from slack_bolt.adapter.aws_lambda.handler import to_bolt_request
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.request.internals import build_context
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from workflow.errors import InvalidIdentifier
from workflow.store import validate_id

from .blocks import (
    APPROVE,
    CHANGE,
    CHANGE_BLOCK,
    CHANGE_INPUT,
    CHANGE_MODAL,
    MAX_CHANGE_LENGTH,
    REJECT,
    Ref,
    change_modal,
    modal_metadata,
    read_modal_metadata,
)
from .clicks import GONE, Click, Kind, answer_click, may_answer
from .post import Where, tell
from .runtime import Runtime, session_id_for
from .start import start_session

log = logging.getLogger(__name__)

USAGE = "Tell me the week's dinners, e.g. `/shop pasta Monday, fish Friday; we have rice`."
INCOMPLETE = "I couldn't read that request. Try /shop again."
SAY_WHAT = f"Say what should change, in at most {MAX_CHANGE_LENGTH} characters."
MAX_REQUEST_LENGTH = 3000

_SLACK_ID = re.compile(r"[A-Za-z0-9]{1,40}")  # team, user and channel IDs: T0…, U0…, C0…
_MESSAGE_TS = re.compile(r"\d{1,20}\.\d{1,10}")


# -- payload shapes ----------------------------------------------------------------------------


def _objects(body: dict[str, Any], *keys: str) -> str | None:
    bad = [k for k in keys if body.get(k) is not None and not isinstance(body[k], dict)]
    return f"{bad[0]} is not an object" if bad else None


def payload_problem(body: dict[str, Any]) -> str | None:
    """Why ``body`` is not a payload this app can route (None when it is one).

    A slash command or SSL check is a form: every value a string. A click or a submitted view
    must have the objects Bolt reads where Slack puts them. Anything else is not ours.
    """
    if "command" in body or "ssl_check" in body:
        bad = [k for k, v in body.items() if not isinstance(v, str)]
        return f"form field {bad[0]!r} is not a string" if bad else None
    kind = body.get("type")
    common = _objects(body, "user", "team", "enterprise", "channel", "container", "message")
    if kind == "block_actions":
        actions = body.get("actions")
        if not isinstance(actions, list) or not actions:
            return "block_actions without actions"
        if not all(isinstance(a, dict) and isinstance(a.get("action_id"), str) for a in actions):
            return "an action without an action_id"
        return common or _objects(body, "view", "state")
    if kind in ("view_submission", "view_closed"):
        view = body.get("view")
        if not isinstance(view, dict) or not all(
            isinstance(view.get(k), str) for k in ("type", "callback_id")
        ):
            return "a view without a type or a callback_id"
        return common or _objects(view, "state")
    return f"payload type {str(kind)[:40]!r} is not handled here"


class ShopApp(App):
    """Bolt's App, refusing what it would crash on before routing it."""

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        _reparse_form(req)
        problem = payload_problem(req.body)
        if problem is None:
            return super().dispatch(req)
        if not _signed(req, self._signing_secret):
            return BoltResponse(status=401, body={"error": "invalid request"})
        log.warning("malformed Slack payload refused: %s", problem)
        return BoltResponse(status=400, body={"error": "malformed payload"})


def _reparse_form(req: BoltRequest) -> None:
    """Undo Bolt's misreading of a form body that merely contains the word "payload".

    Bolt's ``parse_body`` treats any body with the substring ``payload`` as an interactive
    payload and, finding no ``payload`` field, returns ``{}``: ``/shop the payload of pasta``, or
    any /shop from a channel or user whose name has the word, became an unhandled request.
    """
    if req.body or not req.raw_body or req.raw_body.startswith("{"):
        return
    form = dict(parse_qsl(req.raw_body, keep_blank_values=True))
    if form and "payload" not in form:
        req.body = form
        req.context = build_context(req.context, form)


def _signed(req: BoltRequest, secret: str) -> bool:
    timestamp = req.headers.get("x-slack-request-timestamp", ["0"])[0]
    signature = req.headers.get("x-slack-signature", [""])[0]
    return SignatureVerifier(secret).is_valid(req.raw_body, timestamp, signature)


class GuardedRequestHandler(SlackRequestHandler):
    """Bolt's Lambda adapter, answering 400 to a body it cannot even parse.

    ``to_bolt_request`` parses the body before anything checks its signature, and raises on
    bytes that are not UTF-8, a ``payload`` that is not JSON or not an object, and other shapes;
    unguarded, anyone can make the function fail (API Gateway answers 500).
    """

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        try:
            to_bolt_request(event)
        except Exception as exc:  # noqa: BLE001 - whatever the parser raised, the body is bad
            log.warning("unparseable Slack request refused: %s", type(exc).__name__)
            return {"statusCode": 400, "body": "", "headers": {}}
        response: dict[str, Any] = super().handle(event, context)  # type: ignore[no-untyped-call]
        return response


# -- reading fields ----------------------------------------------------------------------------


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _slack_id(value: object) -> str | None:
    return value if isinstance(value, str) and _SLACK_ID.fullmatch(value) else None


def _team(body: dict[str, Any]) -> str | None:
    """The workspace that sent ``body``: the first of the places Slack puts it that is present."""
    for candidate in (
        _dict(body.get("team")).get("id"),
        body.get("team_id"),
        _dict(body.get("user")).get("team_id"),
    ):
        if candidate is not None:
            return _slack_id(candidate)
    return None


def _valid_ref(ref: Ref) -> bool:
    try:
        validate_id(ref.session_id, "session ID")
        validate_id(ref.request_id, "request ID")
    except InvalidIdentifier:
        return False
    return True


def click_from_action(body: dict[str, Any], kind: Kind) -> Click | None:
    """The click in a ``block_actions`` payload, or None if nobody can be told anything.

    A click whose button value is not one of ours (garbage, traversal, control characters)
    comes back with an empty :class:`Ref`, so the person hears the basket is gone.
    """
    container = _dict(body.get("container"))
    user = _slack_id(_dict(body.get("user")).get("id"))
    channel = _slack_id(_dict(body.get("channel")).get("id") or container.get("channel_id"))
    ts = container.get("message_ts") or _dict(body.get("message")).get("ts")
    tenant = _team(body)
    if not (tenant and user and channel and isinstance(ts, str) and _MESSAGE_TS.fullmatch(ts)):
        return None
    actions = body.get("actions")
    value = _dict(actions[0]).get("value") if isinstance(actions, list) and actions else None
    ref = Ref.from_value(value) if isinstance(value, str) else None
    if ref is None or not _valid_ref(ref):
        ref = Ref("", "")
    return Click(tenant, user, channel, ts, ref, kind)


def read_change(rt: Runtime, body: dict[str, Any]) -> Click | str:
    """The change asked for in a ``view_submission`` payload, or what to say in the modal."""
    view = _dict(body.get("view"))
    tenant = _team(body)
    user = _slack_id(_dict(body.get("user")).get("id"))
    target = read_modal_metadata(rt.metadata_key, tenant or "", view.get("private_metadata"))
    if not (tenant and user and target):
        return GONE
    values = _dict(_dict(_dict(view.get("state")).get("values")).get(CHANGE_BLOCK))
    text = _dict(values.get(CHANGE_INPUT)).get("value")
    text = text.strip() if isinstance(text, str) else ""
    if not text or len(text) > MAX_CHANGE_LENGTH:
        return SAY_WHAT
    return Click(tenant, user, target.channel, target.message_ts, target.ref, "change", text)


def shop_where(command: dict[str, Any]) -> Where | None:
    """Where a ``/shop`` command's basket goes, or None if the command lacks an ID."""
    tenant = _slack_id(command.get("team_id"))
    channel = _slack_id(command.get("channel_id"))
    user = _slack_id(command.get("user_id"))
    trigger = command.get("trigger_id")
    if not (tenant and channel and user and isinstance(trigger, str) and trigger):
        return None
    return Where(tenant, session_id_for(tenant, trigger), channel, user)


def _request_text(command: dict[str, Any]) -> str:
    text = command.get("text")
    text = text.strip() if isinstance(text, str) else ""
    return text if len(text) <= MAX_REQUEST_LENGTH else ""


# -- the app -----------------------------------------------------------------------------------


def build_app(rt: Runtime) -> App:
    """One Bolt app per cold start, with ``process_before_response`` for Lambda."""
    token = rt.settings.slack_bot_token.get_secret_value()

    def authorize(enterprise_id: str | None, team_id: str | None, **_: Any) -> AuthorizeResult:
        # One workspace, one bot token: no auth.test round trip on the ack path.
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token)

    bolt_logger = logging.getLogger("slack_bolt")
    quiet = bolt_logger.level
    # Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client
    # we give wins; that is what we want (the token comes through `authorize`), so hush it.
    bolt_logger.setLevel(logging.ERROR)
    try:
        app = ShopApp(
            signing_secret=rt.settings.slack_signing_secret.get_secret_value(),
            authorize=authorize,
            client=WebClient(base_url=rt.settings.slack_api_url, timeout=10),
            process_before_response=True,
            logger=bolt_logger,
        )
    finally:
        bolt_logger.setLevel(quiet)

    @app.middleware
    def ignore_slack_retries(req: BoltRequest, resp: BoltResponse, next: Callable[[], Any]) -> Any:
        # Slack retries a delivery it thinks timed out; the first one is already being handled.
        if req.headers.get("x-slack-retry-num") and not req.headers.get("x-slack-bolt-lazy-only"):
            return BoltResponse(status=200, body="")
        return next()

    def ack_shop(ack: Ack, command: dict[str, Any]) -> None:
        if not _request_text(command):
            ack(USAGE)
        elif shop_where(command) is None:
            ack(INCOMPLETE)
        else:
            ack("Writing your basket…")

    def run_shop(command: dict[str, Any]) -> None:
        text, where = _request_text(command), shop_where(command)
        if text and where is not None:
            asyncio.run(start_session(rt, where, text))

    app.command("/shop")(ack=ack_shop, lazy=[run_shop])

    def ack_now(ack: Ack) -> None:
        ack()

    def lazy_click(kind: Kind) -> Callable[[dict[str, Any]], None]:
        def run(body: dict[str, Any]) -> None:
            click = click_from_action(body, kind)
            if click is None:
                log.warning("malformed %s click ignored", kind)
            elif not click.ref.session_id:
                tell(rt, click.channel, click.user, GONE)
            else:
                asyncio.run(answer_click(rt, click))

        run.__name__ = f"run_{kind}"
        return run

    app.action(APPROVE)(ack=ack_now, lazy=[lazy_click("approve")])
    app.action(REJECT)(ack=ack_now, lazy=[lazy_click("reject")])

    @app.action(CHANGE)
    def open_change_modal(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = click_from_action(body, "change")
        if click is None:
            log.warning("malformed change click ignored")
            return
        refusal = may_answer(rt, click.user) or (None if click.ref.session_id else GONE)
        if refusal:
            tell(rt, click.channel, click.user, refusal)
            return
        metadata = modal_metadata(
            rt.metadata_key, click.tenant, click.ref, click.channel, click.message_ts
        )
        try:
            rt.web.views_open(trigger_id=body.get("trigger_id"), view=change_modal(metadata))
        except Exception as exc:  # noqa: BLE001 - any failure: say so, never crash the ack
            log.error("views.open failed: %s", exc)
            tell(rt, click.channel, click.user, "The change form didn't open. Try again.")

    def ack_change(ack: Ack, body: dict[str, Any]) -> None:
        change = read_change(rt, body)
        if isinstance(change, str):
            ack(response_action="errors", errors={CHANGE_BLOCK: change})
            return
        ack()

    def run_change(body: dict[str, Any]) -> None:
        change = read_change(rt, body)
        if isinstance(change, Click):
            asyncio.run(answer_click(rt, change))

    app.view(CHANGE_MODAL)(ack=ack_change, lazy=[run_change])
    return app
