"""The numbers an operator charts and alarms on, as CloudWatch embedded metrics (EMF).

What happens is counted as it happens (:func:`count`, :func:`seconds`), and written when the
invocation ends (:func:`flush`, from ``bot.handler``): one JSON line on stdout per dimension
group, which CloudWatch Logs turns into metrics. No API call, no import beyond the standard
library: the ack path pays for nothing. A process killed mid-invocation loses that invocation's
figures (the log lines before it say what happened).

Namespace ``weekly-shop``, dimension ``FunctionName`` (``AWS_LAMBDA_FUNCTION_NAME``); an
order's figures also by ``FunctionName`` and ``Destination`` (canvas, instacart, webhook,
kroger). The metrics, and what each counts:

    BasketsStarted      basket 1 of a shop (/shop, a weekly run) posted in its channel
    BasketsApproved     an approval that completed the basket's quorum (held or not)
    BasketsRejected     a basket rejected
    BasketsChanged      a change asked for (the model writes the next basket)
    BasketsExpired      a basket nobody answered in time (its expiry timer)
    BasketFeedbackGood  a person's verdict "Good basket" on a basket, new or changed
                        (``bot.steps.feedback``: the same press again counts nothing)
    BasketFeedbackBad   "Not good", likewise (a change of mind counts the new verdict: Slack
                        sends each press, and no "unpressed")
    AnswerSeconds       from the basket's message (its Slack ``ts``) to its approval,
                        rejection or change (Seconds)
    OrdersPlaced        an order the destination took (Destination)
    OrdersFailed        an order the destination refused or could not take (Destination)
    OrdersUnknown       an order whose outcome is not known (it may be there: Destination)
    ModelInputTokens    the shopper's input tokens billed at the full rate, per model call
    ModelCachedTokens   its input tokens read from the prompt cache
    ModelOutputTokens   its output tokens
    ModelCostUSD        an estimate of the call's price (None: see :data:`PRICES`)
    SlackRetries        Web API calls slack_sdk sent again (rate limited, connection lost)
    S3Retries           S3 requests botocore sent again (its standard retry mode)
    LostLazyRuns        ``bot.steps.lost`` writes its own line when Lambda gave up on a run

A redelivery (Lambda's retry, a second click) that finds the work done counts nothing again:
each figure is counted where the thing was done (the checkpoint that recorded the answer, the
order record's new state), not where it is shown.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import IO, Any

NAMESPACE = "weekly-shop"
MAX_METRICS = 100  # per EMF document (CloudWatch's limit)

COUNT, SECONDS, NONE = "Count", "Seconds", "None"

# USD per million tokens: (input, 5-minute cache write, cache read, output). An estimate: list
# prices looked up on 2026-12-05 (platform.claude.com/docs/en/about-claude/pricing and each
# model's overview page; a 5-minute cache write is 1.25x the input price), for prompts up to
# 100,000 tokens (Haiku 5.5 charges 5x above that; ours are a few thousand). Batch and
# negotiated prices are not modelled; a model not listed gets no ModelCostUSD.
PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-haiku-5-5": (0.10, 0.125, 0.01, 0.50),
    "claude-sonnet-5-5": (2.00, 2.50, 0.10, 10.00),
    "claude-opus-5": (5.00, 6.25, 0.50, 25.00),
}

_lock = threading.Lock()
# (metric, destination) -> (unit, values); destination "" for the function-wide ones
_pending: dict[tuple[str, str], tuple[str, list[float]]] = {}


def count(name: str, value: float = 1, *, destination: str = "", unit: str = COUNT) -> None:
    """Add ``value`` to ``name`` (summed until :func:`flush`)."""
    with _lock:
        key = (name, destination)
        had = _pending.get(key)
        if had is None:
            _pending[key] = (unit, [value])
        else:
            had[1][0] += value


def seconds(name: str, value: float) -> None:
    """One observation of a duration (each kept: CloudWatch gets the values, not their sum)."""
    with _lock:
        _pending.setdefault((name, ""), (SECONDS, []))[1].append(max(0.0, value))


def answered(decision: Any, posted_ts: str, now: float) -> None:
    """A basket's answer, just saved (a ``BasketDecision``), ``now``: an approval once it
    completes the quorum, a rejection, a change; an edit, an Undo and an approval still short
    of the quorum count nothing. ``posted_ts`` is the basket message's Slack ts (epoch seconds
    as text: when Slack posted it)."""
    if getattr(decision, "undo", False) or getattr(decision, "edit", None) is not None:
        return
    approved = bool(getattr(decision, "approved", False))
    if approved and not getattr(decision, "quorum_reached", True):
        return
    change = getattr(decision, "change", None)
    count("BasketsApproved" if approved else "BasketsChanged" if change else "BasketsRejected")
    try:
        posted = float(posted_ts)
    except ValueError:
        return
    seconds("AnswerSeconds", now - posted)


def order(state: str, destination: str) -> None:
    """An order's new state at ``destination``: placed, failed or unknown."""
    names = {"placed": "OrdersPlaced", "failed": "OrdersFailed", "unknown": "OrdersUnknown"}
    if state in names:
        count(names[state], destination=destination)


