"""What one order into a person's Kroger cart costs: requests and time (issue 34, item 4).

Each order goes through the bot's own :class:`~bot.orders.place.OrderDesk` and
:class:`~bot.orders.kroger_order.KrogerCartDestination`: the order record created ``placing``
(``If-None-Match``), the person's refresh token read from SSM (decrypted), renewed at Kroger (the
refresh grant: Kroger spends the old one), read again (a Disconnect meanwhile is not undone,
a newer connection not overwritten), the new one saved to SSM before anything else, the
basket's 17 products added with one ``PUT /v1/cart/add``, the record replaced ``placed``
(``If-Match``). The baseline is the same requests made raw with the same clients. The person
connected once beforehand, as the Home tab's flow does (not measured). Against the run's moto
server (S3, SSM) and the local Kroger stand-in, answering at once: Kroger's own latency is not
modelled here (the requests are the figure; ``bench.prices`` models a search's).

    python -m bench.kroger_cart
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bench.common import Loopback, describe_ops, loopback
from bench.orders import N, _median_ms, _order
from bench.table import Row, ratio, render

TEAM, PERSON = "T0TEAM", "U0BOB"
REDIRECT = "https://bench.example/kroger/oauth_redirect"
PATH = "/weekly-shop/bench/workspaces"


def _connect(kroger: Any, cart: Any) -> str:
    """The person's refresh token, from the stand-in's authorize page as a browser drives it."""
    from bot.orders.kroger_cart import new_verifier

    verifier = new_verifier()
    url = cart.authorize_url(REDIRECT, "bench", verifier)
    query = {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}
    _, page, _ = kroger.customers.page(query)
    nonce = re.search(r'name="request" value="([^"]+)"', page)
    if nonce is None:
        raise RuntimeError("the stand-in's authorize page has no request")
    _, _, headers = kroger.customers.decide({"request": nonce[1], "choice": "allow"})
    back = parse_qs(urlsplit(headers["location"]).query)
    return str(cart.exchange_code(back["code"][-1], verifier, REDIRECT).refresh_token)


def cart_rows(lb: Loopback) -> list[Row]:
    import boto3

    from bot.orders.kroger import KrogerConfig
    from bot.orders.kroger_cart import CartItem, KrogerCart
    from bot.orders.kroger_order import KrogerCartDestination
    from bot.orders.place import OrderDesk
    from bot.records.kroger_accounts import KrogerAccounts
    from bot.records.orders import S3Orders, orders_prefix
    from bot.sandbox.kroger_api import FakeKroger

    ssm = boto3.client("ssm")
    ssm_calls: list[str] = []
    ssm.meta.events.register("before-send.ssm.*", lambda **kw: ssm_calls.append(kw["event_name"]))
    accounts = KrogerAccounts(ssm, PATH)
    with FakeKroger() as kroger:
        kroger.customers.register(kroger.client_id, REDIRECT)
        cart = KrogerCart(KrogerConfig(kroger.client_id, kroger.client_secret, kroger.url))
        accounts.save(TEAM, PERSON, _connect(kroger, cart))
        records = S3Orders(lb.bucket, orders_prefix("weekly-shop/"), lb.s3, b"k" * 32)
        desk = OrderDesk(records, KrogerCartDestination(cart, accounts))
        lines = tuple((f"{4_011 + i:013d}", 1 + i % 3) for i in range(17))

        def an_order() -> Any:
            return dataclasses.replace(_order(TEAM), cart=lines)

        def ours() -> None:
            record = desk.place(an_order())
            if record.state != "placed":
                raise RuntimeError(f"the cart order was not placed: {record.reason}")

        def raw() -> None:  # the same: PUT, GetParameter, refresh, GetParameter, Put…, PUT, PUT
            key = f"bench-raw-orders/{uuid.uuid4().hex}"
            put = lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfNoneMatch="*")
            name = accounts.name(TEAM, PERSON)
            token = ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
            tokens = cart.refresh(token)
            ssm.get_parameter(Name=name, WithDecryption=True)
            ssm.put_parameter(
                Name=name, Value=tokens.refresh_token, Type="SecureString", Overwrite=True
            )
            cart.add_to_cart(tokens.access_token, [CartItem(u, q) for u, q in lines])
            lb.s3.put_object(Bucket=lb.bucket, Key=key, Body=b"{}" * 300, IfMatch=put["ETag"])

        lb.counter.take()
        ssm_calls.clear()
        before = len(kroger.requests)
        ours()
        s3, ssm_made = lb.counter.take(), len(ssm_calls)
        made = [f"{r['method']} {urlsplit(r['path']).path}" for r in kroger.requests[before:]]
        added = kroger.customers.cart_of("customer-1")
        o, r = _median_ms(ours, N), _median_ms(raw, N)
    return [
        Row(
            "requests per order, Kroger cart (17 products)",
            f"{sum(s3.values())} S3 + {ssm_made} SSM + {len(made)} Kroger",
            f"{describe_ops(s3)}; SSM GetParameter 2, PutParameter (the person's token read, "
            f"read again, renewed); {', '.join(made)}",
            target="2 S3 + 3 SSM + 2 Kroger",
            ok=sum(s3.values()) == 2 and ssm_made == 3 and len(made) == 2 and len(added) >= 17,
        ),
        Row(
            f"time per order, Kroger cart, median of {N}",
            f"{o:.1f} ms",
            f"the same requests raw: {r:.1f} ms",
            ratio(o, r),
        ),
    ]


def main() -> None:
    with loopback("bench-kroger-cart") as lb:
        print(render(cart_rows(lb)))


if __name__ == "__main__":
    main()
