"""A priced week in the sandbox, in Chromium (issue 34): Carol (the admin) types a ZIP code in
Settings and presses Enter, the stores near it appear in the modal (the bot's ``views.update``,
what she typed and chose kept as Slack keeps it; an element that does not dispatch sends
nothing), she chooses one and a weekly budget and saves; the next
basket shows each item's product and cost at that store and its total against the budget. The
stores, products and prices are the Kroger stand-in's, reached by the bot's own client."""

from __future__ import annotations

from tests.sandbox_page import carols_settings
from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_carol_chooses_a_store_and_a_budget_and_the_basket_is_priced_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(sandbox.url)
        # Before a store is chosen, a basket says how to choose one.
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop tacos on Friday")
        page.press("#composer", "Enter")
        first = page.locator(".message", has_text="Basket 1 of 3").last
        expect(first).to_contain_text("No store chosen", timeout=20000)

        modal = carols_settings(page, sandbox.url, "Approvers")
        page.fill("#in-budget", "55")
        page.select_option("#in-approvers", ["U0ALICE", "U0BOB"])  # kept too, as Slack keeps it
        page.fill("#in-store_zip", "4520")  # not a ZIP: said under the field, nothing lost
        page.press("#in-store_zip", "Enter")
        expect(modal).to_contain_text("“4520” is not a ZIP code", timeout=20000)
        expect(modal.locator("#in-budget")).to_have_value("55")
        page.fill("#in-store_zip", "45202")
        page.press("#in-store_zip", "Enter")
        store = modal.locator("#in-store")
        expect(store).to_contain_text("Kroger", timeout=20000)
        expect(modal.locator("#in-budget")).to_have_value("55")  # kept across the update
        chosen = modal.locator("#in-approvers option:checked")
        expect(chosen).to_have_count(2)
        # Slack sends a block_actions only for an element whose input block dispatches.
        refused = page.evaluate(
            """async () => (await fetch("/ui/view-action", {method: "POST",
                headers: {"Content-Type": "application/json"},
                body: JSON.stringify({user: "U0CAROL", block: "budget", action: "budget",
                  values: {budget: {budget: {type: "plain_text_input", value: "1"}}}})})).status"""
        )
        assert refused == 404
        choice = store.locator("option", has_text="Corryville")
        page.select_option("#in-store", choice.get_attribute("value") or "")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        expect(page.locator("#home")).to_contain_text("Corryville", timeout=20000)

        page.select_option("#user", "U0ALICE")
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop tacos on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_contain_text("at Kroger", timeout=20000)
        expect(basket).to_contain_text("this week's $55")
        expect(basket).to_contain_text("Ground Beef")  # the recipe's beef mince, found
        browser.close()
