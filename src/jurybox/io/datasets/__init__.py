"""Load and validate datasets (JSONL, JSON, CSV, Parquet) and human-label files.

Formats are chosen by extension: ``.jsonl`` (one JSON object per line; blank lines are skipped),
``.json`` (one JSON list of objects), ``.csv`` (a header row, then one item per record) and
``.parquet``. An item has these fields::

    id               str (ints are converted); unique within the file
    question         non-empty str
    responses        {arm: text} - two arms for pairwise, N for ranking, one for rubric/criterion;
                     every item must have the same arms (they are re-ordered like the first item's)
    contexts         list of str (a single str counts as one context)       optional
    expected_answer  str (numbers are converted)                            optional
    metadata         {key: any JSON value}, e.g. category, difficulty        optional
    authors          {arm: model family}, for self-preference analysis      optional
    human            {preferred_arm: arm | "tie", scores: {arm: {dimension: number}},
                      verdict: {arm: "Pass" | "Fail"}, annotator: str, notes: str}   optional

A number in place of an arm's score mapping means ``{"overall": number}``; with a single arm,
``verdict`` may be a bare ``"Pass"``/``"Fail"``. Any other field is an error (a typo in
``expected_answer`` would otherwise silently disable reference-guided judging): put extra data
under ``metadata``.

Flat files (CSV, Parquet) and renaming. ``DatasetConfig.columns`` maps a jurybox field to the
file's column (or JSONL key), e.g. ``{id: qid, question: prompt, metadata.topic: domain}``;
``DatasetConfig.response_columns`` maps each arm to the column holding its response. Without
``response_columns``, responses come from a ``responses`` column or from ``responses.<arm>``
columns. Nested fields are written either as one column holding JSON text (``metadata``,
``human``, ``authors``, ``responses``; ``contexts`` as a JSON list or one plain string) or as
dotted columns (``metadata.category``, ``authors.control``, ``human.preferred_arm``,
``human.verdict.control``, ``human.scores.control.overall``). Parquet struct, map and list
columns are read as such. In flat files an empty cell means "absent" (except a response, which
may be empty), and a dotted ``metadata.*`` / ``human.*`` cell holding ``true``/``false`` or a
number is read as that value, so ``metadata.normal = true`` behaves like JSON's ``true``.

Errors raise :class:`jurybox.errors.DatasetError` with ``path``, ``line`` and ``field`` set:
``line`` is the 1-based physical line for JSONL, JSON and CSV (for a CSV record spanning several
lines, the line it starts on; for invalid UTF-8, the line of the bad byte) and the 1-based data
row number for Parquet (the message says "Parquet row N"). Files are read as a stream (line by
line, or in record batches for Parquet); only ``.json`` needs the whole text at once.

Text files are UTF-8 (a byte-order mark at the start is skipped; CRLF line ends are fine); JSON
(lines, lists and JSON text in cells) is read by ``jurybox.io.input_files.parse_json``, which
refuses nesting deeper than 100 levels (dotted column names too), a number longer than 100
characters or too large for a float, and ``NaN`` / ``Infinity``; a CSV header name given twice,
or a record with more or fewer cells than the header, is an error. A lone surrogate (an escaped
``"\\ud800"`` in JSON) cannot be written as UTF-8: it is replaced by U+FFFD and the number
replaced is logged as a warning.

A human-label file (:func:`load_human_labels`) uses the same formats with a ``query_id`` column
plus the keys of ``human`` (``preferred_arm``, ``scores``, ``verdict``, ``annotator``,
``notes``); in CSV, ``verdict.<arm>`` and ``scores.<arm>.<dimension>`` columns work too. The run
config's ``labels:`` section (``LabelsConfig``) renames its columns (``columns: {query_id: id,
preferred_arm: winner}``) and says which arm each ``preferred_arm`` value means (``values: {A:
old, B: new}``; in label files and inline ``human`` fields alike). A column or value that
matches nothing is refused with the nearest name (difflib) and the config line that maps it. An
item may have several lines when each names its ``annotator``: a later line by the same
annotator supersedes, several annotators are merged (``_labels.py``). ``jurybox label`` adds
``design``, ``skipped`` and ``labelled_at`` to each line (docs/labelling.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurybox.config import DatasetConfig, LabelsConfig
from jurybox.errors import DatasetError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets._fields import (
    _DATASET,
    _LABELS,
    FIELDS,
    HUMAN_KEYS,
    LABEL_FIELDS,
    LINE_KEYS,
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    _align_arms,
    _check_unique,
    _human,
    _identifier,
    _normalise,
    _reject_unknown,
    _Spec,
    _to_item,
)
from jurybox.io.datasets._labels import LabelLine, line_extras, merge_lines
from jurybox.io.datasets._readers import _Record, _records, _Where
from jurybox.io.targets import check_target
from jurybox.io.text import clean_value

__all__ = [
    "FIELDS",
    "HUMAN_KEYS",
    "LABEL_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "LabelLine",
    "dataset_hash",
    "export_pairs",
    "items_from_rows",
    "label_lines",
    "load_dataset",
    "load_human_labels",
    "merge_lines",
]
from jurybox.records import Item

logger = logging.getLogger(__name__)


def load_dataset(
    path: str | Path, config: DatasetConfig | None = None, labels: LabelsConfig | None = None
) -> list[Item]:
    """Read and validate a dataset file; see the module docstring for the formats.
    ``labels.values`` says which arm each inline ``human.preferred_arm`` value means.

    Raises:
        DatasetError: naming the file, line (Parquet: row) and field at fault.
    """
    spec = _Spec.build(config or DatasetConfig(), str(path), labels)
    return _items(_records(Path(path)), spec, str(path))


def items_from_rows(
    rows: Iterable[Mapping[str, Any]],
    config: DatasetConfig | None = None,
    *,
    source: str = "<rows>",
) -> list[Item]:
    """Validate rows already in memory (a Ray Data batch, a DataFrame's records) as items.

    Rows are read like Parquet rows: nested values as such, JSON text or dotted columns, and
    ``config.columns`` / ``response_columns`` rename. Errors name ``source`` and the row number
    (counted from 1).
    """
    spec = _Spec.build(config or DatasetConfig(), source)
    records = (
        _Record(_Where(source, number), dict(row), flat=True)
        for number, row in enumerate(rows, start=1)
    )
    return _items(records, spec, source)


def _items(records: Iterable[_Record], spec: _Spec, path: str) -> list[Item]:
    items: list[Item] = []
    seen: dict[str, int | None] = {}
    first_where = _Where(path)
    replaced = 0
    for record in records:
        data, count = _encodable(_normalise(record, spec, _DATASET), record)
        replaced += count
        item = _to_item(data, record.where, spec)
        _check_unique(item.id, record.where, seen, "id")
        if items:
            item = _align_arms(item, items[0], first_where, record.where)
        else:
            first_where = record.where
        items.append(item)
    _say_replaced(path, replaced)
    return items


def _encodable(data: dict[str, Any], record: _Record) -> tuple[dict[str, Any], int]:
    """``data`` with each lone surrogate replaced by U+FFFD, and how many there were."""
    return (data, 0) if record.clean else clean_value(data)


def _say_replaced(path: str | Path, replaced: int) -> None:
    if replaced:
        # Replaced rather than refused: the text is still judged, and ids stay stable keys.
        logger.warning(
            "%s: %d unencodable code point(s) (lone surrogates) replaced by U+FFFD", path, replaced
        )


def load_human_labels(
    path: str | Path, config: LabelsConfig | None = None
) -> dict[str, Mapping[str, Any]]:
    """Read a human-label file: ``query_id`` -> validated labels (keys of ``Item.human``, plus
    ``annotators`` and ``design`` where several annotators or ``jurybox label`` wrote them),
    its columns renamed by ``config.columns`` and preferred arms read through ``config.values``.
    """
    return merge_lines(label_lines(path, config))


def label_lines(path: str | Path, config: LabelsConfig | None = None) -> Iterator[LabelLine]:
    """Every validated line of a human-label file, in file order, mapped line by line through
    ``config`` (``merge_lines`` combines them: a later line by the same annotator for the same
    item supersedes)."""
    replaced = 0
    spec = _Spec.for_labels(config, str(path))
    for record in _records(Path(path)):
        data, count = _encodable(_normalise(record, spec, _LABELS), record)
        where, replaced = record.where, replaced + count
        _reject_unknown(data, LABEL_FIELDS, where, spec)
        query_id = _identifier(data.get("query_id"), "query_id", where, spec.label("query_id"))
        design, skipped, stamp = line_extras(data, where)
        given = {k: v for k, v in data.items() if k != "query_id" and k not in LINE_KEYS}
        human = _human(given, None, where, "", spec.label_values)
        has_label = bool({"preferred_arm", "scores", "verdict"} & set(human))
        if skipped and has_label:
            raise where.error("a skipped line carries no label", field="skipped")
        if not skipped and not has_label:
            raise where.error("no label: give preferred_arm, scores or verdict", field="query_id")
        annotator = human.pop("annotator", None) if skipped else human.get("annotator")
        yield LabelLine(query_id, annotator, human, design, skipped, stamp, where)
    _say_replaced(path, replaced)


def dataset_hash(path: str | Path) -> str:
    """SHA-256 (hex) of the file's bytes, read in chunks."""
    try:
        with Path(path).open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None


def write_pairs(pairs: Sequence[Mapping[str, Any]], out: Path, dataset: Path) -> None:
    """Write ``export_pairs``' list to ``out`` (JSON, atomically); refused (exit 2) onto the
    dataset itself or over a file that is not such a list."""
    check_target(out, inputs=[dataset], ours=_is_pairs, what="a jurybox pairs export")
    write_text_atomic(out, json.dumps(list(pairs), indent=2, ensure_ascii=False))


def _is_pairs(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(len(_PAIRS_HEAD)) == _PAIRS_HEAD


_PAIRS_HEAD = b'[\n  {\n    "task_id": '


def export_pairs(items: Sequence[Item], arms: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Flatten a two-arm dataset into pairs for external evaluation tools.

    Args:
        items: loaded items.
        arms: the (control, treatment) arms, A then B; default the dataset's two arms.

    Returns:
        ``{task_id, question, expected_answer, response_a, response_b, model_a, model_b}`` per
        item; ``model_*`` is the arm's author, else the arm name.
    """
    if not items:
        raise DatasetError("no items to export")
    first, second = _pair_arms(items, arms)
    pairs = []
    for item in items:
        for arm in (first, second):
            if arm not in item.responses:
                raise DatasetError(
                    f"item '{item.id}' has no response for arm '{arm}'", field=f"responses.{arm}"
                )
        pairs.append(
            {
                "task_id": item.id,
                "question": item.question,
                "expected_answer": item.expected_answer,
                "response_a": item.responses[first],
                "response_b": item.responses[second],
                "model_a": item.authors.get(first, first),
                "model_b": item.authors.get(second, second),
            }
        )
    return pairs


def _pair_arms(items: Sequence[Item], arms: Sequence[str] | None) -> tuple[str, str]:
    if arms is None:
        found = items[0].arms
        if len(found) != 2:
            raise DatasetError(
                f"pairs need exactly two arms but the dataset has {len(found)} "
                f"({', '.join(found)}); name two with --arms",
                field="arms",
            )
        return found[0], found[1]
    if len(arms) != 2 or arms[0] == arms[1]:
        raise DatasetError(f"name two different arms, got {list(arms)}", field="arms")
    return arms[0], arms[1]
