"""Where a workspace's settings are opened and saved: the Home tab's Settings button and modal.

Opening (``show_settings``, a lazy run: the ack opened a loading modal with the trigger, which
works once and for about three seconds):

    1 GET      the settings (``bot.records.workspace_settings_store``; a 304 once this container
               holds them)
    users.info the person: a workspace owner or admin? their time zone (the weekly run's default)
    (the installation, when the person is neither: did they add the app?)
    views.update the loading modal becomes the form (may change) or the values (may not)

Saving (``save_settings``, the submission's ack: bad values are answered in the modal itself,
``response_action: errors``, every one of them in that one answer, and nothing is saved):

    1 who may save: a workspace owner or admin (``users.info``), the person who added the app,
      or a household admin of the saved settings; anyone else is refused here too, not only
      shown the values without a Save button
    2 the form's own checks (``bot.slack.settings_submission``: each field, the weekly run's
      all at once; the store and budget, ``bot.steps.settings_store``), and whatever else is
      wrong is still asked about (3), so one answer says all
    3 what only Slack knows: each newly named approver or admin is a person of this workspace
      (``users.info``: not ``user_not_found``, not another ``team_id``, not a bot), and the
      weekly channel is one the bot is in (``conversations.info`` ``is_member``), asked at
      once; these and 1 within ``CHECK_SECONDS`` of the ack's start
      (``bot.steps.settings_checks``): what Slack did not answer in time, or failed in any
      way, is said under its field ("couldn't check with Slack") and nothing is saved
    4 the conditional save, on the ETag the modal was opened with: another admin saved first
      (412) → the modal shows the new values and says so; nothing of theirs is lost, and
      nothing of this save is written, keys included
    5 only then the keys typed, each to SSM (``bot.records.workspace_secrets``)

Why the keys go last: SSM keeps every version of a parameter (``GetParameterHistory``), so a key
written for a save that then lost to another admin's could not be taken back. What step 5
failing leaves, and says (the modal shows the saved values, on their new ETag)::

    PUT settings If-Match: e1   -> 200, ETag e2     the settings saved, their change line
                                                   naming the key
    PutParameter                -> fails            the key saved before (if any) is still the
                                                   one used: "Saved, except the Instacart API
                                                   key…: type it again and save" (on e2, so
                                                   that save is not refused as stale)

The one ack that reads and writes S3 (two requests and three or four Web API calls, rare): the
answer must be in the modal, and the modal waits for the ack. After it, a lazy run arranges the
weekly run's schedule (``bot.records.weekly``) and publishes the Home tab again, a save with a
key included: that run gets the submission with the keys emptied (``bot.listeners.keyless``).
(Over 300 lines: opening and saving, and what each answers, in one place.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.records.order_choice import OrderChoice
from bot.records.workspace_secrets import KeyName, WorkspaceSecrets
from bot.records.workspace_settings import WorkspaceSettings
from bot.records.workspace_settings_store import Loaded, S3WorkspaceSettings, SettingsChanged
from bot.slack.order_form import KEY_BLOCKS, UNKNOWN, order_blocks
from bot.slack.people import DEFAULT_TIMEZONE, Deadline, Person, answers_within
from bot.slack.settings_form import settings_modal
from bot.slack.settings_submission import Submitted, etag_of, read_keys, read_submission
from bot.slack.settings_summary import NEWER, changed, problem_notice, read_only_modal
from workflow.errors import StoreError

from .settings_checks import CHECK_SECONDS, SLACK_DOWN, checked_url, slack_says
from .settings_store import StorePicker, read_store, store_part

log = logging.getLogger(__name__)

NOT_ALLOWED = (
    "Only workspace owners and admins, the person who added the app and the household admins "
    "can change these settings."
)
CHANGED_MEANWHILE = (
    ":warning: Someone saved these settings while you had them open. These are their values: "
    "make your change again and save."
)
STORE_DOWN = "I couldn't reach the settings store, so nothing was saved. Try again in a minute."
NOT_READ = ":warning: I couldn't check with Slack who you are, so these are shown read-only."
NO_KEY = "Enter the key: this workspace has none saved."
NO_KEYS_KEPT = "This deploy keeps no keys for a workspace (WORKSPACE_SECRETS_PATH is unset)."
NO_KROGER = "This deploy cannot fill Kroger carts: choose another destination."
KEY_LABELS = {"instacart-api-key": "Instacart API key", "webhook-signing-secret": "webhook secret"}


@dataclass(frozen=True)
class Desk:
    """What opening and saving need: the Web API client (the ack's, when saving), the settings
    store, the deploy's defaults, who added the app (None with one workspace: no installation
    names them), and whether a weekly run can be scheduled."""

    web: WebClient
    store: S3WorkspaceSettings
    defaults: WorkspaceSettings
    installer: Callable[[str], str | None]
    can_schedule: bool
    clock: Callable[[], float] = time.time
    # The workspaces' write-only keys (None: this deploy keeps none), the keys the deploy has
    # itself (its webhook secret only for its own URL), and the pinned hosts of the tests.
    secrets: WorkspaceSecrets | None = None
    deploy_keys: frozenset[str] = frozenset()
    deploy_webhook_url: str = ""
    deploy_keys_serve: Callable[[str], bool] = lambda team: True  # Settings.deploy_keys_serve
    pinned: Mapping[str, tuple[str, int]] | None = None
    stores: StorePicker | None = None  # the store and budget (None: the deploy has no Kroger)
    # Whether orders may go to a person's Kroger cart: a Kroger app, somewhere to keep the
    # people's tokens and the redirect URL they connect through (``bot.runtime.kroger``).
    carts: bool = False

    @property
    def default_orders(self) -> OrderChoice:
        return self.defaults.orders or OrderChoice()

    def has_key(self, tenant: str, name: KeyName, choice: OrderChoice) -> bool:
        """Whether ``choice`` has its key ``name`` without one typed now: the deploy's, or
        one the workspace saved (raises ``StoreError`` when SSM cannot say)."""
        if name in self.deploy_keys_for(tenant) and (
            name != "webhook-signing-secret" or choice.webhook_url == self.deploy_webhook_url
        ):
            return True
        return self.secrets is not None and self.secrets.saved_at(tenant, name) is not None

    def deploy_keys_for(self, tenant: str) -> frozenset[str]:
        """The deploy's keys that serve ``tenant`` (none for another's workspace unless the
        operator shares them)."""
        return self.deploy_keys if self.deploy_keys_serve(tenant) else frozenset()

    def may_change(self, tenant: str, person: Person | None, current: WorkspaceSettings) -> bool:
        if person is None or tenant not in person.teams:
            return False
        if person.admin or person.user in current.admins:
            return True
        return self.installer(tenant) == person.user


def show_settings(desk: Desk, tenant: str, user: str, external_id: str) -> None:
    """Replace the loading modal with the settings: the form, or the values only."""
    loaded = desk.store.read(tenant)
    current = loaded.saved or desk.defaults
    notice = problem_notice(loaded)
    try:
        person = Person.of(desk.web, user)
    except SlackApiError as exc:  # (say users:read is missing): the values, read-only, and why
        log.error("users.info failed: %s", exc.response.get("error"))
        person, notice = None, "\n".join(n for n in (notice, NOT_READ) if n)
    if desk.may_change(tenant, person, current):
        view = form(desk, tenant, person, current, loaded.etag, notice)
    else:
        view = read_only_modal(current, notice, desk.installer(tenant))
    desk.web.views_update(external_id=external_id, view=view)


def orders_section(desk: Desk, tenant: str, current: WorkspaceSettings) -> list[dict[str, Any]]:
    """The modal's "Where orders go", with which keys the workspace saved (their metadata,
    from SSM: nothing is decrypted)."""
    saved: dict[str, object] | None = None
    if desk.secrets is not None:
        try:
            saved = dict(desk.secrets.saved(tenant))
        except StoreError as exc:  # the form still opens; the hints say it could not check
            log.error("the workspace's keys could not be looked up: %s", exc)
            saved = {name: UNKNOWN for name in KEY_BLOCKS}
    chosen, kroger = current.orders or desk.default_orders, desk.carts
    return order_blocks(chosen, saved, desk.deploy_keys_for(tenant), kroger)


def save_settings(desk: Desk, tenant: str, user: str, view: Any) -> dict[str, Any] | None:
    """The submission's ack: None (saved: the modal closes), or what the modal shows instead."""
    deadline = Deadline(CHECK_SECONDS)
    view = view if isinstance(view, dict) else {}
    state = view.get("state") if isinstance(view.get("state"), dict) else {}
    opened_on = etag_of(view.get("private_metadata"))
    first_block = "approvers"
    try:
        loaded = desk.store.read(tenant)
    except StoreError as exc:
        log.error("settings could not be read for a save: %s", exc)
        return errors({first_block: STORE_DOWN})
    if loaded.problem == "newer":
        return errors({first_block: NEWER.removeprefix(":warning: ")})
    current = loaded.saved or desk.defaults
    saver = answers_within(deadline, {user: partial(Person.of, desk.web, user)})
    if user not in saver:  # (missing_scope, ratelimited, a timeout: said, nothing saved)
        return errors({first_block: SLACK_DOWN})
    person = saver[user]
    if not desk.may_change(tenant, person, current):
        log.warning("a settings save from someone who may not change them: refused")
        return errors({first_block: NOT_ALLOWED})
    read = read_submission(state.get("values"), current)
    typed, bad = read_keys(state.get("values"))
    # Every problem in one answer: the form's own, and what Slack, DNS and SSM say of the
    # rest (the form's, when a block has both: it is the one to fix first).
    refused = slack_says(desk.web, desk.can_schedule, tenant, current, read, deadline)
    refused.update(orders_say(desk, tenant, current, read, typed, deadline))
    store, budget, unpriced = read_store(desk.stores, tenant, view, current)
    refused.update({**unpriced, **bad, **read.errors})
    wanted = read.settings and replace(read.settings, store=store, budget_cents=budget)
    if refused or wanted is None:
        return errors(refused or read.errors)
    what = ", ".join(p for p in (changed(current, wanted), *map(KEY_LABELS.get, typed)) if p)
    if not what:
        return None
    try:
        saved = desk.store.save(tenant, wanted.saved_by(user, int(desk.clock()), what), opened_on)
    except SettingsChanged:  # (nothing of this save written: the keys come after)
        return reshown(desk, tenant, person, desk.store.read(tenant), CHANGED_MEANWHILE)
    except StoreError as exc:
        log.error("settings could not be saved: %s", exc)
        return errors({first_block: STORE_DOWN})
    log.info("workspace settings saved: %s", what)
    unkept = keep_keys(desk, tenant, typed)
    if unkept:
        return reshown(desk, tenant, person, saved, key_not_kept(unkept))
    return None


