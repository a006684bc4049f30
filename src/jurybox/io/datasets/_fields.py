"""Field normalisation and validation: raw records -> ``Item`` / label mappings."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.config import DatasetConfig, LabelsConfig
from jurybox.errors import DatasetError, nearest
from jurybox.io.datasets._readers import _is_number, _Record, _Where
from jurybox.io.input_files import MAX_DEPTH, json_kind, parse_json, quoted
from jurybox.records import Item

REQUIRED_FIELDS = ("id", "question", "responses")
OPTIONAL_FIELDS = ("contexts", "expected_answer", "metadata", "authors", "human")
FIELDS = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
HUMAN_KEYS = ("preferred_arm", "scores", "verdict", "annotator", "notes")
# Written by `jurybox label` on each line (io/datasets/_labels.py); a label file only.
LINE_KEYS = ("design", "skipped", "labelled_at")
LABEL_FIELDS = ("query_id", *HUMAN_KEYS, *LINE_KEYS)
_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")  # "01234" stays text


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which fields nest (JSON cells, dotted columns) and which read literals from text cells."""

    nested: tuple[str, ...]
    literal: tuple[str, ...]


_DATASET = _Layout(("responses", "metadata", "authors", "human"), ("metadata", "human"))
_LABELS = _Layout(("scores", "verdict", "design"), ("scores", "design"))
Arms = tuple[str, ...] | None  # None: arms unknown (a separate label file)


@dataclass(frozen=True, slots=True)
class _Spec:
    """A validated column mapping (jurybox field <- file column) of the config section
    ``section``, and what preferred_arm values in the labels mean (``labels.values``)."""

    columns: Mapping[str, str]
    response_columns: Mapping[str, str] | None
    label_values: Mapping[str, str] = field(default_factory=dict)
    section: str = "dataset"

    @classmethod
    def build(cls, config: DatasetConfig, path: str, labels: LabelsConfig | None = None) -> _Spec:
        _check_targets(config.columns, FIELDS, _DATASET, path, "dataset")
        if config.response_columns is not None and not config.response_columns:
            raise DatasetError("is empty", path=path, field="dataset.response_columns")
        values = labels.values if labels is not None else {}
        return cls(dict(config.columns), config.response_columns, values)

    @classmethod
    def for_labels(cls, labels: LabelsConfig | None, path: str) -> _Spec:
        """The spec of a human-label file: ``labels.columns`` and ``labels.values``."""
        if labels is None:
            return cls({}, None, section="labels")
        _check_targets(labels.columns, LABEL_FIELDS, _LABELS, path, "labels")
        return cls(dict(labels.columns), None, labels.values, "labels")

    def label(self, field: str) -> str:
        column = self.columns.get(field)
        return f"field (column '{column}')" if column else "field"

    def mapping(self, target: str, column: str, key: str = "columns") -> str:
        """The config line that reads ``column`` as ``target``, for a message to suggest."""
        return f"`{self.section}: {{{key}: {{{target}: {column}}}}}`"


def _check_targets(
    columns: Mapping[str, str], fields: Sequence[str], layout: _Layout, path: str, section: str
) -> None:
    for target, column in columns.items():
        head, _, rest = target.partition(".")
        if head not in fields or (rest and head not in layout.nested):
            close = nearest(head, fields)
            raise DatasetError(
                f"cannot map column '{column}' to unknown field '{target}' "
                f"(allowed: {', '.join(fields)}, or {layout.nested[0]}.<key> and the like)"
                + (f"; did you mean '{close}'?" if close else ""),
                path=path,
                field=f"{section}.columns.{target}",
            )


def _normalise(record: _Record, spec: _Spec, layout: _Layout) -> dict[str, Any]:
    where, data = record.where, _rename(record.data, spec, record.where)
    if spec.response_columns is not None:
        if "responses" in data:
            raise where.error("given twice: by response_columns and in the file", "responses")
        data["responses"] = _take_responses(data, spec.response_columns, where)
    if record.flat:
        data = {k: v for k, v in data.items() if not _blank(v) or k.startswith("responses")}
        for name in (*layout.nested, "contexts"):
            if name in data:
                data[name] = _decode_cell(data[name], name, where)
    for key in [k for k in data if "." in k]:
        head, _, rest = key.partition(".")
        if head in layout.nested:
            value = data.pop(key)
            if record.flat and head in layout.literal and isinstance(value, str):
                value = _literal(value, where, key)
            _set_path(data, [head, *rest.split(".")], value, where)
    return data


