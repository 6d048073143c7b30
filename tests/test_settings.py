"""The household sets the bot up in Slack: the Home tab's Settings modal, saved per workspace.

Through the real handler (signed requests), moto's S3 and the fake Web API, which answers
``users.info`` (``is_admin``, ``is_owner``, ``tz``; ``user_not_found`` for anyone it does not
know, another workspace's people included) and ``conversations.info`` (``is_member``) as Slack
does, and keeps ``views.open`` triggers to one use within three seconds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.records.workspace_settings import WorkspaceSettings
from bot.records.workspace_settings_store import S3WorkspaceSettings, settings_key, settings_prefix
from bot.slack.settings_submission import QUORUM_NEEDS_NAMES
from bot.slack.settings_summary import NEWER, TAMPERED
from bot.steps.rules import UNREADABLE
from bot.steps.settings import CHANGED_MEANWHILE, NOT_ALLOWED
from bot.steps.settings_checks import INVITE, NO_SCHEDULER, NOT_HERE, SLACK_DOWN
from tests.bot_kit import CHANNEL, SECRET, World, header, objects, start_basket
from tests.fault_kit import ephemeral_texts
from tests.settings_kit import number, open_settings, option, save, text, users
from workflow.shop.records import SHOP_PREFIX

PREFIX = settings_prefix(SHOP_PREFIX)
TENANT = "T0TEAM"


@pytest.fixture
def carol(world: World) -> World:
    """The world with Carol as a workspace admin (Bob and the others are members)."""
    world.slack.set_person("U0CAROL", is_admin=True, tz="America/New_York")
    return world


def with_scheduler(world: World) -> None:
    """The bot told where its timers and weekly runs go (a schedule group in moto)."""
    import boto3

    from tests.test_reminders import GROUP, ROLE, TARGET

    boto3.client("scheduler", region_name="us-east-1").create_schedule_group(Name=GROUP)
    world.boot(TIMER_GROUP=GROUP, TIMER_TARGET_ARN=TARGET, TIMER_ROLE_ARN=ROLE)


def saved(s3: Any, bucket: str) -> dict[str, Any] | None:
    key = settings_key(PREFIX, TENANT)
    if key not in objects(s3, bucket):
        return None
    found: dict[str, Any] = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    return found


def home_text(world: World, user: str) -> str:
    view = world.open_home(user) or {}
    return json.dumps(view.get("blocks", []), ensure_ascii=False)


def test_an_admin_sees_the_form_filled_in_and_a_member_only_reads_it(carol: World) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None and form["submit"]["text"] == "Save"
    by_id = {b["block_id"]: b["element"] for b in form["blocks"] if b["type"] == "input"}
    assert "initial_users" not in by_id["approvers"]  # the deploy's default: anyone
    assert by_id["approvals"]["initial_value"] == "1"
    assert by_id["rounds"]["initial_option"]["value"] == "3"
    rounds = next(b for b in form["blocks"] if b.get("block_id") == "rounds")
    # Issue 33: "Basket 1 of 3" and "up to 3 baskets a week" were never explained.
    assert "rounds of changes" in rounds["label"]["text"]
    assert "Each Change… writes the next basket" in rounds["hint"]["text"]
    assert by_id["remind_every"]["initial_value"] == "6"
    assert by_id["expire_days"]["initial_value"] == "3"
    assert by_id["weekly_day"]["initial_option"]["value"] == "off"
    assert by_id["weekly_timezone"]["initial_value"] == "America/New_York"  # Carol's own tz
    seen = open_settings(carol, "U0BOB")
    assert seen is not None and "submit" not in seen  # the values, nothing to save
    assert "anyone in the channel" in json.dumps(seen["blocks"])
    assert carol.slack.violations == []


def test_a_saved_change_holds_on_the_next_click(carol: World, s3: Any, bucket: str) -> None:
    basket = start_basket(carol)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        approvers=users("U0CAROL", "U0DAVE"),
        rounds=option("4"),
        people=number(4),
        avoid=text("pork"),
        staples=text("oat milk"),
    )
    assert answer == {}  # saved: the modal closes
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["approvers"] == ["U0CAROL", "U0DAVE"]
    (change,) = doc["settings"]["changes"]
    assert change["by"] == "U0CAROL" and "approvers" in change["what"]
    carol.click(basket, "approve_basket", user="U0BOB")  # Bob is no approver any more
    carol.run_lazies()
    assert ephemeral_texts(carol, "U0BOB") == [
        "Only <@U0CAROL>, <@U0DAVE> can answer baskets here."
    ]
    carol.shop("tacos")
    carol.run_lazies()
    assert header(carol.baskets()[-1]) == "Basket 1 of 4"
    shown = home_text(carol, "U0ALICE")
    assert "For 4 · no pork · always oat milk" in shown and "changed approvers" in shown


def test_a_change_saved_in_another_container_holds_in_this_warm_one(
    carol: World, s3: Any, bucket: str
) -> None:
    """This container read the settings already (a lazy run); another saves new ones; the
    next click here asks S3 once, conditionally, and follows them."""
    basket = start_basket(carol)  # this container now holds the (absent) settings
    from bot.handler import cold_start

    rt, _ = cold_start()
    elsewhere = S3WorkspaceSettings(bucket, PREFIX, s3, rt.records.settings_store.key)
    elsewhere.save(TENANT, WorkspaceSettings(approvers=("U0DAVE",)), None)
    carol.click(basket, "approve_basket", user="U0BOB")
    carol.run_lazies()
    assert ephemeral_texts(carol, "U0BOB") == ["Only <@U0DAVE> can answer baskets here."]


def test_a_forged_save_from_a_member_is_refused_and_saves_nothing(
    carol: World, s3: Any, bucket: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0BOB", form, approvers=users("U0BOB"))  # Bob forges a submission
    assert answer == {"response_action": "errors", "errors": {"approvers": NOT_ALLOWED}}
    assert saved(s3, bucket) is None


@pytest.mark.parametrize(
    ("changes", "block", "says"),
    [
        ({"approvers": users("U0STRANGER")}, "approvers", NOT_HERE),  # users.info: not found
        ({"approvers": users("U0CAROL"), "approvals": number(2)}, "approvals", "1 to 1"),
        ({"approvals": number(51)}, "approvals", "from 1 to 50"),
        (
            {
                "approvers": users("U0CAROL", "U0DAVE"),
                "approvals": number(2),
                "no_self": {"selected_options": [{"value": "on"}]},
            },
            "approvals",
            "at most 1",
        ),
        ({"rounds": option("9")}, "rounds", "Choose one of the options"),
        ({"expire_days": number(30)}, "expire_days", "from 0 to 21"),
        ({"people": number("lots")}, "people", "whole number"),
        ({"avoid": text("x" * 201)}, "avoid", "At most 200"),
        (
            {
                "weekly_day": option("sat"),
                "weekly_channel": {"selected_conversation": CHANNEL},
                "weekly_time": {"selected_time": "9am"},
                "weekly_request": text("the usual"),
            },
            "weekly_time",
            "HH:mm",
        ),
        (
            {
                "weekly_day": option("sat"),
                "weekly_channel": {"selected_conversation": CHANNEL},
                "weekly_request": text("x" * 5000),
            },
            "weekly_request",
            "At most 3,000",
        ),
        (
            {
                "weekly_day": option("sat"),
                "weekly_channel": {"selected_conversation": CHANNEL},
                "weekly_timezone": text("Mars/Olympus"),
                "weekly_request": text("the usual"),
            },
            "weekly_timezone",
            "time zone",
        ),
    ],
)
def test_a_bad_value_is_named_in_the_modal_and_nothing_is_saved(
    carol: World, s3: Any, bucket: str, changes: dict[str, Any], block: str, says: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, **changes)
    assert answer["response_action"] == "errors" and block in answer["errors"], answer
    # (every problem at once: this world has no scheduler, said with a weekly run's own)
    others = {b: e for b, e in answer["errors"].items() if b != block}
    assert others in ({}, {"weekly_day": NO_SCHEDULER}), answer
    assert says.lower() in answer["errors"][block].lower()
    assert saved(s3, bucket) is None


def test_anyone_in_the_channel_approves_alone_and_a_quorum_needs_named_approvers(
    carol: World, s3: Any, bucket: str
) -> None:
    """ "Anyone in the channel" with 50 approvals needed used to save, and no basket could then
    be ordered. With nobody chosen, one approval is enough; more needs the approvers named
    (``quorum_problem`` says why, rather than counting a channel's members). Named, two of
    two is saved. A deploy's APPROVALS_NEEDED=2 with no APPROVER_IDS shows as it is, and a
    save from the modal is held to the rule."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    for needed in (50, 2):
        answer = save(carol, "U0CAROL", form, approvals=number(needed))
        assert answer == {"response_action": "errors", "errors": {"approvals": QUORUM_NEEDS_NAMES}}
        assert saved(s3, bucket) is None
    named = save(carol, "U0CAROL", form, approvers=users("U0CAROL", "U0DAVE"), approvals=number(2))
    assert named == {}
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["approvals_needed"] == 2

    carol.boot(APPROVALS_NEEDED="2")
    s3.delete_object(Bucket=bucket, Key=settings_key(PREFIX, TENANT))  # (the deploy's again)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    approvals = next(b for b in form["blocks"] if b.get("block_id") == "approvals")
    assert approvals["element"]["initial_value"] == "2"
    answer = save(carol, "U0CAROL", form, rounds=option("2"))
    assert answer["errors"] == {"approvals": QUORUM_NEEDS_NAMES}


def test_a_person_of_another_workspace_cannot_be_an_approver(carol: World) -> None:
    carol.slack.set_person("U0OTHER", team_id="T0ELSEWHERE")
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, admins=users("U0OTHER"))
    assert answer["errors"] == {"admins": f"U0OTHER: {NOT_HERE}"}


