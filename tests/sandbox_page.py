"""What the Chromium tests of the sandbox's Settings share: the stand-in's Instacart key the
sandbox prints when it starts, and Carol (the workspace's admin) opening the Settings modal from
the Home tab."""

from __future__ import annotations

import re
from typing import Any

from tests.sandbox_process import SandboxProcess


def printed_key(sandbox: SandboxProcess) -> str:
    """The Instacart stand-in's API key, from the line ``make run`` prints after its URL."""
    assert sandbox.process.stdout is not None
    said = sandbox.process.stdout.readline()
    key = re.search(r"takes the API key (\S+);", said)
    assert key, said
    return key.group(1)


def carols_settings(page: Any, url: str, home_says: str) -> Any:
    """Carol opens the Home tab (which says ``home_says``), then Settings: the modal, with Save."""
    from playwright.sync_api import expect

    page.goto(url)
    page.select_option("#user", "U0CAROL")
    page.click("#home-link")
    expect(page.locator("#home")).to_contain_text(home_says, timeout=20000)
    page.locator("#home").get_by_role("button", name="Settings").click()
    modal = page.locator("#modal")
    expect(modal.locator("#modal-submit")).to_have_text("Save", timeout=20000)
    return modal
