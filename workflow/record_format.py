"""How a checkpoint record becomes bytes on disk or in S3, and back.

The bytes are a zlib stream of one JSON header line followed by the state JSON exactly as written:

    {"v":1,"id":…,"cp":…,"parent":…,"run":…,"at":<unix ms>,"seq":…,"sig":…}\\n
    {…state…}

Tenant and session are not repeated in the bytes: the key or path they are stored under names them,
and the signature binds them, so bytes copied under another session do not verify.

Compression keeps checkpoints compact (the basket appears in a pending request and in shared state;
the second copy costs a few bytes). A checkpoint document (a state that starts ``{"format":1,``) is
compressed with a preset dictionary (RFC 1950 ``FDICT``): the text every such document repeats
apart from its data (JSON keys, type tags, the weekly shop's graph signature), so that text costs a
few bytes instead of ~240. The zlib header names the dictionary by its Adler-32 (``DICTID``); a
reader that does not know it refuses the record as :class:`IncompatibleCheckpoint`. Any other state
(the stores accept any text) is plain zlib. The state is never re-serialised, so its key order
survives. Reading validates the header with pydantic; anything else is :class:`CheckpointCorrupt`.
"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import CheckpointCorrupt, IncompatibleCheckpoint
from .store import CheckpointRecord

RECORD_VERSION = 1  # the header line and what follows it, inside the zlib stream
MAX_RECORD_BYTES = 4 * 1024 * 1024
DOCUMENT_PREFIX = b'{"format":1,'

# The preset dictionary for checkpoint documents of format 1 (workflow.checkpoint): a header line
# and a document skeleton with the weekly shop's graph signature, type tags and field names, the
# most frequent last (deflate codes near matches in fewer bits). NEVER EDIT THESE BYTES: records
# written with them name them by their Adler-32 and can only be read with exactly these bytes. A
# better dictionary is added beside this one (writers use the newest, readers know them all). A
# workflow whose text is not in here still round-trips; it just compresses like plain zlib.
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
_DICTIONARIES = {zlib.adler32(SHOP_DICTIONARY_1): SHOP_DICTIONARY_1}
_WRITE_DICTIONARY = SHOP_DICTIONARY_1
_FDICT = 0x20
# Milliseconds since the epoch in integers: float seconds (``timestamp() * 1000``) give some
# times back a millisecond early, e.g. 2004-03-15T07:55:47.472Z.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int
    id: str = Field(max_length=64)
    cp: str = Field(max_length=64)
    parent: str | None = Field(max_length=64)
    run: str = Field(max_length=64)
    at: int = Field(ge=0)
    seq: int = Field(ge=0)
    sig: str = Field(max_length=128)


def record_to_bytes(record: CheckpointRecord) -> bytes:
    header = {
        "v": RECORD_VERSION,
        "id": record.id,
        "cp": record.checkpoint_id,
        "parent": record.parent_checkpoint_id,
        "run": record.run_id,
        "at": (record.created_at - _EPOCH) // timedelta(milliseconds=1),
        "seq": record.sequence,
        "sig": record.signature,
    }
    line = json.dumps(header, separators=(",", ":")).encode()
    state = record.state.encode()
    if not state.startswith(DOCUMENT_PREFIX):
        return zlib.compress(line + b"\n" + state, 9)
    deflater = zlib.compressobj(9, zdict=_WRITE_DICTIONARY)
    return deflater.compress(line + b"\n" + state) + deflater.flush()


def _dictionary(data: bytes, name: str) -> bytes | None:
    """The preset dictionary the zlib stream in ``data`` names, or None if it names none."""
    if len(data) < 6 or data[0] & 0x0F != zlib.DEFLATED or (data[0] << 8 | data[1]) % 31:
        return None  # not a zlib header: inflating says what is wrong
    if not data[1] & _FDICT:
        return None
    dictionary_id = int.from_bytes(data[2:6], "big")
    dictionary = _DICTIONARIES.get(dictionary_id)
    if dictionary is None:
        raise IncompatibleCheckpoint(
            f"checkpoint {name} is compressed with dictionary {dictionary_id:08x}, "
            "which this code does not know"
        )
    return dictionary


def record_from_bytes(data: bytes, name: str, tenant_id: str, session_id: str) -> CheckpointRecord:
    """The record stored for ``tenant_id``/``session_id`` in ``data``; ``name`` goes in errors."""
    try:
        dictionary = _dictionary(data, name)
        inflater = zlib.decompressobj(zdict=dictionary) if dictionary else zlib.decompressobj()
        raw = inflater.decompress(data, MAX_RECORD_BYTES)
        if inflater.unconsumed_tail or not inflater.eof:
            raise CheckpointCorrupt(f"checkpoint {name} is truncated or too large")
        if inflater.unused_data:
            raise CheckpointCorrupt(f"checkpoint {name} has bytes after its end")
        line, _, state = raw.partition(b"\n")
        header_data = json.loads(line)
        if isinstance(header_data, dict) and header_data.get("v") != RECORD_VERSION:
            raise IncompatibleCheckpoint(
                f"checkpoint {name} has record version {header_data.get('v')!r}, "
                f"this code reads {RECORD_VERSION}"
            )
        header = _Header.model_validate(header_data)
        text = state.decode("utf-8")
    except (zlib.error, ValueError, ValidationError) as exc:
        raise CheckpointCorrupt(f"checkpoint {name} cannot be read: {exc}") from exc
    return CheckpointRecord(
        id=header.id,
        checkpoint_id=header.cp,
        parent_checkpoint_id=header.parent,
        run_id=header.run,
        session_id=session_id,
        tenant_id=tenant_id,
        created_at=_EPOCH + timedelta(milliseconds=header.at),
        sequence=header.seq,
        state=text,
        signature=header.sig,
    )
