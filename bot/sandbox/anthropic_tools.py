"""Tool use as the fake Messages API (``bot.sandbox.anthropic_api``) plays it: what a strict
tool may not say, and a forced tool's call read from a scripted text.

The API refuses a strict tool whose schema uses numeric, length or count bounds, or an object
without ``"additionalProperties": false`` (strict schemas compile to a grammar that cannot say
them), and a ``tool_choice`` naming a tool the request does not define. A forced call's input is
the reply's text read one item a line (:func:`tool_input`), so the flow tests script baskets as
text and still get structured items.
"""

from __future__ import annotations

import re
from typing import Any

from workflow.shop.basket import Item
from workflow.shop.shopper import items_from_tool

_LIST_MARK = re.compile(r"^(?:[-*+•]\s*|\d{1,3}[.)]\s+)")
_AMOUNT = re.compile(r"^(\d+(?:\.\d+)?)\s*(g|kg|ml|l|lb|oz|gal|qt|ct|jar)?\s+(\S.*)$")
# Enough of a shop's layout for the sandbox to show a grouped basket.
_AISLE_WORDS = {
    "chicken": "meat and fish", "beef": "meat and fish", "salmon": "meat and fish",
    "pepper": "produce", "broccoli": "produce", "carrot": "produce", "garlic": "produce",
    "mushroom": "produce", "onion": "produce", "ginger": "produce", "lettuce": "produce",
    "mozzarella": "dairy and eggs", "milk": "dairy and eggs", "egg": "dairy and eggs",
    "cheese": "dairy and eggs", "pizza base": "bakery", "bread": "bakery", "tortilla": "bakery",
    "lentil": "pantry", "tomatoes": "pantry", "rice": "pantry", "pasta": "pantry",
}  # fmt: skip


def tool_input(text: str) -> dict[str, Any]:
    """``text`` as a ``submit_basket`` input, one item a non-empty line, list marks taken off:
    ``"500 g chicken breast"`` is 500, g, chicken breast; a line without a leading quantity is
    1 of it. Known foods get their aisle."""
    items = []
    for raw in text.splitlines():
        line = _LIST_MARK.sub("", raw.strip()).strip()
        if not line:
            continue
        item: dict[str, Any] = {"name": line, "quantity": 1, "unit": ""}
        amount = _AMOUNT.match(line)
        if amount and float(amount[1]) > 0:
            number = float(amount[1])
            item = {
                "name": amount[3],
                "quantity": int(number) if number.is_integer() else number,
                "unit": amount[2] or "",
            }
        aisle = next((a for word, a in _AISLE_WORDS.items() if word in line.lower()), None)
        if aisle is not None:
            item["aisle"] = aisle
        items.append(item)
    return {"items": items}


def basket_items(text: str) -> list[Item]:
    """The items a forced ``submit_basket`` call for ``text`` gives the shopper (for benches and
    tests that write baskets without the fake server)."""
    return items_from_tool(tool_input(text))


# What a strict tool's schema may not use (the API refuses the request).
_NOT_STRICT = (
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "maxItems", "uniqueItems", "minProperties", "maxProperties",
)  # fmt: skip


def _strict_problem(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    for keyword in _NOT_STRICT:
        if keyword in schema:
            return f"{where}: property {keyword!r} is not supported for strict tools"
    if schema.get("type") == "object" and schema.get("additionalProperties") is not False:
        return f"{where}: objects must set 'additionalProperties' to false for strict tools"
    children = [*(schema.get("properties") or {}).items(), ("items", schema.get("items"))]
    for name, child in children:
        problem = _strict_problem(child, f"{where}.{name}")
        if problem:
            return problem
    return None


def tools_problem(body: dict[str, Any]) -> str | None:
    """Why the request's ``tools`` / ``tool_choice`` would be refused (None when fine)."""
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not re.fullmatch(
            r"[a-zA-Z0-9_-]{1,128}", str(tool.get("name"))
        ):
            return f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
        if not isinstance(tool.get("input_schema"), dict):
            return f"tools.{i}.input_schema: Field required"
        if tool.get("strict"):
            problem = _strict_problem(tool["input_schema"], f"tools.{i}.input_schema")
            if problem:
                return problem
        names.add(tool["name"])
    choice = body.get("tool_choice")
    if (
        isinstance(choice, dict)
        and choice.get("type") == "tool"
        and choice.get("name") not in names
    ):
        return f"tool_choice: Tool {choice.get('name')!r} not found in tools"
    if isinstance(choice, dict) and choice.get("type") == "any" and not names:
        return "tool_choice: 'any' needs at least one tool"
    return None


def called_tool(body: dict[str, Any], wanted: str | None = None) -> str | None:
    """The tool the reply calls: the one ``tool_choice`` forces; with ``{"type": "any"}`` the
    one ``wanted`` (a scripted reply's choice, ``submit_basket`` by default); None otherwise."""
    choice = body.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "tool":
        return str(choice.get("name"))  # type: ignore[union-attr]
    if kind == "any":
        return wanted or "submit_basket"
    return None


def revision_input(asked: str, wanted: dict[str, Any]) -> dict[str, Any]:
    """A ``revise_basket`` input that turns the last basket, as the revision prompt lists it
    (``- name: amount (note)`` lines after its opening), into ``wanted`` (a ``submit_basket``
    input): the names gone, the quantities, units and notes changed, the items new."""
    last: dict[str, str] = {}
    for line in asked.split("\n\n", 1)[0].splitlines()[1:]:
        if line.startswith("- "):
            name = line[2:].split(": ", 1)[0].split(" (", 1)[0]
            last[name.casefold()] = line
    new = {item["name"].casefold(): item for item in wanted["items"]}
    remove = [name for name in last if name not in new]
    add = [item for name, item in new.items() if name not in last]
    changed = [
        {"name": item["name"], "note": item["note"]}
        for name, item in new.items()
        if name in last and item.get("note") and f"({item['note']})" not in last[name]
    ]
    return {"remove": remove, "set": changed, "add": add}