def model_call(
    model: str, input_tokens: int, cache_read: int, cache_write: int, output: int
) -> None:
    """One call of the model: its tokens, and what it cost by :data:`PRICES` (if listed).
    ``input_tokens`` are those billed at the full rate (the API's ``input_tokens``)."""
    count("ModelInputTokens", input_tokens)
    count("ModelCachedTokens", cache_read)
    count("ModelOutputTokens", output)
    price = PRICES.get(model)
    if price is not None:
        full, write, read, out = price
        cost = input_tokens * full + cache_write * write + cache_read * read + output * out
        count("ModelCostUSD", cost / 1_000_000, unit=NONE)


def model_usage(model: str, usage: Any) -> None:
    """``ClaudeShopper``'s ``on_usage``: the Messages API answer's ``usage``, counted."""

    def tokens(name: str) -> int:
        return int(getattr(usage, name, None) or 0)

    model_call(
        model,
        tokens("input_tokens"),
        tokens("cache_read_input_tokens"),
        tokens("cache_creation_input_tokens"),
        tokens("output_tokens"),
    )


def count_s3_retries(**kwargs: Any) -> None:
    """botocore's ``after-call.s3`` handler: the retries the answer says were made. botocore
    calls it before raising an error answer too, so a request S3 refused on every try is
    counted; one whose every try lost its connection is not (no answer came)."""
    parsed = kwargs.get("parsed") or {}
    retries = (parsed.get("ResponseMetadata") or {}).get("RetryAttempts") or 0
    if retries:
        count("S3Retries", retries)


def flush(function_name: str | None = None, out: IO[str] | None = None) -> None:
    """Write what was counted since the last flush, one EMF document per destination (and one
    for the function-wide figures), at most :data:`MAX_METRICS` metrics each; then forget it."""
    with _lock:
        pending = dict(_pending)
        _pending.clear()
    if not pending:
        return
    name = function_name or os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
    groups: dict[str, list[tuple[str, str, list[float]]]] = {}
    for (metric, destination), (unit, values) in sorted(pending.items()):
        groups.setdefault(destination, []).append((metric, unit, values))
    stream = out or sys.stdout
    for destination, metrics in groups.items():
        for start in range(0, len(metrics), MAX_METRICS):
            stream.write(
                json.dumps(_document(name, destination, metrics[start : start + MAX_METRICS]))
            )
            stream.write("\n")
    stream.flush()


def _document(
    function_name: str, destination: str, metrics: list[tuple[str, str, list[float]]]
) -> dict[str, Any]:
    dimensions = [["FunctionName"]]
    top: dict[str, Any] = {"FunctionName": function_name}
    if destination:
        dimensions.append(["FunctionName", "Destination"])
        top["Destination"] = destination
    for metric, _, values in metrics:
        top[metric] = values[0] if len(values) == 1 else values
    return {
        "_aws": {
            "Timestamp": int(time.time() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": NAMESPACE,
                    "Dimensions": dimensions,
                    "Metrics": [{"Name": m, "Unit": unit} for m, unit, _ in metrics],
                }
            ],
        },
        **top,
    }
