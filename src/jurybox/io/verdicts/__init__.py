"""Import existing verdict files as jurybox records, so that the analysis runs on them.

``import_verdicts(kind, path, out_path, mapping=None) -> int`` writes ``out_path`` (JSONL, one
``JudgeRecord`` per line) and a companion items file ``<out_path stem>.items.jsonl`` (one
``Item`` per line: question, responses, authors, metadata and the human gold in ``human``, in the
label format of ``jurybox.analysis.labels``). ``load_imported(out_path)`` reads both back, ready
for ``analyze_records(records, items=items)``.

Kinds (where each public release keeps its verdicts is in the README):

``llmbar``   The published tree ``Dataset/<group>/<subset>/dataset.json`` (``input``,
             ``output_1``, ``output_2``, ``label`` 1|2) with
             ``evaluators/<judge>/<strategy>/result.json`` (judge ``judge/strategy``), or the
             flat ``<subset>/verdicts/<judge>/result.json``; any level of either tree.
             ``results[-1]`` holds ``"swap = False"`` (output_1 shown first) and
             ``"swap = True"``, each with a ``winner`` already in the original numbering (null =
             unparsed); ``Rating*`` strategies also hold ``score_1`` / ``score_2``: each output
             scored alone, so not shown side by side, and a score tie is a tie.
``pandalm``  A folder with ``testset-v1.json`` (annotator1..3: 0 tie, 1, 2 -> human annotators)
             and judge files ``<judge>-testset-v1.json`` with a ``*_result`` field ("1" | "2" |
             "Tie" | "garbage", or 0 | 1 | 2; "garbage" = unparsed). One presentation order.
``judgebench``  JudgeBench ``outputs/*.jsonl`` (a file, a folder of them, or the repository
             root): ``pair_id``, ``question``, ``response_A``, ``response_B``, ``label``
             ("A>B" | "B>A"), ``judge_name`` and ``judgments``: the original order first, then
             the swapped one whose ``decision`` ("A>B" | "B>A" | "A=B") names positions as
             shown; a null judgment is a failed call.
``alpacaeval``  AlpacaEval / AlpacaFarm annotations (``jurybox.io.verdicts.alpacaeval``).
``fastchat``  FastChat MT-Bench ``model_judgment/*_pair.jsonl`` and ``*_single.jsonl``
             (``jurybox.io.verdicts.fastchat``).
``generic``  JSONL or CSV with ``mapping`` (jurybox field -> column; every key is listed in
             ``generic.MAP_KEYS``): ``query_id``, ``judge`` and one verdict key: ``preferred``
             (pairwise: A | B | tie, or 1 | 2 | 0), ``score`` (one response scored alone) or
             ``label`` (binary: yes/no, true/false, 1/0, pass/fail).

Every reader is loud: an entry it cannot read is a ``DatasetError`` naming file, line (for an
entry of a JSON list: the line it starts on, and its number) and field; a verdict value the
format does not define is counted (``ImportSummary.unreadable``) and an import where more than
half the verdicts are unreadable is refused unless ``allow_unparsed``. What every reader refuses:

- bytes that are not UTF-8 (never replaced), and JSON that ``jurybox.io.input_files.parse_json``
  refuses (nesting deeper than 100 levels, a number longer than 100 characters or too large,
  ``NaN`` / ``Infinity``); a byte-order mark at the start of a file and CRLF line ends are fine;
- an id (``idx``, ``pair_id``, ``question_id``, a model name, a mapped ``query_id`` or ``judge``)
  that is null, blank, a boolean, a float, a list or an object: never the id ``"None"``;
- a text field holding a list or an object (a number or boolean is read as Python writes it,
  e.g. ``True``: PandaLM's release holds two such responses);
- the same PandaLM ``idx`` twice in one file, the same JudgeBench ``pair_id`` twice in one file
  (in the other formats the same judge, item and order again is a repeat: ``repeat`` 1, 2 ...);
- a generic CSV whose header names a column twice or is empty, or a row with more or fewer
  cells than the header.

A lone surrogate (an escaped ``"\\ud800"``) cannot be written as UTF-8: it is replaced by U+FFFD,
counted in each record's ``text_replaced``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from jurybox.errors import DatasetError
from jurybox.io.atomic import AtomicFile, commit_all
from jurybox.io.input_files import read_json_lines
from jurybox.io.judgments import read_records, record_json
from jurybox.io.targets import check_target, first_json_line
from jurybox.io.text import clean_value
from jurybox.io.verdicts import alpacaeval, fastchat, generic, judgebench, llmbar, pandalm
from jurybox.io.verdicts._common import Loaded
from jurybox.records import Item, JudgeRecord

KINDS = ("llmbar", "pandalm", "judgebench", "alpacaeval", "fastchat", "generic")
_READERS: dict[str, Callable[[Path, str], Loaded]] = {
    "llmbar": llmbar.read_llmbar,
    "pandalm": pandalm.read_pandalm,
    "judgebench": judgebench.read_judgebench,
    "alpacaeval": alpacaeval.read_alpacaeval,
    "fastchat": fastchat.read_fastchat,
}


@dataclass(frozen=True)
class ImportSummary:
    """What one import wrote, and the verdict values it could not read (value -> count)."""

    written: int
    verdicts: int
    unreadable: Mapping[str, int]

    @property
    def n_unreadable(self) -> int:
        return sum(self.unreadable.values())

    def describe(self) -> str | None:
        """``37 of 1,600 verdicts unreadable: 'tie' ×30, '3' ×7``, or None when all were read."""
        if not self.unreadable:
            return None
        ranked = sorted(self.unreadable.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{value} ×{count:,}" for value, count in ranked[:10])
        more = f", and {len(ranked) - 10} more values" if len(ranked) > 10 else ""
        return f"{self.n_unreadable:,} of {self.verdicts:,} verdicts unreadable: {shown}{more}"


def companion_items_path(out_path: str | Path) -> Path:
    """Where ``import_verdicts`` writes the items (with human gold) beside ``out_path``."""
    out = Path(out_path)
    return out.with_name(f"{out.stem}.items.jsonl")


def _write_all_or_nothing(files: Mapping[Path, Iterator[str]]) -> list[int]:
    """Write every file under a temporary name beside it, then rename them all into place
    (``io.atomic.commit_all``); returns the lines written to each.

    A failure while writing (a bad record, a full disk) leaves the previous outputs untouched and
    no half-written file behind, so a failed import never looks like a smaller successful one.
    """
    with contextlib.ExitStack() as stack:
        opened = [stack.enter_context(AtomicFile(path)) for path in files]
        counts = []
        for handle, lines in zip(opened, files.values(), strict=True):
            count = 0
            for line in lines:
                handle.write(line + "\n")
                count += 1
            counts.append(count)
        commit_all(opened)
    return counts


def _item_json(item: Item) -> str:
    data = asdict(item)
    data["contexts"] = list(item.contexts)
    cleaned, _ = clean_value(data)  # the records written beside it carry the flag
    return json.dumps(cleaned, ensure_ascii=False)


def import_verdicts(
    kind: str,
    path: str | Path,
    out_path: str | Path,
    mapping: Mapping[str, str] | None = None,
    *,
    allow_unparsed: bool = False,
) -> int:
    """Convert a verdict file or folder of ``kind`` into jurybox records; returns records written.

    Raises:
        DatasetError: unknown kind, missing files, malformed content (names file and field), or
            more than half the verdicts unreadable without ``allow_unparsed``.
    """
    return import_with_summary(kind, path, out_path, mapping, allow_unparsed=allow_unparsed).written


def _read(kind: str, source: Path, mapping: Mapping[str, str] | None, stamp: str) -> Loaded:
    if kind == "generic":
        return generic.read_generic(source, dict(mapping or {}), stamp)
    if kind not in _READERS:
        raise DatasetError(f"unknown import kind '{kind}' (known: {', '.join(KINDS)})")
    if mapping:
        raise DatasetError(f"kind '{kind}' takes no column mapping", path=str(source))
    return _READERS[kind](source, stamp)


def import_with_summary(
    kind: str,
    path: str | Path,
    out_path: str | Path,
    mapping: Mapping[str, str] | None = None,
    *,
    allow_unparsed: bool = False,
) -> ImportSummary:
    """``import_verdicts``, returning what was written and the unreadable verdict values."""
    source = Path(path)
    if not source.exists():
        raise DatasetError("not found", path=str(source))
    _check_outputs(source, Path(out_path))
    loaded = _read(kind, source, mapping, datetime.now(UTC).isoformat())
    summary = ImportSummary(len(loaded.records), len(loaded.records), dict(loaded.unreadable))
    if summary.n_unreadable * 2 > summary.verdicts and not allow_unparsed:
        # An import that is mostly unreadable is a wrong format or mapping, not a bad judge.
        raise DatasetError(
            f"{summary.describe()}; refusing an import where more than half cannot be read "
            "(check the format or --map, or pass --allow-unparsed)",
            path=str(source),
        )
    out = Path(out_path)
    written, _ = _write_all_or_nothing(
        {
            out: (record_json(r) for r in loaded.records),
            companion_items_path(out): (_item_json(i) for i in loaded.items),
        }
    )
    return ImportSummary(written, summary.verdicts, summary.unreadable)


def is_import(path: Path) -> bool:
    """Whether ``path`` holds records ``import_verdicts`` wrote (``import-`` run ids): the
    judgments file an import may replace; a run's own judgments are never replaced by one."""
    first = first_json_line(path) or {}
    run_id = first.get("run_id")
    return isinstance(run_id, str) and run_id.startswith("import-") and "positions" in first