def keep_keys(desk: Desk, tenant: str, typed: Mapping[str, str]) -> list[str]:
    """Store the keys typed, once the settings are saved; those not stored, from the first
    one SSM refused (the rest are not tried: it would likely refuse them too, and the ack has
    Slack's 3 seconds)."""
    names = list(typed)
    if not names or desk.secrets is None:  # (orders_say refused keys a deploy cannot keep)
        return names
    for at, name in enumerate(names):
        try:
            desk.secrets.save(tenant, name, typed[name])  # type: ignore[arg-type]
        except StoreError as exc:
            log.error("a workspace key could not be stored after its settings were: %s", exc)
            return names[at:]
    return []


def key_not_kept(names: list[str]) -> str:
    """What the modal says when the settings were saved and SSM then refused a key."""
    keys, one = " and the ".join(KEY_LABELS[name] for name in names), len(names) == 1
    return (
        f":warning: Your settings are saved, but I couldn't store the {keys} just now: "
        f"{'the one' if one else 'those'} saved before, if any, {'is' if one else 'are'} "
        f"still used. Type {'it' if one else 'them'} again below and save."
    )


def reshown(
    desk: Desk, tenant: str, person: Person | None, loaded: Loaded, notice: str
) -> dict[str, Any]:
    """The ack that replaces the modal with the form of ``loaded`` (on its ETag) and a notice."""
    view = form(desk, tenant, person, loaded.saved or desk.defaults, loaded.etag, notice)
    return {"response_action": "update", "view": view}


