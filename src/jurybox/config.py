"""Typed run configuration: pydantic models (frozen, ``extra="forbid"``), YAML loading, JSON Schema.

Model names only ever come from here, and keys only from the environment variables a judge names,
read at call time by the provider (never stored in a config object).
"""

# No `from __future__ import annotations` here: pydantic would compile and evaluate each of the
# ~70 field annotations from its text when the models are built on import.
import enum
import functools
import json
import re
from collections.abc import Hashable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from jurybox.errors import ConfigError
from jurybox.providers.registry import (
    provider_names,
    unknown_provider,
    unmet_requirement,
)
from jurybox.thresholds import TrustThresholds

M = TypeVar("M", bound=BaseModel)


class Affects(enum.Enum):
    """What a judge setting changes; every ``JudgeConfig`` field carries one (``Annotated``).

    The response cache key, the manifest's resume check and the development loop's judge
    identity are all read from these markers (``answer_identity``, ``judgment_identity``), so a
    new setting is declared once and those three can never disagree.
    """

    ANSWER = "answer"  # another value may give another answer: cache, resume check, dev loop
    RECORDS = "records"  # copied into every record, not sent: the resume check only
    NOTHING = "nothing"  # scheduling, credentials, prices: free to change between sessions


# More calls in flight than this only exhausts memory and sockets (10,000,000 workers did).
MAX_CONCURRENCY = 1024


def _check_concurrency(value: int | None) -> int | None:
    if value is not None and value > MAX_CONCURRENCY:
        raise ValueError(
            f"concurrency {value} is above the limit of {MAX_CONCURRENCY} calls in flight per "
            "judge; each call holds a connection and its prompt in memory. Use a smaller number "
            "(rpm/tpm pace a judge without more workers)"
        )
    return value


Concurrency = Annotated[int, Field(gt=0), AfterValidator(_check_concurrency)]


class _Frozen(BaseModel):
    # allow_inf_nan=False: `temperature: .nan` would otherwise be sent to a vendor as bare NaN.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class FakeJudgeConfig(_Frozen):
    """Scripted behaviour of the ``fake`` provider (tests, docs, dry pipelines)."""

    behavior: Literal["schema", "replies", "first", "second", "longer", "random"] = Field(
        "schema",
        description="'schema': a valid answer drawn from the response schema, seeded by the "
        "prompt; 'replies': cycle through `replies`; 'first'/'second'/'longer'/'random': pairwise "
        "verdict rule, rubric scores follow the same preference.",
    )
    replies: tuple[str, ...] = Field((), description="Raw texts returned in turn ('replies').")
    latency_ms: float = Field(0.0, ge=0, description="Simulated latency per call.")
    error_rate: float = Field(0.0, ge=0, le=1, description="Share of calls that fail (transient).")
    seed: int = Field(0, description="Seed of the fake's own randomness.")


def _provider_choices(schema: dict[str, Any]) -> None:
    # Called when the schema is built, so providers registered at run time are listed too.
    schema["enum"] = list(provider_names())


_ANSWER, _RECORDS, _NOTHING = Affects.ANSWER, Affects.RECORDS, Affects.NOTHING


