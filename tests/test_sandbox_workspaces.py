"""``weekly-shop sandbox --workspaces many``: two workspaces, neither installed until "Add to
Slack" runs Slack's OAuth flow through the handler; then each has its own baskets, Home tab and
sessions, posted with its own token."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sandbox_process import SandboxProcess, running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS, call, headers, wait_for

FIRST, GARDEN = "T0SANDBOX", "T0GARDEN"
CHANNELS = {FIRST: "C0WEEKLYSHOP", GARDEN: "C0ALLOTMENT"}


@pytest.fixture(scope="module")
def many() -> Iterator[SandboxProcess]:
    with running_sandbox(workspaces="many") as running:
        yield running


def seen(sandbox: SandboxProcess, team: str, user: str = "U0ALICE") -> dict[str, Any]:
    return call(sandbox, f"/ui/state?user={user}&team={team}")  # type: ignore[no-any-return]


def installed(sandbox: SandboxProcess) -> dict[str, bool]:
    return {w["id"]: w["installed"] for w in seen(sandbox, FIRST)["workspaces"]}


def test_a_workspace_without_the_app_has_no_home_tab_to_open(many: SandboxProcess) -> None:
    """Slack sends an app nothing from a workspace it is not installed in, so the sandbox sends
    the bot no ``app_home_opened`` there and the page says why (it said "Opening the Home tab…"
    for ever)."""
    opened = call(many, "/ui/home", {"user": "U0ALICE", "team": GARDEN})
    assert opened == {"ok": False, "error": "not_installed"}
    assert seen(many, GARDEN)["home"] is None


def add_to_slack(sandbox: SandboxProcess, user: str, team: str) -> dict[str, Any]:
    """Add to Slack, then Allow on Slack's authorize page; what the bot's last page said."""
    asked = call(sandbox, "/ui/install", {"user": user, "team": team})
    assert asked["ok"] and "authorize" in asked, asked
    return call(sandbox, "/ui/install/allow", {"user": user, "team": team})  # type: ignore[no-any-return]


def test_add_to_slack_shows_slacks_authorize_page_before_installing(many: SandboxProcess) -> None:
    """Slack's OAuth v2 flow: the install link opens slack.com/oauth/v2/authorize, where the
    installer sees the app's scopes for the workspace and presses Allow; only then does Slack
    redirect back with ``code`` and ``state`` (docs.slack.dev, "Installing with OAuth"). Cancel
    sends the browser back with ``error=access_denied`` and the state, as OAuth 2.0 has it
    (RFC 6749 §4.1.2.1) and as Bolt's ``OAuthFlow.handle_callback`` reads it (its ``error``
    query parameter: the failure page); nothing is installed."""
    asked = call(many, "/ui/install", {"user": "U0CAROL", "team": GARDEN})
    shown = asked["authorize"]
    assert (shown["app"], shown["workspace"], shown["user"]) == (
        "Weekly shop",
        "Garden club",
        "Carol",
    )
    assert "commands" in shown["scopes"] and "chat:write" in shown["scopes"]
    assert installed(many)[GARDEN] is False  # nothing until Allow
    cancelled = call(many, "/ui/install/cancel", {"user": "U0CAROL", "team": GARDEN})
    assert not cancelled["ok"] and installed(many)[GARDEN] is False, cancelled
    again = call(many, "/ui/install/allow", {"user": "U0CAROL", "team": GARDEN})
    assert not again["ok"] and "Add to Slack again" in again["text"]  # the page was answered


def test_add_to_slack_installs_each_workspace_and_each_shops_in_its_own(
    many: SandboxProcess,
) -> None:
    assert installed(many) == {FIRST: False, GARDEN: False}
    garden = seen(many, GARDEN)
    assert garden["team"] == GARDEN and garden["channel"] == CHANNELS[GARDEN]
    assert [c["id"] for c in garden["channels"]] == [CHANNELS[GARDEN]]
    # Not installed: /shop there is refused by the bot itself, as Bolt refuses it.
    call(many, "/ui/command", {"user": "U0ALICE", "team": GARDEN, "text": "/shop soup"})
    said = wait_for(lambda: [m["text"] for m in seen(many, GARDEN)["messages"]])
    assert any("isn't installed in this workspace" in s for s in said), said
    for team in (GARDEN, FIRST):
        done = add_to_slack(many, "U0BOB", team)
        assert done["ok"], done
        assert done["text"].endswith(
            "Weekly shop is installed. In a channel, type /invite @weekly-shop, then /shop and "
            "the week's dinners."
        ), done["text"]  # the result page as a person reads it: no "installed Weekly shop is"
    assert installed(many) == {FIRST: True, GARDEN: True}
    for team, dinner in ((FIRST, "fish on Friday"), (GARDEN, "leek soup on Sunday")):
        call(many, "/ui/command", {"user": "U0ALICE", "team": team, "text": f"/shop {dinner}"})
        wait_for(lambda team=team: "Basket 1 of 3" in headers(seen(many, team)["messages"]))
    # Each basket is in its own workspace's channel only. The fake answers each token with its
    # own team's workspace, and neither has the other's channel: a basket in the allotment was
    # posted with the garden club's token, one in #weekly-shop with the first workspace's.
    for team, dinner, other in (
        (FIRST, "fish on Friday", "leek soup"),
        (GARDEN, "leek soup on Sunday", "fish on Friday"),
    ):
        shown = json.dumps(seen(many, team)["messages"])
        assert dinner in shown and other not in shown
        (session,) = seen(many, team)["sessions"]
        assert session["status"] == "waiting"
    again = add_to_slack(many, "U0BOB", GARDEN)  # a reinstall works too
    assert again["ok"], again


def test_one_workspace_mode_has_no_add_to_slack() -> None:
    with running_sandbox() as one:
        state = call(one, "/ui/state?user=U0ALICE")
        assert [w["installed"] for w in state["workspaces"]] == [True]
        with pytest.raises(urllib.error.HTTPError) as refused:
            call(one, "/ui/install", {"user": "U0ALICE"})
        assert refused.value.code == 404


def test_a_person_switches_workspace_and_adds_the_app_in_chromium() -> None:
    """A sandbox of its own: the garden club is not installed yet."""
    from playwright.sync_api import expect, sync_playwright

    with running_sandbox(workspaces="many") as many, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(many.url)
        expect(page.locator("#team-picker")).to_be_visible(timeout=10000)
        page.select_option("#team", GARDEN)
        expect(page.locator(".workspace")).to_have_text("Garden club")
        expect(page.locator("#channels")).to_contain_text("# allotment")
        expect(page.locator("#channels")).not_to_contain_text("weekly-shop")
        expect(page.locator("#install")).to_contain_text("not installed in Garden club")
        page.click("#add-to-slack")
        authorize = page.locator("#authorize")  # Slack's authorize page, as Slack shows it
        expect(authorize).to_contain_text("requesting permission", timeout=20000)
        expect(authorize).to_contain_text("access the Garden club Slack workspace")
        expect(authorize).to_contain_text("chat:write")
        expect(page.locator("#install")).not_to_contain_text("/invite")  # not yet installed
        authorize.get_by_role("button", name="Allow").click()
        expect(page.locator("#install")).to_contain_text("/invite @weekly-shop", timeout=20000)
        expect(page.locator("#add-to-slack")).to_be_hidden()
        page.click("#install-done")  # read: the banner goes (it stayed up before)
        expect(page.locator("#install")).to_be_hidden()
        page.fill("#composer", "/shop tomato salad on Tuesday")
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="tomato salad").last
        expect(basket).to_be_visible(timeout=20000)
        expect(page.locator(".session").first.locator(".status")).to_have_text("waiting")
        page.select_option("#team", FIRST)
        expect(page.locator("#channels")).to_contain_text("# weekly-shop")
        expect(page.locator(".message", has_text="tomato salad")).to_have_count(0)
        browser.close()
