"""The shopper: the model that writes a basket, behind a one-method seam.

A shopper is given a :class:`Brief` (the week's request, or the last basket and the change asked
for) and answers with a :class:`ShopperReply`. ``ClaudeShopper`` turns the brief into its prompt,
imports the anthropic SDK only when it is first used (the import alone takes seconds on a small
machine), and translates the SDK's errors into :mod:`workflow.shop.errors` here, so nothing else
names an SDK class. ``OfflineShopper`` writes a fixed, clearly labelled basket so the product runs
without a key; it reads the brief's fields, never the prompt.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import ShopperError, ShopperUnavailable, ShopperUnreachable

DEFAULT_MODEL = "claude-haiku-5-5"
MAX_OUTPUT_TOKENS = 4096

SYSTEM_PROMPT = """You write the weekly shopping basket for one household.
One item per line with its quantity, for example "500 g chicken thighs".
Leave out what the household already has. Nothing else."""


REVISION_OPENING = "Your last basket:"


@dataclass(frozen=True)
class Brief:
    """What the shopper is asked for: basket 1 of ``request``, or (with ``change``) the whole of
    ``last_basket`` again with that change made, the week's request and the ``earlier``
    changes (oldest first) still in view, so "we're away Friday" said at basket 1 holds at 3."""

    request: str
    last_basket: Sequence[str] = ()
    change: str | None = None
    earlier: Sequence[str] = ()

    def prompt(self) -> str:
        """The user turn Claude is sent."""
        if self.change is None:
            return self.request
        items = "\n".join(self.last_basket)
        parts = [f"{REVISION_OPENING}\n{items}"]
        if self.request:
            parts.append(f"The week's request was:\n{self.request}")
        if self.earlier:
            parts.append(
                "Changes the household asked for before, oldest first (they still hold):\n"
                + "\n".join(f"- {c}" for c in self.earlier)
            )
        parts.append(f"The household asks for this change:\n{self.change}")
        parts.append("Return the whole basket.")
        return "\n\n".join(parts)


@dataclass(frozen=True)
class ShopperReply:
    text: str
    stop_reason: str
    output_tokens: int


class Shopper(Protocol):
    label: str

    async def write(self, brief: Brief) -> ShopperReply:
        """The model's answer to ``brief``; raises ShopperError when there is none."""
        ...


class ClaudeShopper:
    """Claude through the anthropic SDK; its own retries handle 429, 5xx and 529."""

    label = "Claude"

    def __init__(
        self,
        model: str | None = None,
        client: Any = None,
        max_tokens: int = MAX_OUTPUT_TOKENS,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """``timeout`` (seconds, per attempt) overrides the SDK's default of 600 s."""
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.max_tokens = max_tokens
        self._client = client
        self._api_key = api_key
        self._timeout = timeout

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic  # deferred: seconds of import time, only when a basket is written

            options: dict[str, Any] = {"api_key": self._api_key}
            if self._timeout is not None:
                options["timeout"] = self._timeout
            self._client = anthropic.AsyncAnthropic(**options)
        return self._client

    async def write(self, brief: Brief) -> ShopperReply:
        import anthropic

        client = self._get_client()
        try:
            response = await client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=SYSTEM_PROMPT,
                messages=[{"role": "user", "content": brief.prompt()}],
            )
        except (anthropic.APITimeoutError, anthropic.RateLimitError) as exc:
            raise ShopperUnavailable(f"Claude: {type(exc).__name__}") from exc
        except (anthropic.InternalServerError, anthropic.RequestTimeoutError) as exc:
            raise ShopperUnavailable(f"Claude: {type(exc).__name__}") from exc
        except (
            anthropic.APIConnectionError,
            anthropic.AuthenticationError,
            anthropic.PermissionDeniedError,
        ) as exc:
            raise ShopperUnreachable(f"Claude: {type(exc).__name__}") from exc
        except anthropic.AnthropicError as exc:
            raise ShopperError(f"Claude: {type(exc).__name__}: {exc}") from exc
        text = "".join(
            getattr(block, "text", "") for block in response.content if block.type == "text"
        )
        return ShopperReply(
            text=text,
            stop_reason=str(response.stop_reason),
            output_tokens=int(response.usage.output_tokens),
        )


OFFLINE_BASKET = """500 g chicken breast
2 bell peppers
1 head broccoli
3 carrots
1 bulb garlic
1 piece fresh ginger
100 ml soy sauce
250 g red lentils
400 g tinned chopped tomatoes
1 litre vegetable stock
2 pizza bases
200 g tomato passata
250 g mozzarella
150 g mushrooms"""


class OfflineShopper:
    """A stand-in that needs no key: a fixed basket, minus lines a change names with 'no …'."""

    label = "offline shopper (no ANTHROPIC_API_KEY; baskets are canned, not written by Claude)"

    async def write(self, brief: Brief) -> ShopperReply:
        items = OFFLINE_BASKET.splitlines()
        if brief.change is not None:
            change = brief.change.lower()
            items = [line for line in brief.last_basket if line.strip()]
            words = [w.strip(" ,.!") for w in change.replace("no ", "\0").split("\0")[1:]]
            for word in filter(None, (w.split()[0] if w.split() else "" for w in words)):
                items = [i for i in items if not _mentions(i, word)]
        text = "\n".join(items)
        return ShopperReply(text=text, stop_reason="end_turn", output_tokens=len(text) // 4)


def _mentions(item: str, word: str) -> bool:
    return word in item.lower() or (
        word == "pizza" and any(w in item.lower() for w in ("pizza", "mozzarella", "passata"))
    )


def default_shopper() -> Shopper:
    """Claude when ANTHROPIC_API_KEY is set, otherwise the offline shopper."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return ClaudeShopper()
    return OfflineShopper()
