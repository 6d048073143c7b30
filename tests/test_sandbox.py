"""``weekly-shop sandbox``: the real bot with local stand-ins, driven as a person would."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox_process import SandboxProcess, listening_sockets, running_sandbox

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
DOCS = Path(__file__).resolve().parent.parent / "docs"  # the README's screenshots
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxProcess]:
    with running_sandbox() as running:
        yield running


def call(sandbox: SandboxProcess, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        sandbox.url.rstrip("/") + path, data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def state(sandbox: SandboxProcess, user: str) -> dict[str, Any]:
    return call(sandbox, f"/ui/state?user={user}")  # type: ignore[no-any-return]


def wait_for(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def headers(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["text"]["text"] for m in messages for b in m.get("blocks", []) if b["type"] == "header"
    ]


def baskets_asking(sandbox: SandboxProcess, text: str) -> list[dict[str, Any]]:
    """The basket messages whose request is ``text``, oldest first."""
    seen = state(sandbox, "U0ALICE")["messages"]
    return [m for m in seen if m.get("blocks") and text in json.dumps(m["blocks"])]


def replies_to(sandbox: SandboxProcess, ts: str) -> list[str]:
    seen = state(sandbox, "U0ALICE")["messages"]
    return [r["text"] for m in seen if m["ts"] == ts for r in m["replies"]]


def panel_session(sandbox: SandboxProcess, session: str) -> dict[str, Any]:
    (found,) = [s for s in state(sandbox, "U0ALICE")["sessions"] if s["session"] == session]
    return found  # type: ignore[no-any-return]


def test_the_whole_flow_over_the_page_api(sandbox: SandboxProcess) -> None:
    call(sandbox, "/ui/command", {"user": "U0ALICE", "text": "/shop fish on Friday"})
    seen = wait_for(lambda: "Basket 1 of 3" in headers(state(sandbox, "U0BOB")["messages"]))
    assert seen
    alice = state(sandbox, "U0ALICE")
    assert [m["text"] for m in alice["messages"] if m.get("ephemeral_for")] == [
        "Writing your basket…"
    ]
    assert not [m for m in state(sandbox, "U0BOB")["messages"] if m.get("ephemeral_for")]
    basket = next(m for m in alice["messages"] if m.get("blocks"))
    # Each message's ts is when it was posted (Slack's ts is its epoch time), not the start's.
    assert abs(float(basket["ts"]) - time.time()) < 120
    assert call(
        sandbox, "/ui/action", {"user": "U0BOB", "ts": basket["ts"], "action_id": "change_basket"}
    )["ok"]
    modal = state(sandbox, "U0BOB")["modal"]
    assert modal["title"]["text"] == "Change this basket"
    assert state(sandbox, "U0ALICE")["modal"] is None  # the modal is Bob's
    answer = call(
        sandbox, "/ui/view", {"user": "U0BOB", "values": {"change": {"change_text": "no lemons"}}}
    )
    assert answer["ok"]
    wait_for(lambda: "Basket 2 of 3" in headers(state(sandbox, "U0BOB")["messages"]))
    second = [m for m in state(sandbox, "U0BOB")["messages"] if m.get("blocks")][-1]
    call(
        sandbox,
        "/ui/action",
        {"user": "U0CAROL", "ts": second["ts"], "action_id": "approve_basket"},
    )
    done = wait_for(
        lambda: [
            r
            for m in state(sandbox, "U0BOB")["messages"]
            for r in m["replies"]
            if r["text"].startswith("Ordered")
        ]
    )
    assert done[0]["text"] == "Ordered 3 items."  # fish on Friday, without its lemon
    panel = state(sandbox, "U0BOB")["sessions"]
    (session,) = [s for s in panel if len(s["checkpoints"]) >= 5]
    assert session["lock"] is None
    # Each session says where it is, and who asked and answered, by name.
    assert session["status"] == "ordered"
    assert (session["requested_by"], session["answered_by"]) == ("Alice", "Carol")
    # The card names what the channel shows: where, what was asked, which basket.
    assert (session["channel"], session["request"], session["basket"]) == (
        "C0WEEKLYSHOP",
        "fish on Friday",
        2,
    )
    assert float(done[0]["ts"]) > float(second["ts"]) > float(basket["ts"])
    chain = session["checkpoints"]
    assert chain[0]["parent"] is None
    assert all(c["parent"] == p["id"] for p, c in zip(chain, chain[1:], strict=False))
    assert {c["version"] for c in chain} == {"weekly-shop v5 · format 2 · record v2"}


def test_fast_forward_fires_a_baskets_reminders_then_its_expiry(sandbox: SandboxProcess) -> None:
    """The panel lists each waiting basket's next timer (moto's Scheduler) and fires the first
    due at once: a newcomer sees a reminder and an expiry in a minute, not in three days."""
    call(sandbox, "/ui/command", {"user": "U0DAVE", "text": "/shop soup on Sunday"})

    def mine() -> dict[str, Any] | None:
        for m in state(sandbox, "U0DAVE")["messages"]:
            if "soup on Sunday" in json.dumps(m.get("blocks", [])):
                return dict(m)
        return None

    basket = wait_for(mine)
    (timer,) = [t for t in state(sandbox, "U0DAVE")["timers"] if t["thread_ts"] == basket["ts"]]
    assert panel_session(sandbox, timer["session"])["status"] == "waiting"
    said: list[str] = []
    threads: list[tuple[str, str]] = []  # where each fired timer posted: the page shows it
    for _ in range(12):  # other tests' baskets may be due first
        fired = call(sandbox, "/ui/fast-forward", {"user": "U0DAVE"})
        threads.append((fired["channel"], fired["thread_ts"]))
        (shown,) = [m for m in state(sandbox, "U0DAVE")["messages"] if m["ts"] == basket["ts"]]
        said = [r["text"] for r in shown["replies"]]
        if "No order placed: nobody answered in time" in said:
            break
    assert len(said) == 3 and all("still waiting for an answer" in t for t in said[:2])
    assert said[-1] == "No order placed: nobody answered in time"  # two reminders, the expiry
    assert threads.count(("C0WEEKLYSHOP", basket["ts"])) == 3
    assert not [t for t in state(sandbox, "U0DAVE")["timers"] if t["thread_ts"] == basket["ts"]]
    expired = panel_session(sandbox, timer["session"])
    assert expired["status"] == "expired"
    assert (expired["requested_by"], expired["answered_by"]) == ("Alice", "weekly-shop")


def test_a_click_on_a_stale_screen_reaches_the_bot_which_says_why(sandbox: SandboxProcess) -> None:
    """A screen that still shows a basket's buttons after the bot removed them (chat.update)
    sends its click all the same: Slack sends a button's ``block_actions`` "when the button is
    clicked" (docs.slack.dev, block_actions payload, "Timing of payload dispatch"), with the
    action, value and block the client rendered; nothing there checks the message's current
    blocks, and Slack documents no deduplication of clicks (duplicates come from people
    clicking again). So the sandbox sends it too, and the bot's own reason appears."""
    call(sandbox, "/ui/command", {"user": "U0ALICE", "text": "/shop tacos on Thursday"})
    (basket,) = wait_for(lambda: baskets_asking(sandbox, "tacos on Thursday"))
    (buttons,) = [b for b in basket["blocks"] if b["type"] == "actions"]
    seen = {e["action_id"]: e for e in buttons["elements"]}
    call(
        sandbox, "/ui/action", {"user": "U0BOB", "ts": basket["ts"], "action_id": "approve_basket"}
    )
    wait_for(lambda: any(r.startswith("Ordered") for r in replies_to(sandbox, basket["ts"])))
    stale = {
        "user": "U0CAROL",
        "ts": basket["ts"],
        "action_id": "reject_basket",
        "value": seen["reject_basket"].get("value", ""),
        "block_id": buttons["block_id"],
    }
    assert call(sandbox, "/ui/action", stale)["ok"]

    def told() -> list[str]:
        mine = state(sandbox, "U0CAROL")["messages"]
        return [m["text"] for m in mine if m.get("ephemeral_for") == "U0CAROL"]

    said = wait_for(lambda: [t for t in told() if "already answered" in t])
    assert said == ["This basket was already answered by <@U0BOB>."]
    with pytest.raises(urllib.error.HTTPError) as refused:  # more than a button can hold
        call(sandbox, "/ui/action", {**stale, "action_id": "x", "value": "v" * 2001})
    assert refused.value.code == 404


