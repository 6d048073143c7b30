"""What placing one order costs, per destination (a Slack canvas, an Instacart shopping-list
page, a signed webhook): requests and time (issue 22).

Each order is placed through the bot's own :class:`~bot.orders.place.OrderDesk` (the order record
created ``placing`` with ``If-None-Match``, the destination called, the record replaced
``placed`` with ``If-Match``) against the run's moto S3 and the fake Slack; the baseline is the
same requests made raw with the same clients (two conditional PUTs around the destination's
calls), and beside it the destination's calls alone, with no record: what exactly-once costs
on top of placing the order at all is the two PUTs.

    python -m bench.orders
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from bench.common import Loopback, describe_ops, loopback
from bench.table import Row, ratio, render

N = 40
CHANNEL = "C0ORDERS"


def _order(team: str) -> Any:
    from bot.orders.order import Order, week_title
    from workflow.shop.basket import Item

    lines = tuple(
        Item(name=f"item {i}", quantity=i + 1, unit="g" if i % 2 else "", aisle="produce")
        for i in range(17)
    )
    now = int(time.time())
    return Order(
        order_id=uuid.uuid4().hex[:24],
        team=team,
        channel=CHANNEL,
        title=week_title(now),
        lines=lines,
        requested_by="U0ALICE",
        approved_by=("U0BOB",),
        approved_at=now,
    )


def _median_ms(run: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _slack_calls(lb: Loopback, run: Callable[[], Any]) -> Counter[str]:
    before = len(lb.slack.calls)
    run()
    return Counter(c.method for c in lb.slack.calls[before:])


def canvas_rows(lb: Loopback) -> list[Row]:
    from slack_sdk import WebClient

    from bot.orders.canvas import CanvasDestination, checklist, title_of
    from bot.orders.place import OrderDesk
    from bot.records.orders import S3Orders, orders_prefix

    lb.open_channel(CHANNEL)
    web = WebClient(token=lb.env["SLACK_BOT_TOKEN"], base_url=lb.slack.url)
    records = S3Orders(lb.bucket, orders_prefix("weekly-shop/"), lb.s3, b"k" * 32)
    desk = OrderDesk(records, CanvasDestination(web))

    def ours() -> None:
        record = desk.place(_order("T0TEAM"))
        if record.state != "placed":
            raise RuntimeError(f"the canvas order was not placed: {record.reason}")

    def alone() -> None:  # the destination's own calls, no record
        order = _order("T0TEAM")
        markdown = {"type": "markdown", "markdown": checklist(order)}
        made = web.canvases_create(
            title=title_of(order), channel_id=CHANNEL, document_content=markdown
        )
        web.files_info(file=made["canvas_id"])

    def raw() -> None:  # the same requests, raw: two conditional PUTs around the calls
        key = f"bench-raw-orders/{uuid.uuid4().hex}"
        put = lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfNoneMatch="*")
        alone()
        lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfMatch=put["ETag"])

    lb.counter.take()
    slack_calls = _slack_calls(lb, ours)
    s3_calls = lb.counter.take()
    o, r, a = _median_ms(ours, N), _median_ms(raw, N), _median_ms(alone, N)
    return [
        Row(
            "requests per order, Slack canvas",
            f"{sum(s3_calls.values())} S3 + {sum(slack_calls.values())} Slack",
            f"{describe_ops(s3_calls)}; {', '.join(sorted(slack_calls))}",
            target="2 S3 + 2 Slack",
            ok=sum(s3_calls.values()) == 2 and sum(slack_calls.values()) == 2,
        ),
        Row(
            f"time per order, Slack canvas, median of {N}",
            f"{o:.1f} ms",
            f"the same requests raw: {r:.1f} ms (the Slack calls alone: {a:.1f} ms)",
            ratio(o, r),
        ),
    ]


def webhook_rows(lb: Loopback) -> list[Row]:
    """The same for the signed webhook, against the HTTPS receiver on 127.0.0.1: ours through
    the desk (record, check the URL, sign, POST, record); the baseline the same PUTs around a
    plain signed POST with the same TLS connection per order."""
    from bot.orders.place import OrderDesk
    from bot.orders.webhook import WebhookDestination
    from bot.records.orders import S3Orders, orders_prefix
    from bot.sandbox.webhook_receiver import HOST, WebhookReceiver

    with WebhookReceiver() as receiver:
        pinned = {HOST: ("127.0.0.1", receiver.port)}
        hook = WebhookDestination(
            receiver.url, receiver.secret, pinned=pinned, ca_file=str(receiver.ca_file)
        )
        records = S3Orders(lb.bucket, orders_prefix("weekly-shop/"), lb.s3, b"k" * 32)
        desk = OrderDesk(records, hook)

        def ours() -> None:
            if desk.place(_order("T0TEAM")).state != "placed":
                raise RuntimeError("the webhook order was not placed")

        def alone() -> None:
            hook.place(_order("T0TEAM"))

        def raw() -> None:
            key = f"bench-raw-orders/{uuid.uuid4().hex}"
            put = lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfNoneMatch="*")
            alone()
            lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfMatch=put["ETag"])

        lb.counter.take()
        before = len(receiver.deliveries)
        ours()
        s3_calls, posts = lb.counter.take(), len(receiver.deliveries) - before
        o, r, a = _median_ms(ours, N), _median_ms(raw, N), _median_ms(alone, N)
    return [
        Row(
            "requests per order, signed webhook",
            f"{sum(s3_calls.values())} S3 + {posts} POST",
            describe_ops(s3_calls),
            target="2 S3 + 1 POST",
            ok=sum(s3_calls.values()) == 2 and posts == 1,
        ),
        Row(
            f"time per order, signed webhook, median of {N}",
            f"{o:.1f} ms",
            f"the same requests raw: {r:.1f} ms (the POST alone: {a:.1f} ms)",
            ratio(o, r),
        ),
    ]


def instacart_rows(lb: Loopback) -> list[Row]:
    """The same for an Instacart page, against the local stand-in, with the workspace's key read
    from SSM (the run's moto server) as each order is placed: ours through the desk (record, the
    key, POST, record); the baseline the same PUTs, GetParameter and POST made raw."""
    import http.client

    import boto3

    from bot.orders.instacart import PATH, InstacartDestination, body_of
    from bot.orders.place import OrderDesk
    from bot.records.orders import S3Orders, orders_prefix
    from bot.records.workspace_secrets import WorkspaceSecrets
    from bot.sandbox.instacart_api import FakeInstacart

    ssm = boto3.client("ssm")
    calls: list[str] = []
    ssm.meta.events.register("before-send.ssm.*", lambda **kw: calls.append(kw["event_name"]))
    secrets = WorkspaceSecrets(ssm, "/weekly-shop/bench/workspaces")
    with FakeInstacart(api_key="bench-instacart-key-0123") as fake:
        secrets.save("T0TEAM", "instacart-api-key", fake.api_key)
        page = InstacartDestination(lambda team: secrets.read(team, "instacart-api-key"), fake.url)
        records = S3Orders(lb.bucket, orders_prefix("weekly-shop/"), lb.s3, b"k" * 32)
        desk = OrderDesk(records, page)
        port = int(fake.url.rsplit(":", 1)[1])

        def ours() -> None:
            record = desk.place(_order("T0TEAM"))
            if record.state != "placed":
                raise RuntimeError(f"the Instacart order was not placed: {record.reason}")

        def alone() -> None:  # the POST alone
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            headers = {
                "Authorization": f"Bearer {fake.api_key}",
                "Content-Type": "application/json",
            }
            connection.request("POST", PATH, body=body_of(_order("T0TEAM")), headers=headers)
            connection.getresponse().read()
            connection.close()

        def raw() -> None:
            key = f"bench-raw-orders/{uuid.uuid4().hex}"
            put = lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfNoneMatch="*")
            ssm.get_parameter(Name=secrets.name("T0TEAM", "instacart-api-key"), WithDecryption=True)
            alone()
            lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfMatch=put["ETag"])

        lb.counter.take()
        made, calls[:] = len(fake.lists), []
        ours()
        s3_calls, ssm_calls, posts = lb.counter.take(), len(calls), len(fake.lists) - made
        o, r, a = _median_ms(ours, N), _median_ms(raw, N), _median_ms(alone, N)
    return [
        Row(
            "requests per order, Instacart page",
            f"{sum(s3_calls.values())} S3 + {ssm_calls} SSM + {posts} POST",
            f"{describe_ops(s3_calls)}; GetParameter (the workspace's key, decrypted)",
            target="2 S3 + 1 SSM + 1 POST",
            ok=sum(s3_calls.values()) == 2 and ssm_calls == 1 and posts == 1,
        ),
        Row(
            f"time per order, Instacart page, median of {N}",
            f"{o:.1f} ms",
            f"the same requests raw: {r:.1f} ms (the POST alone: {a:.1f} ms)",
            ratio(o, r),
        ),
    ]


def measure(lb: Loopback) -> list[Row]:
    return canvas_rows(lb) + instacart_rows(lb) + webhook_rows(lb)


def main() -> None:
    with loopback("bench-orders") as lb:
        print(render(measure(lb)))


if __name__ == "__main__":
    main()
