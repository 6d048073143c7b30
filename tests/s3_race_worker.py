"""``python -m tests.s3_race_worker NAME`` for ``tests/test_sandbox_s3_races.py``: one racer in a
fresh process, making conditional S3 requests to the stand-in its environment names
(``MotoStandIn.env``), one per line it is given, as soon as it reads the line.

It prints ``ready`` once its client has reached the bucket (so no racer is still starting when a
race begins), then answers each command line (JSON: ``op`` ``create`` / ``replace`` / ``delete``,
``bucket``, ``key``, and ``etag`` for the last two) with one JSON line: ``won`` (the request
succeeded), ``etag`` (what it wrote) and ``code`` (the S3 error code if it did not). botocore does
not retry, so each answer is the stand-in's own.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def attempt(s3: Any, name: str, command: dict[str, str]) -> dict[str, Any]:
    bucket, key, op = command["bucket"], command["key"], command["op"]
    body = f"{name} {op} {key}".encode()  # every write's ETag differs from every other's
    try:
        if op == "create":
            done = s3.put_object(Bucket=bucket, Key=key, Body=body, IfNoneMatch="*")
        elif op == "replace":
            done = s3.put_object(Bucket=bucket, Key=key, Body=body, IfMatch=command["etag"])
        else:
            done = s3.delete_object(Bucket=bucket, Key=key, IfMatch=command["etag"])
    except ClientError as exc:
        return {"won": False, "etag": None, "code": exc.response["Error"]["Code"]}
    return {"won": True, "etag": done.get("ETag"), "code": None}


def main() -> None:
    name = sys.argv[1]
    s3 = boto3.client(  # the stand-in's endpoint and this run's key, from the environment
        "s3", config=Config(retries={"mode": "standard", "max_attempts": 1})
    )
    s3.head_bucket(Bucket=os.environ["RACE_BUCKET"])
    print("ready", flush=True)
    for line in sys.stdin:
        print(json.dumps(attempt(s3, name, json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
