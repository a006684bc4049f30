"""The candidates of a search: instruction variants x few-shot example sets x rubric variants.

Candidate ``base`` is the base config's own prompt. Instruction variants come from the user's
file (a YAML list, or a folder of ``.md`` / ``.txt`` files) and from a proposer judge's
rewrites; few-shot sets are drawn from the train split only; rubric variants are rubric files.
Every combination is a candidate.

No candidate may show the judge an evaluation item: an example is a train item whose question
and responses no dev or test item shares (after ``devloop.split``'s normalisation), and no
variant, rewrite or rubric may quote a dev or test item's question or response (normalised,
``QUOTE_MIN_CHARS`` characters or more; shorter texts — "Yes", "42" — are common words, not
quotations).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jurybox.config import PairwiseExample, RunConfig, read_yaml_file
from jurybox.devloop.split import normalise_text, response_hash
from jurybox.errors import ConfigError
from jurybox.optimize.split import OptimizeSplit, held_out_texts, item_hash
from jurybox.prompts.custom import is_instructions_file
from jurybox.records import Item
from jurybox.rubrics.model import is_rubric_path

QUOTE_MIN_CHARS = 20
VARIANT_SUFFIXES = (".md", ".txt")


@dataclass(frozen=True)
class Variant:
    """An instruction text to try, and where it came from."""

    name: str
    text: str
    origin: str  # "file" | "proposer"


@dataclass(frozen=True)
class ExampleSet:
    name: str
    examples: tuple[PairwiseExample, ...]


@dataclass(frozen=True)
class Candidate:
    """One prompt to try: the base config with these parts replaced."""

    id: str
    name: str
    instructions: str | None  # None: the base config's (or none)
    examples: tuple[PairwiseExample, ...]
    rubric: str | None  # a rubric file (absolute); None: the base config's rubric
    own_chars: int  # characters of its own text (instructions, examples, rubric file)

    @property
    def complexity(self) -> tuple[int, int]:
        """Smaller is simpler: fewer examples, then fewer characters of its own."""
        return (len(self.examples), self.own_chars)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["examples"] = [e.model_dump(mode="json") for e in self.examples]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Candidate:
        examples = tuple(PairwiseExample.model_validate(e) for e in data["examples"])
        fields = {k: data[k] for k in ("id", "name", "instructions", "rubric", "own_chars")}
        return cls(examples=examples, **fields)


# --- reading the user's variants -------------------------------------------------------------


def read_variants(path: Path) -> list[Variant]:
    """Instruction variants from a YAML list (each a text, ``{name, text}`` or ``{name, file}``)
    or from a folder (each ``.md`` / ``.txt`` file, by name)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in VARIANT_SUFFIXES)
        if not files:
            raise ConfigError("no .md or .txt file in the variants folder", path=str(path))
        return _unique([Variant(f.stem, _text(f, str(f)), "file") for f in files], path)
    data, _ = read_yaml_file(path)  # missing, not UTF-8, not YAML: named errors
    if not isinstance(data, list) or not data:
        raise ConfigError("expected a YAML list of instruction variants", path=str(path))
    return _unique([_variant(entry, i, path) for i, entry in enumerate(data)], path)


def _variant(entry: Any, index: int, path: Path) -> Variant:
    field = f"[{index}]"
    if isinstance(entry, str):
        return Variant(f"variant-{index + 1}", _checked(entry, str(path), field), "file")
    if not isinstance(entry, dict) or not set(entry) <= {"name", "text", "file"}:
        raise ConfigError(
            "each variant is a text, {name, text} or {name, file}", path=str(path), field=field
        )
    name = str(entry.get("name") or f"variant-{index + 1}")
    if ("text" in entry) == ("file" in entry):
        raise ConfigError(
            "give a variant's text or its file, one of them", path=str(path), field=field
        )
    if "file" in entry:
        return Variant(name, _text(path.parent / str(entry["file"]), f"{path}{field}.file"), "file")
    return Variant(name, _checked(entry["text"], str(path), f"{field}.text"), "file")


def _text(file: Path, where: str) -> str:
    try:
        return _checked(file.read_text(encoding="utf-8"), str(file), None)
    except FileNotFoundError:
        raise ConfigError("variant file not found", path=where) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not valid UTF-8 ({exc.reason})", path=str(file)) from None


def _checked(text: Any, path: str, field: str | None) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("an instruction variant is empty", path=path, field=field)
    return text


def _unique(variants: list[Variant], path: Path) -> list[Variant]:
    seen: dict[str, str] = {}
    for variant in variants:
        key = normalise_text(variant.text)
        if key in seen:
            raise ConfigError(
                f"variants {seen[key]!r} and {variant.name!r} have the same text", path=str(path)
            )
        seen[key] = variant.name
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise ConfigError("variant names must be unique", path=str(path))
    return variants


# --- leaks ------------------------------------------------------------------------------------


def check_quotes(text: str, what: str, held: Sequence[tuple[str, str, str]]) -> None:
    """Refuse ``text`` when it quotes a dev or test item (``held_out_texts``)."""
    mine = normalise_text(text)
    for split, item_id, quoted in held:
        if len(quoted) >= QUOTE_MIN_CHARS and quoted in mine:
            raise ConfigError(
                f"{what} quotes the {split} item '{item_id}' (a question or response of it, "
                "after normalising whitespace and case): the judge must never be shown an item "
                "it is scored on, nor the test items before the test pass"
            )


# --- few-shot sets from train ------------------------------------------------------------------


