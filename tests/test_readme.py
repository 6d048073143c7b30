"""The README's first screen is true: its five steps, done in Chromium as written, give what it
says; every link in the README and the docs pages leads to a file and heading that exist."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.sandbox_process import running_sandbox
from tests.test_sandbox import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, ROOT / "infra" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens and spaces dropped,
    spaces made hyphens (``## S3 layout, the lock and the fence`` → ``s3-layout-the-lock-…``)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def prose(page: Path) -> str:
    """The page without its code: fenced blocks and inline spans hold no links."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", page.read_text(), flags=re.S))


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # a heading keeps its code
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def links(page: Path) -> list[str]:
    found = LINK.findall(prose(page))
    return [link for link in found if not link.startswith(("http", "mailto:"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_page_and_heading_that_exist(page: Path) -> None:
    for link in links(page):
        target, _, anchor = link.partition("#")
        found = (page.parent / target).resolve() if target else page
        assert found.exists(), f"{page.name}: {link} leads nowhere"
        if anchor:
            assert anchor in anchors(found), f"{page.name}: {link} has no such heading"


def test_the_readme_is_a_first_screen_that_leads_to_the_docs() -> None:
    """Issue 33: what a newcomer reads first, the rest a link away (it was 1,060 lines)."""
    text = README.read_text()
    assert len(text.splitlines()) <= 100
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in text, f"the README does not lead to {page.name}"


def five_steps() -> tuple[str, str, list[str], int]:
    """What the README's five steps say: the URL, the /shop line, the items basket 1 lists,
    and how many items the thread says were ordered."""
    text = README.read_text().split("## Try it in five steps", 1)[1].split("\n## ", 1)[0]
    url = re.search(r"<(http://127\.0\.0\.1:8080/)>", text)
    shop = re.search(r"`(/shop [^`]+)`", text)
    listed = re.search(r"\*\*Basket 1 of 3\*\*: ([^.]+?), by aisle", text, flags=re.S)
    ordered = re.search(r'"Ordered (\d+) items\."', text)
    assert url and shop and listed and ordered, "the README's five steps changed shape"
    items = re.split(r",\s+|\s+and\s+", " ".join(listed.group(1).split()))
    return url.group(1), shop.group(1), items, int(ordered.group(1))


def test_the_readmes_five_steps_in_chromium_give_what_it_says() -> None:
    """Open the page, type the README's ``/shop`` line as Alice, switch to Bob, Approve, open the
    list: each step shows what the README says it shows (on a sandbox of its own, any port)."""
    from playwright.sync_api import expect, sync_playwright

    url, shop, items, ordered = five_steps()
    assert url == "http://127.0.0.1:8080/"  # what `make run` serves (the test takes any port)
    with running_sandbox() as sandbox, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(sandbox.url)
        expect(page.locator("#user")).to_have_value("U0ALICE")  # "with you as Alice"
        expect(page.locator("#channels")).to_contain_text("# weekly-shop")
        expect(page.locator("#banner")).to_contain_text("Offline shopper")  # no key here
        page.fill("#composer", shop)
        page.press("#composer", "Enter")
        basket = page.locator(".message", has_text="Basket 1 of 3").last
        expect(basket).to_be_visible(timeout=20000)
        for item in items:
            expect(basket).to_contain_text(item)
        lines = basket.locator(".block-section", has_text="• ").all_inner_texts()
        assert lines and not any("rice" in line for line in lines)  # "no rice: you have some"
        for button in ("Approve", "Reject", "Change…", "Edit items"):
            expect(basket.get_by_role("button", name=button)).to_be_visible()
        page.select_option("#user", "U0BOB")
        basket.get_by_role("button", name="Approve").click()
        expect(basket).to_contain_text(f"Ordered {ordered} items.", timeout=20000)
        expect(basket).to_contain_text("Approved by @Bob")
        basket.get_by_role("link", name="Open the shopping list").click()
        canvas = page.locator("#canvas")
        expect(canvas).to_contain_text("Shopping list · week of", timeout=10000)
        expect(canvas.locator(".canvas-item")).to_have_count(ordered)
        canvas.locator(".canvas-item").first.locator("input").check()  # "which you can tick"
        expect(canvas.locator(".canvas-item.ticked")).to_have_count(1, timeout=10000)
        browser.close()


def test_the_module_map_names_every_module() -> None:
    """docs/architecture.md is where a newcomer finds, from file names alone, where a click
    becomes a workflow response and a checkpoint S3 bytes: a module it does not name is lost."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    modules = [*(ROOT / "bot").rglob("*.py"), *(ROOT / "workflow").rglob("*.py")]
    missing = [
        str(module.relative_to(ROOT))
        for module in modules
        if module.name != "__init__.py"
        and not re.search(rf"(^|[ /,(]){re.escape(module.name)}", text, flags=re.M)
    ]
    assert missing == []


def make_commands() -> list[str]:
    """Every ``make …`` the README and the docs give, as written (inline code spans)."""
    found: set[str] = set()
    for page in PAGES:
        found |= set(re.findall(r"`((?:[A-Z_]+=\S+ )?make [^`]+)`", page.read_text()))
    return sorted(found)


@pytest.mark.parametrize("command", make_commands())
def test_every_make_command_the_docs_give_is_one_make_runs(command: str) -> None:
    """Each command parses as the shell would and names a target the Makefile has (``make -n``:
    what it would run, nothing run; the venv taken as installed)."""
    import shlex
    import subprocess

    words = shlex.split(command)
    env = dict(os.environ)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "make"
    done = subprocess.run(
        ["make", "-n", "-W", ".venv/bin/.installed", *words[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
