"""Each benchmark's own published figures, computed from imported records by its own rules.

jurybox's figures (consolidated accuracy, position consistency ...) count failures and ties its
way; a user comparing with a paper needs the numbers as the benchmark prints them. These are
pure functions of records and items (with gold), one result model per benchmark:

``llmbar``      per subset and judge (``judge/strategy``): ``correct_False`` / ``correct_True``
                (accuracy against the label with output_1 / output_2 shown first; a failed
                verdict counts wrong), ``correct_average`` (their mean, in percent),
                ``correct_both`` (right in both orders) and ``equal`` (same winner in both orders;
                two failed verdicts count as equal). A ``Rating*`` score tie counts as upstream
                broke it: for the output shown second.
``judgebench``  per judge: JudgeBench's score (``utils/metrics.py``): a pair scores +1 per order
                whose decision picks the labelled answer and -1 per order picking the other; the
                pair is right when the sum is positive, so a tie or a failed call counts 0.
``alpacaeval``  per annotator and pair of generators: the win rate of ``output_2`` over
                ``output_1`` in percent, a draw counting half, unreadable preferences left out.
``pandalm``     Cohen's kappa between each pair of human annotators, and each judge's accuracy
                and macro precision / recall / F1 against the annotators' majority label (0 tie,
                1, 2), a failed verdict counting wrong.

``benchmark_figures(records, items)`` computes those the items come from (``metadata.source``),
one key each, for the report's "as the benchmark reports it" table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

from jurybox.analysis.model.benchmarks import (
    AlpacaEvalBenchmark,
    BenchmarkFigures,
    Count,
    JudgeAgreement,
    JudgeBenchBenchmark,
    JudgeBenchScore,
    LLMBarBenchmark,
    LLMBarFigures,
    PandaLMBenchmark,
    WinRate,
)
from jurybox.records import Item, JudgeRecord, Status
from jurybox.stats.agreement import cohen_kappa

Decision = str | None  # JudgeBench's "A>B" | "B>A" | "A=B", or None for a failed call


def _ok_arm(record: JudgeRecord) -> str | None:
    return record.preferred_arm if record.status == Status.OK else None


def _by_judge_and_item(
    records: Iterable[JudgeRecord],
) -> dict[str, dict[str, dict[str, JudgeRecord]]]:
    """judge -> item -> presentation order -> record (the first repeat)."""
    table: dict[str, dict[str, dict[str, JudgeRecord]]] = defaultdict(lambda: defaultdict(dict))
    for record in records:
        if record.mode == "pairwise" and not record.retest:
            table[record.judge_name][record.query_id].setdefault(record.presentation_order, record)
    return table


def _gold(item: Item) -> str | None:
    gold = item.human.get("preferred_arm") if item.human else None
    return gold if isinstance(gold, str) else None


# --- LLMBar --------------------------------------------------------------------------------

_LLMBAR_ORDERS = ("output_1_first", "output_2_first")  # LLMBar's swap = False, swap = True


def llmbar_winner(record: JudgeRecord | None) -> str | None:
    """The winner LLMBar stored: a ``Rating*`` score tie went to the output shown second."""
    if record is None:
        return None
    arm = _ok_arm(record)
    if arm == "tie" and not record.positions_shown:
        return record.positions.get("B")
    return arm


def llmbar_figures(
    winners: Sequence[tuple[str | None, str | None]], golds: Sequence[str]
) -> LLMBarFigures:
    """``statistics.json`` from each item's (swap = False, swap = True) winners and gold arm."""
    n = len(golds)
    right = [
        (first == gold, second == gold)
        for (first, second), gold in zip(winners, golds, strict=True)
    ]
    c_false = sum(a for a, _ in right)
    c_true = sum(b for _, b in right)
    return LLMBarFigures(
        correct_False=Count.of(c_false, n),
        correct_True=Count.of(c_true, n),
        correct_average=100 * (c_false + c_true) / (2 * n) if n else None,
        correct_both=Count.of(sum(a and b for a, b in right), n),
        equal=Count.of(sum(first == second for first, second in winners), n),
    )


def _subset(item: Item) -> str:
    subset = item.metadata.get("subset") if item.metadata else None
    return str(subset) if subset else item.id.rsplit("/", 1)[0]