class JudgeConfig(_Frozen):
    """One judge: a provider, a model and its call parameters.

    Each field is ``Annotated`` with an ``Affects`` marker saying whether it changes the judge's
    answer; ``answer_identity`` reads them.
    """

    provider: Annotated[str, _ANSWER] = Field(
        description="Which adapter calls the model: anthropic, openai (the SDK; api.openai.com "
        "or any base_url), openai_compatible (aiohttp, for servers you run: vLLM, Ollama, "
        "llama.cpp server, LM Studio), google, local (the bundled model), fake (scripted), or a "
        "provider registered with `jurybox.providers.register_provider`.",
        json_schema_extra=_provider_choices,
    )
    model: Annotated[str | None, _ANSWER] = Field(
        None, description="Vendor model name; optional only for `local` and `fake`."
    )
    api_key_env: Annotated[str | None, _NOTHING] = Field(
        None,
        description="Name of the environment variable holding the key (read at call time). "
        "null for servers that need none.",
    )
    base_url: Annotated[str | None, _ANSWER] = Field(
        None,
        description="Endpoint override; required by `openai_compatible` (e.g. "
        "http://127.0.0.1:8000/v1).",
    )
    # Replicas of one model (a vLLM fleet) give the same answers: which one serves a call is
    # scheduling, so the list may change between sessions without splitting cache or resume.
    base_urls: Annotated[tuple[str, ...] | None, _NOTHING] = Field(
        None,
        min_length=1,
        description="`openai_compatible`: several replicas of one model (e.g. one per vLLM "
        "server), instead of base_url; each call goes to the one with the fewest calls in flight.",
    )
    temperature: Annotated[float | None, _ANSWER] = Field(
        0.0, description="null omits the parameter."
    )
    max_tokens: Annotated[int | None, _ANSWER] = Field(
        None, gt=0, description="Overrides pipeline.max_tokens."
    )
    max_tokens_param: Annotated[Literal["max_tokens", "max_completion_tokens"], _ANSWER] = Field(
        "max_tokens", description="OpenAI: newer models want max_completion_tokens."
    )
    structured_output: Annotated[bool, _ANSWER] = Field(
        True, description="Ask for native JSON-schema output."
    )
    concurrency: Annotated[Concurrency | None, _NOTHING] = Field(
        None, description="Calls in flight for this judge."
    )
    rpm: Annotated[float | None, _NOTHING] = Field(
        None,
        gt=0,
        description="Requests per minute limit (unset, with no tpm: learned from the provider).",
    )
    tpm: Annotated[float | None, _NOTHING] = Field(
        None,
        gt=0,
        description="Tokens per minute limit (unset, with no rpm: learned from the provider).",
    )
    timeout_s: Annotated[float, _NOTHING] = Field(120.0, gt=0, description="Per-call timeout.")
    price_input_per_mtok: Annotated[float | None, _NOTHING] = Field(
        None, ge=0, description="USD per 1M input tokens."
    )
    price_output_per_mtok: Annotated[float | None, _NOTHING] = Field(
        None, ge=0, description="USD per 1M output tokens."
    )
    price_cached_input_per_mtok: Annotated[float | None, _NOTHING] = Field(
        None, ge=0, description="USD per 1M cached input tokens (defaults to the input price)."
    )
    batch_price_input_per_mtok: Annotated[float | None, _NOTHING] = Field(
        None, ge=0, description="USD per 1M input tokens in a provider batch (default: half)."
    )
    batch_price_output_per_mtok: Annotated[float | None, _NOTHING] = Field(
        None, ge=0, description="USD per 1M output tokens in a provider batch (default: half)."
    )
    family: Annotated[str | None, _RECORDS] = Field(
        None, description="Model family, matched against dataset `authors` for self-preference."
    )
    model_path: Annotated[str | None, _ANSWER] = Field(
        None, description="`local`: any .gguf (default: bundled)."
    )
    # A shorter context truncates or rejects long prompts: it changes the answer.
    n_ctx: Annotated[int, _ANSWER] = Field(4096, gt=0, description="`local`: context window.")
    extra_body: Annotated[dict[str, Any] | None, _ANSWER] = Field(
        None, description="Extra vendor body fields."
    )
    # The scripted fake's behaviour decides its answers like a model's weights would.
    fake: Annotated[FakeJudgeConfig | None, _ANSWER] = Field(
        None, description="`fake` provider behaviour."
    )

    @field_validator("provider")
    @classmethod
    def _registered_provider(cls, provider: str) -> str:
        problem = unknown_provider(provider)
        if problem is not None:
            raise ValueError(problem)
        return provider

    @model_validator(mode="after")
    def _provider_requirements(self) -> "JudgeConfig":
        if self.base_urls is not None and (self.base_url or self.provider != "openai_compatible"):
            raise ValueError(
                "base_urls is for provider 'openai_compatible' and replaces base_url: give one"
            )
        # What each provider needs (a model, a base_url) is declared by its registry entry;
        # base_urls stands in for base_url.
        settings = {**dict(self), "base_url": self.base_url or self.base_urls}
        problem = unmet_requirement(self.provider, settings)
        if problem is not None:
            raise ValueError(problem)
        return self


