"""Before any judge call: which split, which candidates as run configs, and the search plan.

The split in use is the latest one drawn in the split folder. It is refused when its test split
was already judged (by this or any other optimize: the ledger says) or when the base dataset
changed since it was drawn, unless a new split is asked for; a new split takes the seed after
the largest drawn so far, and the ledger records it with the optimize that drew it (a resumed
optimize finds its own split again rather than drawing another).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurybox.config import RunConfig, config_from_mapping, load_config
from jurybox.errors import ConfigError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets import dataset_hash
from jurybox.optimize.candidates import Candidate, candidate_config
from jurybox.optimize.config import Optimize
from jurybox.optimize.search import Budget, Rung, SearchPlan, plan_search
from jurybox.optimize.split import (
    OptimizeSplit,
    append_ledger,
    draw_split,
    load_optimize_split,
    passes_on_test,
    read_ledger,
)
from jurybox.optimize.state import Layout
from jurybox.pipeline.dryrun import estimate_run
from jurybox.pipeline.runner import load_inputs
from jurybox.pipeline.summary import JudgeEstimate
from jurybox.prompts import load_prompt_sources


def _split_events(root: Path) -> list[dict[str, Any]]:
    return [e for e in read_ledger(root) if e.get("event") == "split"]


def describe_test_use(use: Mapping[str, Any]) -> str:
    """One line naming a test pass of the ledger and what it found."""
    text = f"on {use.get('at')} by the optimize in {use.get('output_dir')} (winner "
    text += f"{use.get('candidate_name')!r}"
    result = use.get("result")
    if isinstance(result, Mapping):
        text += (
            f": test score {result['score']:.3f} [{result['ci_low']:.3f}, "
            f"{result['ci_high']:.3f}] on {result['n_items']} items, trust {result['level']}"
        )
    else:
        text += ": the pass was started and never finished"
    return text + ")"


def choose_split(
    opt: Optimize, layout: Layout, *, new_split: bool, echo: Any
) -> tuple[OptimizeSplit, int]:
    """The split this optimize uses, and how many items had no gold label (when drawn now)."""
    root = opt.split_root
    events = _split_events(root)
    mine = [e for e in events if e.get("output_dir") == str(layout.root)]
    if mine and events and mine[-1] is events[-1]:
        return load_optimize_split(root / f"seed-{int(mine[-1]['seed'])}"), 0
    settings = opt.config.split
    fractions = {"train": settings.train, "dev": settings.dev, "test": settings.test}
    if events and not new_split:
        current = load_optimize_split(root / f"seed-{int(events[-1]['seed'])}")
        _check_reusable(opt, root, current)
        return current, 0
    seed = max((int(e["seed"]) for e in events), default=settings.seed - 1) + 1
    split, dropped = draw_split(opt.base, root, fractions=fractions, seed=seed)
    append_ledger(
        root,
        {
            "event": "split",
            "seed": seed,
            "output_dir": str(layout.root),
            "source_sha256": split.source_sha256,
            "counts": split.counts(),
        },
    )
    echo(f"split {split.counts()} (seed {seed}) into {split.folder}")
    return split, dropped


def _check_reusable(opt: Optimize, root: Path, split: OptimizeSplit) -> None:
    used = passes_on_test(root, split.seed)
    if used:
        raise ConfigError(
            f"the test split of {split.folder} was judged {describe_test_use(used[-1])}; "
            "judging it again after another search would make it a second dev set. Pass "
            f"--new-split to draw a new split (seed {split.seed + 1}) from the data",
            path=str(root / "ledger.jsonl"),
            field="--new-split",
        )
    dataset = opt.base.resolve(opt.base.paths.dataset)
    if dataset_hash(dataset) != split.source_sha256:
        raise ConfigError(
            f"the base dataset changed since {split.folder} was drawn from it: pass "
            "--new-split to split the data as it is now",
            path=str(dataset),
            field="--new-split",
        )


def check_test_allowed(opt: Optimize, split: OptimizeSplit, layout: Layout) -> bool:
    """Right before the test pass: refuse when another optimize judged this test split; True
    when this optimize started its own test pass already (a resume carries it on)."""
    root = opt.split_root
    uses = passes_on_test(root, split.seed)
    others = [u for u in uses if u.get("output_dir") != str(layout.root)]
    if others:
        raise ConfigError(
            f"another optimize judged the test split of {split.folder} while this one searched "
            f"({describe_test_use(others[-1])}); this one stops before its test pass. Start "
            "again with --new-split",
            path=str(root / "ledger.jsonl"),
        )
    return bool(uses)


# --- candidates as run configs ------------------------------------------------------------------


def write_candidate_files(
    opt: Optimize,
    layout: Layout,
    candidates: Sequence[Candidate],
    split: OptimizeSplit,
) -> None:
    """Each candidate's instructions file and its run config on dev (runnable as it is)."""
    for candidate in candidates:
        write_run_config(opt, layout, candidate, split, test=False)