def llmbar_benchmark(records: Iterable[JudgeRecord], items: Iterable[Item]) -> LLMBarBenchmark:
    """LLMBar's figures for every judge of every subset with records (items need gold)."""
    by_id = {item.id: item for item in items if _gold(item)}
    grouped: dict[str, dict[str, tuple[list[tuple[str | None, str | None]], list[str]]]] = (
        defaultdict(dict)
    )
    for judge, per_item in _by_judge_and_item(records).items():
        for qid, orders in per_item.items():
            item = by_id.get(qid)
            if item is None:
                continue
            winners, golds = grouped[_subset(item)].setdefault(judge, ([], []))
            first, second = (llmbar_winner(orders.get(order)) for order in _LLMBAR_ORDERS)
            winners.append((first, second))
            golds.append(str(_gold(item)))
    return LLMBarBenchmark(
        subsets={
            subset: {judge: llmbar_figures(*pair) for judge, pair in sorted(judges.items())}
            for subset, judges in sorted(grouped.items())
        }
    )


# --- JudgeBench ----------------------------------------------------------------------------


def judgebench_flip(decision: Decision) -> Decision:
    """The decision read with the two responses swapped (``A>B`` <-> ``B>A``)."""
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision or "", decision)


def judgebench_pair_correct(label: str, decisions: Sequence[Decision]) -> bool:
    """JudgeBench's rule for one pair: +1 per decision equal to ``label``, -1 per decision equal
    to its flip (a tie ``A=B`` or a failed call ``None`` counts 0); right when the sum is > 0.

    ``decisions`` are in the original numbering (the swapped game's decision already flipped
    back, as JudgeBench does before scoring).
    """
    total = 0
    for decision in decisions:
        if decision == label:
            total += 1
        elif decision == judgebench_flip(label):
            total -= 1
    return total > 0


def _decision(arm: str | None) -> Decision:
    return {"response_A": "A>B", "response_B": "B>A", "tie": "A=B"}.get(arm or "")


def judgebench_benchmark(
    records: Iterable[JudgeRecord], items: Iterable[Item]
) -> JudgeBenchBenchmark:
    """JudgeBench's score for every judge, overall and per source (items need gold)."""
    by_id = {item.id: item for item in items if _gold(item) in ("response_A", "response_B")}
    judges: dict[str, JudgeBenchScore] = {}
    for judge, per_item in sorted(_by_judge_and_item(records).items()):
        tally: dict[str, list[bool]] = defaultdict(list)
        for qid, orders in per_item.items():
            item = by_id.get(qid)
            if item is None:
                continue
            label = str(_decision(_gold(item)))
            decisions = [_decision(_ok_arm(r)) for r in orders.values()]
            right = judgebench_pair_correct(label, decisions)
            tally[""].append(right)
            tally[str(item.metadata.get("category") or "unknown")].append(right)
        if tally:
            overall = tally.pop("")
            judges[judge] = JudgeBenchScore(
                score=Count.of(sum(overall), len(overall)),
                by_source={k: Count.of(sum(v), len(v)) for k, v in sorted(tally.items())},
            )
    return JudgeBenchBenchmark(judges=judges)


# --- AlpacaEval ----------------------------------------------------------------------------


def alpacaeval_win_rate(preferences: Iterable[str | None]) -> WinRate:
    """Win rate of ``output_2`` from preferred arms (``tie`` counts half, None is left out)."""
    arms = [arm for arm in preferences if arm in ("output_1", "output_2", "tie")]
    wins, base = arms.count("output_2"), arms.count("output_1")
    draws = arms.count("tie")
    return WinRate(
        win_rate=100 * (wins + draws / 2) / len(arms) if arms else None,
        n_wins=wins,
        n_wins_base=base,
        n_draws=draws,
        n_total=len(arms),
    )


