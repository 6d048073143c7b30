"""``weekly-shop sandbox --model stand-in``: basket 1 grows on the page as it is written.

The sandbox runs in its own process with Claude's stand-in (``bot.sandbox.claude_stand_in``: the
fake Messages API, streaming at the stated 60 output tokens a second after 0.5 s); Chromium types
``/shop`` as a person would. The page draws every change the fake Slack pushes
(``/ui/events``); a recorder in the page notes each state of the basket's message as drawn, so
the order is asserted on what the DOM showed, never on durations: the message that says who
asked (its notification text "<@U…> asked for this week's basket", its blocks "For @Alice: …"),
then "Basket 1 — being written" with some of the items and a status line under its thread
("Weekly shop is writing the basket…", as Slack writes "<App Name> <status>"), then, in the same
message, "Basket 1 of 3" with its buttons and no "being written" or status left.

The two pictures (docs/sandbox-writing.png, docs/sandbox-written.png) are written on every run,
from what this test did, as ``tests/test_sandbox.py`` writes docs/sandbox.png and docs/home.png.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.slack.draft import WRITING, WRITING_STATUS
from tests.sandbox_process import SandboxProcess
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS

DOCS = Path(__file__).resolve().parent.parent / "docs"
WEEK = "tacos on Tuesday, we have rice"

# Each state of the week's message as the page drew it, in order (a MutationObserver on the
# message list; the notification text from the page's own state, which Slack does not draw
# when a message has blocks).
RECORDER = """
window.__seen = [];
document.addEventListener("DOMContentLoaded", () => {
  const list = document.querySelector("#messages");
  new MutationObserver(() => {
    let texts = {};
    try { texts = Object.fromEntries(state.messages.map((m) => [m.ts, m.text || ""])); }
    catch (e) { /* the page's script has not drawn yet */ }
    for (const m of list.querySelectorAll(".message:not(.ephemeral)")) {
      if (!m.innerText.includes("__WEEK__")) continue;
      const header = m.querySelector(".block-header");
      const seen = {
        ts: m.dataset.ts,
        text: texts[m.dataset.ts] || "",
        header: header ? header.textContent : "",
        items: m.innerText.split("\\n").filter((l) => l.trim().startsWith("•")).length,
        status: (m.querySelector(".thread-status") || {}).textContent || "",
        approve: [...m.querySelectorAll("button")].some((b) => b.textContent.trim() === "Approve"),
      };
      const last = window.__seen[window.__seen.length - 1];
      if (JSON.stringify(last) !== JSON.stringify(seen)) window.__seen.push(seen);
    }
  }).observe(list, { childList: true, subtree: true });
});
""".replace("__WEEK__", WEEK)

DRAFT_SHOWN = """() => [...document.querySelectorAll("#messages .message")].some((m) => {
  const header = m.querySelector(".block-header");
  return header && header.textContent === "__WRITING__" && m.querySelector(".thread-status") &&
    m.innerText.split("\\n").some((l) => l.trim().startsWith("•"));
})""".replace("__WRITING__", WRITING)


@contextmanager
def stand_in_sandbox() -> Iterator[SandboxProcess]:
    """The sandbox with Claude's stand-in, in its own process, no key of the caller's passed."""
    drop = ("ANTHROPIC_", "AWS_", "SLACK_", "CHECKPOINT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    command = ["sandbox", "--port", "0", "--model", "stand-in"]
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, f"no URL in {line!r}"
        assert "A stand-in writes the baskets, not Claude" in line
        yield SandboxProcess(process, found.group(0), int(found.group(1)))
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)


def test_basket_1_grows_on_the_page_as_the_stand_in_writes_it() -> None:
    from playwright.sync_api import expect, sync_playwright

    with stand_in_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.add_init_script(RECORDER)
        page.goto(sandbox.url)
        expect(page.locator("#banner")).to_contain_text("A stand-in writes the baskets, not Claude")
        page.select_option("#user", "U0ALICE")
        page.fill("#composer", f"/shop {WEEK}")
        page.press("#composer", "Enter")
        # Basket 1 being written: some items, the status line under its thread.
        page.wait_for_function(DRAFT_SHOWN, timeout=60000)
        page.screenshot(path=str(DOCS / "sandbox-writing.png"))
        assert page.evaluate(DRAFT_SHOWN), "the draft was gone before the picture was taken"
        # Then the basket itself, in the same message, with its buttons.
        basket = page.locator(".message", has_text="Basket 1 of 3")
        expect(basket.get_by_role("button", name="Approve")).to_be_visible(timeout=60000)
        expect(page.locator(".block-header", has_text="being written")).to_have_count(0)
        expect(basket.locator(".thread-status")).to_have_count(0)
        expect(basket).to_contain_text("• 6 taco shells")
        expect(basket.locator(".block-section", has_text="rice")).to_have_count(0)  # we have it
        page.screenshot(path=str(DOCS / "sandbox-written.png"))
        seen = page.evaluate("window.__seen")
        browser.close()
    assert len({s["ts"] for s in seen}) == 1, seen  # one message, updated in place
    asked = [i for i, s in enumerate(seen) if not s["header"] and not s["items"]]
    drafts = [i for i, s in enumerate(seen) if s["header"] == WRITING and s["items"]]
    statuses = [i for i, s in enumerate(seen) if s["status"].startswith("Weekly shop is ")]
    done = [i for i, s in enumerate(seen) if s["header"] == "Basket 1 of 3" and s["approve"]]
    assert asked and drafts and statuses and done, seen
    assert seen[asked[0]]["text"].endswith("asked for this week's basket"), seen
    assert asked[0] < drafts[0] < done[0] and done[-1] == len(seen) - 1, seen
    whole = seen[-1]["items"]
    assert 1 <= seen[drafts[0]]["items"] < whole == 6, seen  # some items, fewer than all
    assert any(seen[i]["status"] == f"Weekly shop {WRITING_STATUS}" for i in drafts), seen
    assert not seen[-1]["status"], seen
