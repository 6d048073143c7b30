"""How the offline shopper reads a week or a change (``workflow.shop.offline``): sentences and
clauses, the verb each one opens with ("we have", "no", "add", "more", "less", "swap … for …"),
the dishes of the recipe table it names, and how many the household is.
"""

from __future__ import annotations

import re

from . import dishes as table
from .dishes import KNOWN, SERVINGS, number
from .names import name_key, words

MAX_HOUSEHOLD = 20
_NUMBER = "|".join((r"\d+", *table.NUMBER_WORDS[1:]))
# Words a name may have after what was asked for and still be it: "chicken" is chicken breast,
# "garlic" is garlic cloves; "rice" is not rice noodles, "tomatoes" is not tomato passata.
_PARTS = frozenset({"breast", "thigh", "clove", "fillet", "mince", "steak"})
_STOP = frozenset({"the", "any", "some", "a", "an", "of", "our", "my", "all", "please"})
_FILLER = frozenset(
    {"a", "an", "the", "some", "of", "for", "on", "with", "dinner", "dinners", "meal", "meals"}
    | {"lunch", "tea", "please", "thanks", "homemade", "make", "cook", "night", "evening"}
    | {"week", "this", "next", "i'd", "we'd", "like", "want", "now", "left", "too", "at", "home"}
)

_SENTENCE = re.compile(r"[.!?:](?=\s|$)|[;\n]")
_LIST = re.compile(r",|\s+(?:and|&|or)\s+")
_DAYS = re.compile(
    r"\b(?:on |for |every )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|tonight|tomorrow"
    r"|(?:this|next) week(?:end)?|the weekend)\b"
)
_HOUSEHOLD = re.compile(
    rf"\b(?:for|family of|household of|feeds?|feeding|serves?|we are) ({_NUMBER})"
    rf"(?: (?:people|persons|adults|of us|servings|guests))?\b"
    rf"|\b({_NUMBER}) (?:people|persons|adults|of us|servings|guests)\b"
)
_LEAD = re.compile(r"(?:(?:and|but|oh|then|please|can you|could you)\s+)*")
VERBS = [
    ("have", r"(?:we |i )?(?:already |still )?(?:have|got)(?: got)?(?: already| still)?"),
    (
        "remove",
        r"no more|no|without|remove|drop|skip|take out|take off|delete|lose|"
        r"(?:we )?(?:do not|don't) (?:need|want)|not|none of",
    ),
    ("more", r"(?:add |some |a bit |a little |lots |much )?more|extra|double|increase|another"),
    ("less", r"(?:a bit |a little |much )?(?:less|fewer)|halve|half|reduce|cut down on"),
    ("swap", r"swap|replace|switch|change"),
    ("add", r"add|also|plus|include|buy|get|(?:we |i )?(?:need|want)|(?:we would|i would) like"),
]
_VERB = [(action, re.compile(rf"(?:{pattern})\b\s*(.*)")) for action, pattern in VERBS]


def matches(name: str, asked: tuple[str, ...]) -> bool:
    """Whether ``name`` is what ``asked`` (singular words) names; see :data:`_PARTS`."""
    named = words(name)
    return bool(asked) and set(asked) <= set(named) and (named[-1] in asked or named[-1] in _PARTS)


def scan(said: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The dishes named in ``said`` (longest name first at each word), and the words left."""
    dishes, rest, i = [], [], 0
    while i < len(said):
        for n in range(min(table.LONGEST_ALIAS, len(said) - i), 0, -1):
            if dish := table.ALIASES.get(said[i : i + n]):
                dishes.append(dish)
                i += n
                break
        else:
            rest.append(said[i])
            i += 1
    return dishes, [w for w in rest if w not in _STOP and w not in _FILLER]


def asked(target: str) -> tuple[str, ...]:
    return tuple(w for w in words(target) if w not in _STOP)


def _clean(target: str) -> str:
    """The thing a clause names, without days, fillers, bullets or edge punctuation."""
    tokens = [t for t in _DAYS.sub(" ", target.replace("+", " ")).split() if re.search(r"\w", t)]
    while tokens and tokens[0].strip(".,!?\"'") in _FILLER:
        tokens.pop(0)
    while tokens and tokens[-1].strip(".,!?\"'") in _FILLER:
        tokens.pop()
    return " ".join(tokens).strip(".,!?\"' ")


def _verb(part: str) -> tuple[str | None, str]:
    part = _LEAD.sub("", part, count=1)
    if found := re.fullmatch(rf"({_NUMBER}|a|an) (?:more|extra) (.+)", part):
        return "add", f"{found[1]} {found[2]}"  # "2 more eggs"
    if found := re.fullmatch(r"(.+) instead of (.+)", part):
        return "swap", f"{found[2]} for {found[1]}"
    for action, pattern in _VERB:
        if found := pattern.fullmatch(part):
            return action, found[1]
    return None, part


def clauses(text: str, default: str) -> list[tuple[str, str]]:
    """``(action, thing)`` for each clause of ``text``; one without a verb takes the verb before
    it in its sentence, or ``default``. "we have tacos on Friday" plans a dinner."""
    return [(action, target) for action, target, _ in said(text, default)]


def said(text: str, default: str) -> list[tuple[str, str, str]]:
    """:func:`clauses`, each with the clause as said ("no fish", "make it cheaper")."""
    for phrase in table.JOINED_NAMES:
        text = re.sub(rf"\b{re.escape(phrase)}\b", phrase.replace(" ", "+"), text)
    clauses = []
    for sentence in _SENTENCE.split(text):
        action = default
        for part in _LIST.split(sentence):
            verb, target = _verb(part.strip())
            action, target = verb or action, _clean(target)
            shown = part.strip().replace("+", " ")
            dishes, _ = scan(words(target))
            planned = _DAYS.search(part) or (verb is None and name_key(target) not in KNOWN)
            if action == "have" and dishes and planned:
                action = default
            if target:
                clauses.append((action, target, shown))
    return clauses


def household(request: str) -> tuple[int, str]:
    """How many the request shops for (default two), and the request without saying so."""
    found = _HOUSEHOLD.search(request)
    if found is None:
        return SERVINGS, request
    size = number(found[1] or found[2]) or SERVINGS
    return max(1, min(int(size), MAX_HOUSEHOLD)), _HOUSEHOLD.sub(" ", request)


def normal(text: str) -> str:
    text = text.lower().replace("’", "'")
    return re.sub(r"\b(we|i)'ve\b", r"\1 have", re.sub(r"\bwe're\b", "we are", text))
