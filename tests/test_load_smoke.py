"""A short version of the load run (``make load``, bench/load.py), in the normal test suite.

Same scenarios and assertions, smaller: 20 people click Approve on one basket at the same moment,
and 10 sessions go start -> change -> approve at once. S3 is moto in this process with each
request made atomic (the ``atomic_moto`` fixture), as real S3's conditional writes are.
"""

from __future__ import annotations

from bench.common import Loopback
from bench.load import Scenario, concurrent_clicks, concurrent_sessions
from tests.bot_kit import World


def failures(result: Scenario) -> str:
    return "\n".join(f"{c.name}: {c.detail}" for c in result.checks if not c.ok)


def test_concurrent_clicks_on_one_basket_resume_once(world: World, bucket: str) -> None:
    result = concurrent_clicks(Loopback.around(world, bucket), 20, timeout=60)
    assert result.ok, failures(result)
    assert [c.name for c in result.checks] == [
        "every click acked and its lazy run",
        "exactly one outcome message",
        "basket marked answered once",
        "every other clicker told (busy / already answered)",
        "exactly one resume wrote checkpoints",
        "checkpoint chain unbroken",
        "no lock object left",
    ]


def test_concurrent_sessions_all_end_ordered_with_unbroken_chains(
    world: World, bucket: str
) -> None:
    result = concurrent_sessions(Loopback.around(world, bucket), 10, workers=5, timeout=60)
    assert result.ok, failures(result)
    assert len(result.checks) == 5
