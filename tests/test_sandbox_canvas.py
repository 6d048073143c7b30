"""The order's canvas in the sandbox: approved, the basket becomes a checklist canvas tabbed in
its channel (the bot's ``canvases.create`` on the fake Slack), which the page shows as Slack
does and lets a person tick; a page elsewhere cannot tick it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.sandbox_process import running_sandbox
from tests.test_sandbox import (
    CHROMIUM,
    CHROMIUM_ARGS,
    baskets_asking,
    call,
    replies_to,
    state,
    wait_for,
)


def test_an_order_is_a_checklist_canvas_the_page_shows_and_ticks() -> None:
    with running_sandbox() as sandbox:
        call(sandbox, "/ui/command", {"user": "U0ALICE", "text": "/shop fish on Friday"})
        (basket,) = wait_for(lambda: baskets_asking(sandbox, "fish on Friday"))
        body = {"user": "U0BOB", "ts": basket["ts"], "action_id": "approve_basket"}
        assert call(sandbox, "/ui/action", body)["ok"]
        wait_for(lambda: any(r.startswith("Ordered") for r in replies_to(sandbox, basket["ts"])))
        (canvas,) = state(sandbox, "U0ALICE")["canvases"]
        assert canvas["title"].startswith("Shopping list · week of ")
        items = [line for line in canvas["lines"] if line["kind"] == "item"]
        assert items and not any(i["ticked"] for i in items)
        assert canvas["lines"][0] == {"kind": "text", "text": "Approved by @Bob"}
        assert [h["text"] for h in canvas["lines"] if h["kind"] == "heading"][0] == "Produce"

        tick = {"user": "U0ALICE", "canvas": canvas["id"], "index": 0, "ticked": True}
        request = urllib.request.Request(
            sandbox.url.rstrip("/") + "/ui/tick",
            data=json.dumps(tick).encode(),
            headers={"Content-Type": "application/json", "Origin": "http://evil.example"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403
        assert not state(sandbox, "U0ALICE")["canvases"][0]["lines"][2]["ticked"]
        assert call(sandbox, "/ui/tick", tick)["ok"]
        (canvas,) = state(sandbox, "U0ALICE")["canvases"]
        assert [i["ticked"] for i in canvas["lines"] if i["kind"] == "item"][0] is True


def test_open_the_shopping_list_shows_the_checklist_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(sandbox.url)
        page.fill("#composer", "/shop fish on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Approve").click()
        expect(basket).to_contain_text("Ordered", timeout=20000)
        basket.get_by_role("link", name="Open the shopping list").click()
        canvas = page.locator("#canvas")
        expect(canvas).to_contain_text("Shopping list · week of", timeout=10000)
        expect(canvas).to_contain_text("Approved by @Bob")
        first = canvas.locator(".canvas-item").first
        first.locator("input").check()
        expect(canvas.locator(".canvas-item.ticked")).to_have_count(1, timeout=10000)
        page.click("#canvas-close")
        expect(page.locator(".canvas-tab")).to_have_count(1)
        browser.close()