def test_a_weekly_run_needs_a_scheduler(carol: World, s3: Any, bucket: str) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        weekly_day=option("sat"),
        weekly_channel={"selected_conversation": CHANNEL},
        weekly_request=text("the usual"),
    )
    assert answer["errors"] == {"weekly_day": NO_SCHEDULER}
    assert saved(s3, bucket) is None


def test_a_channel_the_bot_is_not_in_says_invite(carol: World, s3: Any, bucket: str) -> None:
    carol.slack.add_channel("C0QUIET", "quiet", members=["U0CAROL"], bot=False)
    with_scheduler(carol)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        weekly_day=option("sat"),
        weekly_channel={"selected_conversation": "C0QUIET"},
        weekly_request=text("the usual"),
    )
    assert answer["errors"] == {"weekly_channel": INVITE}
    assert saved(s3, bucket) is None


def test_two_admins_saving_at_once_the_second_sees_the_first_ones_values(
    carol: World, s3: Any, bucket: str
) -> None:
    carol.slack.set_person("U0DAVE", is_owner=True)
    mine = open_settings(carol, "U0CAROL")
    theirs = open_settings(carol, "U0DAVE")
    assert mine is not None and theirs is not None
    assert save(carol, "U0DAVE", theirs, rounds=option("2")) == {}
    answer = save(carol, "U0CAROL", mine, rounds=option("5"))
    assert answer["response_action"] == "update"
    view = answer["view"]
    assert CHANGED_MEANWHILE in json.dumps(view["blocks"])
    rounds = next(b for b in view["blocks"] if b.get("block_id") == "rounds")
    assert rounds["element"]["initial_option"]["value"] == "2"  # Dave's, shown to Carol
    # Slack keeps what was typed in an input whose block_id and action_id an update leaves as
    # they were (docs.slack.dev, "Updating views": preserving input state): every input of the
    # updated view has a new action_id, so Carol sees Dave's values, not her own typing.
    before = {b["block_id"]: b["element"]["action_id"] for b in mine["blocks"] if "element" in b}
    after = {b["block_id"]: b["element"]["action_id"] for b in view["blocks"] if "element" in b}
    assert before.keys() == after.keys() and all(before[k] != after[k] for k in before)
    doc = saved(s3, bucket)
    assert doc is not None and doc["settings"]["rounds"] == 2  # nothing of Dave's lost
    assert save(carol, "U0CAROL", view, rounds=option("5")) == {}  # on the new version: saved