def write_run_config(
    opt: Optimize, layout: Layout, candidate: Candidate, split: OptimizeSplit, *, test: bool
) -> Path:
    """The candidate as a run config on dev (``candidates/<id>.yaml``) or test (``test.yaml``);
    an existing file is left as it is when its text is the same (a resume)."""
    instructions = None
    if candidate.instructions is not None:
        instructions = layout.instructions(candidate.id)
        if not instructions.exists():
            write_text_atomic(instructions, candidate.instructions)
    data = candidate_config(
        opt.base,
        opt.judge,
        candidate,
        dataset=(split.files["test" if test else "dev"]).resolve(),
        output_dir=(layout.test_run if test else layout.dev_run(candidate.id)).resolve(),
        cache=layout.cache.resolve(),
        instructions_file=instructions.resolve() if instructions else None,
        retests=test,
    )
    path = layout.test_config if test else layout.candidate_config(candidate.id)
    header = f"# jurybox optimize: candidate {candidate.id} ({candidate.name}) on "
    header += "the test split\n" if test else "the dev split\n"
    text = header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        write_text_atomic(path, text)
    return path


# --- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Costs:
    """Per dev item (one candidate) and for the test pass: calls, and USD bounds where priced."""

    calls_per_item: float
    usd_per_item: float | None
    test_calls: int
    test_usd: float | None


def _priced(estimates: Sequence[JudgeEstimate]) -> float | None:
    """The most the calls can cost (every answer at ``max_tokens``): a budget is a bound, so it
    is held against the dear case, not the typical output the dry run estimates."""
    costs = [e.max_cost_usd for e in estimates]
    return None if any(c is None for c in costs) else float(sum(c for c in costs if c))


def costs(
    opt: Optimize, layout: Layout, candidates: Sequence[Candidate], split: OptimizeSplit,
    *, priced: bool,
) -> Costs:  # fmt: skip
    """Calls per dev item (the most any candidate makes) and the test pass's calls; with
    ``priced``, USD bounds from the dearest call any candidate's prompt makes (the winner's
    test prompts are never built before the test pass)."""
    per_item, per_unit, unpriced = 0.0, 0.0, False
    for candidate in candidates:
        inputs = load_inputs(load_config(layout.candidate_config(candidate.id)))
        per_item = max(per_item, len(inputs.units) / max(1, len(inputs.items)))
        if priced:
            bound = _priced(estimate_run(inputs))
            unpriced = unpriced or bound is None
            per_unit = max(per_unit, (bound or 0.0) / max(1, len(inputs.units)))
    if unpriced:
        raise ConfigError(
            "--budget-usd needs the judge's prices (price_input_per_mtok and "
            "price_output_per_mtok) to bound what each call costs",
            field="--budget-usd",
        )
    mapping = candidate_config(
        opt.base,
        opt.judge,
        candidates[0],
        dataset=split.files["test"].resolve(),
        output_dir=layout.test_run.resolve(),
        cache=layout.cache.resolve(),
        instructions_file=None,
        retests=True,
    )
    test_units = len(load_inputs(config_from_mapping(mapping, source=str(opt.path))).units)
    usd = per_unit if priced else None
    return Costs(
        per_item,
        per_item * usd if usd is not None else None,
        test_units,
        test_units * usd if usd is not None else None,
    )


def search_plan(
    opt: Optimize,
    costs_: Costs,
    budget: Budget,
    *,
    n_candidates: int,
    n_dev: int,
    spent: Budget,
) -> SearchPlan:
    """The plan under what the budget leaves once the test pass and what is ``spent`` (the
    proposer's call) are set aside."""
    left = Budget(
        None if budget.calls is None else budget.calls - costs_.test_calls - (spent.calls or 0),
        None if budget.usd is None else budget.usd - (costs_.test_usd or 0.0) - (spent.usd or 0),
    )
    if (left.calls is not None and left.calls <= 0) or (left.usd is not None and left.usd <= 0):
        raise ConfigError(
            f"the budget does not cover the test pass ({costs_.test_calls} calls"
            + (f", USD {costs_.test_usd:.4f}" if costs_.test_usd is not None else "")
            + ") and a search",
            field="--budget-calls" if budget.calls is not None else "--budget-usd",
        )
    search = opt.config.search
    try:
        return plan_search(
            n_candidates,
            n_dev,
            calls_per_item=costs_.calls_per_item,
            usd_per_item=costs_.usd_per_item,
            budget=left,
            eta=search.eta,
            min_items=search.min_items,
            alpha=search.alpha,
        )
    except ValueError as exc:
        field = "--budget-calls" if budget.calls is not None else "--budget-usd"
        raise ConfigError(f"{exc} (after the test pass's share)", field=field) from None


def plan_json(plan: SearchPlan) -> dict[str, Any]:
    return {
        "rungs": [[r.index, r.candidates, r.items] for r in plan.rungs],
        "eta": plan.eta,
        "alpha": plan.alpha,
        "calls": plan.calls,
        "usd": plan.usd,
    }


def plan_from_json(data: Mapping[str, Any]) -> SearchPlan:
    rungs = tuple(Rung(int(i), int(c), int(n)) for i, c, n in data["rungs"])
    return SearchPlan(rungs, int(data["eta"]), float(data["alpha"]), data["calls"], data["usd"])


def base_instructions(base: RunConfig) -> str | None:
    sources = load_prompt_sources(base)
    return sources.instructions if sources is not None else None
