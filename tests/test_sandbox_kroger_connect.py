"""Connecting a Kroger account in the sandbox, in Chromium (issue 34, item 4): Alice opens the
Home tab, presses "Connect your Kroger account" (a link button: the bot's confirmation page,
the page's ``/kroger/connect``, opens in a new tab, as Slack opens a link), reads that it
connects a Kroger cart for her (Slack's ``users.info`` names her; ``auth.test`` names the
workspace), presses "Continue to Kroger" (the stand-in Kroger's authorize page), presses Allow,
and Kroger sends the browser back to the page's ``/kroger/oauth_redirect``; the sandbox delivers
both to the bot as the API Gateway events the function would get. The bot's page says the
account is connected, and the Home tab, published again by the bot, says so too; the same
redirect again is refused; Disconnect makes it not connected again."""

from __future__ import annotations

from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS


def test_alice_connects_her_kroger_account_and_disconnects_it_in_chromium() -> None:
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(sandbox.url)
        page.select_option("#user", "U0ALICE")
        page.click("#home-link")
        home = page.locator("#home")
        expect(home).to_contain_text("Kroger cart", timeout=20000)
        expect(home).to_contain_text("Your Kroger account is not connected.")
        connect = home.get_by_role("link", name="Connect your Kroger account")
        assert (connect.get_attribute("href") or "").startswith(f"{sandbox.url}kroger/connect?")
        with context.expect_page() as opened:
            connect.click()
        kroger = opened.value
        expect(kroger.locator("h1")).to_have_text("Connect a Kroger account", timeout=20000)
        expect(kroger.locator("body")).to_contain_text(
            "Connect a Kroger account for Alice in Weekly Shop?"
        )
        expect(kroger.locator("body")).to_contain_text("If you are not Alice, close this page.")
        assert kroger.locator("script").count() == 0
        kroger.get_by_role("link", name="Continue to Kroger").click()
        expect(kroger.locator("h1")).to_have_text("Sign in with Kroger", timeout=20000)
        kroger.get_by_role("button", name="Allow").click()
        expect(kroger.locator("body")).to_contain_text(
            "Your Kroger account is connected to weekly-shop.", timeout=20000
        )
        assert kroger.url.startswith(f"{sandbox.url}kroger/oauth_redirect?code=")
        # The Home tab, in the first tab, was published again by the bot.
        expect(home).to_contain_text("Your Kroger account is connected (as of", timeout=20000)
        expect(home.get_by_role("link", name="Connect your Kroger account")).to_have_count(0)
        # The same redirect again (a reload): the state was used.
        kroger.reload()
        expect(kroger.locator("body")).to_contain_text("already used", timeout=20000)
        home.get_by_role("button", name="Disconnect").click()
        expect(home).to_contain_text("Your Kroger account is disconnected", timeout=20000)
        expect(home).to_contain_text("Your Kroger account is not connected.")
        expect(home.get_by_role("link", name="Connect your Kroger account")).to_have_count(1)
        browser.close()
