"""What the weekly shop raises, under the engine's tree (``workflow.errors``).

    WorkflowError
    └── ShopperError              the shopper wrote no basket this time
        ├── ShopperStoppedEarly   the model stopped before finishing its answer (max_tokens, ...)
        ├── ShopperReplyUnfit     the model answered, but not with a basket that fits the form
        ├── ShopperUnavailable    overloaded, rate limited, a server error or a timeout: try later
        └── ShopperUnreachable    no connection, or the API key was refused: an operator must look

The shopper module translates its SDK's errors into these (``raise ... from``), so nothing
outside it names an SDK class. Each carries ``reason``: a few words safe to show a person; the
details stay in the exception's message and the logs.
"""

from __future__ import annotations

from workflow.errors import WorkflowError


class ShopperError(WorkflowError):
    """The shopper could not write a basket."""

    reason = "the shopper failed"


class ShopperStoppedEarly(ShopperError):
    """The model stopped for another reason than finishing its answer (e.g. max_tokens)."""

    def __init__(self, stop_reason: str) -> None:
        super().__init__(f"the shopper stopped early ({stop_reason}); no basket to approve")
        self.stop_reason = stop_reason
        self.reason = f"the shopper stopped early ({stop_reason})"


class ShopperUnavailable(ShopperError):
    """The model's API is overloaded, rate limited, failing or slow; the SDK's retries are spent."""

    reason = "the shopper is unavailable right now"


class ShopperUnreachable(ShopperError):
    """The model's API cannot be reached, or refuses our key: retrying will not help."""

    reason = "the shopper could not be reached"


class ShopperReplyUnfit(ShopperError):
    """The model answered, but not with a basket that fits the form (``BASKET_TOOL``): a
    missing or mistyped field, too many items, no tool call. The details are in the message."""

    reason = "the shopper's answer did not fit a basket"
