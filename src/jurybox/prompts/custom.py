"""The user's own prompt: ``task.instructions`` and ``task.template`` (docs/prompts.md).

``PromptSources`` holds the text of both as read when the run started; the manifest keeps it, so
``jurybox show`` rebuilds a judgment's prompt from what was run, not from the files as they are
now. A custom template is rendered by a ``SandboxedEnvironment`` of its own, where a response is
a ``ResponseSlot``: an object that prints as its fenced block and as nothing else. Converting it
to a string, slicing, joining, filtering or looking inside it raises, and the statements that
capture rendered output as a string (``{% set %}...{% endset %}``, ``{% filter %}``, macros, call
blocks, ``{% block %}``, recursive loops, includes and imports) are refused when the template is
loaded. So no template can print any part of a response outside jurybox's fence; each render
also checks that every response was printed exactly once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import BaseLoader, StrictUndefined, Template, TemplateSyntaxError, nodes
from jinja2.sandbox import SandboxedEnvironment

from jurybox.errors import ConfigError
from jurybox.prompts.fencing import printed

if TYPE_CHECKING:
    from jurybox.config import RunConfig

# What a value of ``task.instructions`` that names a file ends with (anything else is the text).
INSTRUCTION_FILE_SUFFIXES = (".txt", ".md")
# Statements a template may use; every other one could capture a response's fenced block as a
# string (set blocks, filter blocks, macros, call blocks, blocks via ``self``) or read a file.
_ALLOWED = (nodes.Template, nodes.Output, nodes.If, nodes.For, nodes.With, nodes.Assign)
# Filters and globals whose output is random: a prompt must be rebuilt exactly (``show``).
_RANDOM = ("random", "shuffle", "lipsum")
# How every prompt template is read and rendered, the packaged ones and a run's own: undefined
# names are errors, output is not HTML-escaped (it is a prompt), a block tag's line leaves no
# blank line, and the templates never change under a running process (no reload checks).
TEMPLATE_OPTIONS: dict[str, Any] = {
    "undefined": StrictUndefined,
    "autoescape": False,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "auto_reload": False,
}


@dataclass(frozen=True, slots=True)
class TemplateFile:
    """One template file: the path it was read from (for messages) and its text."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class PromptSources:
    """The run's own prompt text: instructions and/or a whole template (system and user)."""

    instructions: str | None = None
    system: TemplateFile | None = None
    user: TemplateFile | None = None

    @property
    def has_template(self) -> bool:
        return self.system is not None and self.user is not None

    def manifest_entry(self) -> dict[str, Any]:
        """What ``manifest.json`` keeps under ``prompt``: the text as run, and where it was."""
        entry: dict[str, Any] = {"instructions": self.instructions}
        if self.system is not None and self.user is not None:
            entry["template"] = {
                name: {"path": part.path, "text": part.text}
                for name, part in (("system", self.system), ("user", self.user))
            }
        return entry

    @classmethod
    def from_manifest(cls, entry: Mapping[str, Any]) -> PromptSources:
        """The inverse of ``manifest_entry``; ValueError on an entry it did not write."""
        instructions = entry.get("instructions")
        template = entry.get("template")
        if instructions is not None and not isinstance(instructions, str):
            raise ValueError("manifest 'prompt.instructions' is not text")
        if template is None:
            return cls(instructions)
        try:
            files = [TemplateFile(str(template[k]["path"]), template[k]["text"]) for k in _PARTS]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"manifest 'prompt.template' is incomplete ({exc})") from None
        if not all(isinstance(file.text, str) for file in files):
            raise ValueError("manifest 'prompt.template' holds a template that is not text")
        return cls(instructions, *files)


_PARTS = ("system", "user")


# --- reading the config's files ------------------------------------------------------------------


def load_prompt_sources(config: RunConfig) -> PromptSources | None:
    """The text of ``task.instructions`` and ``task.template`` (None when the config has
    neither), each template checked (syntax, statements allowed). Raises ConfigError naming the
    file and line, or the config field."""
    task = config.task
    if task.instructions is None and task.template is None:
        return None
    instructions = _instructions_text(config) if task.instructions is not None else None
    if task.template is None:
        return PromptSources(instructions)
    files = []
    for part in _PARTS:
        path = config.resolve(getattr(task.template, part))
        text = _read_text(path, f"task.template.{part}")
        files.append(TemplateFile(str(path), text))
    sources = PromptSources(instructions, *files)
    compiled_templates(sources)  # refuse a bad template now, before any item is read
    return sources