def test_settings_edited_in_s3_are_refused_and_the_home_tab_says_so(
    carol: World, s3: Any, bucket: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert save(carol, "U0CAROL", form, approvers=users("U0CAROL")) == {}
    basket = start_basket(carol)
    key = settings_key(PREFIX, TENANT)
    doc = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    doc["settings"]["approvers"] = ["U0BOB"]
    s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(doc).encode())
    carol.click(basket, "approve_basket", user="U0BOB")  # neither the edit nor the defaults
    carol.run_lazies()  # (anyone may) count: nothing is ordered (tests/test_settings_unreadable)
    assert carol.slack.thread(CHANNEL, basket["ts"]) == []
    assert ephemeral_texts(carol, "U0BOB") == [UNREADABLE]
    assert TAMPERED.split(":warning: ")[1][:40] in home_text(carol, "U0ALICE")
    again = open_settings(carol, "U0CAROL")  # an admin can save over it
    assert again is not None and save(carol, "U0CAROL", again, rounds=option("2")) == {}
    assert TAMPERED[:40] not in home_text(carol, "U0ALICE")


def test_settings_of_a_newer_version_are_not_overwritten(
    carol: World, s3: Any, bucket: str
) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None and save(carol, "U0CAROL", form, rounds=option("2")) == {}
    from bot.handler import cold_start
    from bot.records import workspace_settings_store as ws

    rt, _ = cold_start()
    body = WorkspaceSettings(rounds=4).to_json()
    mac = ws._mac(rt.records.settings_store.key, TENANT, 99, body)
    raw = json.dumps({"v": 99, "settings": body, "mac": mac}).encode()
    s3.put_object(Bucket=bucket, Key=settings_key(PREFIX, TENANT), Body=raw)
    again = open_settings(carol, "U0CAROL")
    assert again is not None
    answer = save(carol, "U0CAROL", again, rounds=option("3"))
    assert answer["response_action"] == "errors"
    assert NEWER.removeprefix(":warning: ") == answer["errors"]["approvers"]
    assert (
        json.loads(s3.get_object(Bucket=bucket, Key=settings_key(PREFIX, TENANT))["Body"].read())[
            "v"
        ]
        == 99
    )


