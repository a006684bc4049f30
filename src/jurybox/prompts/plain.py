"""The bundled prompt templates rendered without jinja2 (start-up, issue #19).

Importing jinja2 and compiling the templates cost a run ~45 ms before its first request. The
bundled templates use a small part of Jinja: ``{{ expr }}``, ``if`` / ``else``, ``for`` (one name
or a tuple of names, ``loop.index``, ``loop.last``), ``with`` and ``include``; expressions are
names, ``.attr``, ``[index]``, string / integer literals, ``none`` / ``true`` / ``false``,
``not`` / ``and`` / ``or``, ``a if b else c``, ``is none`` / ``is not none`` and the ``join``
filter. This module parses exactly that, with the environment ``builders`` configures
(``trim_blocks``, ``lstrip_blocks``, ``keep_trailing_newline``, ``finalize``), and renders it as
Jinja would: attribute then item look-up (item then attribute for ``[]``), Python truth,
``str()`` of each finalized value.

``parse`` returns None for a template that uses anything else (whitespace control signs,
comments, other tags or operators, a name starting with ``_``): ``builders`` renders that one with
jinja2. A name or attribute that is missing raises ``Undefined``; ``builders`` then renders with
jinja2, so the error is jinja2's own. tests/test_prompt_plain.py renders every bundled template
both ways over a matrix of contexts and compares the texts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent / "templates"

Scope = dict[str, Any]
Expr = Callable[[Scope], Any]
Node = Callable[[Scope, list[str]], None]


class Undefined(Exception):
    """A name, attribute or item the context lacks (jinja2 renders it, and raises)."""


class _Unsupported(Exception):
    """Syntax this renderer does not handle: the template goes to jinja2."""


# --- lexing: text and tags ---------------------------------------------------------------------

_TAG_START = re.compile(r"\{\{|\{%|\{#")
_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>\d+)|(?P<str>\"[^\"\\]*\"|'[^'\\]*')"
    r"|(?P<op>[.\[\](),|=]))"
)
_BLANK = re.compile(r"[ \t]*")


class _Tag:
    # Plain classes, not dataclasses: creating a dataclass costs ~1 ms of import (start-up).
    __slots__ = ("kind", "tokens")

    def __init__(self, kind: str, tokens: tuple[str, ...]) -> None:
        self.kind = kind  # "var" or "block"
        self.tokens = tokens


def _tokens(source: str) -> tuple[str, ...]:
    """The tokens of a tag's inside; anything unexpected is unsupported."""
    out, pos = [], 0
    while source[pos:].strip():
        match = _TOKEN.match(source, pos)
        if match is None:
            raise _Unsupported(source)
        out.append(match.group(match.lastgroup or ""))
        pos = match.end()
    return tuple(out)


def _chunks(source: str) -> Iterator[str | _Tag]:
    """Text and tags, whitespace handled as trim_blocks + lstrip_blocks do."""
    pos, line_starting = 0, True
    while pos < len(source):
        start = _TAG_START.search(source, pos)
        if start is None:
            yield source[pos:]
            return
        text, opener = source[pos : start.start()], start.group()
        if opener == "{#" or source[start.end() : start.end() + 1] in "-+":
            raise _Unsupported("comment or whitespace control")
        closer = "}}" if opener == "{{" else "%}"
        end = source.find(closer, start.end())
        if end < 0:
            raise _Unsupported("unclosed tag")
        inside = source[start.end() : end]
        if inside.endswith("-") or any(char in inside for char in "{}%#"):
            raise _Unsupported("whitespace control, or a closer inside a string")
        if opener == "{%":
            line_start = text.rfind("\n") + 1
            if (line_start > 0 or line_starting) and _BLANK.fullmatch(text, line_start):
                text = text[:line_start]  # lstrip_blocks
        if text:
            yield text
        yield _Tag("var" if opener == "{{" else "block", _tokens(inside))
        pos = end + 2
        if opener == "{%" and source.startswith("\n", pos):
            pos += 1  # trim_blocks
            line_starting = True
        else:
            line_starting = False


# --- expressions -------------------------------------------------------------------------------


def _lookup_attr(value: Any, name: str) -> Any:
    try:
        return getattr(value, name)
    except AttributeError:
        try:
            return value[name]
        except (TypeError, LookupError):
            raise Undefined(name) from None


def _lookup_item(value: Any, key: Any) -> Any:
    try:
        return value[key]
    except (AttributeError, TypeError, LookupError):
        if isinstance(key, str):
            try:
                return getattr(value, key)
            except AttributeError:
                pass
        raise Undefined(repr(key)) from None


def _name(name: str) -> Expr:
    def read(scope: Scope) -> Any:
        try:
            return scope[name]
        except KeyError:
            raise Undefined(name) from None

    return read


_CONSTANTS = {"none": None, "None": None, "true": True, "True": True, "false": False}
_CONSTANTS["False"] = False
_KEYWORDS = {"if", "else", "not", "and", "or", "is", "in", "for", "with", "include"}


