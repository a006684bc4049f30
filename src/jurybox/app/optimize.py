"""``jurybox optimize CONFIG``: tune a judge's prompt on train and dev, report it once on test.

The use case behind the command (docs/optimize.md). Candidates (instruction variants, a
proposer's rewrites, few-shot sets from train, rubric variants) are searched on dev by
successive halving within a budget (``optimize.search``); each candidate's judgments are an
ordinary run (``OUT/runs/<id>``, grown rung by rung with ``--limit``, one response cache for
all), so a killed optimize resumed with ``--resume OUT`` repeats no recorded judgment: the
search is recomputed from the records and every finished run makes no call. The winner is
judged once on the frozen test split (``OUT/test``), analysed as ``jurybox analyze`` would
(its trust level), and written out as ``winner.yaml``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurybox.app.optimize_final import finish, read_report
from jurybox.app.optimize_session import (
    OptimizeOptions,
    OptimizeStopped,
    Session,
    judge_run,
    split_gold,
)
from jurybox.errors import ConfigError
from jurybox.optimize.candidates import (
    Candidate,
    Variant,
    build_candidates,
    example_sets,
    read_variants,
)
from jurybox.optimize.config import load_optimize
from jurybox.optimize.prepare import (
    base_instructions,
    choose_split,
    costs,
    plan_from_json,
    plan_json,
    search_plan,
    write_candidate_files,
)
from jurybox.optimize.proposer import Proposal, keep_new, propose, proposer_request
from jurybox.optimize.scoring import item_scores
from jurybox.optimize.search import Budget, SearchResult, run_search
from jurybox.optimize.split import load_optimize_split
from jurybox.optimize.state import Layout, read_state
from jurybox.pipeline.retry import RetryPolicy

__all__ = ["OptimizeOptions", "OptimizeStopped", "optimize"]


def optimize(
    config: Path | None, *, resume: Path | None, options: OptimizeOptions
) -> dict[str, Any]:
    """Start an optimize from ``config`` or carry on the one in ``resume``; returns its report
    (``optimize_report.json``'s content). Bad input raises ConfigError / DatasetError before
    any call; a failed judge raises OptimizeStopped naming the resume command."""
    session = _resumed(config, resume, options) if resume else _fresh(config, options)
    if session.state.get("stage") == "done":
        options.echo(f"optimize in {session.layout.root} is done: nothing to judge")
        return read_report(session.layout)
    if "candidates" not in session.state:
        _prepare(session)
    else:
        _reload(session)
    result = _search(session)
    return finish(session, result)


def _fresh(config: Path | None, options: OptimizeOptions) -> Session:
    if config is None:
        raise ConfigError("give CONFIG, or --resume DIR", field="CONFIG")
    opt = load_optimize(config)
    layout = Layout((options.output_dir or opt.resolve(opt.config.output_dir)).resolve())
    if layout.state.exists():
        raise ConfigError(
            f"{layout.root} holds an optimize already: carry it on with `jurybox optimize "
            f"--resume {layout.root}`, or choose another --out",
            path=str(layout.state),
        )
    budget = {
        "calls": options.budget_calls or opt.config.budget.calls,
        "usd": options.budget_usd or opt.config.budget.usd,
    }
    state = {
        "stage": "preparing",
        "config": {"path": str(opt.path.resolve()), "sha256": opt.sha256},
        "judge": opt.judge,
        "mode": opt.base.task.mode,
        "budget": budget,
        "new_split": options.new_split,
    }
    # Written once the candidates and the plan are known: a config refused on the way (a bad
    # variants file, a budget too small, a used test split) leaves no state to resume, and
    # starting again pays nothing twice (the proposer's answer is in the cache, the split in
    # the ledger under this folder).
    return Session(opt, layout, state, options)


def _resumed(config: Path | None, resume: Path, options: OptimizeOptions) -> Session:
    layout = Layout(resume.resolve())
    state = read_state(layout)
    recorded = Path(state["config"]["path"])
    if config is not None and config.resolve() != recorded:
        raise ConfigError(
            f"--resume {resume} carries on the optimize of {recorded}, not {config}",
            field="--resume",
        )
    opt = load_optimize(recorded)
    if opt.sha256 != state["config"]["sha256"]:
        raise ConfigError(
            "the optimize config changed since this optimize started; resume it with the "
            "config as it was, or start a new one in another folder",
            path=str(recorded),
        )
    if options.budget_calls is not None or options.budget_usd is not None:
        raise ConfigError(
            "a resumed optimize keeps the budget it started with", field="--budget-calls"
        )
    return Session(opt, layout, state, options)


# --- preparing -----------------------------------------------------------------------------------


def _prepare(session: Session) -> None:
    """The split, the candidates as run configs, the plan; then ``state.json``."""
    opt, layout, echo = session.opt, session.layout, session.options.echo
    variants = (  # read first: a bad variants file is refused before a split is drawn
        read_variants(opt.resolve(opt.config.instructions)) if opt.config.instructions else []
    )
    split, dropped = choose_split(opt, layout, new_split=session.state["new_split"], echo=echo)
    session.split = split
    session.state["split"] = {"folder": str(split.folder), "seed": split.seed, "dropped": dropped}
    proposal = _candidates(session, variants)
    write_candidate_files(opt, layout, session.candidates, split)
    budget = Budget(session.state["budget"]["calls"], session.state["budget"]["usd"])
    found = costs(opt, layout, session.candidates, split, priced=budget.usd is not None)
    plan = search_plan(
        opt,
        found,
        budget,
        n_candidates=len(session.candidates),
        n_dev=len(split.ids("dev")),
        spent=Budget(proposal.calls, proposal.usd),
    )
    session.save(
        stage="searching",
        candidates=[c.to_json() for c in session.candidates],
        plan=plan_json(plan),
        method=plan.method,
        reserved={"test_calls": found.test_calls, "test_usd": found.test_usd},
        proposer_calls=proposal.calls,
        proposer_usd=proposal.usd,
    )
    echo(
        f"{len(session.candidates)} candidates; search plan: "
        + ", ".join(f"{r.candidates} on {r.items} dev items" for r in plan.rungs)
        + f" (at most {plan.calls:.0f} calls), then the winner once on "
        f"{len(split.ids('test'))} test items ({found.test_calls} calls)"
    )


def _candidates(session: Session, variants: list[Variant]) -> Proposal:
    """Every combination of the variants (the user's, the proposer's), the example sets and
    the rubric variants; returns what the proposer cost (nothing without one)."""
    opt, split = session.opt, session.split
    assert split is not None
    proposal = Proposal([], 0, None)
    if opt.config.proposer is not None:
        proposal, proposed = _proposals(session, [v.text for v in variants])
        variants = variants + proposed
    arms = opt.base.task.arms
    sets = []
    if opt.config.examples is not None:
        pair = (arms[0], arms[1]) if arms and len(arms) == 2 else None
        sets = example_sets(
            split, pair, sizes=opt.config.examples.sizes, sets=opt.config.examples.sets
        )
    rubrics = [opt.resolve(path) for path in opt.config.rubrics]
    session.candidates = build_candidates(
        base_instructions(opt.base), variants, sets, rubrics, split
    )
    return proposal


def _proposals(session: Session, known: Sequence[str]) -> tuple[Proposal, list[Variant]]:
    opt, split = session.opt, session.split
    assert opt.config.proposer is not None and split is not None
    current = base_instructions(opt.base)
    request = proposer_request(opt.config.proposer, split, session.mode, current)
    provider = session.options.providers.get("proposer")
    policy = RetryPolicy.from_config(opt.base.pipeline)  # the base config's retries
    proposal = asyncio.run(
        propose(opt.config.proposer, request, session.layout.cache, policy, provider)
    )
    kept, dropped = keep_new(proposal.rewrites, [*known, current or ""])
    session.options.echo(
        f"proposer: {len(kept)} new instructions ({dropped} empty or repeated answers dropped)"
    )
    session.state["proposals"] = {"rewrites": proposal.rewrites, "kept": [v.name for v in kept]}
    return proposal, kept


def _reload(session: Session) -> None:
    session.split = load_optimize_split(Path(session.state["split"]["folder"]))
    session.candidates = [Candidate.from_json(c) for c in session.state["candidates"]]


# --- searching -----------------------------------------------------------------------------------


def _search(session: Session) -> SearchResult:
    assert session.split is not None
    dev_ids = [item.id for item in session.split.items("dev")]
    gold = split_gold(session.split, "dev", session.mode)
    plan = plan_from_json(session.state["plan"])

    def scores(index: int, n: int) -> list[float]:
        candidate = session.candidates[index]
        records = judge_run(
            session,
            session.layout.candidate_config(candidate.id),
            session.layout.dev_run(candidate.id),
            n,
        )
        values = item_scores(records, gold, dev_ids[:n], mode=session.mode, judge=session.opt.judge)
        session.options.echo(
            f"  {candidate.id} {candidate.name}: {sum(values) / n:.3f} on {n} dev items"
        )
        return values

    confidence = session.opt.config.search.confidence
    complexity = [c.complexity for c in session.candidates]
    return run_search(plan, scores, complexity, confidence=confidence)