def home_of(sandbox: SandboxProcess, user: str, has: str) -> dict[str, Any] | None:
    """``user``'s Home tab once it shows ``has``."""
    home = state(sandbox, user)["home"]
    return home if home is not None and has in json.dumps(home) else None


def outcome_row(home: dict[str, Any], request: str) -> dict[str, Any]:
    """The Last outcomes row of the basket asked for with ``request`` (the newest such)."""
    blocks = home["blocks"]
    (at, *_) = [i for i, b in enumerate(blocks) if request in json.dumps(b) and i > 0]
    return blocks[at - 1]  # type: ignore[no-any-return]


def test_the_home_tab_over_the_page_api(sandbox: SandboxProcess) -> None:
    """Opening the Home tab is a signed app_home_opened; its buttons are signed block_actions
    on the view, only as the view has them; Repeat this order posts basket 1 again."""
    call(sandbox, "/ui/command", {"user": "U0CAROL", "text": "/shop tacos on Tuesday"})
    (basket,) = wait_for(lambda: baskets_asking(sandbox, "tacos on Tuesday"))
    approve = {"user": "U0BOB", "ts": basket["ts"], "action_id": "approve_basket"}
    assert call(sandbox, "/ui/action", approve)["ok"]
    wait_for(lambda: replies_to(sandbox, basket["ts"]))
    assert call(sandbox, "/ui/home", {"user": "U0CAROL"})["ok"]
    home = wait_for(lambda: home_of(sandbox, "U0CAROL", "tacos on Tuesday"))
    row = outcome_row(home, "tacos on Tuesday")
    assert row["text"]["text"].startswith("*Ordered* · 6 items · by <@U0BOB>")
    name = row["accessory"]["value"]
    show = {"user": "U0CAROL", "action_id": "home_show_items", "value": name}
    assert call(sandbox, "/ui/home-click", show)["ok"]
    home = wait_for(lambda: home_of(sandbox, "U0CAROL", "Hide items"))
    assert "300 g beef mince" in json.dumps(home)  # the offline shopper's tacos
    # Only what the person's view has can be clicked, with its own value.
    for forged in ({**show, "value": "0000000000000-elsewhere"}, {**show, "action_id": "x"}):
        with pytest.raises(urllib.error.HTTPError) as refused:
            call(sandbox, "/ui/home-click", forged)
        assert refused.value.code == 404
    with pytest.raises(urllib.error.HTTPError):
        call(sandbox, "/ui/home-click", {**show, "user": "U0BOB"})  # Bob's tab was never open
    repeat = {"user": "U0CAROL", "action_id": "home_repeat", "value": name}
    assert call(sandbox, "/ui/home-click", repeat)["ok"]
    wait_for(lambda: home_of(sandbox, "U0CAROL", "Posted the same order again in"))
    (again,) = wait_for(
        lambda: [m for m in baskets_asking(sandbox, "tacos on Tuesday") if m["ts"] != basket["ts"]]
    )
    assert headers([again]) == ["Basket 1 of 3"]

    def carols(status: str) -> list[tuple[str, str]]:
        return [
            (s["session"], s["answered_by"])
            for s in state(sandbox, "U0CAROL")["sessions"]
            if s["requested_by"] == "Carol" and s["status"] == status
        ]

    assert [by for _, by in carols("ordered")] == ["Bob"]
    ((repeated, nobody),) = carols("waiting")  # Carol asked for it again
    assert nobody == ""
    reject = {"user": "U0ALICE", "ts": again["ts"], "action_id": "reject_basket"}
    assert call(sandbox, "/ui/action", reject)["ok"]
    assert wait_for(lambda: carols("rejected")) == [(repeated, "Alice")]