def _check_outputs(source: Path, out: Path) -> None:
    """Refuse (exit 2) writing the records or their items onto a file the import reads, or over
    a file an import did not write (the items file only beside an import's records)."""
    inputs = (
        [source, *(p for p in source.rglob("*") if p.is_file())] if source.is_dir() else [source]
    )
    check_target(out, inputs=inputs, ours=is_import, what="a jurybox import")
    ours = is_import(out)
    check_target(
        companion_items_path(out),
        inputs=inputs,
        ours=lambda _path: ours,
        what=f"the items of an import in {out.name}",
    )


def read_items(path: str | Path) -> list[Item]:
    """Items from a JSONL file of ``Item`` fields (as written by ``import_verdicts``)."""
    items = []
    source = Path(path)
    for line, data in read_json_lines(source):
        try:
            data["contexts"] = tuple(data.get("contexts") or ())
            items.append(Item(**data))
        except (AttributeError, TypeError) as exc:
            raise DatasetError(f"not an item: {exc}", path=str(source), line=line) from None
    return items


def load_imported(out_path: str | Path) -> tuple[list[JudgeRecord], list[Item]]:
    """Records and companion items written by ``import_verdicts``."""
    source = Path(out_path)
    records = list(read_records(source))
    items_path = companion_items_path(source)
    return records, read_items(items_path) if items_path.exists() else []
