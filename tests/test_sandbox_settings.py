"""The household sets the bot up from the sandbox's Home tab, in Chromium: Carol (the workspace's
admin) saves two approvers and a quorum of two, Bob (a member) can only read the settings, and
the next basket needs both approvers. The modal is the bot's own (``bot.slack.settings_form``),
rendered by the page element by element and submitted in the shapes Slack sends."""

from __future__ import annotations

from tests.sandbox_page import carols_settings
from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS, state, wait_for


def test_carol_sets_a_quorum_of_two_and_a_basket_needs_both_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        modal = carols_settings(page, sandbox.url, "Approvers: anyone in the channel")
        home = page.locator("#home")
        expect(modal.locator("#in-weekly_timezone")).to_have_value("Europe/Paris")  # Carol's tz
        # A bad value is answered in the modal, under its field: two approvals, one approver.
        page.select_option("#in-approvers", ["U0ALICE"])
        page.fill("#in-approvals", "2")
        page.click("#modal-submit")
        expect(modal.locator("[data-error='approvals']")).to_contain_text(
            "from 1 to 1", timeout=20000
        )
        page.select_option("#in-approvers", ["U0ALICE", "U0BOB"])
        page.fill("#in-people", "4")
        page.fill("#in-avoid", "pork")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        expect(home).to_contain_text("Approvers: @Alice, @Bob · 2 approvals needed", timeout=20000)
        expect(home).to_contain_text("@Carol changed approvers")
        # Bob is a member: the same values, read-only.
        page.select_option("#user", "U0BOB")
        page.click("#home-link")
        wait_for(lambda: (state(sandbox, "U0BOB").get("home") or {}).get("blocks"))  # his own
        home.get_by_role("button", name="Settings").click()
        expect(modal).to_contain_text("2 approvals needed", timeout=20000)
        expect(modal.locator("#modal-submit")).to_have_count(0)
        page.click("#modal-close")
        # The next basket needs both: Alice's approval counts, Bob's orders.
        page.select_option("#user", "U0ALICE")
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop tacos on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_contain_text("For 4 · no pork", timeout=20000)
        basket.get_by_role("button", name="Approve").click()
        expect(basket).to_contain_text("Approved by @Alice · 1 of 2 needed", timeout=20000)
        expect(basket.get_by_role("button", name="Approve")).to_be_visible()
        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Approve").click()
        expect(basket).to_contain_text("Ordered", timeout=20000)
        expect(basket).to_contain_text("Approved by @Alice and @Bob")
        browser.close()
