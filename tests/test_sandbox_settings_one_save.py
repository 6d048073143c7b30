"""Issue 33's Settings save, in the sandbox in Chromium (items 7 and 8): Carol chooses Instacart,
types its key and sets a weekly basket with its time zone, channel and request wrong or
missing. One Save shows every problem at once under its field; the same form put right saves
the key and the weekly basket together, and the Home tab she is looking at shows both without
being opened again. "No weekly basket" then keeps the run's time, zone, channel and request for
when it is switched on again.

Slack answers a ``view_submission`` ack of ``response_action: errors`` by showing each message
under the input block its key names, all at once (docs.slack.dev, "Handling and responding to
interactions"); the page does the same with the bot's ack."""

from __future__ import annotations

from tests.sandbox_page import carols_settings, printed_key
from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_one_save_says_every_problem_then_saves_key_and_weekly_basket_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        key = printed_key(sandbox)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        modal = carols_settings(page, sandbox.url, "Weekly basket: off")
        home = page.locator("#home")
        page.select_option("#in-destination", "instacart")
        page.fill("#in-instacart_key", key)
        page.select_option("#in-weekly_day", "sat")
        page.fill("#in-weekly_time", "09:30")
        page.fill("#in-weekly_timezone", "Mars/Olympus")
        page.click("#modal-submit")
        for block, says in (
            ("weekly_timezone", "IANA name"),
            ("weekly_channel", "Choose a channel"),
            ("weekly_request", "Write what the weekly basket"),
        ):
            expect(modal.locator(f"[data-error='{block}']")).to_contain_text(says, timeout=20000)
        expect(modal.locator("[data-error='instacart_key']")).to_have_text("")
        page.fill("#in-weekly_timezone", "Europe/London")
        page.select_option("#in-weekly_channel", label="#weekly-shop")
        page.fill("#in-weekly_request", "dinners for four, we have rice")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        # The tab on screen, not opened again: the lazy run published it.
        expect(home).to_contain_text("Saturdays at 09:30 (Europe/London)", timeout=20000)
        expect(home).to_contain_text("an Instacart shopping-list page")
        home.get_by_role("button", name="Settings").click()
        expect(modal).to_contain_text("A key is saved", timeout=20000)
        page.select_option("#in-weekly_day", "off")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        expect(home).to_contain_text("Weekly basket: off", timeout=20000)
        home.get_by_role("button", name="Settings").click()
        expect(modal.locator("#modal-submit")).to_have_text("Save", timeout=20000)
        expect(modal.locator("#in-weekly_time")).to_have_value("09:30")
        expect(modal.locator("#in-weekly_timezone")).to_have_value("Europe/London")
        expect(modal.locator("#in-weekly_request")).to_have_value("dinners for four, we have rice")
        expect(modal.locator("#in-weekly_channel option:checked")).to_have_text("#weekly-shop")
        browser.close()
