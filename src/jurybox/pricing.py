"""What a judgment costs, and the one way a cost is written: the one home of pricing, read by
the providers' callers (recording, the dry run, the progress bar, the summary, the manifest),
provider batch runs and the report.

Where a judge's prices come from (``price_judges``), per price, first found wins:

1. the judge's own ``price_input_per_mtok`` / ``price_output_per_mtok`` /
   ``price_cached_input_per_mtok`` settings;
2. the prices file the config names (``paths.prices``), entry by entry over
3. jurybox's price table, ``jurybox/prices.yaml`` (dated, with each vendor's source page).

A judge left without an input or an output price is *unpriced*, with the reason
(``PriceNote``); its records carry ``cost_usd: null`` and every output says "unpriced" the same
way (``format_cost``). The bundled local model costs nothing.

Token conventions (every adapter follows them, ``providers/_common.py``): ``input_tokens``
counts all prompt tokens, cached ones included; ``cached_input_tokens`` is the part of it served
from the vendor's prompt cache; ``output_tokens`` counts every billed output token.
"""

from __future__ import annotations

import datetime
import functools
import importlib.resources
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, RootModel

from jurybox.config import JudgeConfig, RunConfig, load_yaml, read_yaml_mapping, validated
from jurybox.records import Completion

BATCH_DISCOUNT = 0.5  # OpenAI, Anthropic and Gemini all bill batch tokens at half price
PRICE_TABLE = "prices.yaml"  # jurybox's own table, package data beside this module
UNPRICED = "unpriced"
# A vendor's dated snapshot of a model: claude-haiku-4-5-20251001, gpt-4o-2024-08-06.
_SNAPSHOT = re.compile(r"^(?P<base>.+)-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_PRICE_FIELDS = {
    "input": "price_input_per_mtok",
    "output": "price_output_per_mtok",
    "cached_input": "price_cached_input_per_mtok",
}


# --- the table ----------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ModelPrices(_Strict):
    """One model's prices, USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0, description="Unset: the input price.")


class VendorPrices(_Strict):
    """One provider's models, with the page their prices come from and when it was checked."""

    source: str | None = None
    checked: datetime.date | None = None
    models: dict[str, ModelPrices] = Field(default_factory=dict)


class PriceFile(RootModel[dict[str, VendorPrices]]):
    """A prices file: provider name (a judge's ``provider:``) -> its models."""


@dataclass(frozen=True, slots=True)
class TableEntry:
    """A model's prices as found, and where they were found (said in every ``PriceNote``)."""

    prices: ModelPrices
    origin: str  # "jurybox price table (https://..., checked 2026-11-29)" / "prices file x.yaml"