class _Parser:
    """Recursive descent over one tag's tokens; records the names it reads."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self.tokens, self.pos = tokens, 0
        self.names: set[str] = set()

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Unsupported(f"expected {expected!r}, got {token!r}")
        self.pos += 1
        return token

    def done(self) -> None:
        if self.peek() is not None:
            raise _Unsupported(f"unexpected {self.peek()!r}")

    def identifier(self) -> str:
        name = self.take()
        if not name.isidentifier() or name in _KEYWORDS or name.startswith("_"):
            raise _Unsupported(name)
        return name

    def expression(self) -> Expr:
        value = self.or_()
        if self.peek() != "if":
            return value
        self.take("if")
        test = self.or_()
        self.take("else")  # Jinja's `a if b` alone gives an undefined: not supported
        other = self.expression()
        return lambda scope: value(scope) if test(scope) else other(scope)

    def or_(self) -> Expr:
        left = self.and_()
        while self.peek() == "or":
            self.take()
            left = _or(left, self.and_())
        return left

    def and_(self) -> Expr:
        left = self.not_()
        while self.peek() == "and":
            self.take()
            left = _and(left, self.not_())
        return left

    def not_(self) -> Expr:
        if self.peek() == "not":
            self.take()
            inner = self.not_()
            return lambda scope: not inner(scope)
        return self.test()

    def test(self) -> Expr:
        value = self.filtered()
        if self.peek() != "is":
            return value
        self.take("is")
        negate = self.peek() == "not"
        if negate:
            self.take()
        self.take("none")
        if negate:
            return lambda scope: value(scope) is not None
        return lambda scope: value(scope) is None

    def filtered(self) -> Expr:
        value = self.postfix()
        while self.peek() == "|":
            self.take()
            self.take("join")
            self.take("(")
            separator = self.literal_string()
            self.take(")")
            value = _join(value, separator)
        return value

    def literal_string(self) -> str:
        token = self.take()
        if token[:1] not in "\"'":
            raise _Unsupported(token)
        return token[1:-1]

    def postfix(self) -> Expr:
        value = self.primary()
        while self.peek() in (".", "["):
            if self.take() == ".":
                value = _attr(value, self.identifier())
            else:
                key = self.expression()
                self.take("]")
                value = _item(value, key)
        return value

    def primary(self) -> Expr:
        token = self.peek()
        if token is None:
            raise _Unsupported("missing expression")
        if token == "(":
            self.take()
            inner = self.expression()
            self.take(")")
            return inner
        if token[:1] in "\"'":
            text = self.literal_string()
            return lambda scope: text
        if token.isdigit():
            number = int(self.take())
            return lambda scope: number
        if token in _CONSTANTS:
            constant = _CONSTANTS[self.take()]
            return lambda scope: constant
        name = self.identifier()
        self.names.add(name)
        return _name(name)


def _or(left: Expr, right: Expr) -> Expr:
    return lambda scope: left(scope) or right(scope)


def _and(left: Expr, right: Expr) -> Expr:
    return lambda scope: left(scope) and right(scope)


def _join(value: Expr, separator: str) -> Expr:
    return lambda scope: separator.join(map(str, value(scope)))


def _attr(value: Expr, name: str) -> Expr:
    return lambda scope: _lookup_attr(value(scope), name)


def _item(value: Expr, key: Expr) -> Expr:
    return lambda scope: _lookup_item(value(scope), key(scope))


# --- statements ----------------------------------------------------------------------------------


class Template:
    """A parsed template: ``render(context)`` gives Jinja's text (before ``builders.render``)."""

    __slots__ = ("body", "free", "includes", "name")

    def __init__(
        self, name: str, body: Node, free: frozenset[str], includes: tuple[str, ...]
    ) -> None:
        self.name, self.body = name, body
        self.free = free  # names read and not bound inside (Jinja's undeclared variables)
        self.includes = includes

    def render(self, context: Mapping[str, Any]) -> str:
        out: list[str] = []
        self.body(dict(context), out)
        return "".join(out)


class _Loop:
    """Jinja's ``loop`` as these templates read it."""

    __slots__ = ("index", "last")

    def __init__(self, index: int, last: bool) -> None:
        self.index, self.last = index, last


