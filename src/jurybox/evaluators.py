"""Code-based evaluators: deterministic Pass/Fail checks for objective criteria.

A criterion of ``kind: code`` (``jurybox.rubrics.criteria``) names one check: a regex that must be
present or absent, required (or forbidden) keywords, length bounds, valid JSON / JSON Schema, or a
user's Python function ``module:function`` imported from the criterion file's folder (only
there: never from the current directory or ``sys.path``; see the README's trust model). They cost
nothing and give the same answer every time, so the devloop runs and reports them first.

They run through the ordinary pipeline (``jurybox.modes.code``) so that they leave the same
``JudgeRecord`` lines as a model judge; this module holds the checks themselves and the
fingerprint that stands for a check in the prompt hash and the response cache key.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from jsonschema.exceptions import best_match  # type: ignore[import-untyped]
from jsonschema.validators import validator_for  # type: ignore[import-untyped]

from jurybox.errors import ConfigError
from jurybox.records import Item
from jurybox.rubrics.criteria import (
    CodeCheck,
    JsonCheck,
    KeywordsCheck,
    LengthCheck,
    PythonCheck,
    RegexCheck,
)

Answer = Literal["Pass", "Fail"]
_FENCED_JSON = re.compile(r"^```(?:json)?[ \t]*\n(?P<body>.*?)\n```$", re.S | re.I)
UserFunction = Callable[..., Any]


@dataclass(frozen=True)
class CodeVerdict:
    """A check's answer and the reason, phrased like a judge's reasoning."""

    answer: Answer
    reasoning: str


# --- the checks ------------------------------------------------------------------------------


def _verdict(passed: bool, reason: str) -> CodeVerdict:
    return CodeVerdict("Pass" if passed else "Fail", reason)


def check_regex(check: RegexCheck, response: str) -> CodeVerdict:
    flags = re.IGNORECASE if check.ignore_case else 0
    match = re.search(check.pattern, response, flags)
    if check.expect == "present":
        if match is None:
            return _verdict(False, f"pattern {check.pattern!r} not found")
        return _verdict(True, f"pattern found: {match.group(0)!r} at character {match.start()}")
    if match is None:
        return _verdict(True, f"forbidden pattern {check.pattern!r} not found")
    return _verdict(False, f"forbidden pattern found: {match.group(0)!r} at {match.start()}")


def _keyword_found(keyword: str, text: str, case_sensitive: bool) -> bool:
    # Word boundaries only where the keyword itself starts/ends with a word character, so that
    # "API" does not match inside "rapid" but "C++" and "e-mail:" still match.
    start = r"(?<!\w)" if re.match(r"\w", keyword) else ""
    end = r"(?!\w)" if re.search(r"\w$", keyword) else ""
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.search(start + re.escape(keyword) + end, text, flags) is not None


def check_keywords(check: KeywordsCheck, response: str) -> CodeVerdict:
    found = [k for k in check.keywords if _keyword_found(k, response, check.case_sensitive)]
    missing = [k for k in check.keywords if k not in found]
    if check.require == "all":
        if missing:
            return _verdict(False, f"missing required keyword(s): {missing}")
        return _verdict(True, f"all required keywords present: {found}")
    if check.require == "any":
        if found:
            return _verdict(True, f"keyword(s) present: {found}")
        return _verdict(False, f"none of the keywords present: {list(check.keywords)}")
    if found:
        return _verdict(False, f"forbidden keyword(s) present: {found}")
    return _verdict(True, "no forbidden keyword present")


def check_length(check: LengthCheck, response: str) -> CodeVerdict:
    size = len(response.split()) if check.unit == "words" else len(response)
    low = check.min if check.min is not None else 0
    high = check.max if check.max is not None else float("inf")
    bounds = f"[{low}, {check.max if check.max is not None else 'inf'}] {check.unit}"
    if low <= size <= high:
        return _verdict(True, f"{size} {check.unit}, within {bounds}")
    return _verdict(False, f"{size} {check.unit}, outside {bounds}")


def check_json(check: JsonCheck, response: str, schema: Mapping[str, Any] | None) -> CodeVerdict:
    text = response.strip()
    fenced = _FENCED_JSON.match(text) if check.allow_fenced else None
    if fenced is not None:
        text = fenced["body"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _verdict(False, f"not valid JSON: {exc.msg} (line {exc.lineno}, col {exc.colno})")
    if schema is None:
        return _verdict(True, "valid JSON")
    validator = validator_for(schema)(schema)
    error = best_match(validator.iter_errors(data))
    if error is None:
        return _verdict(True, "valid JSON, matches the schema")
    where = error.json_path
    return _verdict(False, f"JSON does not match the schema at {where}: {error.message}")


def _load_schema(check: JsonCheck, base_dir: Path | None) -> dict[str, Any] | None:
    if check.json_schema_file is None:
        schema = check.json_schema
    else:
        path = _relative(check.json_schema_file, base_dir)
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read JSON Schema: {exc}", path=str(path)) from None
    if schema is not None:
        try:
            validator_for(schema).check_schema(schema)
        except Exception as exc:  # jsonschema raises SchemaError; anything else is as bad
            raise ConfigError(f"invalid JSON Schema: {exc}", field="check.json_schema") from None
    return schema


def _relative(path: str, base_dir: Path | None) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() or base_dir is None else base_dir / candidate


# --- Python callables ------------------------------------------------------------------------


_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _module_file(module: str, base_dir: Path | None) -> Path | None:
    """The file of ``module`` inside ``base_dir`` (the criterion's folder), or None.

    Trust rule: a check module comes only from the criterion's own folder, never from the
    current directory or ``sys.path``, so a file dropped where jurybox happens to run (or an
    installed package with the same name) cannot stand in for the check the criterion names.
    """
    if base_dir is None or not _MODULE_NAME.fullmatch(module):
        return None
    root = base_dir.resolve()
    stem = root.joinpath(*module.split("."))
    for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
        # A symlink leading out of the folder counts as outside it.
        if candidate.is_file() and candidate.resolve().is_relative_to(root):
            return candidate
    return None


def _import(module: str, base_dir: Path | None) -> tuple[ModuleType, Path | None]:
    """The module from ``base_dir`` only (loaded by path, without touching ``sys.path``)."""
    file = _module_file(module, base_dir)
    if file is None:
        where = f"in the criterion's folder {base_dir}" if base_dir is not None else "anywhere"
        raise ConfigError(
            f"cannot import {module!r}: no {module.replace('.', '/')}.py {where} (check modules "
            "are imported only from the criterion's folder, never from the current directory "
            "or sys.path)",
            field="check.function",
        )
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"jurybox_check_{digest}", file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {file}", field="check.function")
    loaded = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(loaded)
    except Exception as exc:  # the user's module failed at import: bad input, not a crash
        raise ConfigError(f"importing {file} failed: {exc!r}", field="check.function") from None
    return loaded, file


def load_function(check: PythonCheck, base_dir: Path | None) -> tuple[UserFunction, Path | None]:
    """The user's function and the file it came from (for the fingerprint)."""
    module, _, name = check.function.partition(":")
    loaded, file = _import(module, base_dir)
    function = getattr(loaded, name, None)
    if not callable(function):
        raise ConfigError(f"{module!r} has no function {name!r}", field="check.function")
    return function, file


def _call_user(function: UserFunction, item: Item, arm: str) -> Any:
    """Pass only the arguments the function names (response, question, item, metadata)."""
    offered = {
        "response": item.responses[arm],
        "question": item.question,
        "item": item,
        "metadata": dict(item.metadata),
    }
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return function(**offered)
    unknown = [name for name in parameters if name not in offered]
    if unknown:
        raise TypeError(f"check function takes unknown parameter(s) {unknown}; use {list(offered)}")
    return function(**{name: offered[name] for name in parameters})


def user_verdict(value: Any) -> CodeVerdict:
    """bool, "Pass"/"Fail", (verdict, reason) or {"answer", "reasoning"} -> CodeVerdict."""
    reason = "user check"
    if isinstance(value, Mapping):
        value, reason = value.get("answer", value.get("verdict")), value.get("reasoning", reason)
    elif isinstance(value, tuple) and len(value) == 2:
        value, reason = value
    if isinstance(value, bool):
        return _verdict(value, str(reason))
    if isinstance(value, str) and value.strip().capitalize() in ("Pass", "Fail"):
        answer: Answer = "Pass" if value.strip().capitalize() == "Pass" else "Fail"
        return CodeVerdict(answer, str(reason))
    raise TypeError(
        f"check function returned {value!r}; return True/False, 'Pass'/'Fail', "
        "(verdict, reason) or {'answer': ..., 'reasoning': ...}"
    )


# --- evaluation and fingerprint ---------------------------------------------------------------


class CodeEvaluator:
    """Runs checks; keeps user functions and schema files loaded once per folder."""

    def __init__(self) -> None:
        self._functions: dict[tuple[str, str], UserFunction] = {}
        self._schemas: dict[tuple[str, str], dict[str, Any] | None] = {}

    def evaluate(
        self, check: CodeCheck, item: Item, arm: str, base_dir: Path | None
    ) -> CodeVerdict:
        response = item.responses[arm]
        if isinstance(check, RegexCheck):
            return check_regex(check, response)
        if isinstance(check, KeywordsCheck):
            return check_keywords(check, response)
        if isinstance(check, LengthCheck):
            return check_length(check, response)
        key = (check.model_dump_json(), str(base_dir))
        if isinstance(check, JsonCheck):
            if key not in self._schemas:
                self._schemas[key] = _load_schema(check, base_dir)
            return check_json(check, response, self._schemas[key])
        if key not in self._functions:
            self._functions[key] = load_function(check, base_dir)[0]
        return user_verdict(_call_user(self._functions[key], item, arm))


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None


def _source_file(check: PythonCheck, base_dir: Path | None) -> Path | None:
    """The file a user function lives in, found without executing it."""
    module = check.function.partition(":")[0]
    return _module_file(module, base_dir)


def check_payload(check: CodeCheck, base_dir: Path | None) -> dict[str, Any]:
    """The check as JSON plus a hash of every file it reads, so editing the file shows up."""
    payload: dict[str, Any] = {"check": check.model_dump(mode="json")}
    if isinstance(check, PythonCheck):
        file = _source_file(check, base_dir)
        payload["source_sha256"] = _file_digest(file) if file is not None else None
    if isinstance(check, JsonCheck) and check.json_schema_file is not None:
        payload["schema_sha256"] = _file_digest(_relative(check.json_schema_file, base_dir))
    return payload


def check_fingerprint(check: CodeCheck, base_dir: Path | None) -> str:
    """sha256 of ``check_payload``: the code criterion's "prompt hash". Imports the function /
    reads the schema first, so a broken check fails here, before any run."""
    if isinstance(check, PythonCheck):
        load_function(check, base_dir)
    if isinstance(check, JsonCheck):
        _load_schema(check, base_dir)
    text = json.dumps(check_payload(check, base_dir), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
