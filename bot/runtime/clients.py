"""The AWS clients a cold start shares: S3, EventBridge Scheduler and SSM, each made on its
first call (an ack path, which needs none, never pays for them). Every workspace's view of the
runtime shares the same ones; a test or the sandbox injects its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

S3_RETRIES = "weekly-shop-s3-retries"  # our after-call handler's ID on a client


class LazyClient:
    """A boto3 client made on its first call (a cold start that never needs it never pays)."""

    def __init__(self, service: str, config: Any = None) -> None:
        self.service = service
        self.config = config
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            config = self.config or Config(retries={"mode": "standard", "max_attempts": 5})
            self._client = boto3.client(self.service, config=config)
        return getattr(self._client, name)


@dataclass
class AwsClients:
    """The S3, Scheduler and SSM clients (None: made on first use, with botocore's standard
    retries: the S3 one by ``workflow.persistence.s3_client``)."""

    s3_client: Any = None
    scheduler_client: Any = None
    ssm_client: Any = None
    _counted: bool = field(default=False, repr=False)  # S3Retries counted on s3_client

    def s3(self) -> Any:
        """The S3 client (made or injected), whose retries are counted (``S3Retries``)."""
        if self.s3_client is None:
            from workflow.persistence.s3_client import make_s3_client

            self.s3_client = make_s3_client()
        if not self._counted:
            from bot.metrics import count_s3_retries

            events = getattr(getattr(self.s3_client, "meta", None), "events", None)
            if events is not None:  # once a client, however many runtimes share it
                events.register("after-call.s3", count_s3_retries, unique_id=S3_RETRIES)
            self._counted = True
        return self.s3_client

    @property
    def scheduler(self) -> Any:
        if self.scheduler_client is None:
            self.scheduler_client = LazyClient("scheduler")
        return self.scheduler_client

    @property
    def ssm(self) -> Any:
        if self.ssm_client is None:
            self.ssm_client = LazyClient("ssm")
        return self.ssm_client