def test_it_listens_on_loopback_only(sandbox: SandboxProcess) -> None:
    listening = listening_sockets(sandbox.process.pid)
    assert len(listening) >= 4  # the page, the Slack and Lambda stand-ins, and moto
    assert {address for address, _ in listening} == {"127.0.0.1"}


def test_a_second_start_on_the_same_port_says_it_is_taken(sandbox: SandboxProcess) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "sandbox", "--port", str(sandbox.port)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert f"port {sandbox.port} on 127.0.0.1 is taken" in done.stderr


def test_ctrl_c_stops_everything_cleanly() -> None:
    with running_sandbox() as running:
        running.process.send_signal(signal.SIGINT)
        assert running.process.wait(timeout=20) == 0
        out = running.process.stdout.read() if running.process.stdout else ""
        assert "Stopping the sandbox." in out
        err = running.process.stderr.read() if running.process.stderr else ""
        assert "Traceback" not in err


def _open_events(port: int) -> socket.socket:
    """A page's change stream (``/ui/events``), as the page's own tab asks for it."""
    stream = socket.create_connection(("127.0.0.1", port), timeout=10)
    stream.sendall(
        f"GET /ui/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Accept: text/event-stream\r\nSec-Fetch-Site: same-origin\r\n\r\n".encode()
    )
    return stream


