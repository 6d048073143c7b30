"""Checking an AWS Signature Version 4 on the server side, as AWS does, for the local S3 and
Scheduler stand-in (``moto_server``): moto itself verifies no signature, so without this any
process, or any web page, that finds its port can read and delete every checkpoint.

The check recomputes the signature the way botocore made it (botocore's own ``SigV4Auth`` and
``S3SigV4Auth``, fed the request as it arrived: method, raw path and query, the headers the
``Authorization`` header says were signed, the body or S3's ``X-Amz-Content-SHA256``) with the
per-run secret key, and compares. A request signed with another key, or unsigned (a browser's
form post, ``fetch`` in no-cors mode), or changed on the way, does not match. Presigned URLs
(the signature in the query) are refused: the bot makes none.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

MAX_SKEW_SECONDS = 15 * 60  # S3: "RequestTimeTooSkewed", more than 15 minutes from its clock
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[A-Z0-9]{1,128})/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)"
    r"/(?P<service>[a-z0-9-]+)/aws4_request, ?SignedHeaders=(?P<signed>[a-z0-9;-]+), ?"
    r"Signature=(?P<signature>[0-9a-f]{64})"
)


def environ_header(environ: Mapping[str, Any], name: str) -> str | None:
    """The value of header ``name`` in a WSGI ``environ``."""
    key = name.upper().replace("-", "_")
    if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        key = "HTTP_" + key
    value = environ.get(key)
    return value if isinstance(value, str) else None


def credential_problem(
    environ: Mapping[str, Any], key_id: str, now: Callable[[], float] = time.time
) -> str | None:
    """What is wrong with the request's ``Authorization`` and ``X-Amz-Date`` alone (read before
    its body, so that nobody without the key makes the stand-in read one), or None."""
    found = AUTHORIZATION.fullmatch(environ_header(environ, "authorization") or "")
    if found is None:
        return "the request is not signed (AWS Signature Version 4)"
    if not hmac.compare_digest(found["key"], key_id):
        return "the request is signed with another access key"
    stamp = environ_header(environ, "x-amz-date") or ""
    if not stamp.startswith(found["date"]):
        return "the request's X-Amz-Date does not match its signature's date"
    try:
        signed_at = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return "the request's X-Amz-Date is not a time"
    if abs(now() - signed_at) > MAX_SKEW_SECONDS:
        return "the request time is too skewed"
    return None


def payload_problem(environ: Mapping[str, Any], body: bytes) -> str | None:
    """S3's check of ``X-Amz-Content-SHA256`` against the body that arrived
    (``XAmzContentSHA256Mismatch``): the signature covers the header, so a body sent with
    another's header does not pass. The bot signs every payload over http: an unsigned or
    streaming one is refused too."""
    claimed = environ_header(environ, "x-amz-content-sha256")
    if claimed is None:
        return None
    found = AUTHORIZATION.fullmatch(environ_header(environ, "authorization") or "")
    if found is None or "x-amz-content-sha256" not in found["signed"].split(";"):
        return "X-Amz-Content-SHA256 is not among the signed headers"
    if not re.fullmatch(r"[0-9a-f]{64}", claimed):
        return "an unsigned or streaming payload is not taken here"
    if not hmac.compare_digest(claimed, hashlib.sha256(body).hexdigest()):
        return "the body's SHA-256 does not match X-Amz-Content-SHA256"
    return None


def signature_problem(
    environ: Mapping[str, Any],
    body: bytes,
    key_id: str,
    secret: str,
    now: Callable[[], float] = time.time,
) -> str | None:
    """Why the request in ``environ`` (with ``body``) is not signed by ``key_id``/``secret``,
    in a few words; None when its SigV4 signature is that key's, made within 15 minutes of
    ``now`` (S3 answers ``RequestTimeTooSkewed`` otherwise: a request is not replayed later)."""
    problem = credential_problem(environ, key_id, now)
    found = AUTHORIZATION.fullmatch(environ_header(environ, "authorization") or "")
    if problem is not None or found is None:
        return problem or "the request is not signed (AWS Signature Version 4)"
    stamp = environ_header(environ, "x-amz-date") or ""
    headers = {}
    for name in found["signed"].split(";"):
        value = environ_header(environ, name)
        if value is None:
            return f"the signed header {name} is missing"
        headers[name] = value
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI") or ""
    request = AWSRequest(
        method=str(environ.get("REQUEST_METHOD", "")),
        url=f"http://{headers.get('host', '')}{raw}",
        headers=headers,
        data=body,
    )
    request.context["timestamp"] = stamp
    signer_of = S3SigV4Auth if found["service"] == "s3" else SigV4Auth
    signer = signer_of(Credentials(key_id, secret), found["service"], found["region"])
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, found["signature"]):
        return "the request's signature does not match"
    return None
