"""How the shop compares names: as words, lower case, singular, without punctuation.

"Tomatoes" is "tomato", "shepherd's pie" is "shepherd pie", "gluten-free pasta" is three words.
The recipe table (``workflow.shop.dishes``), the offline shopper's reading and what a household
doesn't eat (``workflow.shop.diet``) all read names this way, so that a word means one thing to
all of them. Imports nothing of the shop (the diet is read on the settings' ack path).
"""

from __future__ import annotations

import re


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("oes", "ches", "shes", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as they are compared: lower case, singular, no punctuation."""
    plain = text.lower().replace("'", "").replace("’", "")
    return tuple(singular(word) for word in re.findall(r"[a-z0-9]+", plain))


def name_key(name: str) -> str:
    return " ".join(words(name))
