"""Bolt's Lambda adapter, guarded: what turns an API Gateway event (or a lazy self-invocation)
into a Bolt request and back, for ``bot.handler``.

What it changes of Bolt's own ``SlackRequestHandler``: a body Bolt cannot even parse gets 400
(it would raise before any signature check), a public request posing as a lazy run gets 401, a
lazy run that failed raises :class:`LazyRunFailed` out of the handler, so that Lambda retries it
and its on-failure destination hears of it at the last (Bolt only logs such a failure), and a
Settings modal's lazy run (a save, or a ZIP search from it) is sent without the keys typed into
it (:class:`LazyRunner`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from slack_bolt import App, BoltRequest
from slack_bolt.adapter.aws_lambda import SlackRequestHandler
from slack_bolt.adapter.aws_lambda.handler import to_bolt_request
from slack_bolt.adapter.aws_lambda.lazy_listener_runner import LambdaLazyListenerRunner
from slack_bolt.kwargs_injection import build_required_kwargs
from slack_bolt.util.utils import get_arg_names_of_callable

from .keyless import typed_keys, without_keys

__all__ = ["GuardedRequestHandler", "LazyRunFailed", "LazyRunner", "lazy_run_name"]

log = logging.getLogger(__name__)


LAZY_ONLY = "x-slack-bolt-lazy-only"  # the header Bolt's runner puts on its self-invocations
LAZY_NAME = "x-slack-bolt-lazy-function-name"
# Bolt's runner also sets the event's own top-level "method" to "NONE" (LambdaLazyListenerRunner
# .start). An API Gateway event's top-level keys are API Gateway's: a client can send any header,
# but never that key. So the header says which lazy function, the key says it is a lazy run.
SELF_INVOKED = ("method", "NONE")


class LazyRunFailed(Exception):
    """A lazy run did not finish: raised out of the Lambda handler.

    Lambda retries an asynchronous invocation only when the handler raises (or the runtime dies
    or times out); one that returns, whatever it returns, is a success. So a lazy run ends in
    one of two ways: done (which includes having told the person why not), or this, and then
    Lambda retries it twice and its on-failure destination hands it to the lost-runs queue,
    which tells the person (``bot.steps.lost``).
    """


# What the lazy function of this invocation raised (one invocation per thread at a time).
_lazy_failure: ContextVar[BaseException | None] = ContextVar("lazy_failure", default=None)


class LazyRunner(LambdaLazyListenerRunner):
    """Bolt's Lambda lazy runner, except that a lazy function's exception is kept for the
    handler to raise: Bolt's own ``run`` logs "Failed to run an internal function" and returns,
    and the invocation would then look like a success to Lambda; and that a Settings save's
    lazy run goes without the keys typed into it, or not at all (``bot.listeners.keyless``)."""

    def __init__(self, logger: logging.Logger, signing_secret: str | None = None) -> None:
        super().__init__(logger)
        self.signing_secret = signing_secret

    def start(self, function: Callable[..., None], request: BoltRequest) -> None:
        event = request.context.get("lambda_request")
        if isinstance(event, dict) and typed_keys(request.body):
            keyless = without_keys(event, self.signing_secret) if self.signing_secret else None
            if keyless is None:  # fail closed: never a lazy run with a key in it
                log.error("a Settings modal's lazy run was not started: its keys stayed in it")
                return
            request.context["lambda_request"] = keyless
        super().start(function, request)

    def run(self, function: Callable[..., None], request: BoltRequest) -> None:
        names = get_arg_names_of_callable(function)
        kwargs = build_required_kwargs(
            logger=self.logger,
            required_arg_names=names,
            request=request,
            response=None,
            this_func=function,
        )
        try:
            function(**kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure: the handler raises it for Lambda
            _lazy_failure.set(exc)


def lazy_run_name(event: dict[str, Any]) -> str | None:
    """The lazy function a self-invocation runs (``run_approve``…), or None for Slack's own."""
    headers = event.get("headers")
    if not isinstance(headers, dict) or not headers.get(LAZY_ONLY):
        return None
    return str(headers.get(LAZY_NAME) or "?")


def posing_as_lazy(event: dict[str, Any]) -> bool:
    """A request through API Gateway that carries Bolt's lazy-run headers: only the function
    itself invokes a lazy run (with the event key no request can set), so this one is refused
    with 401 before Bolt sees it, as an unsigned request would be. Bolt alone would check its
    signature and answer 401 too, but as a lazy run that "failed", which would raise."""
    key, value = SELF_INVOKED
    headers = event.get("headers")
    has_header = isinstance(headers, dict) and any(
        str(name).lower() in (LAZY_ONLY, LAZY_NAME) for name in headers
    )
    return has_header and event.get(key) != value


class GuardedRequestHandler(SlackRequestHandler):
    """Bolt's Lambda adapter, answering 400 to a body it cannot even parse.

    ``to_bolt_request`` parses the body before anything checks its signature, and raises on
    bytes that are not UTF-8, a ``payload`` that is not JSON or not an object, and other shapes;
    unguarded, anyone can make the function fail (API Gateway answers 500).
    """

    def __init__(self, app: App, signing_secret: str | None = None) -> None:
        super().__init__(app)
        app.listener_runner.lazy_listener_runner = LazyRunner(self.logger, signing_secret)

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        """Bolt's answer; for a lazy run, that answer if it is a 200 and the run raised
        nothing, else :class:`LazyRunFailed` (Bolt answers 500 when, say, reading the
        workspace's installation failed, and 401 once the event is too old to verify)."""
        try:
            to_bolt_request(event)
        except Exception as exc:  # noqa: BLE001 - whatever the parser raised, the body is bad
            log.warning("unparseable Slack request refused: %s", type(exc).__name__)
            return {"statusCode": 400, "body": "", "headers": {}}
        if posing_as_lazy(event):
            log.warning("a public request carrying the lazy-run headers refused")
            return {"statusCode": 401, "body": "", "headers": {}}
        lazy = lazy_run_name(event)
        reset = _lazy_failure.set(None)
        try:
            response: dict[str, Any] = super().handle(event, context)  # type: ignore[no-untyped-call]
            failure = _lazy_failure.get()
        finally:
            _lazy_failure.reset(reset)
        if lazy is None:
            return response
        if failure is not None:
            log.error("lazy run %s failed: %s", lazy, type(failure).__name__)
            raise LazyRunFailed(f"lazy run {lazy} failed: {type(failure).__name__}") from failure
        if response.get("statusCode") != 200:
            status = response.get("statusCode")
            log.error("lazy run %s was answered %s", lazy, status)
            raise LazyRunFailed(f"lazy run {lazy} was answered {status}")
        return response
