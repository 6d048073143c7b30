"""A warm container whose cached bot token Slack has revoked follows the workspace's new one.

Each warm container keeps a workspace's installed bot five minutes (``bot.slack.installs``).
Removing the app and installing it again through another container revokes the old token; Slack then
refuses it with HTTP 200 ``{"ok": false, "error": "invalid_auth"}`` (or ``token_revoked``,
``account_inactive``: https://api.slack.com/methods/auth.revoke, slackhq/slack-api-docs
``index_web.md``; the fake answers ``invalid_auth`` for a token it no longer knows). The bot's
WebClient then reads the installation again, once, and sends the refused call once more with
the new token (``bot.slack.client``); with no installation, or the same token, it gives up as
before. Two "warm containers" here are two cold starts of the real handler sharing one S3 and
one fake Slack.
"""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

import bot.handler
from bench.common import RequestCounter
from bot.runtime import Runtime
from bot.sandbox.slack_api import FakeSlack
from bot.sandbox.slack_events import event_callback
from bot.slack.client import RenewingWebClient
from tests.bot_kit import CHANNEL, SECRET, World, header
from tests.test_installs import install, many

__all__ = ["many"]  # a fixture, used by name

TEAM = "T0TEAM"


def container() -> tuple[Runtime, Any]:
    """The warm container the handler serves now (its runtime and Bolt handler)."""
    rt, slack = bot.handler.cold_start()
    return rt, slack


def serve_from(monkeypatch: pytest.MonkeyPatch, warm: tuple[Runtime, Any]) -> None:
    """Every invocation from now on (acks and lazy runs) lands in ``warm``."""
    monkeypatch.setattr(bot.handler, "_runtime", warm[0])
    monkeypatch.setattr(bot.handler, "_slack", warm[1])


def token_of(world: World, team: str = TEAM) -> str:
    (token,) = [t for t, owner in world.slack.oauth.tokens.items() if owner == team]
    return token


def installation_reads(rt: Runtime) -> RequestCounter:
    """S3 requests of the installation store this container reads bots with."""
    assert rt.oauth is not None
    return RequestCounter(rt.oauth[1].store.s3_client)


def warm_then_removed(world: World) -> tuple[tuple[Runtime, Any], str]:
    """Container A installs the workspace and posts a basket (its token cached); then a second
    container B starts, and Slack removes the app: the token is revoked and ``app_uninstalled``
    reaches B, which deletes the installation. A's container and the revoked token."""
    install(world)
    world.shop()
    world.run_lazies()
    assert len(world.baskets()) == 1
    a = container()
    revoked = token_of(world)
    world.boot()  # container B: a cold start of its own, same S3, same Slack
    world.slack.oauth.revoke(revoked)
    removed = world.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TEAM))
    assert removed["statusCode"] == 200
    world.run_lazies()
    return a, revoked