def _rename(data: Mapping[str, Any], spec: _Spec, where: _Where) -> dict[str, Any]:
    out = dict(data)
    for target, column in spec.columns.items():
        if column not in data:
            # Absent is allowed (an optional field), but a near name beside it is a typo.
            close = nearest(column, [key for key in data if key not in spec.columns.values()])
            if close is not None and target not in data:
                raise where.error(
                    f"no column '{column}' ({spec.section}.columns.{target}); did you mean "
                    f"'{close}'? {spec.mapping(target, close)}",
                    target,
                )
            continue
        if target == column:
            continue
        if target in data and target not in spec.columns.values():
            raise where.error(f"comes from column '{column}' but the file also has it", target)
        out[target] = data[column]
        if column not in spec.columns:
            out.pop(column, None)
    return out


def _take_responses(data: dict[str, Any], columns: Mapping[str, str], where: _Where) -> Any:
    responses = {}
    for arm, column in columns.items():
        if column not in data:
            close = nearest(column, data)
            said = f"; did you mean '{close}'?" if close else f" (columns: {', '.join(data)})"
            raise where.error(f"missing response column '{column}'{said}", f"responses.{arm}")
        responses[arm] = data.pop(column)
    return responses


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _decode_cell(value: Any, name: str, where: _Where) -> Any:
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        value = dict(value)  # a Parquet map column arrives as (key, value) pairs
    if isinstance(value, dict) and name != "responses":
        return _drop_none(value)  # a Parquet struct fills absent fields with null
    if not isinstance(value, str) or (name == "contexts" and not value.lstrip().startswith("[")):
        return value
    try:
        return parse_json(value, path=where.path, line=where.line, field=name)
    except DatasetError as exc:  # said of the cell, and of the Parquet row where it is one
        raise where.error(f"invalid JSON in cell: {exc.reason}", name) from None


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    return value


