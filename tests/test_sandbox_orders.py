"""Orders to Instacart from the sandbox, in Chromium: Carol chooses Instacart in Settings and types
the stand-in's key (printed when the sandbox starts; SSM in the sandbox's moto server keeps it),
Bob approves, and **Open in Instacart** opens the stand-in's page of what it was sent."""

from __future__ import annotations

from tests.sandbox_page import carols_settings, printed_key
from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_carol_sends_orders_to_instacart_and_the_link_opens_the_list_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        key = printed_key(sandbox)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        modal = carols_settings(page, sandbox.url, "Orders go to: a Slack canvas checklist")
        home = page.locator("#home")
        expect(modal).to_contain_text("None saved yet.")
        page.select_option("#in-destination", "instacart")
        page.click("#modal-submit")  # no key yet: said under the key's field
        expect(modal.locator("[data-error='instacart_key']")).to_contain_text(
            "Enter the key", timeout=20000
        )
        page.fill("#in-instacart_key", key)
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        # The save's lazy run (given the submission without the key) published the Home tab.
        page.click(".channel >> text=weekly-shop")
        page.click("#home-link")
        expect(home).to_contain_text("an Instacart shopping-list page", timeout=20000)
        page.select_option("#user", "U0ALICE")
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop fish on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket.get_by_role("button", name="Approve")).to_be_visible(timeout=20000)
        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Approve").click()
        expect(basket).to_contain_text("Ordered", timeout=20000)
        with page.context.expect_page() as opened:
            basket.get_by_role("link", name="Open in Instacart").click()
        listing = opened.value
        expect(listing.locator("h1")).to_contain_text("Shopping list · week of", timeout=10000)
        assert listing.locator("li").count() > 3
        browser.close()
