"""Edit items in the sandbox, in Chromium: Bob presses Edit items on basket 1, the modal renders
the items (Remove, a quantity each, an item to add), a quantity of 0 is answered under its field,
and the saved edit updates the same message, "edited by" Bob, with no new basket."""

from __future__ import annotations

import re

from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_bob_edits_items_in_the_modal_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(sandbox.url)
        page.select_option("#user", "U0ALICE")
        page.fill("#composer", "/shop fish on Friday, pasta on Monday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket.get_by_role("button", name="Edit items")).to_be_visible(timeout=20000)

        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Edit items").click()
        modal = page.locator("#modal")
        expect(modal.locator("#modal-submit")).to_have_text("Save", timeout=20000)
        removed = modal.locator("#in-remove option").first.inner_text()
        last_word = removed.split()[-1]  # "4 white fish fillets": the line as the item shows
        quantity = modal.locator("#in-qty-1")
        page.fill("#in-qty-1", "0")
        page.click("#modal-submit")
        expect(modal.locator("[data-error='qty-1']")).to_contain_text(
            "Enter a number of at least 0.0001", timeout=20000
        )
        quantity.fill("7")
        page.select_option("#in-remove", index=0)
        page.fill("#in-add_name", "oat milk")
        page.fill("#in-add_quantity", "2")
        page.fill("#in-add_unit", "l")
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)

        edited = page.locator(".message", has_text="Basket 1 of 3").last
        expect(edited).to_contain_text("edited by", timeout=20000)
        expect(edited).to_contain_text("2 l oat milk")
        expect(edited).to_contain_text(re.compile(rf"edited by @Bob: −[^,]*{last_word}, "))
        expect(page.locator(".message", has_text="Basket 2 of 3")).to_have_count(0)
        edited.get_by_role("button", name="Approve").click()
        expect(edited).to_contain_text("Ordered", timeout=20000)
        browser.close()