def _literal(text: str, where: _Where, name: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _NUMBER.fullmatch(lowered):  # JSON's own number syntax: read (and bounded) as JSON
        try:
            return parse_json(lowered, path=where.path, line=where.line, field=name)
        except DatasetError as exc:
            raise where.error(exc.reason, name) from None
    return text


def _set_path(data: dict[str, Any], keys: list[str], value: Any, where: _Where) -> None:
    if len(keys) > MAX_DEPTH:  # a dotted column nests as deeply as JSON may
        raise where.error(f"nested deeper than {MAX_DEPTH} levels", ".".join(keys[:3]) + "...")
    node = data
    for depth, key in enumerate(keys[:-1]):
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise where.error("has dotted columns but is no mapping", ".".join(keys[: depth + 1]))
        node = child
    node[keys[-1]] = value


# --- validating one item -----------------------------------------------------------------------


def _to_item(data: Mapping[str, Any], where: _Where, spec: _Spec) -> Item:
    _reject_unknown(data, FIELDS, where, spec)
    item_id = _identifier(data.get("id"), "id", where, spec.label("id"))
    question = data.get("question")
    if question is None:
        raise where.error(f"missing {spec.label('question')}", field="question")
    if not isinstance(question, str) or not question.strip():
        raise where.error(f"expected non-empty text, got {json_kind(question)}", field="question")
    responses = _responses(data.get("responses"), where)
    arms = tuple(responses)
    return Item(
        id=item_id,
        question=question,
        responses=responses,
        contexts=_contexts(data.get("contexts"), where),
        expected_answer=_optional_text(data.get("expected_answer"), where),
        metadata=_mapping(_or_empty(data.get("metadata")), "metadata", where),
        authors=_authors(_or_empty(data.get("authors")), arms, where),
        human=_human(_or_empty(data.get("human")), arms, where, "human.", spec.label_values),
    )


def _or_empty(value: Any) -> Any:
    return {} if value is None else value


# What a required field holds, to suggest mapping an unknown column to it.
_HOLDS = {
    "id": "the item id",
    "question": "the question",
    "responses": "a response",
    "query_id": "the item id",
    "preferred_arm": "the preferred arm",
}


def _reject_unknown(
    data: Mapping[str, Any], allowed: Sequence[str], where: _Where, spec: _Spec
) -> None:
    unknown = [key for key in data if key not in allowed]
    if unknown:
        what = "item" if spec.section == "dataset" else "labels"
        extra = "; put extra data under metadata" if what == "item" else ""
        message = f"unknown {what} field (allowed: {', '.join(allowed)}{extra})"
        raise where.error(message + _map_hint(unknown[0], data, allowed, spec), unknown[0])


def _map_hint(key: str, data: Mapping[str, Any], allowed: Sequence[str], spec: _Spec) -> str:
    """How the config would read column ``key``: as the field its name is near, else as a
    required field the record lacks."""
    close = nearest(key.partition(".")[0], allowed)
    if close is not None:
        line = spec.mapping(close, key)
        return f"; did you mean '{close}'? To read column '{key}' as {close}, map it: {line}"
    required: tuple[str, ...] = REQUIRED_FIELDS
    if spec.section == "labels":
        given = {"preferred_arm", "scores", "verdict"} & set(data)
        required = ("query_id",) if given else ("query_id", "preferred_arm")
    for missing in (name for name in required if name not in data):
        if missing == "responses":
            line = spec.mapping("ARM", key, "response_columns")
            return f"; if '{key}' holds a response, map it to its arm: {line}"
        return f"; if '{key}' holds {_HOLDS[missing]}, map it: {spec.mapping(missing, key)}"
    return ""


def _identifier(value: Any, name: str, where: _Where, label: str) -> str:
    if value is None:
        raise where.error(f"missing {label}", field=name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"expected a non-empty string or integer, got {json_kind(value)}", name)
    return value


def _responses(value: Any, where: _Where) -> dict[str, str]:
    if value is None:
        raise where.error("missing field", field="responses")
    if not isinstance(value, Mapping):
        raise where.error(f"expected a mapping of arm -> text, got {json_kind(value)}", "responses")
    if not value:
        raise where.error("no responses: give at least one arm", field="responses")
    for arm, text in value.items():
        if not isinstance(arm, str) or not arm.strip():
            raise where.error(f"arm names must be non-empty text, got {arm!r}", "responses")
        if not isinstance(text, str):
            raise where.error(f"expected text, got {json_kind(text)}", field=f"responses.{arm}")
    return dict(value)


def _contexts(value: Any, where: _Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise where.error(f"expected a list of text, got {json_kind(value)}", field="contexts")
    for index, text in enumerate(value):
        if not isinstance(text, str):
            raise where.error(f"expected text, got {json_kind(text)}", field=f"contexts[{index}]")
    return tuple(value)


def _optional_text(value: Any, where: _Where) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"expected text, got {json_kind(value)}", field="expected_answer")


def _mapping(value: Any, name: str, where: _Where) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected a mapping, got {json_kind(value)}", field=name)
    return dict(value)


def _authors(value: Any, arms: tuple[str, ...], where: _Where) -> dict[str, str]:
    authors = _mapping(value, "authors", where)
    for arm, family in authors.items():
        _check_arm(arm, arms, where, f"authors.{arm}")
        if not isinstance(family, str) or not family.strip():
            raise where.error(f"expected a family name, got {json_kind(family)}", f"authors.{arm}")
    return authors


def _check_arm(arm: str, arms: Arms, where: _Where, field: str) -> None:
    if arms is not None and arm not in arms:
        raise where.error(f"'{arm}' is not an arm of this item (arms: {', '.join(arms)})", field)


def _human(
    value: Any, arms: Arms, where: _Where, prefix: str, values: Mapping[str, str]
) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected a mapping, got {json_kind(value)}", prefix.rstrip(".") or None)
    labels = {key: val for key, val in value.items() if val is not None}
    for key in labels:
        if key not in HUMAN_KEYS:
            allowed = ", ".join(HUMAN_KEYS)
            raise where.error(f"unknown label (allowed: {allowed})", field=f"{prefix}{key}")
    out: dict[str, Any] = {}
    if "preferred_arm" in labels:
        preferred = _mapped(labels["preferred_arm"], values)
        out["preferred_arm"] = _preferred(preferred, arms, where, prefix)
    if "scores" in labels:
        out["scores"] = _scores(labels["scores"], arms, where, f"{prefix}scores")
    if "verdict" in labels:
        out["verdict"] = _verdicts(labels["verdict"], arms, where, f"{prefix}verdict")
    for key in ("annotator", "notes"):
        if key in labels:
            out[key] = _label_text(labels[key], where, f"{prefix}{key}")
    return out


def _label_text(value: Any, where: _Where, field: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # annotator ids are often numbers
    if not isinstance(value, str):
        raise where.error(f"expected text, got {json_kind(value)}", field=field)
    return value


def _mapped(value: Any, values: Mapping[str, str]) -> Any:
    """``labels.values``' arm for a label value (a number is looked up as its text)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        key = str(value)
    elif isinstance(value, str):
        key = value.strip()
    else:
        return value
    return values.get(key, value)


def _preferred(value: Any, arms: Arms, where: _Where, prefix: str) -> str:
    field = f"{prefix}preferred_arm"
    if not isinstance(value, str) or not value.strip():
        said = f"expected an arm name or 'tie', got {json_kind(value)}"
        if isinstance(value, int | float) and not isinstance(value, bool):
            said += value_map_hint(str(value), arms)
        raise where.error(said, field=field)
    if value.strip().lower() == "tie":
        return "tie"
    if arms is not None and value not in arms:
        allowed = ", ".join(arms)
        hint = value_map_hint(value, arms)
        raise where.error(f"'{quoted(value)}' is not an arm (allowed: {allowed}, tie){hint}", field)
    return value


def value_map_hint(value: str, arms: Collection[str] | None) -> str:
    """The "did you mean" of a label value that names no arm, and the config line that reads
    such values as arms."""
    close = nearest(value, [*arms, "tie"]) if arms else None
    said = f"; did you mean '{close}'?" if close else ""
    return (
        f"{said}; to read label values as arms, map them in the config: "
        f"`labels: {{values: {{{quoted(value)}: ARM}}}}` with ARM an arm or tie"
    )


def _scores(value: Any, arms: Arms, where: _Where, field: str) -> dict[str, dict[str, float]]:
    table = _mapping(value, field, where)
    out: dict[str, dict[str, float]] = {}
    for arm, given in table.items():
        _check_arm(arm, arms, where, f"{field}.{arm}")
        dims = _mapping({"overall": given} if _is_number(given) else given, f"{field}.{arm}", where)
        for dim, score in dims.items():
            if not _is_number(score):
                raise where.error(
                    f"expected a number, got {json_kind(score)}", f"{field}.{arm}.{dim}"
                )
        out[arm] = {dim: float(score) for dim, score in dims.items()}
    return out


def _verdicts(value: Any, arms: Arms, where: _Where, field: str) -> dict[str, str]:
    if isinstance(value, str) and arms is not None and len(arms) == 1:
        value = {arms[0]: value}  # one arm: a bare verdict is unambiguous
    table = _mapping(value, field, where)
    out = {}
    for arm, verdict in table.items():
        _check_arm(arm, arms, where, f"{field}.{arm}")
        normal = verdict.strip().capitalize() if isinstance(verdict, str) else None
        if normal not in ("Pass", "Fail"):
            raise where.error(f"expected 'Pass' or 'Fail', got {verdict!r}", f"{field}.{arm}")
        out[arm] = normal
    return out


# --- across items ------------------------------------------------------------------------------


def _check_unique(key: str, where: _Where, seen: dict[str, int | None], field: str) -> None:
    if key in seen:
        unit = "row" if where.parquet else "line"
        raise where.error(f"duplicate {field} '{quoted(key)}' (first on {unit} {seen[key]})", field)
    seen[key] = where.line


def _align_arms(item: Item, first: Item, first_where: _Where, where: _Where) -> Item:
    if set(item.arms) != set(first.arms):
        unit = "row" if where.parquet else "line"
        raise where.error(
            f"item '{item.id}' has arms [{', '.join(item.arms)}] but the first item "
            f"('{first.id}', {unit} {first_where.line}) has [{', '.join(first.arms)}]",
            field="responses",
        )
    if item.arms == first.arms:
        return item
    return dataclasses.replace(item, responses={arm: item.responses[arm] for arm in first.arms})