def test_a_warm_container_posts_with_the_token_of_a_reinstall_it_did_not_see(
    many: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Container A still holds the revoked token when a /shop lands there: its basket (one
    model call) is posted with the new token after one refusal and exactly one more read of
    the installation, and A's next request uses the new token with no refusal and no read."""
    a, revoked = warm_then_removed(many)
    install(many)  # through container B: Slack issues a new token
    fresh = token_of(many)
    assert fresh != revoked
    serve_from(monkeypatch, a)
    reads, model_calls = installation_reads(a[0]), many.claude.message_calls
    ack = many.shop(text="tacos on Tuesday")
    assert ack["statusCode"] == 200 and "Writing your basket" in ack["body"]
    many.run_lazies()
    assert many.claude.message_calls == model_calls + 1
    basket = many.baskets()[-1]
    assert "Basket 1 of" in header(basket) and len(many.baskets()) == 2
    refused = [c for c in many.slack.calls if c.token == revoked and c.error]
    assert [c.error for c in refused] == ["invalid_auth"]  # found out once, then followed
    posted = [c for c in many.slack.calls_to("chat.postMessage") if not c.error]
    assert posted[-1].token == fresh and posted[-1].args["channel"] == CHANNEL
    assert reads.take().get("GetObject") == 1
    assert a[0].for_workspace(TEAM).web.token == fresh  # no stale client handed out again
    calls = len(many.slack.calls)
    many.shop(text="fish on Friday")
    many.run_lazies()
    assert len(many.baskets()) == 3
    assert {c.token for c in many.slack.calls[calls:]} == {fresh}
    assert not [c for c in many.slack.calls[calls:] if c.error]
    assert reads.take().get("GetObject", 0) == 0


def test_a_token_revoked_with_no_reinstall_gives_up_after_one_read(
    many: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app removed and not installed again: container A's Slack call is refused, the
    installation is read once more and is gone, and the refusal stands (the run ends as a
    refused post always did); nothing is retried in a loop."""
    a, revoked = warm_then_removed(many)
    serve_from(monkeypatch, a)
    reads = installation_reads(a[0])
    calls = len(many.slack.calls)
    many.shop(text="tacos on Tuesday")
    runs = many.run_async()
    assert len(runs) == 1
    after = many.slack.calls[calls:]
    assert after and {c.token for c in after} == {revoked}
    assert all(c.error == "invalid_auth" for c in after)
    assert reads.take().get("GetObject") == 1  # one read; "not installed" is then believed
    assert len(many.baskets()) == 1  # nothing new posted
    (told,) = [r.body["text"] for r in many.slack.responses[-1:]]
    assert "couldn't post it" in told  # the failure path as before: the person is told


def reinstalled_behind(world: World, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, int]:
    """Container A warm with the old token, the workspace removed and installed again through
    B, and A serving again: (revoked token, new token, Slack calls made so far)."""
    a, revoked = warm_then_removed(world)
    install(world)
    serve_from(monkeypatch, a)
    return revoked, token_of(world), len(world.slack.calls)


def test_the_home_tab_is_published_with_the_new_token(
    many: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``views.publish`` from a lazy run in container A (the workspace runtime's client)."""
    revoked, fresh, mark = reinstalled_behind(many, monkeypatch)
    assert many.open_home() is not None
    (published,) = [c for c in many.slack.calls_to("views.publish") if not c.error]
    assert published.token == fresh
    assert [c.error for c in many.slack.calls[mark:] if c.token == revoked] == ["invalid_auth"]


def test_the_change_modal_opens_from_the_ack_with_the_new_token(
    many: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``views.open`` in the Change… ack (its own client, without retry sleeps): the trigger ID
    works once, and a refused token never reached it, so the second try opens the modal."""
    revoked, fresh, mark = reinstalled_behind(many, monkeypatch)
    (basket,) = many.baskets()
    ack = many.click(basket, "change_basket", user="U0BOB")
    assert ack["statusCode"] == 200
    (opened,) = [c for c in many.slack.calls_to("views.open") if not c.error]
    assert opened.token == fresh and many.slack.open_view("U0BOB") is not None
    assert [c.error for c in many.slack.calls[mark:] if c.token == revoked] == ["invalid_auth"]


def test_one_renewal_per_call_never_a_loop() -> None:
    """Against the fake's Web API: a renewed token that is refused too is not renewed again
    (two requests, the refusal raised); the same token, or none, is not sent again at all."""
    slack = FakeSlack("xoxb-live").start()
    try:
        asked: list[str | None] = []
        for renewed, requests in (("xoxb-also-revoked", 2), ("xoxb-dead", 1), (None, 1)):

            def renew(refused: str | None, renewed: str | None = renewed) -> str | None:
                asked.append(refused)
                return renewed

            web = RenewingWebClient(renew=renew, token="xoxb-dead", base_url=slack.url)
            before = len(slack.calls)
            with pytest.raises(SlackApiError) as raised:
                web.chat_postMessage(channel=CHANNEL, text="hello")
            assert raised.value.response["error"] == "invalid_auth"
            assert len(slack.calls) - before == requests
        assert asked == ["xoxb-dead"] * 3  # asked once a call, with the token Slack refused
    finally:
        slack.stop()


def test_a_call_refused_after_another_renewed_the_client_uses_that_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two invocations share a warm client (threads of the sandbox's one process): B's call
    went out with the old token while A renewed the client. B's refusal is for the token it
    sent, not the client's new one: B retries with the new token, reading nothing again."""
    from slack_sdk import WebClient
    from slack_sdk.web import SlackResponse

    renewals: list[str | None] = []
    client = RenewingWebClient(renew=lambda stale: renewals.append(stale) or "xoxb-new")
    client.token = "xoxb-old"

    def answer(self: WebClient, api_method: str, **kwargs: Any) -> Any:
        if self.token == "xoxb-old":
            self.token = "xoxb-new"  # meanwhile, A renewed the shared client
            refused = {"ok": False, "error": "invalid_auth"}
            response = SlackResponse(
                client=self,
                http_verb="POST",
                api_url=api_method,
                req_args={},
                data=refused,
                headers={},
                status_code=200,
            )
            raise SlackApiError("invalid_auth", response)
        return {"ok": True, "token": self.token}

    monkeypatch.setattr(WebClient, "api_call", answer)
    assert client.api_call("chat.postMessage") == {"ok": True, "token": "xoxb-new"}
    assert renewals == []