def affects(field_name: str) -> Affects:
    """The ``Affects`` marker of one ``JudgeConfig`` field."""
    return _effects(JudgeConfig)[field_name]


@functools.cache  # per model class: the cache key asks on every call
def _effects(model: type[BaseModel]) -> dict[str, Affects]:
    effects: dict[str, Affects] = {}
    for name, info in model.model_fields.items():
        markers = [m for m in info.metadata if isinstance(m, Affects)]
        if len(markers) != 1:
            raise TypeError(f"JudgeConfig.{name} must carry exactly one Affects marker")
        effects[name] = markers[0]
    return effects


def _fields_affecting(*kinds: Affects) -> frozenset[str]:
    return frozenset(name for name, kind in _effects(JudgeConfig).items() if kind in kinds)


def answer_fields() -> frozenset[str]:
    """The judge settings that change its answer (cache key, dev-loop identity)."""
    return _fields_affecting(Affects.ANSWER)


def judgment_fields() -> frozenset[str]:
    """The judge settings a resumed run must keep: those that change the answer, and those
    copied into every record."""
    return _fields_affecting(Affects.ANSWER, Affects.RECORDS)


def answer_identity(judge: JudgeConfig) -> dict[str, Any]:
    """The judge's settings that change its answer, as JSON-ready values."""
    return judge.model_dump(mode="json", include=set(answer_fields()))


class TemplateConfig(_Frozen):
    """``task.template``: the two files of a custom prompt."""

    system: str = Field(description="Path to the system template (the same for every item).")
    user: str = Field(description="Path to the user template (prints every response once).")


class PairwiseExample(_Frozen):
    """``task.examples``: one worked pairwise example shown to the judge, with its answer."""

    id: str | None = Field(None, description="Where it came from (e.g. a train item's id).")
    question: str = Field(min_length=1, description="The example's question.")
    response_a: str = Field(description="The response shown as the example's Response A.")
    response_b: str = Field(description="The response shown as the example's Response B.")
    verdict: Literal["A", "B", "TIE"] = Field(description="The right verdict for the example.")
    reasoning: str | None = Field(None, description="Why it is right (shown when given).")


