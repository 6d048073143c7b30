"""The whole Kroger flow in the sandbox, in Chromium (issue 34: "choose a store, a priced basket
with its total against a budget, connect an account, approve, the stand-in's cart holds the
products once"). Carol (the admin) chooses the store, a budget and a Kroger cart as where
orders go; Bob connects his Kroger account from the Home tab (the stand-in's sign-in page, in a
new tab, as Slack opens a link); Alice asks for the week; Bob approves; the thread says his cart
has the products, and the cart's page (the stand-in's kroger.com) lists them, once."""

from __future__ import annotations

import re

from tests.sandbox_page import carols_settings
from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_a_priced_basket_approved_fills_the_connected_kroger_cart_once_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()

        modal = carols_settings(page, sandbox.url, "Approvers")
        page.fill("#in-budget", "55")
        page.fill("#in-store_zip", "45202")
        page.press("#in-store_zip", "Enter")
        store = modal.locator("#in-store")
        expect(store).to_contain_text("Kroger", timeout=20000)
        page.select_option("#in-destination", "kroger")
        expect(modal.locator("#in-kroger_cart")).to_have_count(1)  # whose: none, the approver
        page.click("#modal-submit")
        expect(modal).to_have_count(0, timeout=20000)
        expect(page.locator("#home")).to_contain_text("the last approver's Kroger cart")

        page.select_option("#user", "U0BOB")
        page.click("#home-link")
        home = page.locator("#home")
        expect(home).to_contain_text("Your Kroger account is not connected.", timeout=20000)
        connect = home.get_by_role("link", name="Connect your Kroger account")
        expect(connect).to_have_attribute("href", re.compile(r"state=T0\w+\.U0BOB\."))  # his
        with context.expect_page() as opened:
            connect.click()
        kroger = opened.value
        kroger.wait_for_load_state()
        onward = kroger.get_by_role("link", name="Continue to Kroger")
        if onward.count():  # the bot's page naming whose account this is, first
            onward.click()
        expect(kroger.locator("h1")).to_have_text("Sign in with Kroger", timeout=20000)
        kroger.get_by_role("button", name="Allow").click()
        expect(kroger.locator("body")).to_contain_text("is connected", timeout=20000)
        expect(home).to_contain_text("Your Kroger account is connected", timeout=20000)

        page.select_option("#user", "U0ALICE")
        page.click(".channel >> text=weekly-shop")
        page.fill("#composer", "/shop tacos on Friday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_contain_text("this week's $55", timeout=20000)

        page.select_option("#user", "U0BOB")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        basket.get_by_role("button", name="Approve").click()
        said = basket.locator(".reply", has_text="Kroger cart")
        expect(said).to_contain_text("products added to @Bob's Kroger cart", timeout=20000)
        added = int(re.findall(r"Approved: (\d+) products? added", said.inner_text())[0])
        with context.expect_page() as opened:
            said.get_by_role("link", name="Open the Kroger cart").click()
        cart = opened.value
        expect(cart.locator("h1")).to_have_text("Your Kroger cart", timeout=20000)
        expect(cart.locator("body")).to_contain_text(f": {added} lines")
        assert cart.locator("li").count() == added  # each product once
        browser.close()
