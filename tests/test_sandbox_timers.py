"""The sandbox's timers fire by themselves (issue 33, 6), in Chromium: an approved basket held for
its undo window is ordered once the played clock passes its order time, with no Fast-forward,
and its Undo goes; the Timers panel lists the weekly run with its next time in the household's
time zone and in UTC; the Checkpoints panel leads with the household's words, the engine's terms
one click away; Fast-forward still jumps to the next timer. The order's one-time schedule is at
least a minute ahead when it is armed (``bot.records.timers.MIN_LEAD_SECONDS``), so this test
waits about a minute of real time: the played clock runs with it, and moto's Scheduler is played
by ``bot.sandbox.scheduler_player``.
"""

from __future__ import annotations

import re

from tests.sandbox_process import running_sandbox
from tests.test_sandbox import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

ORDER_WAIT_MS = 150_000  # a bound on the wait for the order (due about 60 s after the approval)


def test_a_held_basket_is_ordered_when_its_time_passes_and_the_weekly_run_is_listed() -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        assert sandbox.process.stdout is not None
        said = [sandbox.process.stdout.readline() for _ in range(3)]  # after the URL's line
        assert any(line.startswith("The sandbox keeps nothing when it stops") for line in said)
        page.goto(sandbox.url)
        expect(page.locator("#forgets")).to_contain_text("keeps nothing when it stops")
        # Carol saves a one-minute undo window and a weekly run on Saturdays at 09:30, Paris.
        page.select_option("#user", "U0CAROL")
        page.click("#home-link")
        home = page.locator("#home")
        home.get_by_role("button", name="Settings").click(timeout=20000)
        modal = page.locator("#modal")
        expect(modal.locator("#modal-submit")).to_have_text("Save", timeout=20000)
        page.fill("#in-order_delay", "1")
        page.select_option("#in-weekly_day", "sat")
        page.fill("#in-weekly_time", "09:30")
        expect(modal.locator("#in-weekly_timezone")).to_have_value("Europe/Paris")
        page.select_option("#in-weekly_channel", "C0WEEKLYSHOP")
        page.fill("#in-weekly_request", "pasta on Monday, fish on Thursday")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        timers = page.locator("#timers")
        weekly = timers.locator("tr", has_text="weekly run")
        expect(weekly).to_contain_text("Sat", timeout=20000)
        expect(weekly).to_contain_text("09:30 Europe/Paris")
        expect(weekly).to_contain_text("08:30 UTC")  # Paris is UTC+1 in winter, UTC+2 in summer
        expect(weekly).to_contain_text("#weekly-shop · “pasta on Monday, fish on Thursday”")
        # Alice asks, Bob approves: held for its undo window, shown as approved everywhere.
        page.select_option("#user", "U0ALICE")
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop tacos on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_be_visible(timeout=20000)
        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Approve").click()
        expect(basket.get_by_role("button", name="Undo")).to_be_visible(timeout=20000)
        card = page.locator(".session").first
        expect(card.locator(".status")).to_have_text("approved", timeout=20000)
        expect(card.locator(".story")).to_have_text(
            re.compile(r"approved by Bob · ordering at .* unless someone presses Undo")
        )
        expect(timers).to_contain_text("order (undo window ends)")
        # The household's words first; the engine's terms are under "How it is stored".
        engine = card.locator("details.engine")
        expect(engine.locator("summary")).to_contain_text("How it is stored")
        expect(card.get_by_text("superstep")).to_be_hidden()
        expect(engine.locator(".session-id")).to_be_hidden()
        engine.locator("summary").click()
        expect(engine.locator(".session-id")).to_be_visible()
        expect(engine).to_contain_text("pending")
        # The panel's content stays inside it: nothing runs past the card.
        assert page.locator(".panel").evaluate("e => e.scrollWidth <= e.clientWidth")
        page.screenshot(path=str(ARTIFACTS / "sandbox-held.png"))
        # No Fast-forward: the order goes once the played clock passes its time.
        expect(basket).to_contain_text("Ordered", timeout=ORDER_WAIT_MS)
        expect(basket.get_by_role("button", name="Undo")).to_have_count(0, timeout=20000)
        expect(card.locator(".status")).to_have_text("ordered", timeout=20000)
        expect(timers).not_to_contain_text("order (undo window ends)")
        expect(engine).to_have_attribute("open", "")  # still open after the panel redrew
        expect(weekly).to_contain_text("09:30 Europe/Paris")  # the weekly run is still ahead
        page.screenshot(path=str(ARTIFACTS / "sandbox-ordered.png"))
        # Fast-forward still jumps ahead: to the weekly run, whose basket is posted, and whose
        # next time is then a week on.
        before = weekly.inner_text()
        page.click("#fast-forward")
        expect(page.locator(".message", has_text="Basket 1 of 3")).to_have_count(2, timeout=30000)
        expect(weekly).not_to_have_text(before, timeout=20000)
        expect(weekly).to_contain_text("09:30 Europe/Paris")
        browser.close()