def alpacaeval_benchmark(
    records: Iterable[JudgeRecord], items: Iterable[Item]
) -> AlpacaEvalBenchmark:
    """AlpacaEval's win rate per annotator and pair of generators (every annotation counts)."""
    by_id = {item.id: item for item in items}
    grouped: dict[str, dict[str, list[str | None]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if record.mode != "pairwise":
            continue
        item = by_id.get(record.query_id)
        authors = item.authors if item is not None else {}
        pair = f"{authors.get('output_2', 'output_2')} vs {authors.get('output_1', 'output_1')}"
        grouped[record.judge_name][pair].append(_ok_arm(record))
    return AlpacaEvalBenchmark(
        judges={
            judge: {pair: alpacaeval_win_rate(arms) for pair, arms in sorted(pairs.items())}
            for judge, pairs in sorted(grouped.items())
        }
    )


# --- PandaLM -------------------------------------------------------------------------------

_PANDALM_LABELS = {"tie": "0", "response1": "1", "response2": "2"}


def _annotators(item: Item) -> dict[str, str]:
    votes = item.human.get("annotators") if item.human else None
    if not isinstance(votes, Mapping):
        return {}
    return {str(k): _PANDALM_LABELS[v] for k, v in votes.items() if v in _PANDALM_LABELS}


def _majority(votes: Mapping[str, str]) -> str | None:
    values = list(votes.values())
    best = max(set(values), key=values.count, default=None)
    return best if best is not None and values.count(best) * 2 > len(values) else None


def macro_scores(
    truth: Sequence[str], predicted: Sequence[str | None]
) -> tuple[float, float, float]:
    """Macro precision, recall and F1 over the classes of ``truth`` (None predicts no class)."""
    precisions, recalls, f1s = [], [], []
    for label in sorted(set(truth)):
        hit = sum(t == label and p == label for t, p in zip(truth, predicted, strict=True))
        said = sum(p == label for p in predicted)
        real = sum(t == label for t in truth)
        precision = hit / said if said else 0.0
        recall = hit / real if real else 0.0
        precisions.append(precision)
        recalls.append(recall)
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    count = len(precisions)
    return sum(precisions) / count, sum(recalls) / count, sum(f1s) / count


def _kappas(votes: Mapping[str, dict[str, str]]) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each annotator pair's kappa, and why it is None where it is undefined."""
    names = sorted({name for item_votes in votes.values() for name in item_votes})
    kappas: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    for a, b in combinations(names, 2):
        pair = f"{a}-{b}"
        both = [(v[a], v[b]) for v in votes.values() if a in v and b in v]
        try:
            both_kappa = cohen_kappa(
                [x for x, _ in both], [y for _, y in both], interval="asymptotic"
            )
            kappas[pair] = both_kappa.kappa
        except ValueError as exc:  # e.g. both used one category: chance agreement is 1
            kappas[pair] = None
            undefined[pair] = str(exc) if both else "no item both labelled"
    return kappas, undefined


def pandalm_benchmark(records: Iterable[JudgeRecord], items: Iterable[Item]) -> PandaLMBenchmark:
    """PandaLM's figures: annotator kappas and each judge against the annotators' majority."""
    votes = {item.id: v for item in items if (v := _annotators(item))}
    majority = {qid: m for qid, v in votes.items() if (m := _majority(v)) is not None}
    predicted: dict[str, dict[str, str | None]] = defaultdict(dict)
    for judge, per_item in _by_judge_and_item(records).items():
        for qid, orders in per_item.items():
            if qid in majority:
                arm = _ok_arm(next(iter(orders.values())))
                predicted[judge][qid] = _PANDALM_LABELS.get(arm or "")
    judges = {}
    for judge, answers in sorted(predicted.items()):
        truth = [majority[qid] for qid in answers]
        said = list(answers.values())
        precision, recall, f1 = macro_scores(truth, said)
        right = sum(t == p for t, p in zip(truth, said, strict=True))
        judges[judge] = JudgeAgreement(
            accuracy=Count.of(right, len(truth)), precision=precision, recall=recall, f1=f1
        )
    counts = {label: list(majority.values()).count(label) for label in ("0", "1", "2")}
    kappas, undefined = _kappas(votes)
    return PandaLMBenchmark(
        annotator_kappa=kappas,
        annotator_kappa_undefined=undefined,
        majority_counts=counts,
        judges=judges,
    )


# --- all of them ---------------------------------------------------------------------------


def _benchmark_of(item: Item) -> str | None:
    source = str(item.metadata.get("source") or "") if item.metadata else ""
    name = source.split("/", 1)[0]
    return name if name in BenchmarkFigures.model_fields else None


def benchmark_figures(records: Iterable[JudgeRecord], items: Iterable[Item]) -> BenchmarkFigures:
    """Each benchmark's own figures, for the benchmarks the imported items come from."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        name = _benchmark_of(item)
        if name is not None:
            groups[name].append(item)
    rows = list(records)
    compute = {
        "llmbar": llmbar_benchmark,
        "judgebench": judgebench_benchmark,
        "alpacaeval": alpacaeval_benchmark,
        "pandalm": pandalm_benchmark,
    }
    figures = {}
    for name, members in groups.items():
        ids = {item.id for item in members}
        figures[name] = compute[name]([r for r in rows if r.query_id in ids], members)
    return BenchmarkFigures.given(**figures)
