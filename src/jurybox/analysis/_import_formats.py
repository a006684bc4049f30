"""Readers of the verdict formats ``jurybox.analysis.importers`` knows (see its docstring).

Each reader returns ``(records, items)``. Winners are always mapped back to arms; the position
letters are recomputed from the presentation order so that bias analysis reads them as shown.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.records import Item, JudgeRecord, Status

Loaded = tuple[list[JudgeRecord], list[Item]]
_VENDORS = (
    ("chatgpt", "openai"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("claude", "anthropic"),
    ("palm", "google"),
    ("gemini", "google"),
    ("llama", "meta"),
    ("pandalm", "pandalm"),
    ("qwen", "alibaba"),
    ("mistral", "mistral"),
)


def vendor_of(name: str) -> str:
    """Best-effort vendor of a judge or model name (empty when unknown)."""
    folded = name.casefold()
    return next((vendor for prefix, vendor in _VENDORS if folded.startswith(prefix)), "")


def pair_record(
    *,
    run_id: str,
    stamp: str,
    qid: str,
    judge: str,
    shown: tuple[str, str],
    winner: str | None,
    status: Status,
    raw: str | None = None,
    model: str | None = None,
    repeat: int = 0,
    confidence: str | None = None,
) -> JudgeRecord:
    """One imported pairwise judgment; ``winner`` is an arm, "tie" or None (failed)."""
    ordering = f"{shown[0]}_first"
    preference = None
    if winner is not None:
        preference = "tie" if winner == "tie" else ("A" if winner == shown[0] else "B")
    return JudgeRecord(
        key=f"{qid}|{judge}|{ordering}|r{repeat}",
        run_id=run_id,
        query_id=qid,
        judge_name=judge,
        judge_model=model or judge,
        judge_vendor=vendor_of(model or judge),
        mode="pairwise",
        presentation_order=ordering,
        positions={"A": shown[0], "B": shown[1]},
        status=status,
        parse_success=status == Status.OK,
        raw_response=raw,
        timestamp=stamp,
        repeat=repeat,
        parse_method="imported",
        response_a_label=shown[0],
        response_b_label=shown[1],
        preference=preference,
        preferred_arm=winner,
        confidence=confidence,
        error=None if status == Status.OK else f"imported verdict: {status.value}",
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError("file not found", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None


def _field(entry: Mapping[str, Any], name: str, path: Path, index: int) -> Any:
    if name not in entry:
        raise DatasetError(f"entry {index} has no '{name}'", path=str(path), field=name)
    return entry[name]


# --- LLMBar --------------------------------------------------------------------------------

_LLMBAR_ORDERS = (
    ("swap = False", ("output_1", "output_2")),
    ("swap = True", ("output_2", "output_1")),
)


def _llmbar_items(folder: Path) -> list[Item]:
    path = folder / "dataset.json"
    items = []
    for i, entry in enumerate(_load_json(path)):
        label = str(_field(entry, "label", path, i))
        if label not in ("1", "2"):
            raise DatasetError(f"entry {i}: label must be 1 or 2, got {label}", path=str(path))
        items.append(
            Item(
                id=f"{folder.name}/{i}",
                question=_field(entry, "input", path, i),
                responses={"output_1": entry["output_1"], "output_2": entry["output_2"]},
                metadata={"source": f"llmbar/{folder.name}"},
                human={"preferred_arm": f"output_{label}"},
            )
        )
    return items


def _llmbar_judge(judge_dir: Path, items: list[Item], stamp: str) -> list[JudgeRecord]:
    path = judge_dir / "result.json"
    results = _load_json(path)
    by_content = {(i.question, i.responses["output_1"], i.responses["output_2"]): i for i in items}
    records = []
    for index, entry in enumerate(results):
        key = (entry.get("input"), entry.get("output_1"), entry.get("output_2"))
        item = by_content.get(key)
        if item is None:
            raise DatasetError(f"entry {index} matches no item of dataset.json", path=str(path))
        last = _field(entry, "results", path, index)[-1]
        for name, shown in _LLMBAR_ORDERS:
            verdict = _field(last, name, path, index)
            winner = verdict.get("winner")
            arm = f"output_{winner}" if str(winner) in ("1", "2") else None
            completion = verdict.get("completion")
            raw = str(completion[0]) if isinstance(completion, list) and completion else None
            records.append(
                pair_record(
                    run_id=f"import-llmbar-{judge_dir.parent.parent.name}",
                    stamp=stamp,
                    qid=item.id,
                    judge=judge_dir.name,
                    shown=shown,
                    winner=arm,
                    raw=raw,
                    status=Status.OK if arm else Status.UNPARSED,
                )
            )
    return records


def read_llmbar(source: Path, stamp: str) -> Loaded:
    """An LLMBar folder (dataset.json + verdicts/<judge>/result.json) or a folder of them."""
    if (source / "dataset.json").exists():
        folders = [source]
    else:
        folders = sorted(p for p in source.iterdir() if (p / "dataset.json").exists())
    if not folders:
        raise DatasetError("no dataset.json here or in a subfolder", path=str(source))
    records: list[JudgeRecord] = []
    items: list[Item] = []
    for folder in folders:
        folder_items = _llmbar_items(folder)
        items.extend(folder_items)
        judges = sorted(p for p in (folder / "verdicts").glob("*") if (p / "result.json").exists())
        if not judges:
            raise DatasetError("no verdicts/<judge>/result.json", path=str(folder))
        for judge_dir in judges:
            records.extend(_llmbar_judge(judge_dir, folder_items, stamp))
    return records, items


# --- PandaLM -------------------------------------------------------------------------------

_PANDALM_ARMS = ("response1", "response2")


def _pandalm_label(value: Any) -> str | None:
    text = str(value).strip().lower()
    return {"1": "response1", "2": "response2", "0": "tie", "tie": "tie"}.get(text)


def _pandalm_items(path: Path) -> list[Item]:
    items = []
    for i, entry in enumerate(_load_json(path)):
        idx = _field(entry, "idx", path, i)
        authors = str(entry.get("cmp_key", "")).split("_")
        question = str(_field(entry, "instruction", path, i))
        if entry.get("input"):
            question += "\n\n" + str(entry["input"])
        annotators = {k: _pandalm_label(v) for k, v in entry.items() if k.startswith("annotator")}
        items.append(
            Item(
                id=f"pandalm/{idx}",
                question=question,
                responses={arm: str(_field(entry, arm, path, i)) for arm in _PANDALM_ARMS},
                authors=dict(zip(_PANDALM_ARMS, authors, strict=True)) if len(authors) == 2 else {},
                metadata={"category": entry.get("motivation_app"), "source": "pandalm"},
                human={"annotators": annotators},
            )
        )
    return items


def _pandalm_judge(path: Path, stamp: str) -> list[JudgeRecord]:
    judge = path.name.removesuffix("-testset-v1.json")
    records = []
    for i, entry in enumerate(_load_json(path)):
        result_key = next((k for k in entry if k.endswith("_result")), None)
        if result_key is None:
            raise DatasetError(f"entry {i} has no '*_result' field", path=str(path))
        winner = _pandalm_label(entry[result_key])
        reason_key = result_key.replace("_result", "_reason")
        records.append(
            pair_record(
                run_id="import-pandalm",
                stamp=stamp,
                qid=f"pandalm/{_field(entry, 'idx', path, i)}",
                judge=judge,
                shown=_PANDALM_ARMS,
                winner=winner,
                raw=entry.get(reason_key),
                status=Status.OK if winner else Status.UNPARSED,
            )
        )
    return records


def read_pandalm(source: Path, stamp: str) -> Loaded:
    """The PandaLM test set (three annotators) and its judge files."""
    items = _pandalm_items(source / "testset-v1.json")
    records: list[JudgeRecord] = []
    for path in sorted(source.glob("*-testset-v1.json")):
        records.extend(_pandalm_judge(path, stamp))
    if not records:
        raise DatasetError("no <judge>-testset-v1.json judge file", path=str(source))
    return records, items


# --- JudgeBench ----------------------------------------------------------------------------

_JB_ARMS = ("response_A", "response_B")


def _jb_winner(decision: Any, shown: tuple[str, str]) -> str | None:
    text = str(decision).replace(">>", ">").strip().upper() if decision is not None else ""
    return {"A>B": shown[0], "B>A": shown[1], "A=B": "tie"}.get(text)


def _jb_pair(pair: Mapping[str, Any], path: Path, line: int, stamp: str) -> list[JudgeRecord]:
    judgments = pair.get("judgments") or []
    first = next((j for j in judgments if isinstance(j, Mapping)), {})
    model = (
        (first.get("judgment") or {}).get("judge_model")
        if isinstance(first.get("judgment"), Mapping)
        else None
    )
    judge = f"{pair.get('judge_name', path.stem)}" + (f"/{model}" if model else "")
    records = []
    for slot, shown in enumerate((_JB_ARMS, _JB_ARMS[::-1])):
        if slot >= len(judgments):
            break
        judgment = judgments[slot]
        if judgment is None:
            winner, status, raw = None, Status.PROVIDER_ERROR, None
        else:
            winner = _jb_winner(judgment.get("decision"), shown)
            status = Status.OK if winner else Status.UNPARSED
            detail = judgment.get("judgment")
            raw = detail.get("response") if isinstance(detail, Mapping) else None
        records.append(
            pair_record(
                run_id=f"import-judgebench-{path.stem}",
                stamp=stamp,
                qid=str(pair["pair_id"]),
                judge=judge,
                shown=shown,
                winner=winner,
                status=status,
                raw=raw,
                model=model,
            )
        )
    return records


def _jb_item(pair: Mapping[str, Any]) -> Item:
    label = str(pair.get("label", "")).replace(">>", ">").upper()
    gold = {"A>B": _JB_ARMS[0], "B>A": _JB_ARMS[1], "A=B": "tie"}.get(label)
    author = pair.get("response_model")
    return Item(
        id=str(pair["pair_id"]),
        question=str(pair.get("question", "")),
        responses={arm: str(pair.get(arm, "")) for arm in _JB_ARMS},
        authors={arm: str(author) for arm in _JB_ARMS} if author else {},
        metadata={"category": pair.get("source"), "source": "judgebench"},
        human={"preferred_arm": gold} if gold else {},
    )


def read_judgebench(source: Path, stamp: str) -> Loaded:
    """JudgeBench output JSONL files (one judge each)."""
    files = [source] if source.is_file() else sorted(source.glob("*.jsonl"))
    records: list[JudgeRecord] = []
    items: dict[str, Item] = {}
    for path in files:
        for line, pair in _jsonl_rows(path):
            if "pair_id" not in pair:
                raise DatasetError("no 'pair_id'", path=str(path), line=line, field="pair_id")
            records.extend(_jb_pair(pair, path, line, stamp))
            items.setdefault(str(pair["pair_id"]), _jb_item(pair))
    if not records:
        raise DatasetError("no JudgeBench pair found", path=str(source))
    return records, list(items.values())


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if text.strip():
                try:
                    rows.append((line, json.loads(text)))
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"invalid JSON: {exc.msg}", path=str(path), line=line
                    ) from None
    return rows


# --- generic -------------------------------------------------------------------------------

_GENERIC_FIELDS = {
    "query_id",
    "judge",
    "preferred",
    "swap",
    "order",
    "gold",
    "question",
    "response_a",
    "response_b",
    "confidence",
    "model",
    "category",
}
_GENERIC_OPTIONS = {"preferred_is", "arm_a", "arm_b"}


def _ab(value: Any) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().upper()
    return {"A": "A", "1": "A", "B": "B", "2": "B", "TIE": "tie", "0": "tie", "C": "tie"}.get(text)


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "y", "t")


def _generic_rows(source: Path) -> list[tuple[int, dict[str, Any]]]:
    if source.suffix.lower() == ".csv":
        with source.open(encoding="utf-8", newline="") as handle:
            return [(i, dict(row)) for i, row in enumerate(csv.DictReader(handle), start=2)]
    return _jsonl_rows(source)


def _check_mapping(mapping: Mapping[str, str], source: Path) -> None:
    unknown = set(mapping) - _GENERIC_FIELDS - _GENERIC_OPTIONS
    if unknown:
        raise DatasetError(f"unknown mapping key(s) {sorted(unknown)}", path=str(source))
    for required in ("query_id", "judge", "preferred"):
        if required not in mapping:
            raise DatasetError(f"the mapping needs '{required}'", path=str(source), field=required)
    if mapping.get("preferred_is", "arm") not in ("arm", "position"):
        raise DatasetError("preferred_is must be 'arm' or 'position'", path=str(source))


def _cell(
    row: Mapping[str, Any], mapping: Mapping[str, str], name: str, where: tuple[Path, int]
) -> Any:
    column = mapping[name]
    if column not in row:
        raise DatasetError(f"no column '{column}'", path=str(where[0]), line=where[1], field=name)
    return row[column]


def _generic_item(
    qid: str, row: Mapping[str, Any], m: Mapping[str, str], arms: tuple[str, str]
) -> Item:
    responses = {
        arm: str(row[m[f]])
        for arm, f in zip(arms, ("response_a", "response_b"), strict=True)
        if f in m and row.get(m[f]) is not None
    }
    gold = _ab(row.get(m["gold"])) if "gold" in m else None
    human = {"preferred_arm": {"A": arms[0], "B": arms[1], "tie": "tie"}[gold]} if gold else {}
    meta = {"category": row.get(m["category"])} if "category" in m else {}
    return Item(
        id=qid,
        question=str(row.get(m.get("question", ""), "") or ""),
        responses=responses,
        human=human,
        metadata=meta,
    )


def _swapped(row: Mapping[str, Any], mapping: Mapping[str, str]) -> bool:
    """Whether the second response was shown first (``swap`` truthy, or ``order`` "BA")."""
    if "swap" in mapping:
        return _truthy(row.get(mapping["swap"]))
    if "order" in mapping:
        return str(row.get(mapping["order"], "AB")).strip().upper().startswith("B")
    return False


def _optional(row: Mapping[str, Any], mapping: Mapping[str, str], name: str) -> str | None:
    value = row.get(mapping[name]) if name in mapping else None
    return None if value in (None, "") else str(value)


def read_generic(source: Path, mapping: dict[str, str], stamp: str) -> Loaded:
    """A JSONL/CSV table of verdicts with a column mapping (see the importers docstring)."""
    _check_mapping(mapping, source)
    arms = (mapping.get("arm_a", "response_a"), mapping.get("arm_b", "response_b"))
    positional = mapping.get("preferred_is", "arm") == "position"
    records: list[JudgeRecord] = []
    items: dict[str, Item] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in _generic_rows(source):
        where = (source, line)
        qid = str(_cell(row, mapping, "query_id", where))
        judge = str(_cell(row, mapping, "judge", where))
        shown = (arms[1], arms[0]) if _swapped(row, mapping) else arms
        pref = _ab(_cell(row, mapping, "preferred", where))
        letters = {"A": shown[0], "B": shown[1]} if positional else {"A": arms[0], "B": arms[1]}
        winner = None if pref is None else ("tie" if pref == "tie" else letters[pref])
        # The same judge, item and order again is a repeat, not a duplicate.
        repeat = seen[(qid, judge, shown[0])] = seen.get((qid, judge, shown[0]), -1) + 1
        records.append(
            pair_record(
                run_id=f"import-generic-{source.stem}",
                stamp=stamp,
                qid=qid,
                judge=judge,
                shown=shown,
                winner=winner,
                status=Status.OK if winner else Status.UNPARSED,
                repeat=repeat,
                confidence=_optional(row, mapping, "confidence"),
                model=_optional(row, mapping, "model"),
            )
        )
        items.setdefault(qid, _generic_item(qid, row, mapping, arms))
    return records, list(items.values())