class PriceTable:
    """jurybox's price table with a user's prices file laid over it, model by model."""

    def __init__(self, entries: Mapping[tuple[str, str], TableEntry]) -> None:
        self._entries = dict(entries)

    def lookup(self, provider: str, model: str | None) -> TableEntry | None:
        """The entry of ``model`` (or of the model its snapshot date suffix names)."""
        if not model:
            return None
        name = model.removeprefix("models/")  # Gemini's resource form
        entry = self._entries.get((provider, name))
        snapshot = _SNAPSHOT.match(name)
        if entry is None and snapshot is not None:
            entry = self._entries.get((provider, snapshot.group("base")))
        return entry

    def providers(self) -> list[str]:
        return sorted({provider for provider, _ in self._entries})

    def overlaid(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s entries added, replacing this one's where both price a
        model."""
        return PriceTable({**self._entries, **other._entries})


def _entries(file: PriceFile, origin: str) -> dict[tuple[str, str], TableEntry]:
    out = {}
    for provider, vendor in file.root.items():
        where = ", ".join(
            part for part in (vendor.source, vendor.checked and f"checked {vendor.checked}") if part
        )
        described = f"{origin} ({where})" if where else origin
        for model, prices in vendor.models.items():
            out[(provider, model)] = TableEntry(prices, described)
    return out


@functools.cache
def builtin_table() -> PriceTable:
    """jurybox's own price table (``jurybox/prices.yaml``), read once."""
    text = importlib.resources.files("jurybox").joinpath(PRICE_TABLE).read_text("utf-8")
    source = f"jurybox/{PRICE_TABLE}"
    file = validated(PriceFile, load_yaml(text, source), source=source, text=text)
    return PriceTable(_entries(file, "jurybox price table"))


def load_price_file(path: str | Path) -> PriceTable:
    """A user's prices file (the layout of ``prices.yaml``). Raises ConfigError naming the
    file, line and field of a problem."""
    data, text = read_yaml_mapping(path)
    file = validated(PriceFile, data, source=str(path), text=text)
    return PriceTable(_entries(file, f"prices file {path}"))


def price_table(config: RunConfig) -> PriceTable:
    """The table a run prices its judges by: jurybox's, under the config's ``paths.prices``."""
    if config.paths.prices is None:
        return builtin_table()
    return builtin_table().overlaid(load_price_file(config.resolve(config.paths.prices)))


# --- the judges' prices -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PriceNote:
    """Where a judge's prices come from, or why it has none (``priced`` False)."""

    priced: bool
    text: str


def price_judge(judge: JudgeConfig, table: PriceTable) -> tuple[JudgeConfig, PriceNote]:
    """The judge with every price it leaves unset taken from ``table``, and the note that says
    where its prices come from. A judge's own settings always win (and a judge that sets its
    input price takes no cached-input price from the table: that one belongs with the input
    price it discounts)."""
    own = {name: getattr(judge, field) for name, field in _PRICE_FIELDS.items()}
    entry = table.lookup(judge.provider, judge.model)
    update = {}
    if entry is not None:
        found = entry.prices.model_dump()
        if own["input"] is not None:  # a cached price belongs with the input price it cuts
            found["cached_input"] = None
        update = {
            _PRICE_FIELDS[name]: found[name]
            for name, value in own.items()
            if value is None and found[name] is not None
        }
    priced = judge.model_copy(update=update) if update else judge
    return priced, _note(judge, priced, entry if update else None, table)


def _note(
    judge: JudgeConfig, priced: JudgeConfig, entry: TableEntry | None, table: PriceTable
) -> PriceNote:
    complete = priced.price_input_per_mtok is not None and priced.price_output_per_mtok is not None
    if not complete and judge.provider == "local":
        return PriceNote(True, "the bundled local model: free")
    if not complete:
        return PriceNote(False, unpriced_reason(judge, table))
    if entry is None:
        return PriceNote(True, "the judge's price_* settings")
    own = any(getattr(judge, field) is not None for field in _PRICE_FIELDS.values())
    settings = "the judge's price_* settings, the rest from " if own else ""
    return PriceNote(True, f"{settings}{entry.origin}: {judge.provider} {judge.model}")


def unpriced_reason(judge: JudgeConfig, table: PriceTable) -> str:
    """Why a judge has no price, and how to give it one."""
    model = f"{judge.provider} model '{judge.model}'" if judge.model else f"{judge.provider}"
    covered = ", ".join(table.providers())
    return (
        f"no price for {model}: not in the price table (it covers {covered}) and the judge "
        "sets no price_input_per_mtok / price_output_per_mtok; set them, or add the model to a "
        "prices file named by paths.prices"
    )


def price_judges(config: RunConfig) -> tuple[RunConfig, dict[str, PriceNote]]:
    """The config with every judge priced from ``price_table(config)``, and each judge's
    ``PriceNote``. Raises ConfigError for a bad prices file."""
    table = price_table(config)
    judges, notes = {}, {}
    for name, judge in config.judges.items():
        judges[name], notes[name] = price_judge(judge, table)
    return config.model_copy(update={"judges": judges}), notes


# --- costs --------------------------------------------------------------------------------------


def completion_cost_usd(judge: JudgeConfig, completion: Completion) -> float | None:
    """USD cost of one completion from the judge's configured prices.

    Cached input tokens are billed at ``price_cached_input_per_mtok`` (the input price when
    unset). Returns ``None`` when a needed price or token count is unknown, never a guess; a
    local judge with no prices configured costs 0.
    """
    return tokens_cost_usd(
        judge, completion.input_tokens, completion.output_tokens, completion.cached_input_tokens
    )


def tokens_cost_usd(
    judge: JudgeConfig, tokens_in: int | None, tokens_out: int | None, cached: int | None
) -> float | None:
    """USD cost of these token counts at the judge's prices (``completion_cost_usd``'s rule)."""
    price_in, price_out = judge.price_input_per_mtok, judge.price_output_per_mtok
    if price_in is None and price_out is None and judge.provider == "local":
        return 0.0
    if price_in is None or price_out is None or tokens_in is None or tokens_out is None:
        return None
    cached = min(cached or 0, tokens_in)
    price_cached = judge.price_cached_input_per_mtok
    if price_cached is None:
        price_cached = price_in
    total = (tokens_in - cached) * price_in + cached * price_cached + tokens_out * price_out
    return total / 1_000_000


def _half(price: float | None) -> float | None:
    return None if price is None else price * BATCH_DISCOUNT


def batch_priced(judge: JudgeConfig) -> JudgeConfig:
    """The judge with its prices replaced by its batch prices (the cost of a batch record):
    50% of the synchronous prices unless the judge's ``batch_price_*`` say otherwise."""
    price_in = judge.batch_price_input_per_mtok
    if price_in is None:
        price_in = _half(judge.price_input_per_mtok)
    price_out = judge.batch_price_output_per_mtok
    if price_out is None:
        price_out = _half(judge.price_output_per_mtok)
    cached = judge.price_cached_input_per_mtok
    # An explicit batch input price with no cached price: cached tokens bill at that price.
    cached = _half(cached) if judge.batch_price_input_per_mtok is None else None
    return judge.model_copy(
        update={
            "price_input_per_mtok": price_in,
            "price_output_per_mtok": price_out,
            "price_cached_input_per_mtok": cached,
        }
    )


# --- the one way a cost is written --------------------------------------------------------------


def format_usd(value: float | None) -> str:
    """One priced amount: ``$0.1500`` (four decimals, so cheap calls never read as nothing),
    or ``unpriced`` for None."""
    return UNPRICED if value is None else f"${value:,.4f}"


def format_cost(priced_usd: float | None, unpriced: Sequence[str] = ()) -> str:
    """A cost as every output writes it (dry run, progress bar, summary, manifest, report).

    ``priced_usd`` sums the priced judgments (None: none was priced); ``unpriced`` names the
    judges without a price. ``$0.1500``; ``unpriced (judge a)`` when nothing was priced;
    ``$0.1500 + unpriced (judges a, b)`` when some was. Never ``$0.0000`` for an unpriced judge.
    """
    if not unpriced:
        return format_usd(priced_usd or 0.0)
    names = ", ".join(unpriced)
    which = f"{UNPRICED} (judge{'s' if len(unpriced) > 1 else ''} {names})"
    return which if priced_usd is None else f"{format_usd(priced_usd)} + {which}"
