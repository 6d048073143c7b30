"""The sandbox page draws what the fake Slack holds: a reply as it streams (a cursor at its end
until it stops), the thread's status line ("Weekly shop <status>", as Slack writes "<App Name>
<status>": docs.slack.dev, assistant.threads.setStatus) while it is set, and the feedback buttons
of the finished reply; all of it escaped. In Chromium, against the page's own files and a
``/ui/state`` shaped as ``bot.sandbox.page.snapshot`` shapes it. And feedback buttons as Slack
checks them (docs.slack.dev, blocks/context-actions-block: feedback_buttons and icon_button, at
most 5; block-elements/feedback-buttons-element: each button a plain_text ``text`` and a
``value``) and as a click sends them (bolt-js ``FeedbackButtonsAction``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from slack_sdk import WebClient

from bot.sandbox import slack_requests as sr
from bot.sandbox.slack_api import FakeSlack
from tests.test_slack_stream import CH, RECIPIENT, client, feedback, parent, refused, slack, wall

__all__ = ["client", "parent", "slack", "wall"]  # the fixtures this file shares


class _Page(BaseHTTPRequestHandler):
    """The sandbox page's own files, and ``/ui/state`` as ``page.snapshot`` shapes it, from a
    FakeSlack (the whole sandbox, bot and all, is not needed to see how a stream is drawn)."""

    fake: FakeSlack

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        name = "index.html" if path == "/" else path.removeprefix("/static/")
        if path == "/ui/state":
            msgs = [dict(m, replies=self.fake.thread(CH, m["ts"])) for m in self.fake.messages(CH)]
            state = {"messages": msgs, "people": {"U0A": "Alice"}, "channel": CH, "team": "T0TEAM"}
            state |= {"channels": [{"id": CH, "name": "weekly-shop", "bot": True}], "version": 1}
            state |= {"sessions": [], "timers": [], "workspaces": [], "canvases": []}
            body, kind = json.dumps(state).encode(), "application/json"
        elif name in ("index.html", "app.js", "canvas.js", "style.css"):
            body = resources.files("bot.sandbox").joinpath("static", name).read_bytes()
            kind = {"html": "text/html", "js": "text/javascript", "css": "text/css"}[
                name.rsplit(".", 1)[1]
            ]
        else:
            self.send_response(204)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_page_draws_a_stream_as_it_grows_and_the_thread_s_status(
    slack: FakeSlack, client: WebClient, parent: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS

    handler = type("Page", (_Page,), {"fake": slack})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_port}/")
            client.assistant_threads_setStatus(
                channel_id=CH, thread_ts=parent, status="is reading your week…"
            )
            # The page's own first load may still be under way and draw what it fetched before
            # the status was set: refresh until the status shows (each refresh reads it anew).
            status = page.locator(".thread-status")
            for _ in range(50):
                page.evaluate("refresh()")
                if status.count() and "reading your week" in status.inner_text():
                    break
                page.wait_for_timeout(100)
            expect(status).to_have_text("Weekly shop is reading your week…")
            streamer = client.chat_stream(channel=CH, thread_ts=parent, buffer_size=1, **RECIPIENT)
            streamer.append(markdown_text="**Produce**\n- apples <b>\n")
            page.evaluate("refresh()")
            reply = page.locator(".reply.streaming")
            expect(reply).to_contain_text("Produce\n• apples <b>")
            expect(reply.locator(".cursor")).to_have_count(1)
            expect(page.locator(".thread-status")).to_have_count(0)  # the reply cleared it
            streamer.append(markdown_text="- pears\n")
            page.evaluate("refresh()")
            expect(reply).to_contain_text("• pears")
            streamer.stop(blocks=[feedback()])
            page.evaluate("refresh()")
            expect(page.locator(".reply.streaming")).to_have_count(0)
            done = page.locator(".reply").first
            expect(done.locator("b")).to_have_text("Produce")
            expect(done.locator(".context-actions button")).to_have_text(["👍", "👎"])
            browser.close()
    finally:
        server.shutdown()


def test_feedback_and_icon_buttons_are_checked_in_a_context_actions_block(
    slack: FakeSlack, client: WebClient
) -> None:
    post = client.chat_postMessage
    trash = {
        "type": "icon_button",
        "icon": "trash",
        "text": {"type": "plain_text", "text": "Delete"},
        "value": "x",
    }
    block = feedback()
    block["elements"].append(trash)
    assert post(channel=CH, text="basket", blocks=[block])["ok"]
    no_value = feedback(negative_button={"text": {"type": "plain_text", "text": "👎"}})
    assert refused(post, channel=CH, text="b", blocks=[no_value]) == "invalid_blocks"
    mrkdwn = feedback(positive_button={"text": {"type": "mrkdwn", "text": "*y*"}, "value": "good"})
    assert refused(post, channel=CH, text="b", blocks=[mrkdwn]) == "invalid_blocks"
    a_button = {
        "type": "context_actions",
        "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Go"}}],
    }
    assert refused(post, channel=CH, text="b", blocks=[a_button]) == "invalid_blocks"
    assert (
        "must be feedback_buttons or icon_button [json-pointer:/blocks/0/elements/0]"
        in slack.violations[-1].errors
    )


def test_a_feedback_click_is_the_block_actions_slack_sends() -> None:
    """bolt-js ``FeedbackButtonsAction``: type ``feedback_buttons``, the clicked button's value."""
    event = sr.block_action(
        "secret",
        action_id="basket_feedback",
        value="good",
        action_type="feedback_buttons",
        block_id="fb",
    )
    payload = json.loads(parse_qs(sr.decoded_body(event))["payload"][0])
    [action] = payload["actions"]
    assert (action["type"], action["value"], action["block_id"]) == (
        "feedback_buttons",
        "good",
        "fb",
    )
