"""The one table ``make bench`` prints: each figure beside its baseline from the same run."""

from __future__ import annotations

from dataclasses import dataclass

# The reference article's figures for two other frameworks. Published, NOT measured here: they
# are printed as fixed columns so our figures can be read beside them.
PUBLISHED_NOTE = (
    "published LangGraph = LangGraph + SqliteSaver, published AF = Agent Framework + file store: "
    "the reference article's figures, published, not measured here."
)


@dataclass(frozen=True)
class Row:
    figure: str
    ours: str
    baseline: str = "-"
    ratio: str = "-"
    target: str = "-"
    langgraph: str = "-"
    agent_framework: str = "-"
    ok: bool | None = None  # None: no target to meet

    @property
    def verdict(self) -> str:
        return "" if self.ok is None else ("ok" if self.ok else "MISSED")


HEADERS = (
    "figure",
    "ours",
    "baseline (same run)",
    "ratio",
    "target",
    "",
    "published LangGraph",
    "published AF",
)


def render(rows: list[Row]) -> str:
    cells = [HEADERS] + [
        (
            r.figure,
            r.ours,
            r.baseline,
            r.ratio,
            r.target,
            r.verdict,
            r.langgraph,
            r.agent_framework,
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADERS))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(
            " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    lines.append("")
    lines.append(PUBLISHED_NOTE)
    return "\n".join(lines)


def ratio(ours: float, baseline: float) -> str:
    return f"{ours / baseline:.2f}x" if baseline else "-"
