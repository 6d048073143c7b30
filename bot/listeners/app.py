"""The Bolt app: the ack path of every Slack request, and which lazy listener does the work, one
module per surface: ``commands`` (/shop), ``actions`` (the basket's buttons), ``views`` (the
change modal), ``home`` (the Home tab), ``events`` (the app removed), ``oauth`` (who a request
is from, and the install pages).

Acks do no model call and no S3 request: ``/shop`` acks "Writing your basket…", Approve and
Reject ack at once, Change… opens its modal (the trigger ID lives about three seconds and works
once, so ``views.open`` belongs here), and a submitted change is validated and acked. The work
then runs in a lazy listener, which on Lambda is a fresh asynchronous invocation of this function.
:class:`ShopApp` refuses, with 400, signed payloads Bolt would crash on (see ``payloads``).

Only the lazy listeners import the workflow (``start``, ``clicks``, and with them the engine and
asyncio; writing a basket also the model SDK, and with it pydantic): a cold start that only acks
never loads them, and its import time is a large part of Slack's 3 seconds at a small Lambda's CPU
share (``bench/coldstart.py``).
"""

from __future__ import annotations

import logging

from slack_bolt import App, BoltRequest, BoltResponse
from slack_sdk import WebClient

from bot.runtime import Runtime
from bot.slack.payloads import is_signed, payload_problem, reparse_form

from . import actions, commands, events, home, views
from .oauth import auth_options

log = logging.getLogger(__name__)


class ShopApp(App):
    """Bolt's App, refusing what it would crash on before routing it."""

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        reparse_form(req)
        problem = payload_problem(req.body)
        if problem is None:
            return super().dispatch(req)
        if not is_signed(req, self._signing_secret):
            return BoltResponse(status=401, body={"error": "invalid request"})
        log.warning("malformed Slack payload refused: %s", problem)
        return BoltResponse(status=400, body={"error": "malformed payload"})


class NotInstalledIsExpected(logging.Filter):
    """Bolt says a workspace without an installation at ERROR ("Although the app should be
    installed into this workspace, the AuthorizeResult … was not found."). Here it is expected
    (a removed app's last events, a workspace that never installed it) and ``ByWorkspace``
    already says it at INFO: Bolt's line is kept, at INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and "AuthorizeResult" in str(record.msg):
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def build_app(rt: Runtime) -> App:
    """One Bolt app per cold start, with ``process_before_response`` for Lambda, authorised as
    ``oauth`` says, with every surface's listeners."""
    bolt_logger = logging.getLogger("slack_bolt")
    authorization = logging.getLogger("slack_bolt.MultiTeamsAuthorization")
    if not any(isinstance(f, NotInstalledIsExpected) for f in authorization.filters):
        authorization.addFilter(NotInstalledIsExpected())
    quiet = bolt_logger.level
    # Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client
    # we give wins; that is what we want (the token comes through `authorize`), so hush it.
    bolt_logger.setLevel(logging.ERROR)
    try:
        app = ShopApp(
            # Named, so Bolt does not name it from inspect.stack(), which stats the source file
            # of every loaded module: ~45 ms of a cold start.
            name="weekly-shop",
            signing_secret=rt.settings.slack_signing_secret.get_secret_value(),
            client=WebClient(base_url=rt.settings.slack_api_url, timeout=10),
            process_before_response=True,
            logger=bolt_logger,
            **auth_options(rt),
        )
    finally:
        bolt_logger.setLevel(quiet)
    for surface in (commands, actions, views, home, events):
        surface.listen(app, rt)
    return app
