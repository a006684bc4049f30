"""The item explorer of report.html: every item, what each judge said of it, filters and links.

``build_explorer`` turns the analysis frame, the records and the items into rows
(``data.py``); ``encode_payload`` embeds them (``payload.py``); ``items_href`` is the deep link
every count of the report uses (``links.py``); ``explorer.js`` draws the table in the page.
"""

from jurybox.reporting.explorer.data import ExplorerData, ItemRow, build_explorer
from jurybox.reporting.explorer.links import FILTERS, Filter, items_href
from jurybox.reporting.explorer.payload import Payload, asset, encode_payload, script_hash

__all__ = [
    "FILTERS",
    "ExplorerData",
    "Filter",
    "ItemRow",
    "Payload",
    "asset",
    "build_explorer",
    "encode_payload",
    "items_href",
    "script_hash",
]
