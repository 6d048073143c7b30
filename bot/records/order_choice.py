"""Where a workspace's approved baskets go, as its settings keep it (keys are not here: they are
write-only, in SSM, ``bot.records.workspace_secrets``).

    destination        "canvas" (a Slack canvas checklist), "instacart" (a shopping-list page),
                       "webhook" (a signed POST) or "kroger" (a person's Kroger cart: only
                       offered in a deploy with a Kroger app)
    instacart_server   "development" or "production": Instacart's two servers take different
                       keys (``bot.orders.instacart.SERVERS``)
    webhook_url        the household's https:// receiver (checked again, DNS and all, at save and
                       at each send: ``bot.orders.safe_url``)
    kroger_cart        whose Kroger cart (a Slack user ID); "" is whoever approved last
    kroger_modality    "PICKUP" or "DELIVERY": how the cart's items are to be had (Kroger's
                       ``modality``); both added by settings schema 5
                       (``bot.records.settings_upgrades``)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workflow.persistence.values import check_str, fields_of

from .slack_shapes import SLACK_USER

DESTINATIONS = ("canvas", "instacart", "webhook", "kroger")
MODALITIES = ("PICKUP", "DELIVERY")
INSTACART_SERVERS = ("development", "production")
MAX_URL = 2000


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderChoice:
    destination: str = "canvas"
    instacart_server: str = "development"
    webhook_url: str = ""
    kroger_cart: str = ""
    kroger_modality: str = "PICKUP"

    def __post_init__(self) -> None:
        if self.destination not in DESTINATIONS:
            raise ValueError(f"destination must be one of {', '.join(DESTINATIONS)}")
        if self.instacart_server not in INSTACART_SERVERS:
            raise ValueError(f"instacart_server must be one of {', '.join(INSTACART_SERVERS)}")
        check_str(self.webhook_url, "webhook_url", max_length=MAX_URL)
        if self.webhook_url and not self.webhook_url.startswith("https://"):
            raise ValueError("webhook_url must be an https:// URL")
        if self.destination == "webhook" and not self.webhook_url:
            raise ValueError("a webhook destination needs its webhook_url")
        check_str(self.kroger_cart, "kroger_cart", max_length=20)
        if self.kroger_cart and not SLACK_USER.fullmatch(self.kroger_cart):
            raise ValueError("kroger_cart must be a Slack user ID")
        if self.kroger_modality not in MODALITIES:
            raise ValueError(f"kroger_modality must be one of {', '.join(MODALITIES)}")

    def to_json(self) -> dict[str, Any]:
        return {
            "destination": self.destination,
            "instacart_server": self.instacart_server,
            "webhook_url": self.webhook_url,
            "kroger_cart": self.kroger_cart,
            "kroger_modality": self.kroger_modality,
        }

    @classmethod
    def from_json(cls, data: Any) -> OrderChoice:
        names = ("destination", "instacart_server", "webhook_url", "kroger_cart", "kroger_modality")
        return cls(**fields_of(data, "OrderChoice", names, names))