def form(
    desk: Desk,
    tenant: str,
    person: Person | None,
    shown: WorkspaceSettings,
    etag: str | None,
    notice: str,
) -> dict[str, Any]:
    """The editable modal of ``shown``, read at ``etag``, with where orders go and the store."""
    store, metadata = store_part(desk.stores, tenant, shown, etag)
    return settings_modal(
        shown,
        timezone=person.timezone if person is not None else DEFAULT_TIMEZONE,
        etag=etag,
        notice=notice,
        orders=orders_section(desk, tenant, shown),
        store=store,
        metadata=metadata,
    )


def orders_say(
    desk: Desk,
    tenant: str,
    current: WorkspaceSettings,
    wanted: Submitted,
    typed: Mapping[str, str],
    deadline: Deadline,
) -> dict[str, str]:
    """What is wrong with where orders would go, by block: a webhook URL that points inside
    (resolved now; again at every send), a destination with no key, a key this deploy cannot
    keep. Raises ``StoreError`` when SSM cannot say whether a key is saved."""
    found: dict[str, str] = {}
    if typed and desk.secrets is None:
        return {KEY_BLOCKS[name]: NO_KEYS_KEPT for name in typed}
    choice = wanted.orders
    if choice is None:
        return found
    before = current.orders or desk.default_orders
    if choice.destination == "kroger" and not desk.carts and before.destination != "kroger":
        return {"destination": NO_KROGER}
    newly = choice.webhook_url != before.webhook_url or before.destination != "webhook"
    if choice.destination == "webhook" and newly:  # (a URL kept while unused was not checked)
        problem = checked_url(choice.webhook_url, desk.pinned, deadline)
        if problem is not None:
            found["webhook_url"] = f"This URL {problem}."
    need: KeyName | None = (
        "instacart-api-key"
        if choice.destination == "instacart"
        else "webhook-signing-secret"
        if choice.destination == "webhook"
        else None
    )
    if need is not None and need not in typed and not desk.has_key(tenant, need, choice):
        found[KEY_BLOCKS[need] if desk.secrets is not None else "destination"] = (
            NO_KEY if desk.secrets is not None else NO_KEYS_KEPT
        )
    return found


def errors(by_block: dict[str, str]) -> dict[str, Any]:
    """The ack that shows each message under its block (``response_action: errors``)."""
    return {"response_action": "errors", "errors": dict(by_block)}


def settle(desk: Desk, tenant: str, schedules: Any) -> None:
    """After a save (a lazy run): the weekly run's schedule as the saved settings say; raises
    (so Lambda retries) when Scheduler fails. Nothing saved yet: nothing to arrange."""
    loaded = desk.store.read(tenant)
    if loaded.saved is not None and schedules is not None:
        schedules.arrange(tenant, loaded.saved.weekly)