class TaskConfig(_Frozen):
    """What the judges are asked to do."""

    mode: Literal["rubric", "pairwise", "ranking", "criterion"] = "pairwise"
    rubric: str = Field("general", description="Built-in rubric name or path to a rubric YAML.")
    reference_guided: bool = Field(False, description="Show contexts and expected answer.")
    pairwise_with_rubric: bool = Field(
        False, description="Pairwise: score both responses per dimension, then prefer."
    )
    batch_size: int = Field(1, ge=1, le=20, description="Pairwise: pairs per prompt.")
    arms: tuple[str, ...] | None = Field(
        None, description="Arms to compare, first = control (default: the dataset's order)."
    )
    criteria: tuple[str, ...] = Field(
        (), description="Criterion mode: paths to criterion YAML files (one judge each)."
    )
    # The user's own prompt. Both change the answer (as a JudgeConfig field marked ANSWER does):
    # the cache key hashes the prompt they produce, and the manifest keeps the text they were
    # read as, which a resume must match (docs/prompts.md).
    instructions: Annotated[str | None, _ANSWER] = Field(
        None,
        description="Your evaluation criteria, put in the system prompt of every judge (fenced "
        "and labelled as the evaluation criteria): the text itself, or one line ending in .txt "
        "or .md naming a text file (relative to this config file).",
    )
    template: Annotated[TemplateConfig | None, _ANSWER] = Field(
        None,
        description="Your own prompt: {system: PATH, user: PATH}, sandboxed Jinja templates "
        "(relative to this config file) that replace jurybox's (docs/prompts.md).",
    )

    @field_validator("template")
    @classmethod
    def _template_judges_one_pair(
        cls, template: TemplateConfig | None, info: ValidationInfo
    ) -> TemplateConfig | None:
        if template is not None and info.data.get("batch_size", 1) > 1:
            raise ValueError(
                "a custom template judges one pair per call, and batch_size > 1 uses jurybox's "
                "batch prompt: set batch_size: 1 or drop the template"
            )
        return template

    # Worked examples change the answer as the instructions do; the cache key hashes the prompt
    # they produce and the resume check compares the task section, which holds them inline.
    examples: Annotated[tuple[PairwiseExample, ...], _ANSWER] = Field(
        (),
        description="Pairwise: worked examples with their right verdict, shown (fenced) in the "
        "system prompt before the evaluation criteria. `jurybox optimize` draws them from the "
        "train split only; criterion mode keeps its examples in the criterion file.",
    )

    @field_validator("examples")
    @classmethod
    def _examples_in_plain_pairwise(
        cls, examples: tuple[PairwiseExample, ...], info: ValidationInfo
    ) -> tuple[PairwiseExample, ...]:
        if not examples:
            return examples
        if info.data.get("mode") != "pairwise":
            raise ValueError(
                "task.examples are pairwise examples: criterion mode keeps its examples in the "
                "criterion file, rubric and ranking mode have none"
            )
        if info.data.get("batch_size", 1) > 1 or info.data.get("template") is not None:
            raise ValueError(
                "task.examples go into jurybox's own pairwise prompt: not with batch_size > 1 "
                "or a custom task.template (write the examples into your template)"
            )
        return examples


class PipelineConfig(_Frozen):
    """How the work is scheduled and retried."""

    random_seed: int = 42
    max_tokens: int = Field(4096, gt=0)
    concurrency: Concurrency = Field(16, description="Default calls in flight per judge.")
    position_bias_mode: Literal["both", "random", "fixed"] = Field(
        "both", description="both: every pair in both orders; random: seeded coin; fixed: as given."
    )
    test_retest_count: int = Field(10, ge=0, description="Items judged once more (retest).")
    max_answer_bytes: int = Field(
        1_000_000,
        gt=0,
        description="Longest judge answer kept (UTF-8 bytes); a longer one is cut before it is "
        "parsed, cached and stored, and its records say so (answer_cut_bytes).",
    )
    test_retest_query_ids: tuple[str, ...] | None = Field(
        None, description="Explicit retest ids (overrides test_retest_count)."
    )
    repeats: int = Field(1, ge=1)
    max_retries: int = Field(5, ge=0, le=5)
    retry_base_s: float = Field(1.0, gt=0, description="First backoff; doubles, with jitter.")
    retry_after_cap_s: float = Field(60.0, gt=0, description="Longest Retry-After honoured.")
    cache: bool = Field(True, description="SQLite response cache on/off.")
    cache_path: str | None = Field(None, description="Default: <output_dir>/cache.sqlite.")
    batch: bool = Field(
        False, description="Send judges with a batch API (openai, anthropic, google) as batches."
    )
    batch_fallback: Literal["batch", "sync"] = Field(
        "batch", description="Redo a batch's failed requests in a new batch, or synchronously."
    )
    batch_poll_s: float = Field(30.0, gt=0, description="First wait between batch status polls.")
    batch_poll_max_s: float = Field(
        600.0, gt=0, description="Longest wait between polls (the wait doubles up to it)."
    )


class ScoringConfig(_Frozen):
    request_confidence: bool = True
    confidence_scale: tuple[int, int] = (1, 5)


class DatasetConfig(_Frozen):
    """How to read the dataset: column mapping from the file's names to jurybox's."""

    columns: dict[str, str] = Field(
        default_factory=dict,
        description="jurybox field -> column in the file, e.g. {id: qid, question: prompt}.",
    )
    response_columns: dict[str, str] | None = Field(
        None, description="Flat files: arm -> column holding that arm's response."
    )