def test_the_shopper_is_told_the_household_and_the_basket_shows_it(carol: World) -> None:
    """The household saved once reaches every week's prompt and the basket's context line;
    people's words there are plain text (``<!channel>`` pings nobody)."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        people=number(4),
        avoid=text("pork <!channel>"),
        staples=text("oat milk"),
    )
    assert answer == {}
    carol.shop("tacos on Friday")
    carol.run_lazies()
    prompt = json.dumps(carol.claude.requests[-1]["system"])
    assert "We are 4. We don't eat: pork <!channel>. Always include: oat milk." in prompt
    (basket,) = carol.baskets()
    (line,) = [
        e
        for b in basket["blocks"]
        if b["type"] == "context"
        for e in b["elements"]
        if e["type"] == "plain_text" and e["text"].startswith("· For 4")
    ]
    assert line["text"] == "· For 4 · no pork <!channel> · always oat milk"
    assert "<!channel>" not in carol.slack.mentions()  # (the requester's mention is ours)


def test_removing_the_app_deletes_the_workspaces_settings(
    carol: World, s3: Any, bucket: str
) -> None:
    from bot.sandbox.slack_events import event_callback

    form = open_settings(carol, "U0CAROL")
    assert form is not None and save(carol, "U0CAROL", form, rounds=option("2")) == {}
    assert saved(s3, bucket) is not None
    carol.send(event_callback(SECRET, {"type": "app_uninstalled"}, team_id=TENANT))
    carol.run_lazies()
    assert saved(s3, bucket) is None


# -- what a review found: Slack failing, values the form cannot show, private channels ---------


def test_without_users_read_the_save_says_so_and_the_modal_opens_read_only(
    carol: World, s3: Any, bucket: str
) -> None:
    """``users.info`` without the ``users:read`` scope is ``missing_scope`` (an app installed
    before the scope was added): the modal shows the values read-only and says why; a save is
    answered in the modal, not with a 500, and saves nothing."""
    carol.slack.fail_next("users.info", error="missing_scope")
    seen = open_settings(carol, "U0CAROL")
    assert seen is not None and "submit" not in seen
    assert "couldn't check with Slack who you are" in json.dumps(seen["blocks"])
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    carol.slack.fail_next("users.info", error="missing_scope")
    answer = save(carol, "U0CAROL", form, rounds=option("2"))
    assert answer["errors"] == {"approvers": SLACK_DOWN}
    assert saved(s3, bucket) is None


def test_values_the_form_cannot_show_are_kept_unless_changed(
    carol: World, s3: Any, bucket: str
) -> None:
    """The deploy's 30-minute reminders, 8 baskets and no expiry show as 0 hours, 5 baskets
    and 0 days; saving another field keeps them as they were."""
    carol.boot(REMIND_AFTER="30m", MAX_ROUNDS="8", EXPIRE_AFTER="0")
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    assert save(carol, "U0CAROL", form, people=number(3)) == {}
    doc = saved(s3, bucket)
    assert doc is not None
    kept = {k: doc["settings"][k] for k in ("remind_after", "rounds", "expire_after")}
    assert kept == {"remind_after": 1800, "rounds": 8, "expire_after": 0}
    assert "every 30 min" in home_text(carol, "U0ALICE")
    again = open_settings(carol, "U0CAROL")
    assert again is not None
    assert save(carol, "U0CAROL", again, remind_every=number(2), expire_days=number(5)) == {}
    doc = saved(s3, bucket)
    assert doc is not None
    assert (doc["settings"]["remind_after"], doc["settings"]["expire_after"]) == (7200, 432000)


def test_long_escaped_words_fit_the_home_tab(carol: World) -> None:
    """Each summary line is its own section, under Slack's 3,000 characters once ``&`` is
    escaped as ``&amp;``; the Home tab is published as before."""
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, avoid=text("&" * 200), staples=text("&" * 300))
    assert answer == {}
    view = carol.open_home("U0ALICE")
    assert view is not None and carol.slack.violations == []
    assert all(len(b["text"]["text"]) <= 3000 for b in view["blocks"] if b["type"] == "section")


def test_the_weekly_request_is_shown_only_to_people_in_its_channel(carol: World) -> None:
    """As a waiting basket is: the Home tab of someone outside the weekly run's (private)
    channel names the day, not what it shops for."""
    carol.slack.add_channel("G0FAMILY", "family", members=["U0CAROL"], private=True)
    with_scheduler(carol)
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        weekly_day=option("sun"),
        weekly_channel={"selected_conversation": "G0FAMILY"},
        weekly_request=text("the surprise birthday dinner"),
    )
    assert answer == {}
    assert "surprise birthday" in home_text(carol, "U0CAROL")
    bobs = home_text(carol, "U0BOB")
    assert "Sundays at 09:00" in bobs and "surprise birthday" not in bobs
    seen = open_settings(carol, "U0BOB")
    assert seen is not None and "surprise birthday" not in json.dumps(seen["blocks"])


def test_an_enterprise_grid_admin_of_another_org_workspace_may_save(carol: World) -> None:
    """On Enterprise Grid ``users.info`` may name another of the org's workspaces as the
    person's ``team_id``; ``enterprise_user.teams`` lists every one they belong to."""
    carol.slack.set_person("U0CAROL", team_id="T0HQ", enterprise_user={"teams": ["T0HQ", TENANT]})
    form = open_settings(carol, "U0CAROL")
    assert form is not None and "submit" in form
    assert save(carol, "U0CAROL", form, rounds=option("2")) == {}