def _instructions_text(config: RunConfig) -> str:
    value = config.task.instructions
    assert value is not None
    if is_instructions_file(value):
        value = _read_text(config.resolve(value), "task.instructions")
    if not value.strip():
        field = "task.instructions"
        raise ConfigError("the instructions are empty", path=config.source_path, field=field)
    return value


def is_instructions_file(value: str) -> bool:
    """Whether a ``task.instructions`` value names a file: one line ending in .txt or .md."""
    return "\n" not in value and value.strip().lower().endswith(INSTRUCTION_FILE_SUFFIXES)


def _read_text(path: Path, field: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path=str(path), field=field) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not valid UTF-8 ({exc.reason})", path=str(path), field=field) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it ({exc.strerror})", path=str(path), field=field) from None


# --- the environment and its checks ---------------------------------------------------------------


class TemplateMisuse(Exception):
    """A template used a response other than by printing it whole."""


class ResponseSlot:
    """One response as a custom template sees it: ``{{ response_a }}`` prints its fenced block
    (counted: twice is an error); anything else done with it raises ``TemplateMisuse``."""

    __slots__ = ("_fenced", "_label", "_printed")

    def __init__(self, fenced: str, label: str) -> None:
        self._fenced = fenced
        self._label = label
        self._printed = 0

    def __str__(self) -> str:
        name = self._label.lower().replace(" ", "_")  # Response A -> response_a
        raise TemplateMisuse(
            f"{self._label} can only be printed whole, on its own ({{{{ {name} }}}}): jurybox "
            "prints it inside its fence; it cannot be turned into text, sliced, joined or "
            "filtered"
        )

    __repr__ = __str__

    def __bool__(self) -> bool:
        return True

    @property
    def label(self) -> str:
        return self._label

    @property
    def times_printed(self) -> int:
        return self._printed

    def printed(self) -> str:
        self._printed += 1
        if self._printed > 1:
            raise TemplateMisuse(
                f"{self._label} is printed a second time: print each response once"
            )
        return self._fenced


def _finalize(value: Any) -> Any:
    return value.printed() if isinstance(value, ResponseSlot) else printed(value)


class _Loader(BaseLoader):
    """The two templates of one ``PromptSources``, by part name, with their own file paths as
    file names (so errors and tracebacks name the file and its line)."""

    def __init__(self, files: Mapping[str, TemplateFile]) -> None:
        self.files = files

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
        file = self.files[template]
        return file.text, file.path, lambda: True


class _Environment(SandboxedEnvironment):
    """Nothing about a response slot is an attribute a template may read."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, ResponseSlot):
            return False
        return bool(super().is_safe_attribute(obj, attr, value))


@functools.lru_cache(maxsize=32)  # a run has one pair; `show` and tests open a few
def compiled_templates(sources: PromptSources) -> dict[str, Template]:
    """The system and user templates, parsed and checked; ConfigError naming file and line."""
    assert sources.system is not None and sources.user is not None
    files = {"system": sources.system, "user": sources.user}
    environment = _Environment(loader=_Loader(files), finalize=_finalize, **TEMPLATE_OPTIONS)
    for name in _RANDOM:
        environment.filters.pop(name, None)
        environment.globals.pop(name, None)
    templates = {}
    for part, file in files.items():
        try:
            _check_statements(environment.parse(file.text), file)
            templates[part] = environment.get_template(part)
        except TemplateSyntaxError as exc:
            raise _template_error(file, part, exc.message or str(exc), exc.lineno) from None
    return templates


def _check_statements(tree: nodes.Template, file: TemplateFile) -> None:
    for node in tree.find_all(nodes.Stmt):
        recursive = isinstance(node, nodes.For) and node.recursive
        if not isinstance(node, _ALLOWED) or recursive:
            kind = "a recursive for loop" if recursive else _statement_name(node)
            raise TemplateSyntaxError(
                f"{kind} is not allowed in a jurybox template: it could hold a response's "
                "text as a string outside its fence (allowed: {{ ... }}, if, for, with, and "
                "set with '=')",
                node.lineno,
                filename=file.path,
            )


def _statement_name(node: nodes.Node) -> str:
    names: dict[type[nodes.Node], str] = {
        nodes.AssignBlock: "{% set %}...{% endset %}",
        nodes.FilterBlock: "{% filter %}",
        nodes.Macro: "{% macro %}",
        nodes.CallBlock: "{% call %}",
        nodes.Block: "{% block %}",
        nodes.Include: "{% include %}",
        nodes.Import: "{% import %}",
        nodes.FromImport: "{% from ... import %}",
        nodes.Extends: "{% extends %}",
    }
    return names.get(type(node), type(node).__name__)


def _template_error(file: TemplateFile, part: str, message: str, line: int | None) -> ConfigError:
    return ConfigError(message, path=file.path, line=line, field=f"task.template.{part}")


def _line_in(exc: BaseException, path: str) -> int | None:
    """The template line an exception raised from rendering points at: jinja rewrites the
    traceback so that each template frame carries the template's own file name and line."""
    line = None
    trace = exc.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == path:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


