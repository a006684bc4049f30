"""Few-shot examples come from train only: resolve ``train_examples`` and refuse leaks.

Showing the judge an item it is then measured on inflates TPR/TNR; it is the most common mistake
in building a judge. Every grounding example, inline or by id, is checked against the dev and
test items of the split by content hash (normalised question + response) *and* by response hash
alone: the judge reading the very response it will be scored on, with its label, is a leak
whatever question is written above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jurybox.devloop.split import (
    LoadedSplit,
    SplitEntry,
    content_hash,
    item_label,
    item_response,
    response_hash,
)
from jurybox.errors import ConfigError
from jurybox.records import Item
from jurybox.rubrics.criteria import Criterion, ExampleRef, FewShotExample


@dataclass(frozen=True)
class _Held:
    """Dev/test items by content hash and by response hash."""

    by_content: Mapping[str, SplitEntry]
    by_response: Mapping[str, SplitEntry]


def _held_out(split: LoadedSplit) -> _Held:
    held = [e for e in split.entries.values() if e.split != "train"]
    return _Held({e.content_hash: e for e in held}, {e.response_hash: e for e in held})


def _leak(example: FewShotExample, held: _Held) -> tuple[SplitEntry, str] | None:
    entry = held.by_content.get(content_hash(example.input, example.response))
    if entry is not None:
        return entry, "the same question and response"
    entry = held.by_response.get(response_hash(example.response))
    if entry is not None:
        return entry, "the same response"
    return None


def _resolve(
    ref: ExampleRef, field: str, split: LoadedSplit, train: Mapping[str, Item], *, source: str
) -> FewShotExample:
    entry = split.entries.get(ref.id)
    if entry is None:
        raise ConfigError(f"no item '{ref.id}' in the split", path=source, field=field)
    if entry.split != "train":
        raise ConfigError(
            f"few-shot example '{ref.id}' is a {entry.split} item: examples must come from "
            "train only, or the judge is measured on its own prompt",
            path=source,
            field=field,
        )
    item = train[ref.id]
    return FewShotExample(
        id=ref.id,
        input=item.question,
        response=item_response(item),
        answer=item_label(item),
        reasoning=ref.reasoning,
        label=ref.label,
    )


def resolve_examples(criterion: Criterion, split: LoadedSplit, *, source: str) -> Criterion:
    """The criterion with ``train_examples`` written out inline and every example leak-checked.

    Raises:
        ConfigError: naming the example (and the dev/test item it copies) when any grounding
            example is a dev or test item, or copies one after whitespace / case changes.
    """
    held = _held_out(split)
    train = {item.id: item for item in split.items("train")} if criterion.train_examples else {}
    examples = list(criterion.examples)
    fields = [f"examples.{i}" for i in range(len(examples))]
    for index, ref in enumerate(criterion.train_examples):
        field = f"train_examples.{index}"
        examples.append(_resolve(ref, field, split, train, source=source))
        fields.append(field)
    for example, field in zip(examples, fields, strict=True):
        leak = _leak(example, held)
        if leak is not None:
            entry, what = leak
            name = f"'{example.id}'" if example.id else f"#{fields.index(field) + 1}"
            raise ConfigError(
                f"few-shot example {name} has {what} as {entry.split} item '{entry.id}' "
                "(after normalising whitespace and case): evaluation items must never be shown "
                "to the judge; take examples from train (train_examples: [{id: ...}])",
                path=source,
                field=field,
            )
    return criterion.model_copy(update={"examples": tuple(examples), "train_examples": ()})
