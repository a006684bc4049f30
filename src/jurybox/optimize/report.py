"""The optimize report as Markdown, and the winning prompt as a run config.

``optimize_report.json`` is the record (``app.optimize_final`` builds it); this renders it for a
reader, the one place its numbers are rounded, and writes ``winner.yaml``: the base config with
the winner's instructions, examples and rubric, every path absolute, ready to ``jurybox run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.config import RunConfig
from jurybox.optimize.candidates import Candidate, absolute_task
from jurybox.prompts.custom import is_instructions_file


def _figure(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "—"
    return f"{entry['score']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"


def markdown(report: Mapping[str, Any]) -> str:
    """The report for a reader: the winner's dev and test figures first, then every
    candidate."""
    return "\n".join([*_headline(report), "", *_context(report), "", *_table(report)]) + "\n"


def _headline(report: Mapping[str, Any]) -> list[str]:
    winner = report["winner"]
    test, dev = winner["test"], winner["dev"]
    base = report["candidates"][0]
    return [
        f"# jurybox optimize: {report['judge']} ({report['mode']})",
        "",
        f"Winner: **{winner['name']}** ({winner['id']})",
        "",
        f"- dev score {_figure(dev)} on {dev['items']} dev items (selected on them: optimistic)",
        f"- test score {_figure(test)} on {test['items']} test items, judged once",
        f"- trust on test: {winner['trust']['level']} — {winner['trust']['reason']}",
        f"- optimism gap (dev − test): {winner['optimism_gap']:+.3f}",
        f"- the base prompt on dev: {_figure(base['dev'])} on {base['dev']['items']} items",
    ]


def _context(report: Mapping[str, Any]) -> list[str]:
    split, spent = report["split"], report["spent"]
    dropped = (
        f"; {split['dropped']} items without a gold label left out" if split["dropped"] else ""
    )
    usd = f", USD {spent['usd']:.4f}" if spent["usd"] is not None else ""
    return [
        f"Split {split['folder']} (seed {split['seed']}): train {split['items']['train']}, "
        f"dev {split['items']['dev']}, test {split['items']['test']}{dropped}",
        f"Calls: {spent['calls']} made ({spent['proposer_calls']} by the proposer){usd}"
        + _budget(report["budget"]),
        "",
        f"Search: {report['search']['method']}.",
        f"Intervals: {report['search']['interval_method']}.",
    ]


def _table(report: Mapping[str, Any]) -> list[str]:
    winner = report["winner"]["id"]
    lines = [
        "| id | candidate | examples | characters | dev score [95 % CI] | dev items seen | "
        "p vs leader |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in report["candidates"]:
        p = entry.get("p_vs_leader")
        mark = " (winner)" if entry["id"] == winner else ""
        lines.append(
            f"| {entry['id']} | {entry['name']}{mark} | {entry['examples']} | "
            f"{entry['own_chars']} | {_figure(entry['dev'])} | {entry['items_seen']} | "
            f"{'—' if p is None else f'{p:.3g}'} |"
        )
    files = report["files"]
    return [
        *lines,
        "",
        f"Winning config: {files['winner_config']}",
        f"Test run: {files['test_run']} (report: {files['test_report']})",
    ]


def _budget(budget: Mapping[str, Any]) -> str:
    parts = []
    if budget.get("calls") is not None:
        parts.append(f"{budget['calls']} calls")
    if budget.get("usd") is not None:
        parts.append(f"USD {budget['usd']}")
    return f" of a budget of {' and '.join(parts)}" if parts else " (no budget set)"


def winner_config(
    base: RunConfig, winner: Candidate, *, instructions_file: Path | None, output_dir: Path
) -> dict[str, Any]:
    """The base config (every judge, its own settings) with the winner's prompt."""
    data = base.model_dump(mode="json", exclude_unset=True)
    task = absolute_task(base)
    if winner.instructions is not None:
        plain = not is_instructions_file(winner.instructions)
        task["instructions"] = winner.instructions if plain else str(instructions_file)
    if winner.examples:
        task["examples"] = [e.model_dump(mode="json", exclude_none=True) for e in winner.examples]
    if winner.rubric is not None:
        task["rubric"] = winner.rubric
    data["task"] = task
    paths = dict(data.get("paths", {}))
    paths["dataset"] = str(base.resolve(base.paths.dataset).resolve())
    if base.paths.human_labels is not None:
        paths["human_labels"] = str(base.resolve(base.paths.human_labels).resolve())
    paths["output_dir"] = str(output_dir)
    data["paths"] = paths
    cache = base.pipeline.cache_path
    if cache is not None:
        data.setdefault("pipeline", {})["cache_path"] = str(base.resolve(cache).resolve())
    return data