def _text_keys(values: Any) -> Any:
    """YAML reads ``1: old`` with an integer key; a label value is matched as text."""
    if isinstance(values, dict):
        return {
            str(key) if isinstance(key, int | float) and not isinstance(key, bool) else key: value
            for key, value in values.items()
        }
    return values


class LabelsConfig(_Frozen):
    """How to read human labels: the inline ``human`` fields of the dataset and the file
    ``paths.human_labels`` names. They never reach a judge (a resume ignores this section)."""

    columns: dict[str, str] = Field(
        default_factory=dict,
        description="Label field -> column in the labels file, e.g. {query_id: id, "
        "preferred_arm: winner}.",
    )
    values: Annotated[dict[str, str], BeforeValidator(_text_keys)] = Field(
        default_factory=dict,
        description="preferred_arm value in the labels -> the arm it means (or tie), e.g. "
        "{A: old, B: new, draw: tie}; inline labels and the labels file alike.",
    )


class PathsConfig(_Frozen):
    dataset: str
    output_dir: str = "results/run"
    human_labels: str | None = None
    prices: str | None = Field(
        None,
        description="A YAML price table (USD per 1M tokens per provider and model, the layout "
        "of jurybox's own prices.yaml) whose entries override and extend jurybox's; a judge's "
        "own price_* settings still win (docs/pricing.md).",
    )


