"""Agreement section: agreement per dimension and per judge pair."""

from __future__ import annotations

from jurybox.analysis.model.agreement import Agreement, AgreementBlock, PairAgreement
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Section,
    Table,
    cell,
    computed,
    fmt_count,
    fmt_num,
    label,
    ordered_dims,
    skip_reason,
)

AGREEMENT_COLUMNS = (
    "Data",
    "Level",
    "Units (complete/all)",
    "Krippendorff's α",
    "α bootstrap [95% CI]",
    "Fleiss' κ [95% CI]",
    "Gwet's AC1/AC2 [95% CI]",
    "ICC(2,1) [95% CI]",
    "All judges agree [95% CI]",
)
PAIR_COLUMNS = ("Judges", "Data", "n", "Cohen's κ [95% CI]", "Percent agreement [95% CI]")


def _agreement_tables(section: Section, node: Agreement) -> None:
    table = section.table(
        Table("agreement-per-dimension", "Agreement per dimension", AGREEMENT_COLUMNS)
    )
    pairs = section.table(Table("agreement-pairs", "Agreement per judge pair", PAIR_COLUMNS))
    for name, block in _agreement_blocks(node):
        if block is None or not block.computed:
            table.add(name, *["—"] * (len(AGREEMENT_COLUMNS) - 1))
            table.note(f"{name}: {skip_reason(block) or 'skipped'}")
            continue
        table.add(
            name,
            str(block.level or ""),
            fmt_count(block.n_complete_units, block.n_units),
            cell(table, block.krippendorff_alpha, interval=False),
            cell(table, block.krippendorff_alpha_ci),
            cell(table, block.fleiss_kappa),
            cell(table, block.gwet_ac),
            cell(table, block.icc),
            cell(table, block.percent_agreement),
        )
        _pair_rows(pairs, name, block.pairs or [])
    _agreement_notes(section, node, table)


def _agreement_blocks(node: Agreement) -> list[tuple[str, AgreementBlock | None]]:
    """Computed blocks (preferences, each score dimension, verdicts); a lone skipped
    preferences block is kept so that the table says why it is empty."""
    blocks: list[tuple[str, AgreementBlock | None]] = [("preferences", node.preferences)]
    dims = (node.scores.dimensions if node.scores else None) or {}
    blocks.extend((f"scores: {label(d)}", dims[d]) for d in ordered_dims(dims))
    blocks.append(("criterion verdicts", node.verdicts))
    found = [(n, b) for n, b in blocks if computed(b)]
    return found or [("preferences", node.preferences)]


def _pair_rows(table: Table, name: str, pairs: list[PairAgreement]) -> None:
    for pair in pairs:
        table.add(
            " vs ".join(map(str, pair.raters)),
            name,
            fmt_num(pair.cohen_kappa.n),
            cell(table, pair.cohen_kappa),
            cell(table, pair.percent_agreement),
        )


def _agreement_notes(section: Section, node: Agreement, table: Table) -> None:
    if node.unit is not None:
        units = node.unit.model_dump().items()
        section.notes.append(
            "Units: " + "; ".join(f"{k}: {v}" for k, v in units) + ". Preferences and "
            "verdicts are nominal; whole-number scores ordinal (linear-weighted κ and Gwet's AC2 "
            "over the scale); the total, a mean, is interval (α and ICC, no κ on means)."
        )
    table.note("α ≥ 0.667 is Krippendorff's lowest tentative level of reliability.")


AGREEMENT: Family[Agreement] = Family(
    key="agreement",
    title="Agreement between judges",
    question="Do the judges agree with each other?",
    node=lambda report: report.agreement,
    build=_agreement_tables,
    plots=("agreement_matrix",),
)