class _Builder:
    """Turns the chunks of one template into nested render functions."""

    def __init__(
        self,
        chunks: list[str | _Tag],
        finalize: Callable[[Any], Any],
        load: Callable[[str], Template],
    ) -> None:
        self.chunks, self.pos = chunks, 0
        self.finalize, self.load = finalize, load
        self.free: set[str] = set()
        self.includes: list[str] = []

    def block(self, bound: frozenset[str], ends: tuple[str, ...]) -> tuple[Node, str | None]:
        """Nodes up to one of the ``ends`` tags (its name returned), or to the end of source."""
        nodes: list[Node] = []
        while self.pos < len(self.chunks):
            chunk = self.chunks[self.pos]
            self.pos += 1
            if isinstance(chunk, str):
                nodes.append(_text(chunk))
            elif chunk.kind == "var":
                nodes.append(self.output(chunk.tokens, bound))
            elif chunk.tokens[:1] and chunk.tokens[0] in ends:
                parser = _Parser(chunk.tokens)
                parser.take()
                parser.done()
                return _sequence(nodes), chunk.tokens[0]
            else:
                nodes.append(self.statement(chunk.tokens, bound))
        if ends:
            raise _Unsupported(f"missing {ends}")
        return _sequence(nodes), None

    def expression(self, parser: _Parser, bound: frozenset[str]) -> Expr:
        value = parser.expression()
        self.free.update(parser.names - bound)
        parser.names = set()
        return value

    def output(self, tokens: tuple[str, ...], bound: frozenset[str]) -> Node:
        parser = _Parser(tokens)
        value = self.expression(parser, bound)
        parser.done()
        finalize = self.finalize

        def write(scope: Scope, out: list[str]) -> None:
            out.append(str(finalize(value(scope))))

        return write

    def statement(self, tokens: tuple[str, ...], bound: frozenset[str]) -> Node:
        parser = _Parser(tokens)
        keyword = parser.take()
        if keyword == "if":
            return self.if_(parser, bound)
        if keyword == "for":
            return self.for_(parser, bound)
        if keyword == "with":
            return self.with_(parser, bound)
        if keyword == "include":
            name = parser.literal_string()
            parser.done()
            included = self.load(name)
            self.includes.append(name)
            return included.body  # Jinja passes the whole context, locals included
        raise _Unsupported(keyword)

    def if_(self, parser: _Parser, bound: frozenset[str]) -> Node:
        test = self.expression(parser, bound)
        parser.done()
        then, end = self.block(bound, ("else", "endif"))
        otherwise: Node = _sequence([])
        if end == "else":
            otherwise, _ = self.block(bound, ("endif",))

        def branch(scope: Scope, out: list[str]) -> None:
            (then if test(scope) else otherwise)(scope, out)

        return branch

    def for_(self, parser: _Parser, bound: frozenset[str]) -> Node:
        targets = [parser.identifier()]
        while parser.peek() == ",":
            parser.take()
            targets.append(parser.identifier())
        parser.take("in")
        items = self.expression(parser, bound)
        parser.done()
        body, _ = self.block(bound | {*targets, "loop"}, ("endfor",))
        single = targets[0] if len(targets) == 1 else None

        def loop(scope: Scope, out: list[str]) -> None:
            values = list(items(scope))
            inner = dict(scope)
            for number, value in enumerate(values, start=1):
                if single is not None:
                    inner[single] = value
                else:
                    unpacked = tuple(value)
                    if len(unpacked) != len(targets):
                        raise Undefined("unpacking")  # jinja2 raises its own error
                    inner.update(zip(targets, unpacked, strict=True))
                inner["loop"] = _Loop(number, number == len(values))
                body(inner, out)

        return loop

    def with_(self, parser: _Parser, bound: frozenset[str]) -> Node:
        assignments: list[tuple[str, Expr]] = []
        while True:
            target = parser.identifier()
            parser.take("=")
            assignments.append((target, self.expression(parser, bound)))
            if parser.peek() != ",":
                break
            parser.take()
        parser.done()
        body, _ = self.block(bound | {target for target, _ in assignments}, ("endwith",))

        def scoped(scope: Scope, out: list[str]) -> None:
            values = {target: value(scope) for target, value in assignments}
            body({**scope, **values}, out)

        return scoped


def _text(text: str) -> Node:
    return lambda scope, out: out.append(text)


def _sequence(nodes: list[Node]) -> Node:
    if len(nodes) == 1:
        return nodes[0]

    def run(scope: Scope, out: list[str]) -> None:
        for node in nodes:
            node(scope, out)

    return run


def parse(
    name: str,
    finalize: Callable[[Any], Any],
    load: Callable[[str], Template | None],
    folder: Path = TEMPLATES,
) -> Template | None:
    """The template ``name`` in ``folder`` parsed, or None when it (or a template it includes)
    uses syntax this module does not render. ``load`` gives an included template (None:
    unsupported)."""

    def included(other: str) -> Template:
        template = load(other)
        if template is None:
            raise _Unsupported(f"include {other}")
        return template

    try:
        source = (folder / name).read_text(encoding="utf-8")
        if "\r" in source:
            raise _Unsupported("carriage return")  # Jinja normalises newlines; not done here
        builder = _Builder(list(_chunks(source)), finalize, included)
        body, _ = builder.block(frozenset(), ())
    except (_Unsupported, OSError):
        return None
    return Template(name, body, frozenset(builder.free), tuple(builder.includes))
