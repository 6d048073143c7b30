"""The local fakes speak the real protocols: slack_sdk, boto3 and Bolt talk to them unmodified."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import boto3
import pytest
from slack_bolt import App
from slack_bolt.adapter.aws_lambda import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient

from bot.sandbox import aws_events
from bot.sandbox import slack_requests as ev
from bot.sandbox.anthropic_api import DEFAULT_BASKET, FakeAnthropic, Reply, shorter_revisions
from bot.sandbox.lambda_api import FakeLambda
from bot.sandbox.slack_api import FakeSlack

TOKEN = "xoxb-test"
SECRET = "signing-secret-for-tests"
ARN = "arn:aws:lambda:us-east-1:123456789012:function:weekly-shop-test-slack"


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def slack(clock: Clock) -> Iterator[FakeSlack]:
    with FakeSlack(token=TOKEN, channels={"C0SHOP": ("U0A", "U0BOB")}, clock=clock) as fake:
        yield fake


@pytest.fixture
def lam() -> Iterator[FakeLambda]:
    with FakeLambda() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=TOKEN, base_url=slack.url)


def button(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "button", "text": {"type": "plain_text", "text": text}, **extra}


def test_web_client_posts_updates_and_threads(slack: FakeSlack, client: WebClient) -> None:
    auth = client.auth_test()
    assert (auth["team_id"], auth["user_id"], auth["bot_id"]) == ("T0TEAM", "UBOT", "BBOT")

    first = client.chat_postMessage(channel="C0SHOP", text="basket", blocks=[])
    second = client.chat_postMessage(channel="C0SHOP", text="second")
    assert first["ts"] == "1700000000.000100" and float(second["ts"]) > float(first["ts"])
    client.chat_update(channel="C0SHOP", ts=first["ts"], text="approved")
    client.chat_postMessage(channel="C0SHOP", thread_ts=first["ts"], text="a reply")

    assert [m["text"] for m in slack.messages("C0SHOP")] == ["approved", "second"]
    assert [m["text"] for m in slack.thread("C0SHOP", first["ts"])] == ["a reply"]
    with pytest.raises(SlackApiError) as err:
        client.chat_update(channel="C0SHOP", ts="1.000000", text="nope")
    assert err.value.response["error"] == "message_not_found"

    # slack_sdk sends chat.* as JSON and auth.test as a form; a raw form call works too
    client.api_call("chat.postEphemeral", params={"channel": "C0SHOP", "user": "U0A", "text": "x"})
    assert slack.ephemerals("U0A")[0]["text"] == "x" and slack.ephemerals("U0B") == []
    assert [c.method for c in slack.calls][:2] == ["auth.test", "chat.postMessage"]


def test_wrong_token_is_invalid_auth(slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as err:
        WebClient(token="xoxb-other", base_url=slack.url).auth_test()
    assert err.value.response["error"] == "invalid_auth"


MODAL = {"type": "modal", "title": {"type": "plain_text", "text": "Change"}, "blocks": []}


def slack_error(call: Any) -> str:
    with pytest.raises(SlackApiError) as err:
        call()
    return str(err.value.response["error"])


def test_a_trigger_id_works_once(slack: FakeSlack, client: WebClient) -> None:
    """views.open errors (docs.slack.dev): exchanged_trigger_id, "already exchanged"."""
    trigger = slack.issue_trigger("U0BOB")
    opened = client.views_open(trigger_id=trigger, view=MODAL)
    assert opened["view"]["id"] in slack.views and slack.open_view("U0BOB") is not None
    assert slack.open_view("U0A") is None  # the modal is the clicker's
    assert slack_error(lambda: client.views_open(trigger_id=trigger, view=MODAL)) == (
        "exchanged_trigger_id"
    )


def test_a_trigger_id_expires_after_three_seconds(
    slack: FakeSlack, client: WebClient, clock: Clock
) -> None:
    """Slack: a trigger_id expires three seconds after the interaction that carried it."""
    fresh, stale = slack.issue_trigger("U0BOB"), slack.issue_trigger("U0BOB")
    clock.now += 2.9
    assert client.views_open(trigger_id=fresh, view=MODAL)["ok"]
    clock.now += 0.2
    assert slack_error(lambda: client.views_open(trigger_id=stale, view=MODAL)) == (
        "expired_trigger_id"
    )


def test_a_trigger_id_slack_never_issued_is_invalid(client: WebClient) -> None:
    assert slack_error(lambda: client.views_open(trigger_id="123.456.abc", view=MODAL)) == (
        "invalid_trigger_id"
    )


def test_the_bot_posts_only_where_it_is_a_member(slack: FakeSlack, client: WebClient) -> None:
    """chat.postMessage: not_in_channel for a public channel the bot was never added to,
    channel_not_found for a private channel or DM it is not in (Slack does not reveal those),
    and for a channel that does not exist."""
    slack.add_channel("C0PUBLIC", members=["U0A"], bot=False)
    slack.add_channel("G0PRIVATE", members=["U0A"], bot=False, private=True)
    post = client.chat_postMessage
    assert slack_error(lambda: post(channel="C0PUBLIC", text="hi")) == "not_in_channel"
    assert slack_error(lambda: post(channel="G0PRIVATE", text="hi")) == "channel_not_found"
    assert slack_error(lambda: post(channel="C0NOWHERE", text="hi")) == "channel_not_found"
    eph = client.chat_postEphemeral
    assert slack_error(lambda: eph(channel="C0PUBLIC", user="U0A", text="hi")) == "not_in_channel"
    slack.join("C0PUBLIC", slack.user_id)  # /invite @weekly-shop
    assert post(channel="C0PUBLIC", text="hi")["ok"]
    assert slack.messages("C0PUBLIC")[0]["text"] == "hi" and slack.messages("G0PRIVATE") == []


def test_an_ephemeral_reaches_only_a_channel_member(slack: FakeSlack, client: WebClient) -> None:
    """chat.postEphemeral: user_not_in_channel, "Cannot post user messages to a channel they
    are not in" (docs.slack.dev); and each person sees only their own."""
    eph = client.chat_postEphemeral
    assert slack_error(lambda: eph(channel="C0SHOP", user="U0STRANGER", text="x")) == (
        "user_not_in_channel"
    )
    assert slack.ephemerals() == []
    eph(channel="C0SHOP", user="U0A", text="for A")
    assert [e["text"] for e in slack.ephemerals("U0A")] == ["for A"]
    assert slack.ephemerals("U0BOB") == []


