"""Agreement section: agreement per dimension and per judge pair."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    cell,
    computed,
    fmt_count,
    fmt_num,
    get,
    label,
    ordered_dims,
    skip_reason,
)

AGREEMENT_COLUMNS = (
    "Data",
    "Level",
    "Units (complete/all)",
    "Krippendorff's α",
    "Fleiss' κ",
    "All judges agree [95% CI]",
)
PAIR_COLUMNS = ("Judges", "Data", "n", "Cohen's κ [95% CI]", "Percent agreement [95% CI]")


def _agreement_tables(section: Section, node: Json) -> None:
    table = section.table(
        Table("agreement-per-dimension", "Agreement per dimension", AGREEMENT_COLUMNS)
    )
    pairs = section.table(Table("agreement-pairs", "Agreement per judge pair", PAIR_COLUMNS))
    for name, block in _agreement_blocks(node):
        if not computed(block):
            table.add(name, *["—"] * 5)
            table.note(f"{name}: {skip_reason(block)}")
            continue
        table.add(
            name,
            str(block.get("level", "")),
            fmt_count(block.get("n_complete_units"), block.get("n_units")),
            cell(table, block.get("krippendorff_alpha"), interval=False),
            cell(table, block.get("fleiss_kappa"), interval=False),
            cell(table, block.get("percent_agreement")),
        )
        _pair_rows(pairs, name, block.get("pairs") or [])
    _agreement_notes(section, node, table)


def _agreement_blocks(node: Json) -> list[tuple[str, Any]]:
    """Computed blocks (preferences, each score dimension, verdicts); a lone skipped
    preferences block is kept so that the table says why it is empty."""
    blocks: list[tuple[str, Any]] = [("preferences", node.get("preferences"))]
    dims = get(node, "scores", "dimensions") or {}
    blocks.extend((f"scores: {label(d)}", dims[d]) for d in ordered_dims(dims))
    blocks.append(("criterion verdicts", node.get("verdicts")))
    found = [(n, b) for n, b in blocks if computed(b)]
    return found or [("preferences", node.get("preferences") or {"status": "skipped"})]


def _pair_rows(table: Table, name: str, pairs: list[Json]) -> None:
    for pair in pairs:
        raters = pair.get("raters") or pair.get("judges") or []
        kappa = pair.get("cohen_kappa") or {}
        table.add(
            " vs ".join(map(str, raters)),
            name,
            fmt_num(kappa.get("n")),
            cell(table, kappa),
            cell(table, pair.get("percent_agreement")),
        )


def _agreement_notes(section: Section, node: Json, table: Table) -> None:
    unit = node.get("unit") or {}
    if unit:
        section.notes.append(
            "Units: " + "; ".join(f"{k}: {v}" for k, v in unit.items()) + ". Preferences are "
            "nominal, scores ordinal."
        )
    table.note("α ≥ 0.667 is Krippendorff's lowest tentative level of reliability.")


AGREEMENT = Family(
    key="agreement",
    title="Agreement between judges",
    question="Do the judges agree with each other?",
    build=_agreement_tables,
    plots=("agreement_matrix",),
)
