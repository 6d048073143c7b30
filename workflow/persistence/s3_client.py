"""The boto3 S3 client the store and the lock share, and the translation of its errors.

Retries are botocore's ``standard`` mode (throttling, 5xx, connection errors). Everything below
this module speaks our error tree: a ``ClientError`` never leaks upward.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from workflow.errors import StoreError

S3_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 5},
    connect_timeout=5,
    read_timeout=10,
)


# For an answer owed within Slack's 3 seconds (the settings modal's save): one attempt, short
# timeouts; a slow S3 is said in the modal rather than retried past the deadline.
ACK_S3_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 1}, connect_timeout=1, read_timeout=2
)


def make_s3_client(config: Config = S3_CONFIG, **kwargs: Any) -> Any:
    """A new S3 client; endpoint and credentials follow boto3's own variables."""
    import boto3

    return boto3.client("s3", config=config, **kwargs)


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def is_precondition_failed(exc: ClientError) -> bool:
    # head_object failures come back with code "412" in moto; match on the status too.
    return http_status(exc) == 412 or error_code(exc) in ("PreconditionFailed", "412")


def is_conditional_conflict(exc: ClientError) -> bool:
    """Real S3's 409: another conditional write on the key is in flight; retry it."""
    return http_status(exc) == 409 or error_code(exc) == "ConditionalRequestConflict"


def is_missing(exc: ClientError) -> bool:
    """The key is not there (a missing *bucket* is a misconfiguration, not an absent object)."""
    if error_code(exc) == "NoSuchBucket":
        return False
    return http_status(exc) == 404 or error_code(exc) in ("NoSuchKey", "404", "NotFound")


def store_error(operation: str, exc: ClientError | BotoCoreError) -> StoreError:
    if isinstance(exc, ClientError):
        return StoreError(f"S3 {operation} failed: {error_code(exc) or http_status(exc)}")
    return StoreError(f"S3 {operation} failed: {type(exc).__name__}")


class Found(NamedTuple):
    body: bytes
    etag: str
    last_modified: datetime | None  # when S3 wrote it, by S3's clock


def head_metadata(s3: Any, bucket: str, key: str, what: str) -> dict[str, str] | None:
    """The user metadata of the object at ``key`` (one HEAD, no body), or None if there is
    none; other failures are StoreError."""
    try:
        meta = s3.head_object(Bucket=bucket, Key=key).get("Metadata") or {}
    except ClientError as exc:
        if is_missing(exc):
            return None
        raise store_error(f"head {what}", exc) from exc
    except BotoCoreError as exc:
        raise store_error(f"head {what}", exc) from exc
    return {str(k): str(v) for k, v in meta.items()}


def get_object(s3: Any, bucket: str, key: str, what: str) -> Found | None:
    """The object at ``key``, or None if there is none; other failures are StoreError."""
    try:
        response = s3.get_object(Bucket=bucket, Key=key)
        modified = response.get("LastModified")
        return Found(
            response["Body"].read(),
            str(response["ETag"]),
            modified if isinstance(modified, datetime) else None,
        )
    except ClientError as exc:
        if is_missing(exc):
            return None
        raise store_error(f"get {what}", exc) from exc
    except BotoCoreError as exc:
        raise store_error(f"get {what}", exc) from exc


def create_marker(s3: Any, bucket: str, key: str, what: str) -> bool:
    """Create an empty object at ``key`` unless one is there (``If-None-Match: *``): of any
    number of callers exactly one gets True. Other failures are StoreError."""
    return claim_marker(s3, bucket, key, b"", what) is not None


def claim_marker(s3: Any, bucket: str, key: str, body: bytes, what: str) -> str | None:
    """Create ``key`` holding ``body`` unless an object is there (``If-None-Match: *``): the new
    object's ETag for exactly one of any number of callers, None for the others. Other failures
    are StoreError."""
    try:
        answer = s3.put_object(
            Bucket=bucket, Key=key, Body=body, IfNoneMatch="*", ServerSideEncryption="AES256"
        )
    except ClientError as exc:
        if is_precondition_failed(exc):
            return None
        raise store_error(f"put {what}", exc) from exc
    except BotoCoreError as exc:
        raise store_error(f"put {what}", exc) from exc
    return str(answer["ETag"])


def replace_marker(s3: Any, bucket: str, key: str, body: bytes, etag: str, what: str) -> str | None:
    """Replace ``key`` with ``body`` if it is still the object ``etag`` names (``If-Match``):
    the new object's ETag; None if another writer changed or removed it first. Other failures
    are StoreError."""
    try:
        answer = s3.put_object(
            Bucket=bucket, Key=key, Body=body, IfMatch=etag, ServerSideEncryption="AES256"
        )
    except ClientError as exc:
        if is_precondition_failed(exc) or is_missing(exc):
            return None
        raise store_error(f"replace {what}", exc) from exc
    except BotoCoreError as exc:
        raise store_error(f"replace {what}", exc) from exc
    return str(answer["ETag"])