def example_sets(
    split: OptimizeSplit, arms: tuple[str, str] | None, *, sizes: Sequence[int], sets: int
) -> list[ExampleSet]:
    """``sets`` sets of each size, drawn (seeded by the split's seed) from the train items that
    share no content with a dev or test item; each example's right answer shown as A or B
    at random."""
    held = {e.content_hash for e in split.entries.values() if e.split != "train"}
    held_responses = {
        h for e in split.entries.values() if e.split != "train" for h in e.response_hashes
    }
    pool = [
        item
        for item in split.items("train")
        if item_hash(item) not in held
        and not any(response_hash(text) in held_responses for text in item.responses.values())
    ]
    out = []
    for size, number in itertools.product(sizes, range(1, sets + 1)):
        if size > len(pool):
            raise ConfigError(
                f"an example set of {size} needs {size} train items; the train split has "
                f"{len(pool)} usable (none shared with dev or test)",
                field="examples.sizes",
            )
        rng = np.random.default_rng([split.seed, size, number])
        chosen = [pool[i] for i in sorted(rng.choice(len(pool), size, replace=False))]
        examples = tuple(_example(item, arms, rng) for item in chosen)
        out.append(ExampleSet(f"{size} examples (set {number})", examples))
    return out


def _example(item: Item, arms: tuple[str, str] | None, rng: np.random.Generator) -> PairwiseExample:
    pair = arms or item.arms
    if len(pair) != 2:
        raise ConfigError(
            f"train item '{item.id}' has {len(pair)} responses: a pairwise example shows two "
            "(name them in the base config's task.arms)",
            field="examples",
        )
    gold = item.human["preferred_arm"]
    first, second = (pair[1], pair[0]) if rng.random() < 0.5 else (pair[0], pair[1])
    verdict = "TIE" if gold == "tie" else ("A" if gold == first else "B")
    return PairwiseExample(
        id=item.id,
        question=item.question,
        response_a=item.responses[first],
        response_b=item.responses[second],
        verdict=verdict,
    )


# --- the candidates ----------------------------------------------------------------------------


def _chars(examples: Iterable[PairwiseExample]) -> int:
    return sum(len(e.question) + len(e.response_a) + len(e.response_b) for e in examples)


def build_candidates(
    base_instructions: str | None,
    variants: Sequence[Variant],
    sets: Sequence[ExampleSet],
    rubrics: Sequence[Path],
    split: OptimizeSplit,
) -> list[Candidate]:
    """Every combination, base first; each checked against the dev and test items."""
    held = held_out_texts(split)
    for variant in variants:
        check_quotes(variant.text, f"instruction variant '{variant.name}'", held)
    rubric_texts: dict[str, str] = {}
    for path in rubrics:
        rubric_texts[str(path)] = path.read_text(encoding="utf-8")
        check_quotes(rubric_texts[str(path)], f"rubric variant '{path.name}'", held)
    texts: list[tuple[str, str | None]] = [("base", base_instructions)]
    texts += [(v.name, v.text) for v in variants]
    example_choices: list[ExampleSet | None] = [None, *sets]
    rubric_choices: list[str | None] = [None, *rubric_texts]
    out: list[Candidate] = []
    for (name, text), chosen, rubric in itertools.product(texts, example_choices, rubric_choices):
        parts = [name] + ([chosen.name] if chosen else []) + ([Path(rubric).name] if rubric else [])
        examples = chosen.examples if chosen else ()
        own = len(text or "") + _chars(examples) + len(rubric_texts.get(rubric or "", ""))
        out.append(Candidate(f"c{len(out):02d}", " + ".join(parts), text, examples, rubric, own))
    return out


# --- a candidate as a run config -----------------------------------------------------------------


def candidate_config(
    base: RunConfig,
    judge: str,
    candidate: Candidate,
    *,
    dataset: Path,
    output_dir: Path,
    cache: Path,
    instructions_file: Path | None,
    retests: bool,
) -> dict[str, Any]:
    """The base run config judging ``dataset`` with the candidate's prompt (every path
    absolute, so the file can be run from anywhere): its judge only, the gold labels read from
    the split files, one response cache for every run of the search."""
    data = base.model_dump(mode="json", exclude_unset=True)
    data["judges"] = {judge: base.judges[judge].model_dump(mode="json", exclude_unset=True)}
    task = absolute_task(base)
    task.pop("instructions", None)
    if instructions_file is not None:
        task["instructions"] = str(instructions_file)
    if candidate.examples:
        task["examples"] = [
            e.model_dump(mode="json", exclude_none=True) for e in candidate.examples
        ]
    if candidate.rubric is not None:
        task["rubric"] = candidate.rubric
    data["task"] = task
    pipeline = dict(data.get("pipeline", {}))
    pipeline.update(cache=True, cache_path=str(cache))
    if not retests:
        pipeline.update(test_retest_count=0)
        pipeline.pop("test_retest_query_ids", None)
    data["pipeline"] = pipeline
    data["paths"] = {"dataset": str(dataset), "output_dir": str(output_dir)}
    data.pop("dataset", None)  # the split files are jurybox JSONL: no column mapping
    return data


def absolute_task(base: RunConfig) -> dict[str, Any]:
    """The base task section with its file paths made absolute."""
    task = base.task.model_dump(mode="json", exclude_unset=True)
    if "rubric" in task and is_rubric_path(task["rubric"]):
        task["rubric"] = str(base.resolve(task["rubric"]).resolve())
    if task.get("criteria"):
        task["criteria"] = [str(base.resolve(p).resolve()) for p in task["criteria"]]
    if task.get("template"):
        task["template"] = {k: str(base.resolve(v).resolve()) for k, v in task["template"].items()}
    instructions = task.get("instructions")
    if isinstance(instructions, str) and is_instructions_file(instructions):
        task["instructions"] = str(base.resolve(instructions).resolve())
    return task
