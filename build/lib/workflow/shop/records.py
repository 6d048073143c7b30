"""The weekly shop's record codec: a zlib preset dictionary of what its checkpoints repeat.

Stores that keep weekly-shop checkpoints are given :data:`SHOP_RECORDS`, so the graph signature,
JSON keys and type tags every checkpoint repeats cost a few bytes (see
``workflow.persistence.record_format``).
"""

from __future__ import annotations

from workflow.persistence.record_format import RecordCodec

from . import SHOP_PREFIX

# The preset dictionary for checkpoint documents of format 1 (workflow.persistence.checkpoint): a
# header line and a document skeleton with the weekly shop's graph signature, type tags and field
# names, the most frequent last (deflate codes near matches in fewer bits). NEVER EDIT THESE BYTES:
# records written with them name them by their Adler-32 and can only be read with exactly these
# bytes. A better dictionary is added beside this one (writers use the newest, readers know them
# all). A workflow whose text is not in here still round-trips; it just compresses like plain zlib.
SHOP_DICTIONARY_1 = (
    b'{"v":1,"id":"","cp":"000000-","parent":null,"run":"","at":1,"seq":0,"sig":""}\n'
    b'"queue":[{"to":"write-basket","m":{"t":"ShopRequest","v":{"text":"'
    b'"queue":[{"to":"place-order","m":{"t":"BasketDecision","v":{"approved":true,"change":null,'
    b'"round":1}}}]"outputs":[{"t":"str","v":"No order placed: rejected"}]}'
    b'"outputs":[{"t":"str","v":"Ordered '
    b'"answered":{"":{"port":"approve-basket","data":{"t":"Basket","v":{"items":["'
    b'"],"round":1}},"by":"","response":{"t":"BasketDecision","v":{"approved":false,"change":"'
    b'"round":1}}}},"outputs":[]}'
    b'"queue":[{"to":"approve-basket","m":{"t":"Basket","v":{"items":["'
    b'{"format":1,"graph":["edge approve-basket>place-order?is_final",'
    b'"edge approve-basket>write-basket?wants_another_basket","edge write-basket>approve-basket",'
    b'"executor place-order:PlaceOrder","executor write-basket:WriteBasket","output place-order",'
    b'"port approve-basket:Basket>BasketDecision","start write-basket"],"superstep":2,"queue":[],'
    b'"requests":[{"id":"","port":"approve-basket","data":{"t":"Basket","v":{"items":["'
    b'"],"round":1}}}],"state":{"n:shop":{"request":{"t":"ShopRequest","v":{"text":"",'
    b'"requested_by":""}},"basket":{"t":"Basket","v":{"items":["'
    b'"],"round":1}}}},"executors":{},"answered":{},"outputs":[]}'
)

SHOP_RECORDS = RecordCodec(SHOP_DICTIONARY_1)

__all__ = ["SHOP_DICTIONARY_1", "SHOP_PREFIX", "SHOP_RECORDS"]