def test_a_closed_tab_prints_nothing_and_an_open_one_does_not_hold_up_ctrl_c() -> None:
    """A tab closed before its change stream started (the sandbox then writes to a closed
    connection) or while it runs prints nothing; Ctrl-C with a tab still open stops at once,
    not after aiohttp's 60-second shutdown timeout."""
    with running_sandbox() as running:
        for _ in range(5):
            _open_events(running.port).close()  # gone before the answer
        reading = _open_events(running.port)
        assert reading.recv(4096).startswith(b"HTTP/1.1 200")
        reading.close()  # gone while it streams
        still_open = _open_events(running.port)
        assert still_open.recv(4096).startswith(b"HTTP/1.1 200")
        call(running, "/ui/command", {"user": "U0ALICE", "text": "hello"})  # a change to send
        time.sleep(0.5)
        started = time.monotonic()
        running.process.send_signal(signal.SIGINT)
        assert running.process.wait(timeout=20) == 0
        assert time.monotonic() - started < 10
        still_open.close()
        err = running.process.stderr.read() if running.process.stderr else ""
        assert "Error" not in err and "Traceback" not in err, err


def test_a_person_drives_the_page_in_chromium() -> None:
    """A basket changed, approved, left waiting and reminded; the Home tab's Show items, Open
    and Repeat this order. A sandbox of its own, so that the README's screenshots, written here
    every run (docs/sandbox.png, docs/home.png), show only what this test did."""
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(sandbox.url)
        page.select_option("#user", "U0ALICE")
        page.fill(
            "#composer", "/shop chicken stir-fry Monday, lentil soup Wednesday, pizza Saturday"
        )
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_be_visible(timeout=20000)
        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Change…").click()
        page.fill("#modal textarea", "no pizza")
        page.click("#modal-submit")
        expect(page.locator("#modal")).to_have_count(0, timeout=20000)
        second = page.locator(".message", has_text="Basket 2 of 3").last
        expect(second).to_be_visible(timeout=20000)
        expect(basket).to_contain_text("Change asked by @Bob: no pizza")
        expect(second).to_contain_text("Meat and fish")  # grouped by aisle, quantity first
        # The panel's card names the channel, the request's first words and the basket; Bob
        # changed basket 1, he did not answer it.
        card = page.locator(".session").first
        expect(card.locator(".card-title")).to_contain_text(
            "#weekly-shop · “chicken stir-fry Monday, lentil soup Wednesday, …” · basket 2"
        )
        expect(card).to_contain_text("asked by Alice · changed by Bob")
        expect(card.locator(".status")).to_have_text("waiting")
        expect(card.locator("th[title*='run ID']")).to_have_count(1)  # what "run" means
        expect(second).to_contain_text("• 300 g chicken breast")
        expect(second).not_to_contain_text("mozzarella")  # the offline shopper read "no pizza"
        second.get_by_role("button", name="Approve").click()
        expect(second).to_contain_text("Ordered 12 items.", timeout=20000)
        ordered = second.locator(".reply", has_text="Ordered 12 items.")
        expect(ordered).to_contain_text("• 2 bell peppers")  # the outcome lists what was ordered
        expect(second).to_contain_text("Approved by @Bob")
        for answer in ("Approve", "Reject", "Change…", "Edit items"):  # answered: none left
            expect(second.get_by_role("button", name=answer)).to_have_count(0)
        expect(second.get_by_role("button", name="Good basket")).to_have_count(1)  # feedback stays
        latest = page.locator(".session").first
        expect(latest).to_contain_text("000004-", timeout=10000)  # start 2, change 2, approve 1
        expect(latest).to_contain_text("Lock free")
        expect(latest.locator(".status")).to_have_text("ordered")
        expect(latest).to_contain_text("asked by Alice · answered by Bob")
        expect(latest).to_contain_text("written by weekly-shop v5 · format 2 · record v2")
        # The README's picture: basket 1 as Bob changed it, basket 2 approved, what was ordered.
        page.set_viewport_size({"width": 1400, "height": 1200})
        basket.locator(".block-context", has_text="Change asked by").evaluate(
            "e => e.scrollIntoView({block: 'start'})"
        )
        page.screenshot(path=str(DOCS / "sandbox.png"))
        page.set_viewport_size({"width": 1400, "height": 900})
        # A basket left waiting: the Timers panel fires its reminder without waiting 6 hours.
        page.fill("#composer", "/shop fish on Friday")
        page.press("#composer", "Enter")
        waiting = page.locator(".message", has_text="fish on Friday").last
        expect(waiting).to_be_visible(timeout=20000)
        expect(page.locator("#timers")).to_contain_text("reminder 1", timeout=10000)
        # Each message shows its own time: when it was posted, in the page's one format.
        shown = waiting.locator(".time").first
        assert shown.inner_text() == page.evaluate(
            "ts => stamp(Number(ts.split('.')[0]))", waiting.get_attribute("data-ts")
        )
        assert page.evaluate(
            "ts => Math.abs(Number(ts) - Date.now() / 1000) < 120", waiting.get_attribute("data-ts")
        )
        # The timer posts in a thread that may be off-screen: the page scrolls there, marks it.
        page.locator("#messages").evaluate("e => { e.scrollTop = 0; }")
        expect(waiting).not_to_be_in_viewport()
        page.click("#fast-forward")
        expect(waiting).to_contain_text("still waiting for an answer", timeout=10000)
        expect(waiting).to_be_in_viewport(timeout=10000)
        expect(waiting).to_contain_text("The timer you fast-forwarded posted in this thread")
        expect(page.locator(".session").first.locator(".status")).to_have_text("waiting")
        page.screenshot(path=str(ARTIFACTS / "sandbox.png"))
        # The Home tab: what waits, the last outcome; Show items, Open, Repeat this order.
        page.click("#home-link")
        home = page.locator("#home")
        expect(home).to_contain_text("Last outcomes", timeout=20000)
        expect(home).to_contain_text("Ordered · 12 items · by @Bob")
        expect(home).to_contain_text("For @Alice: chicken stir-fry Monday")
        expect(page.locator("#messages")).to_be_hidden()
        home.get_by_role("button", name="Show items").click()
        expect(home.get_by_role("button", name="Hide items")).to_be_visible(timeout=20000)
        expect(home).to_contain_text("• 2 bell peppers")
        opens = home.get_by_role("link", name="Open", exact=True)
        expect(opens).to_have_count(1)  # the fish basket waits
        expect(opens).to_have_attribute("target", "_blank")
        page.screenshot(path=str(DOCS / "home.png"))
        opens.click()  # a permalink: the sandbox shows the message in its channel
        expect(waiting).to_be_in_viewport(timeout=10000)
        page.click("#home-link")
        home.get_by_role("button", name="Repeat this order").click()
        expect(home).to_contain_text("Posted the same order again in #weekly-shop", timeout=20000)
        expect(home.get_by_role("link", name="Open", exact=True)).to_have_count(2)
        home.locator(".channel-link", has_text="#weekly-shop").click()
        repeated = page.locator(".message", has_text="Basket 1 of 3").last
        expect(repeated).to_contain_text("For @Bob: chicken stir-fry Monday", timeout=20000)
        expect(repeated).to_contain_text("• 2 bell peppers")  # basket 2's items, not basket 1's
        expect(repeated).not_to_contain_text("pizza bases")
        expect(repeated.get_by_role("button", name="Approve")).to_be_visible()
        # A stale screen: Carol approves while Bob's page hears nothing; Bob's click still
        # reaches the bot, which tells him why it does not count.
        page.evaluate("() => { window.stale = structuredClone(state); }")  # Bob's screen now
        ts = repeated.get_attribute("data-ts")
        call(sandbox, "/ui/action", {"user": "U0CAROL", "ts": ts, "action_id": "approve_basket"})
        wait_for(lambda: any(r.startswith("Ordered") for r in replies_to(sandbox, ts)))
        expect(repeated.get_by_role("button", name="Approve")).to_have_count(0, timeout=20000)
        # Bob's client has not heard of the update yet: it still shows the buttons (and a
        # refresh already under way, such as the one the played Scheduler's change notice asked
        # for, draws nothing over them).
        page.evaluate(
            "() => { window.fresh = refresh; window.draw = render; refresh = async () => {};"
            " state = window.stale; render(); render = () => {}; }"
        )
        repeated.get_by_role("button", name="Approve").click()
        page.wait_for_timeout(1000)
        page.evaluate("() => { refresh = window.fresh; render = window.draw; }")
        page.select_option("#user", "U0ALICE")  # a fresh look at the channel, as Bob
        page.select_option("#user", "U0BOB")
        expect(
            page.locator(".message.ephemeral", has_text="already answered by @Carol")
        ).to_be_visible(timeout=20000)
        # Only http(s) links are rendered as links (a javascript: URL stays text).
        rendered = page.evaluate("mrkdwn('<javascript:alert(1)|click> <https://example.com|ok>')")
        assert "javascript:" not in rendered and 'href="https://example.com"' in rendered
        link = page.evaluate(
            "renderButton({type: 'button', url: 'javascript:alert(1)', text: {text: 'x'}}, '')"
        )
        assert "javascript:" not in link and "href" not in link
        browser.close()