# --- rendering ------------------------------------------------------------------------------------


def response_names(responses: Sequence[Any]) -> dict[str, Any]:
    """How templates name the responses shown, in presentation order: ``responses`` (all),
    ``response_a``, ``response_b`` ... (by position letter), and ``response`` when alone."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    names: dict[str, Any] = {"responses": list(responses)}
    names.update({f"response_{letters[i]}": value for i, value in enumerate(responses)})
    if len(responses) == 1:
        names["response"] = responses[0]
    return names


def render_custom(
    sources: PromptSources,
    context: Mapping[str, Any],
    responses: Sequence[tuple[str, str]],
    fields: Sequence[str],
) -> tuple[str, str]:
    """``(system, user)`` from the custom template; ``responses`` are (label, fenced block) in
    presentation order, ``fields`` the answer's field names (the schema's properties). The
    answer format (``context["answer_format"]``) is appended to the system part unless the
    template states every field. Raises ConfigError naming the template file and line."""
    templates = compiled_templates(sources)
    assert sources.system is not None and sources.user is not None
    system = _render(templates["system"], sources.system, "system", context)
    slots = [ResponseSlot(fenced, label) for label, fenced in responses]
    user = _render(templates["user"], sources.user, "user", {**context, **response_names(slots)})
    missing = [slot.label for slot in slots if slot.times_printed == 0]
    if missing:
        line = _last_response_line(sources.user.text)
        verb = "is" if len(missing) == 1 else "are"
        message = f"{' and '.join(missing)} {verb} never printed: print every response once"
        raise _template_error(sources.user, "user", message + _names_hint(len(slots)), line)
    instructions = context.get("instructions")
    if instructions and instructions not in system + user:
        message = (
            "task.instructions is set but the template never prints {{ instructions }} (the "
            "evaluation criteria, fenced by jurybox)"
        )
        raise _template_error(sources.system, "system", message, None)
    return _with_answer_format(system, fields, context, sources.system), user


def _render(template: Template, file: TemplateFile, part: str, context: Mapping[str, Any]) -> str:
    try:
        return template.render(**context)
    except Exception as exc:  # the template is user input: any failure in it is its error
        message = str(exc) or type(exc).__name__
        if "ResponseSlot" in message:
            message += ": a response can only be printed whole, on its own ({{ response_a }})"
        elif part == "system" and "response" in message and "undefined" in message:
            message += " (the system part is the same for every item: responses go in the user "
            message += "template)"
        raise _template_error(file, part, message, _line_in(exc, file.path)) from None


def _names_hint(count: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"[:count]
    named = ", ".join(f"{{{{ response_{letter} }}}}" for letter in letters)
    return f" ({named}, or each of {{{{ responses }}}} in a for loop)"


def _last_response_line(text: str) -> int:
    """Where responses are printed (the last such line), else the template's last line: where
    the missing one belongs."""
    lines = text.splitlines() or [""]
    found = [n for n, line in enumerate(lines, start=1) if "response" in line and "{{" in line]
    return found[-1] if found else len(lines)


def _with_answer_format(
    system: str, fields: Sequence[str], context: Mapping[str, Any], file: TemplateFile
) -> str:
    """The system part, with jurybox's answer format appended unless it states every field of
    the answer in double quotes (the system part is the same for every item, so this is
    decided once per run, not per item)."""
    stated = [field for field in fields if f'"{field}"' in system]
    if len(stated) == len(fields):
        return system
    if stated:
        missing = ", ".join(f'"{field}"' for field in fields if field not in stated)
        message = (
            f"the template states some of the answer's fields but not {missing}: print "
            "{{ answer_format }}, or state none of them and jurybox appends its answer format"
        )
        line = _line_holding(file.text, f'"{stated[0]}"')
        raise _template_error(file, "system", message, line)
    return system.rstrip("\n") + "\n\n" + str(context["answer_format"])


def _line_holding(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None