class RunConfig(_Frozen):
    """The whole YAML file."""

    judges: dict[str, JudgeConfig] = Field(default_factory=dict)
    task: TaskConfig = Field(default_factory=TaskConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    labels: LabelsConfig = Field(default_factory=LabelsConfig)
    paths: PathsConfig
    trust: TrustThresholds = Field(
        default_factory=TrustThresholds,
        description="Thresholds of the trust verdict that `jurybox analyze --config` applies "
        "(accuracy, κ, failure rate, swap consistency, bias effects, retest); see "
        "`jurybox.thresholds.TrustThresholds`.",
    )
    source_path: Annotated[str | None, Field(exclude=True)] = None

    @field_validator("judges")
    @classmethod
    def _judges_present(cls, judges: dict[str, JudgeConfig]) -> dict[str, JudgeConfig]:
        if not judges:
            raise ValueError("at least one judge is required under `judges`")
        return judges

    def resolve(self, relative: str) -> Path:
        """Resolve a path from the config relative to the config file's folder."""
        path = Path(relative)
        if path.is_absolute() or self.source_path is None:
            return path
        return Path(self.source_path).parent / path


# YAML's own bombs: nesting that PyYAML's recursive composer turns into a RecursionError, and
# aliases (``*a``) that repeat an anchor's value so often that a few lines expand to billions of
# values once anything walks them (pydantic, the manifest's JSON, a request body).
MAX_YAML_DEPTH = 100
MAX_YAML_VALUES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (plain PyYAML keeps the
    last value silently, so a second ``temperature:`` further down would quietly win), nesting
    deeper than ``MAX_YAML_DEPTH`` levels, an alias inside its own anchor, and a document that,
    aliases expanded, holds more than ``MAX_YAML_VALUES`` values."""

    source = "<yaml>"
    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1  # checked before PyYAML's composer recurses one level further
        try:
            if self.depth > MAX_YAML_DEPTH:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
                message = f"nested deeper than {MAX_YAML_DEPTH} levels"
                raise ConfigError(message, path=self.source, line=line)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None and _expanded_size(node, {}, self.source) > MAX_YAML_VALUES:
            raise ConfigError(
                f"holds more than {MAX_YAML_VALUES:,} values once its aliases (*name) are expanded",
                path=self.source,
            )
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` may be overridden by the keys written beside it
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, Hashable) and key in seen:
                raise ConfigError(
                    f"duplicate key {key!r} (first on line {seen[key]}, again on line {line})",
                    path=self.source,
                    line=line,
                )
            if isinstance(key, Hashable):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node: yaml.Node, sizes: dict[int, int], source: str) -> int:
    """How many values ``node`` stands for, each alias counted as a copy of its anchor's value
    (once per node: ``sizes`` is keyed by ``id``, -1 while the node is being counted)."""
    known = sizes.get(id(node))
    if known == -1:
        line = node.start_mark.line + 1
        raise ConfigError("an alias (*name) inside its own anchor's value", path=source, line=line)
    if known is not None:
        return known
    sizes[id(node)] = -1
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    size = sizes[id(node)] = 1 + sum(_expanded_size(child, sizes, source) for child in children)
    return size


def load_yaml(text: str, source: str) -> Any:
    """``yaml.safe_load`` that raises ConfigError on a duplicate key, naming both lines, and on
    text that is not YAML, naming ``source`` and the line."""
    try:
        loader = _UniqueKeyLoader(text)  # its reader refuses characters YAML forbids
        loader.source = source
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(
            f"invalid YAML: {getattr(exc, 'problem', exc)}", path=source, line=line
        ) from None


def load_config(path: str | Path) -> RunConfig:
    """Read and validate a YAML config; errors name the file, line and key path."""
    data, text = read_yaml_mapping(path)
    return config_from_mapping(data, source=str(path), text=text)


def read_yaml_mapping(path: str | Path) -> tuple[dict[str, Any], str]:
    """A YAML file that holds a mapping, and its text (for ``validated``'s line numbers).

    Raises ConfigError naming the file (and line) when it is missing, not UTF-8, not YAML or
    not a mapping.
    """
    data, text = read_yaml_file(path)
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", path=str(path))
    return data, text


def read_yaml_file(path: str | Path) -> tuple[Any, str]:
    """Any YAML document in a file, and its text; ConfigError naming the file (and line) when
    it is missing, not UTF-8 or not YAML."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not valid UTF-8 ({exc.reason})", path=str(path)) from None
    return load_yaml(text, str(path)), text


def config_from_mapping(
    data: dict[str, Any], *, source: str = "<config>", text: str | None = None
) -> RunConfig:
    """Validate an already-parsed config mapping."""
    return validated(RunConfig, {**data, "source_path": source}, source=source, text=text)


def validated(model: type[M], data: Any, *, source: str, text: str | None = None) -> M:
    """``model.model_validate(data)``; a ConfigError naming ``source``, the line in ``text``
    and the key path of the first problem instead of a ValidationError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key_path = ".".join(str(p) for p in error["loc"])
        raise ConfigError(
            _describe(error), path=source, line=_line_of(text, error["loc"]), field=key_path
        ) from None


def _describe(error: Any) -> str:
    message = str(error["msg"])
    expected = (error.get("ctx") or {}).get("expected")
    if expected and "expected" not in message.lower():
        message += f" (allowed: {expected})"
    return message


def _line_of(text: str | None, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of the deepest key of ``loc`` that appears in the YAML text."""
    if text is None:
        return None
    lines = text.splitlines()
    start = 0
    found: int | None = None
    for part in loc:
        if not isinstance(part, str):
            continue
        # A key starts a line (block style) or follows "{" / "," (flow style); text inside a
        # value such as `base_url: 'http://x/ concurrency: 3'` must not match.
        key = re.compile(rf"(^\s*(-\s+)?|[{{,]\s*){re.escape(part)}\s*:")
        for number in range(start, len(lines)):
            if key.search(_without_quoted(lines[number])):
                found, start = number + 1, number + 1
                break
    return found


def _without_quoted(line: str) -> str:
    """The line with quoted strings blanked, so keys are only found outside values."""
    return re.sub(r"'[^']*'|\"[^\"]*\"", "''", line)


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of the YAML config (``jurybox schema``)."""
    schema = RunConfig.model_json_schema()
    schema["properties"].pop("source_path", None)
    return schema


def dump_config(config: RunConfig) -> str:
    """JSON snapshot of a config for the run manifest (contains env var names, never keys)."""
    return json.dumps(config.model_dump(mode="json"), indent=2, sort_keys=True)