def test_only_the_page_itself_can_drive_it(sandbox: SandboxProcess) -> None:
    def status(path: str, data: bytes | None, headers: dict[str, str]) -> int:
        request = urllib.request.Request(sandbox.url.rstrip("/") + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    body = json.dumps({"user": "U0ALICE", "text": "/shop from another site"}).encode()
    # A form on another web page can send text/plain without a preflight: refused.
    assert status("/ui/command", body, {"Content-Type": "text/plain"}) == 415
    # A page on another name that resolves to 127.0.0.1 (DNS rebinding): refused.
    assert status("/ui/state?user=U0ALICE", None, {"Host": f"evil.example:{sandbox.port}"}) == 403
    # A fetch from another page says so: Sec-Fetch-Site, and Origin on a POST.
    json_type = {"Content-Type": "application/json"}
    assert status("/ui/state?user=U0ALICE", None, {"Sec-Fetch-Site": "cross-site"}) == 403
    assert status("/ui/command", body, {**json_type, "Origin": "http://evil.example"}) == 403
    # The Home tab's endpoints too (opening it and clicking on it), and Add to Slack.
    home = json.dumps({"user": "U0ALICE", "action_id": "home_repeat", "value": "x"}).encode()
    for path in ("/ui/home", "/ui/home-click", "/ui/install"):
        assert status(path, home, {"Content-Type": "text/plain"}) == 415
        assert status(path, home, {**json_type, "Origin": "http://evil.example"}) == 403
        assert status(path, home, {**json_type, "Sec-Fetch-Site": "cross-site"}) == 403
        assert status(path, home, {**json_type, "Host": f"evil.example:{sandbox.port}"}) == 403
    own = f"http://127.0.0.1:{sandbox.port}"
    assert status("/ui/state?user=U0ALICE", None, {"Origin": own}) == 200


BAD_BLOCKS = [
    {
        "type": "actions",
        "elements": [{"type": "button", "text": {"type": "plain_text", "text": "x" * 76}}],
    }
]


async def test_the_sandbox_refuses_invalid_block_kit_exactly_as_the_tests_fake_does() -> None:
    """One fake plays Slack for the tests and for the sandbox: a button label of 76 characters
    (Slack's limit is 75) is invalid_blocks in both, with the same details, and the sandbox's
    channel shows nothing of it."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    from bot.sandbox.page import snapshot
    from bot.sandbox.server import Sandbox
    from bot.sandbox.world import CHANNEL, fake_slack

    sandbox = Sandbox(secret="sandbox-secret")
    answers = []
    with sandbox.slack, fake_slack() as tests_fake:
        for fake, token, channel in (
            (sandbox.slack, sandbox.token, sandbox.channel),
            (tests_fake, tests_fake.token, CHANNEL),
        ):
            web = WebClient(token=token, base_url=fake.url)
            with pytest.raises(SlackApiError) as refused:
                web.chat_postMessage(channel=channel, text="a basket", blocks=BAD_BLOCKS)
            answers.append({k: refused.value.response[k] for k in ("ok", "error", "errors")})
            assert fake.messages(channel) == []
    assert answers[0] == answers[1]
    assert answers[0]["error"] == "invalid_blocks"
    assert "/blocks/0/elements/0/text/text" in answers[0]["errors"][0]
    assert snapshot(sandbox, "U0ALICE")["messages"] == []
    sandbox.pool.shutdown()


def _status(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


async def test_the_slack_and_lambda_stand_ins_answer_only_the_bot() -> None:
    """A web page in the developer's browser can POST to 127.0.0.1 without a preflight: the
    stand-ins refuse a browser's Origin / Sec-Fetch-Site and a foreign Host, Slack's takes only
    the per-run bot token and its own response URLs, Lambda's only the per-run AWS key."""
    import boto3
    from botocore.exceptions import ClientError

    from bot.sandbox.server import Sandbox

    sandbox = Sandbox(secret="sandbox-secret")
    invoke = "/2015-03-31/functions/f/invocations"
    with sandbox.slack, sandbox.lam:
        slack, lam = sandbox.slack, sandbox.lam
        body = b"channel=C0WEEKLYSHOP&text=planted"
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        bearer = {**form, "Authorization": f"Bearer {sandbox.token}"}
        assert _status(f"{slack.url}chat.postMessage", body, bearer) == 200  # the bot itself
        for browser in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
            assert _status(f"{slack.url}chat.postMessage", body, {**bearer, **browser}) == 403
            assert _status(lam.root + invoke, b"{}", browser) == 403
        assert (
            _status(f"{slack.url}chat.postMessage", body, {**bearer, "Host": "evil.example"}) == 403
        )
        assert len(slack.messages(sandbox.channel)) == 1
        forged = f"{slack.root}/hooks/guess/commands/T0SANDBOX/C0WEEKLYSHOP/U0ALICE/-/0/x"
        assert _status(forged, b'{"text": "planted"}', {"Content-Type": "application/json"}) == 404
        assert slack.ephemerals() == []
        stranger = boto3.client(
            "lambda",
            endpoint_url=lam.url,
            region_name="us-east-1",
            aws_access_key_id="AKIASTRANGER",
            aws_secret_access_key="x",
        )
        with pytest.raises(ClientError) as refused:
            stranger.invoke(FunctionName="f", InvocationType="Event", Payload=b"{}")
        assert refused.value.response["Error"]["Code"] == "UnrecognizedClientException"
    sandbox.pool.shutdown()


def test_the_sandbox_clears_the_weekly_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from bot.sandbox.server import Sandbox, configure_bot

    for name in ("SHOP_CHANNEL", "SHOP_REQUEST", "SHOP_SCHEDULE"):
        monkeypatch.setenv(name, "set by the developer's shell")
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "CHECKPOINT_BUCKET", "SLACK_API_URL"):
        monkeypatch.setenv(name, "")
    for name in (
        "AWS_ENDPOINT_URL_S3",
        "AWS_ENDPOINT_URL_LAMBDA",
        "AWS_ENDPOINT_URL_SCHEDULER",
        "AWS_ACCESS_KEY_ID",
        "TIMER_GROUP",
        "TIMER_TARGET_ARN",
        "TIMER_ROLE_ARN",
        "AWS_ENDPOINT_URL_SSM",
        "WORKSPACE_SECRETS_PATH",
        "INSTACART_API_URL",
        "ORDER_WEBHOOK_PINNED_HOSTS",
        "ORDER_WEBHOOK_CA_BUNDLE",
    ):
        monkeypatch.setenv(name, "")  # configure_bot sets them; restored after the test

    async def configured() -> None:
        sandbox = Sandbox(secret="s")
        configure_bot(sandbox, "http://127.0.0.1:9")
        sandbox.pool.shutdown()

    asyncio.run(configured())
    assert not {"SHOP_CHANNEL", "SHOP_REQUEST", "SHOP_SCHEDULE"} & set(os.environ)