def test_an_unknown_method_is_refused(client: WebClient) -> None:
    assert slack_error(lambda: client.api_call("chat.teleport")) == "unknown_method"


def test_button_text_of_76_is_rejected_and_recorded(slack: FakeSlack, client: WebClient) -> None:
    ok = [{"type": "actions", "elements": [button("x" * 75)]}]
    client.chat_postMessage(channel="C0SHOP", text="fine", blocks=ok)
    assert slack.violations == []

    bad = [{"type": "actions", "elements": [button("x" * 76)]}]
    with pytest.raises(SlackApiError) as err:
        client.chat_postMessage(channel="C0SHOP", text="too long", blocks=bad)
    assert err.value.response["error"] == "invalid_blocks"
    assert "/blocks/0/elements/0/text/text" in err.value.response["errors"][0]
    assert [v.method for v in slack.violations] == ["chat.postMessage"]
    assert len(slack.messages("C0SHOP")) == 1


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@pytest.mark.parametrize(
    ("blocks", "pointer"),
    [
        ([section("s")] * 51, "/blocks]"),
        ([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}], "/0/text/text"),
        ([{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}], "/0/text/type"),
        ([section("s" * 3001)], "/0/text/text"),
        ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "/0/fields"),
        ([{"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}], "/elements"),
        ([{"type": "actions", "elements": [button("b")] * 26}], "/0/elements]"),
        ([{"type": "actions", "elements": [button("b", value="v" * 2001)]}], "/value"),
        ([{**section("s"), "accessory": button("b", action_id="a" * 256)}], "/action_id"),
        ([{**section("s"), "block_id": "b" * 256}], "/0/block_id"),
        (
            [{"type": "actions", "elements": [button("b", confirm={"title": "t"})]}],
            "/confirm/title",
        ),
    ],
)
def test_block_kit_limits(
    slack: FakeSlack, client: WebClient, blocks: list[Any], pointer: str
) -> None:
    with pytest.raises(SlackApiError):
        client.chat_postMessage(channel="C0SHOP", text="t", blocks=blocks)
    assert any(pointer in e for e in slack.violations[0].errors), slack.violations


def test_modal_limits(slack: FakeSlack, client: WebClient) -> None:
    title = {"type": "plain_text", "text": "t" * 25}
    trigger = slack.issue_trigger()
    with pytest.raises(SlackApiError):
        client.views_open(trigger_id=trigger, view={"type": "modal", "title": title, "blocks": []})
    field: dict[str, Any] = {"type": "plain_text_input", "action_id": "a", "max_length": 3001}
    label = {"type": "plain_text", "text": "l"}
    view: dict[str, Any] = {
        "type": "modal",
        "title": {"type": "plain_text", "text": "ok"},
        "private_metadata": "m" * 3001,
        "blocks": [{"type": "input", "label": label, "element": field}] + [section("s")] * 100,
    }
    with pytest.raises(SlackApiError):
        client.views_open(trigger_id=trigger, view=view)
    assert "/view/title/text" in slack.violations[0].errors[0]
    errors = " ".join(slack.violations[1].errors)
    for pointer in ("/view/private_metadata", "/view/blocks/0/element/max_length", "/view/blocks]"):
        assert pointer in errors
    view["blocks"] = view["blocks"][:100]
    view["private_metadata"] = "m" * 3000
    field["max_length"] = 3000
    assert client.views_open(trigger_id=trigger, view=view)["ok"]  # unused until it succeeds


def test_429_is_retried_by_rate_limit_handler(slack: FakeSlack) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after=0)
    client = WebClient(
        token=TOKEN,
        base_url=slack.url,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)],
    )
    assert client.chat_postMessage(channel="C0SHOP", text="hi")["ok"]
    assert [c.error for c in slack.calls_to("chat.postMessage")] == ["ratelimited", None]

    slack.fail_next("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as err:  # no retry handler: the 429 surfaces
        WebClient(token=TOKEN, base_url=slack.url).chat_postMessage(channel="C0SHOP", text="x")
    assert err.value.response.status_code == 429
    assert err.value.response.headers["Retry-After"] == "7"

    slack.fail_next("chat.update", error="channel_not_found")
    with pytest.raises(SlackApiError) as err:
        client.chat_update(channel="C0SHOP", ts="1", text="x")
    assert err.value.response["error"] == "channel_not_found"


def test_a_late_answer_times_the_client_out_and_a_dropped_one_fails_the_call(
    slack: FakeSlack,
) -> None:
    """``delay_next``: the call is made (and recorded) but answered after the client's timeout;
    ``drop``: the connection closes with no answer. Neither is an ``ok: false``: the client
    raises its own error (no retry handler here)."""
    hurried = WebClient(token=TOKEN, base_url=slack.url, timeout=0.2, retry_handlers=[])
    slack.delay_next("users.info", 0.6)
    with pytest.raises(TimeoutError):
        hurried.users_info(user="U0BOB")
    slack.delay_next("users.info", 0, drop=True)
    with pytest.raises(OSError):  # (a reset or a closed connection, as the timing falls)
        hurried.users_info(user="U0BOB")
    assert [c.error for c in slack.calls_to("users.info")] == [None, "(connection dropped)"]
    assert hurried.users_info(user="U0BOB")["user"]["id"] == "U0BOB"  # on time again


def test_response_url_replaces_original_and_posts_ephemeral(
    slack: FakeSlack, client: WebClient
) -> None:
    posted = client.chat_postMessage(channel="C0SHOP", text="approve?")
    event = ev.block_action(
        SECRET,
        action_id="approve",
        value="run-1",
        message_ts=posted["ts"],
        response_url_base=slack.hooks_url,
    )
    url = json.loads(parse_qs(ev.decoded_body(event))["payload"][0])["response_url"]
    assert WebhookClient(url).send(text="approved", replace_original=True).status_code == 200
    assert WebhookClient(url).send(text="only you").status_code == 200
    assert [m["text"] for m in slack.messages("C0SHOP")] == ["approved"]
    assert [e["text"] for e in slack.ephemerals("U0BOB")] == ["only you"]


def response_url_of(event: dict[str, Any]) -> str:
    return str(json.loads(parse_qs(ev.decoded_body(event))["payload"][0])["response_url"])


def test_a_response_url_takes_five_posts(slack: FakeSlack) -> None:
    """Slack: a response_url can be used up to 5 times within 30 minutes."""
    event = ev.block_action(SECRET, action_id="a", value="v", response_url_base=slack.hooks_url)
    hook = WebhookClient(response_url_of(event))
    assert [hook.send(text=f"n{i}").status_code for i in range(6)] == [200] * 5 + [404]
    assert json.loads(hook.send(text="again").body)["error"] == "used_url"
    assert len(slack.ephemerals("U0BOB")) == 5


def test_a_response_url_expires_after_30_minutes(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = ev.block_action(SECRET, action_id="a", value="v", response_url_base=slack.hooks_url)
    hook = WebhookClient(response_url_of(event))
    # A response_url ages in real time (its issued time is real; the played clock, which moves
    # the bot's and the fake's wall, does not age it): 30 minutes and a second pass.
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 30 * 60 + 1)
    answer = hook.send(text="too late")
    assert answer.status_code == 404 and json.loads(answer.body)["error"] == "expired_url"
    assert slack.ephemerals() == []


def test_boto3_invoke_is_captured(lam: FakeLambda, monkeypatch: pytest.MonkeyPatch) -> None:
    client = boto3.client(
        "lambda",
        endpoint_url=lam.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    answer = client.invoke(FunctionName=ARN, InvocationType="Event", Payload=b'{"a":1}')
    assert answer["StatusCode"] == 202
    [invocation] = lam.take()
    assert (invocation.function_name, invocation.invocation_type) == (ARN, "Event")
    assert invocation.payload == {"a": 1} and lam.invocations == []

    # as Bolt does it: a bare boto3.client("lambda"), pointed here by the environment
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", lam.url)
    for name, value in [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "t")]:
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    lam.fail_next(status=500)  # botocore's standard retry mode tries again
    threading.Thread(target=lambda: boto3.client("lambda").invoke(FunctionName="f")).start()
    [invocation] = lam.wait_for(1, timeout=10)
    assert invocation.invocation_type == "RequestResponse" and lam.failed_attempts == 1


def test_signed_events_verify_and_bad_ones_do_not() -> None:
    verifier = SignatureVerifier(SECRET)

    def valid(event: dict[str, Any]) -> bool:
        headers = event["headers"]
        return verifier.is_valid(
            body=ev.decoded_body(event),
            timestamp=headers["x-slack-request-timestamp"],
            signature=headers["x-slack-signature"],
        )

    event = ev.slash_command(SECRET, text="plan week")
    assert event["isBase64Encoded"] and event["requestContext"]["http"]["method"] == "POST"
    form = parse_qs(ev.decoded_body(event))
    assert form["command"] == ["/shop"] and form["text"] == ["plan week"]
    assert form["response_url"][0].startswith("http://127.0.0.1:")
    assert valid(event)
    assert valid(ev.slash_command(SECRET, text="x", base64_encoded=False, retry_num=1))
    assert not valid(ev.with_bad_signature(event))
    assert not valid(ev.slash_command("another-secret", text="plan week"))
    assert not valid(ev.slash_command(SECRET, text="x", timestamp=int(time.time()) - 600))
    submission = ev.view_submission(
        SECRET, callback_id="change", private_metadata="run-1", values={"b": {"a": "less"}}
    )
    payload = json.loads(parse_qs(ev.decoded_body(submission))["payload"][0])
    assert payload["view"]["state"]["values"]["b"]["a"]["value"] == "less" and valid(submission)
    assert aws_events.scheduled_event()["detail-type"] == "Scheduled Event"
    assert aws_events.lambda_context().get_remaining_time_in_millis() > 0


def test_mentions_finds_raw_pings_only(slack: FakeSlack, client: WebClient) -> None:
    client.chat_postMessage(channel="C0SHOP", text="&lt;!channel&gt; and &lt;@U0ALICE&gt;")
    assert slack.mentions() == []
    client.chat_postMessage(channel="C0SHOP", text="hi", blocks=[section("<!here|here> <@U0BOB>")])
    client.chat_postMessage(channel="C0SHOP", text="<!channel> <!subteam^S0BUYERS>")
    assert slack.mentions() == ["<!here|here>", "<@U0BOB>", "<!channel>", "<!subteam^S0BUYERS>"]


def test_bolt_on_lambda_round_trip(
    slack: FakeSlack, lam: FakeLambda, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bolt acks the slash command, re-invokes itself through FakeLambda for the lazy listener,
    and the lazy run posts to FakeSlack: the fakes fit Bolt's Lambda adapter end to end."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", lam.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    app = App(
        client=WebClient(token=TOKEN, base_url=slack.url),
        signing_secret=SECRET,
        process_before_response=True,
    )

    def ack_now(ack: Any) -> None:
        ack("on it")

    def work(command: dict[str, Any], client: WebClient) -> None:
        client.chat_postMessage(channel=command["channel_id"], text=f"planning {command['text']}")

    app.command("/shop")(ack=ack_now, lazy=[work])
    handler: Any = SlackRequestHandler(app)  # its handle() is untyped
    context = aws_events.lambda_context()

    first = handler.handle(ev.slash_command(SECRET, text="week 12"), context)
    assert first["statusCode"] == 200 and first["body"] == "on it"
    [invocation] = lam.take()
    assert invocation.function_name == context.invoked_function_arn
    assert invocation.payload["headers"]["x-slack-bolt-lazy-only"] == "1"

    assert handler.handle(invocation.payload, context)["statusCode"] == 200
    assert [m["text"] for m in slack.messages("C0SHOP")] == ["planning week 12"]
    assert (
        handler.handle(ev.with_bad_signature(ev.slash_command(SECRET, text="x")), context)[
            "statusCode"
        ]
        == 401
    )


def messages_request(
    fake: FakeAnthropic, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    sent = {"x-api-key": fake.api_key, "anthropic-version": "2023-06-01"}
    request = urllib.request.Request(
        f"{fake.url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **sent, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


GOOD = {
    "model": "claude-haiku-5-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "x"}],
}


def test_the_messages_fake_refuses_what_the_api_refuses() -> None:
    with FakeAnthropic() as fake:
        assert messages_request(fake, GOOD)[0] == 200
        status, answer = messages_request(fake, GOOD, {"x-api-key": "sk-ant-wrong"})
        assert (status, answer["error"]["type"]) == (401, "authentication_error")
        status, answer = messages_request(fake, GOOD, {"anthropic-version": ""})
        assert (status, answer["error"]["type"]) == (400, "invalid_request_error")
        for bad in (
            {**GOOD, "max_tokens": 0},
            {**GOOD, "model": ""},
            {**GOOD, "messages": []},
            {**GOOD, "messages": [{"role": "assistant", "content": "x"}]},
            {**GOOD, "messages": [{"role": "system", "content": "x"}]},
            {**GOOD, "prompt": "Human: x"},
        ):
            status, answer = messages_request(fake, bad)
            assert (status, answer["error"]["type"]) == (400, "invalid_request_error"), bad
        # a refused request never takes a scripted reply
        fake.script(Reply(text="scripted"))
        messages_request(fake, {**GOOD, "max_tokens": 0})
        assert messages_request(fake, GOOD)[1]["content"][0]["text"] == "scripted"


def test_the_messages_fake_answers_whatever_the_prompt_says_unless_told() -> None:
    with FakeAnthropic() as fake:
        revision = {**GOOD, "messages": [{"role": "user", "content": "Your last basket:\nmilk"}]}
        assert messages_request(fake, revision)[1]["content"][0]["text"] == DEFAULT_BASKET
    with FakeAnthropic(responder=shorter_revisions) as fake:
        text = messages_request(fake, revision)[1]["content"][0]["text"]
        assert len(text.splitlines()) == 8


def test_the_bots_settings_modal_keeps_slacks_limits_and_bad_elements_are_refused() -> None:
    """The Settings modal, editable and read-only, at its fullest, passes the fake's Block Kit
    checks; what Slack's reference refuses is refused: more than 10 checkboxes, more than 100
    select options, a number_input without is_decimal_allowed, a timepicker time not HH:mm,
    an input without its label."""
    from bot.records.weekly import WeeklyRun
    from bot.records.workspace_settings import WorkspaceSettings
    from bot.sandbox.block_kit import view_errors
    from bot.slack.settings_form import loading_modal, settings_modal
    from bot.slack.settings_summary import read_only_modal
    from workflow.shop.household import Household

    full = WorkspaceSettings(
        approvers=tuple(f"U0P{n:03d}" for n in range(50)),
        approvals_needed=50,
        weekly=WeeklyRun("C0WEEKLY", "sat", "09:30", "Europe/London", "x" * 3000),
        household=Household(people=20, avoid="&" * 200, staples="<" * 300),
        admins=tuple(f"U0A{n:03d}" for n in range(20)),
    )
    for view in (
        settings_modal(full, timezone="Europe/London", etag='"e"' * 30, notice="n"),
        read_only_modal(full, "n"),
        loading_modal("settings-" + "a" * 32),
    ):
        assert view_errors(view) == []
    option = {"text": {"type": "plain_text", "text": "x"}, "value": "x"}

    def modal(element: dict[str, Any], label: Any = None) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "input", "block_id": "b", "element": element}
        if label is not False:
            block["label"] = label or {"type": "plain_text", "text": "L"}
        return {"type": "modal", "title": {"type": "plain_text", "text": "T"}, "blocks": [block]}

    refused = [
        modal({"type": "checkboxes", "action_id": "a", "options": [option] * 11}),
        modal({"type": "static_select", "action_id": "a", "options": [option] * 101}),
        modal({"type": "number_input", "action_id": "a"}),
        modal({"type": "timepicker", "action_id": "a", "initial_time": "9:30"}),
        modal({"type": "plain_text_input", "action_id": "a"}, label=False),
    ]
    assert all(view_errors(view) for view in refused)
