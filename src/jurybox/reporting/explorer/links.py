"""Deep links into the item explorer of report.html.

``#items?judge=<j>&filter=<f>&q=<text>&item=<id>``: every count in the report that names a set
of items links to the explorer showing exactly that set. The page's script reads the same
parameters (``explorer.js``), so this is the one place their names are written in Python.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

ANCHOR = "items"
Filter = Literal["flipped", "wrong", "disagree", "failed"]
FILTERS: tuple[Filter, ...] = ("flipped", "wrong", "disagree", "failed")


def items_href(
    *,
    judge: str | None = None,
    filter: Filter | None = None,
    q: str | None = None,
    item: str | None = None,
) -> str:
    """The fragment that opens the explorer on one view, e.g.
    ``items_href(judge="ChatGPT", filter="flipped")`` -> ``#items?judge=ChatGPT&filter=flipped``.
    """
    if filter is not None and filter not in FILTERS:
        raise ValueError(f"unknown explorer filter {filter!r}; expected one of {FILTERS}")
    params = {"judge": judge, "filter": filter, "q": q, "item": item}
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in params.items() if v)
    return f"#{ANCHOR}?{query}" if query else f"#{ANCHOR}"