def test_a_channel_the_bot_is_not_in_refuses_shop_until_invited(sandbox: SandboxProcess) -> None:
    """The sandbox's #garden, which the bot was never added to: /shop there is told to invite
    the bot (through the command's response_url, as Slack delivers it); after /invite it works."""
    garden = "C0GARDEN"
    channels = state(sandbox, "U0CAROL")["channels"]
    assert {"id": garden, "name": "garden", "bot": False} in channels

    def garden_ephemerals() -> list[str]:
        seen = call(sandbox, f"/ui/state?user=U0CAROL&channel={garden}")["messages"]
        return [m["text"] for m in seen if m.get("ephemeral_for")]

    call(sandbox, "/ui/command", {"user": "U0CAROL", "channel": garden, "text": "/shop soup"})
    wait_for(lambda: any("/invite @weekly-shop" in t for t in garden_ephemerals()))
    assert not [m for m in state(sandbox, "U0CAROL")["messages"] if "soup" in m["text"]]
    call(
        sandbox,
        "/ui/command",
        {"user": "U0CAROL", "channel": garden, "text": "/invite @weekly-shop"},
    )
    call(sandbox, "/ui/command", {"user": "U0CAROL", "channel": garden, "text": "/shop soup"})
    wait_for(
        lambda: (
            "Basket 1 of 3"
            in headers(call(sandbox, f"/ui/state?user=U0CAROL&channel={garden}")["messages"])
        )
    )