def test_a_forged_user_id_is_answered_in_the_modal(carol: World, s3: Any, bucket: str) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(carol, "U0CAROL", form, admins=users("<!channel>"))
    assert answer["response_action"] == "errors" and "not a Slack user ID" in json.dumps(answer)
    assert saved(s3, bucket) is None


def test_one_approver_who_may_not_approve_their_own_basket_is_refused(carol: World) -> None:
    form = open_settings(carol, "U0CAROL")
    assert form is not None
    answer = save(
        carol,
        "U0CAROL",
        form,
        approvers=users("U0CAROL"),
        no_self={"selected_options": [{"value": "on"}]},
    )
    assert "could never be approved" in answer["errors"]["approvals"]


def test_the_person_who_added_the_app_may_save_with_many_workspaces(world: World) -> None:
    """Add to Slack: the installation names who added the app (``authed_user``), and they may
    change the settings though Slack does not call them an admin; another member may not."""
    from bot.sandbox.slack_oauth import add_to_slack
    from tests.test_installs import CLIENT_ID, CLIENT_SECRET

    many = world
    many.slack.oauth.register_app(CLIENT_ID, CLIENT_SECRET)
    many.boot(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET, SLACK_BOT_TOKEN="")

    done = add_to_slack(many.send, many.slack.oauth, CLIENT_ID, TENANT, user_id="U0DAVE")
    assert done["statusCode"] == 200, done
    form = open_settings(many, "U0DAVE")
    assert form is not None and "submit" in form
    assert save(many, "U0DAVE", form, rounds=option("2")) == {}
    seen = open_settings(many, "U0BOB")
    assert seen is not None and "submit" not in seen
