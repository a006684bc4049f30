"""The JSON Schema of one judgments.jsonl line (``jurybox schema --records``, docs/records.md).

Types come from ``JudgeRecord`` itself (pydantic reads the dataclass); the descriptions live here,
one per field, and ``record_schema`` refuses a field without one, so a new field cannot go
undocumented.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import TypeAdapter

from jurybox.records import RECORD_SCHEMA_VERSION, JudgeRecord

DESCRIPTIONS: dict[str, str] = {
    "key": "Identity of the judgment: item, judge, ordering, repeat (+ criterion, retest), "
    "joined by `|`. Resume skips keys already written; readers keep the last complete record "
    "of a key.",
    "run_id": "The run that wrote the record (manifest.json `run_id`; `imported:...` for imports).",
    "query_id": "The judged item's `id` in the dataset.",
    "judge_name": "The judge's name in the config (`judges:` key).",
    "judge_model": "The model the provider reports.",
    "judge_vendor": "`anthropic`, `openai`, `google`, `openai_compatible`, `local`, `fake`, "
    "`code`, `imported` or a registered provider.",
    "mode": "`pairwise`, `rubric`, `ranking` or `criterion`.",
    "presentation_order": "How the arms were shown: `<arm>_first` (pairwise), `single`, or "
    "arms joined by `>` (ranking; an arm's own `\\` and `>` escaped with a backslash).",
    "positions": 'Position letter -> arm, as shown to the judge (`{"A": "control", "B": '
    '"treatment"}`).',
    "status": "`ok` (enters the metrics), `unparsed`, `provider_error`, `refused`, `truncated` "
    "or `skipped`.",
    "parse_success": "True when the judge's text was parsed into a verdict or scores.",
    "raw_response": "The judge's text, never altered (capped at `pipeline.max_answer_bytes`).",
    "timestamp": "When the record was written (UTC, ISO 8601).",
    "repeat": "Repeat number (0 for the first judgment of a unit).",
    "retest": "True for a test-retest repeat of an item already judged.",
    "criterion": "Criterion mode: the criterion's name.",
    "error": "Why the judgment failed (credentials redacted). A `provider_error`'s text starts "
    "with its kind in brackets, e.g. `[HTTP 500]`, `[connection refused]`, `[timeout]` "
    "(docs/records.md, Failure kinds).",
    "parse_method": "How the verdict was read (`structured`, `json`, `regex`, `imported`, ...).",
    "holistic_fallback": "The judge ignored the rubric and gave one overall score.",
    "response_a_label": "Pairwise: the arm shown as response A.",
    "response_b_label": "Pairwise: the arm shown as response B.",
    "preference": "Pairwise, positional: `A`, `B` or `tie`, as the judge answered.",
    "positions_shown": "False when each response was scored alone (no position to be biased by).",
    "confidence": "Pairwise verdict confidence: `high`, `medium` or `low`.",
    "preference_reasoning": "The judge's stated reasoning.",
    "scores_response_a": "Pairwise with scores: dimension -> score of response A.",
    "scores_response_b": "Pairwise with scores: dimension -> score of response B.",
    "preferred_arm": "The preference mapped back to an arm name, `tie`, or null when unparsed. "
    "Any other value (a name not among the record's `positions`) is refused: the reader names "
    "the file, the line and the field.",
    "scores": "Arm -> dimension -> score.",
    "confidences": "Arm -> dimension -> the judge's confidence in that score.",
    "overall": "Arm -> weighted overall score after ceilings and gates.",
    "gate_failures": "Arm -> gate dimensions that failed.",
    "safety_flags": "Arm -> the safety pattern that fired.",
    "ranking": "Ranking mode: arms, best first.",
    "verdict": "Criterion mode: `Pass` or `Fail`.",
    "prompt_hash": "SHA-256 of everything the judge read (system, user, answer schema).",
    "latency_ms": "Wall time of the call.",
    "input_tokens": "Prompt tokens (the vendor's count, else an estimate).",
    "output_tokens": "Answer tokens.",
    "cached_input_tokens": "Prompt tokens the vendor served from its cache.",
    "reasoning_tokens": "Hidden reasoning tokens, where the vendor reports them.",
    "cost_usd": "Cost of the call at the judge's prices (its `price_*` settings, a prices "
    "file, jurybox's price table: docs/pricing.md); null when the judge is unpriced.",
    "attempts": "Calls made for this judgment (retries included).",
    "cache_hit": "True when the answer came from the response cache (no call, no cost).",
    "finish_reason": "`stop`, `length`, `refusal`, `content_filter` or `other`.",
    "local_judge": "True for the bundled or another local model.",
    "judge_family": "The judge's `family` from the config, matched against dataset authors for "
    "self-preference.",
    "text_replaced": "Code points UTF-8 cannot encode (lone surrogates) replaced by U+FFFD.",
    "answer_cut_bytes": "Size in bytes of the judge's answer when it was cut to "
    "`pipeline.max_answer_bytes`.",
    "schema_version": f"Record format version ({RECORD_SCHEMA_VERSION}); older versions are "
    "migrated on reading.",
    "batch_id": "The provider batch that answered it (`--batch` runs; null for a synchronous "
    "call). Its cost is at the batch rate.",
}


def record_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a judgments.jsonl line, every field described."""
    schema: dict[str, Any] = TypeAdapter(JudgeRecord).json_schema(mode="serialization")
    properties: dict[str, Any] = schema["properties"]
    fields = [field.name for field in dataclasses.fields(JudgeRecord)]
    undescribed = [name for name in fields if name not in DESCRIPTIONS]
    if undescribed:
        raise RuntimeError(f"JudgeRecord fields without a description: {undescribed}")
    for name in fields:
        properties[name]["description"] = DESCRIPTIONS[name]
    schema["title"] = "JudgeRecord"
    schema["description"] = "One line of judgments.jsonl: a judgment, its provenance and text."
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _type_of(spec: dict[str, Any]) -> str:
    """A short type for the doc's table: ``string``, ``integer | null``, ``object`` ..."""
    if "anyOf" in spec:
        return " | ".join(_type_of(option) for option in spec["anyOf"])
    if "$ref" in spec:
        return "string (enum)"
    kind = spec.get("type", "any")
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"array of {_type_of(spec['items'])}"
    return str(kind)


def fields_table() -> str:
    """The Markdown table of docs/records.md (field, type, required, meaning), generated from
    the schema so the doc cannot drift (tests/interop/test_records_doc.py)."""
    schema = record_schema()
    required = set(schema.get("required", ()))
    lines = ["| field | type | required | meaning |", "|---|---|---|---|"]
    for name, spec in schema["properties"].items():
        mark = "yes" if name in required else ""
        meaning = spec["description"].replace("|", "\\|")
        lines.append(f"| `{name}` | {_type_of(spec)} | {mark} | {meaning} |")
    return "\n".join(lines)
