"""Fencing of untrusted text: candidate responses sit between tags they cannot close.

Every tag the prompts use (``untrusted_response``, ``question``, ``reference_context``,
``expected_answer``, ``example...``, ``evaluation_criteria``) is defanged wherever something in
variable text could be read as one of them, opening or closing: its opener is shown in square
brackets (``</question>`` becomes ``[<]/question>``), so the judge still sees what the text
said, but nothing inside a response can end its fence early or open a fake section. What
counts as a tag:

- an opener: ``<``, a character that reads as it (``＜`` U+FF1C, ``﹤`` U+FE64, ``‹`` U+2039,
  ``❮``, ``❬``, ``〈``, ``〈``, ``⟨``, ``˂``, ``ᐸ``), or any of these written as an HTML character
  reference (``&lt;``, ``&LT``, ``&#60;``, ``&#x3c;``, ``&#65308;``, ``&lsaquo;`` ...), a
  percent-escape of its UTF-8 (``%3C``, ``%EF%BC%9C``) or a backslash escape (``\\u003c``,
  ``\\x3c``);
- then, optionally, ``/`` or a character or escape that reads as it (``／``, ``⁄``, ``∕``,
  ``&#47;``, ``&sol;``, ``%2F``, ``\\/`` ...);
- then the start of a tag name, in any case, each letter also as a compatibility form that
  Unicode's NFKC folds to it (full-width ``ｕ``, mathematical ``𝐮``, circled ``ⓤ`` ...) or as an
  HTML character reference or percent-escape of it; ``_`` may also be ``-``, a look-alike, or
  left out;
- with any invisible characters between them: white space (also as ``&nbsp;``, ``&#32;``,
  ``%20``), format characters (zero-width space and joiners, bidi marks, soft hyphen, BOM, tag
  characters) and combining marks of the Basic Multilingual Plane (accents, variation
  selectors).

Text with none of these is returned as it is, so ordinary text (``a < b``, ``<b>bold</b>``) and
its prompt hash do not change. Time is linear in the text (regular expressions with possessive
repetition only; see "finding them" below): 50 MB of ``<`` take about a second on a loaded
2-core machine, text built to keep the pattern busy at every opener (``<u<u...``) 0.1-0.4 s a
megabyte (``bench/fencing.py``); the code before took 5-18 s a megabyte.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable

FENCE_TAG = "untrusted_response"
# Prefixes of every tag the templates use (``example`` covers example_input, example_response;
# ``evaluation`` the evaluation_criteria of ``task.instructions``).
_TAG_NAMES = (
    "untrusted", "question", "reference_context", "expected_answer", "example", "evaluation",
)  # fmt: skip
# "<" and the characters that read as it: Unicode's confusables of "<" and the angle brackets.
_LESS_THAN = "<\uff1c\ufe64\u2039\u276e\u276c\u2329\u3008\u27e8\u02c2\u1438"
_LESS_THAN_NAMES = ("lt", "lsaquo", "lang", "LeftAngleBracket")  # HTML's names for them
_SLASHES = "/\uff0f\u2044\u2215\u29f8\u2571"
_SEPARATORS = "_-\u2010\u2011\u2012\u2013"  # what may stand for the "_" of a tag name
# Letters that render as nothing but are not format characters (Unicode category Cf).
_INVISIBLE_LETTERS = "\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0"
# Where compatibility forms of Latin letters and punctuation live (letterlike symbols, number
# forms, enclosed and full-width forms, mathematical alphanumerics, modifier letters ...); NFKC
# of every other code point is never one ASCII character of a tag (tests/test_fencing.py).
_COMPAT_RANGES = (
    (0xAA, 0xBB), (0x17F, 0x180), (0x2B0, 0x300), (0x1D00, 0x1DC0), (0x2070, 0x20A0),
    (0x2100, 0x2190), (0x2460, 0x2500), (0x2C7C, 0x2C7E), (0xA7F0, 0xA800), (0xFE00, 0xFFF0),
    (0x10780, 0x107C0), (0x1D400, 0x1D800), (0x1F100, 0x1F200),
)  # fmt: skip
# Where the invisible characters are looked up: the Basic Multilingual Plane but for CJK
# ideographs, Hangul syllables, surrogates and private use (none of them a format character or
# a combining mark), and plane 14's tag characters and variation selectors. The combining marks
# of historic scripts in plane 1 are left out: each range beyond the BMP costs every character
# class check a comparison (the BMP is one table lookup), and this class is checked at every
# letter of a possible tag.
_MARK_RANGES: tuple[tuple[int, int], ...] = (
    (0, 0x3400), (0xA000, 0xAC00), (0xD7A4, 0xD800), (0xF900, 0x10000), (0xE0000, 0xE1000),
)  # fmt: skip
_FORMAT_BEYOND_BMP: tuple[tuple[int, int], ...] = (  # format characters (Cf) in plane 1
    (0x110BD, 0x110BE), (0x110CD, 0x110CE), (0x13430, 0x13440), (0x1BCA0, 0x1BCA4),
    (0x1D173, 0x1D17B),
)  # fmt: skip
# A text holding none of these cannot hold an opener (the first character of each form).
_STARTS = frozenset(_LESS_THAN + "&%\\")
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.isspace() holds in ASCII
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,.-]*$")


def neutralise(text: str) -> str:
    """Defang anything in ``text`` that could be read as one of the prompt's own tags (see the
    module docstring): its opener is put in square brackets. Idempotent."""
    if not _may_hold_tag(text):
        return text  # C scans only: ordinary text is returned as it is
    return _tag_like(text.isascii()).sub(r"[\g<opener>]", text)


def fence_untrusted(text: str, label: str) -> str:
    """Wrap ``text`` as untrusted content labelled ``label`` (e.g. "Response A").

    The result holds exactly one opening and one closing fence tag, whatever ``text`` contains.
    """
    return f'<{FENCE_TAG} label="{_checked_label(label)}">\n{neutralise(text)}\n</{FENCE_TAG}>'


def _checked_label(label: str) -> str:
    """``label``, or ValueError when it does not match ``_LABEL``."""
    if not _LABEL.match(label):
        raise ValueError(f"fence label {label!r} must match {_LABEL.pattern}")
    return label


class Fenced(str):
    """A string already fenced by ``fence_untrusted``; templates emit it as is."""

    __slots__ = ()


def printed(value: object) -> object:
    """What a template prints for a value (jinja's ``finalize``): a ``Fenced`` block as it is,
    any other text neutralised, anything else unchanged."""
    if isinstance(value, Fenced):
        return str(value)
    if isinstance(value, str):
        return neutralise(value)
    return value


# --- finding them --------------------------------------------------------------------------------
# Two steps, both linear. ``_may_hold_tag`` rules most texts out with C scans and patterns that
# are cheap to build: those where no opener is directly followed by white space, a slash, an
# escape, the first letter of a tag or any non-ASCII character. Only a text it cannot rule out
# is scanned with ``_tag_like``: for ASCII text a pattern without the Unicode classes (nothing
# invisible, no look-alike can be in it), for other text the full one, whose classes take
# ``unicodedata`` a moment to build (~0.1 s, once per process). No pattern uses IGNORECASE (a
# class per letter instead), and alternatives open with a character or a class, so a branch
# that cannot match is skipped at its first character.

_FOLLOWERS = "/&%\\ \t\r\n\f\vuUqQrReE"  # what may follow "<" in a tag, in ASCII text
_ASCII_OPENER = re.compile(f"<[{re.escape(_FOLLOWERS)}]")
# What may follow an opener in a tag: ASCII followers and any non-ASCII character.
_FOLLOWING = f"(?=[{re.escape(_FOLLOWERS)}\x80-\U0010ffff])"


def _may_hold_tag(text: str) -> bool:
    if text.isascii():  # O(1): no look-alike, no invisible or compatibility character in it
        if "<" in text and _ASCII_OPENER.search(text):
            return True
        return any(char in text for char in "&%\\") and _opener(True).search(text) is not None
    return any(char in text for char in _STARTS) and _opener(False).search(text) is not None


@functools.cache
def _opener(ascii_only: bool) -> re.Pattern[str]:
    """An opener that a follower follows (as ``_FOLLOWING``); ``ascii_only``: encoded only."""
    chars = "" if ascii_only else _LESS_THAN
    return re.compile(_spelled(chars, _LESS_THAN_NAMES, encoded=_LESS_THAN) + _FOLLOWING)


@functools.cache
def _tag_like(ascii_only: bool) -> re.Pattern[str]:
    """An opener (group ``opener``) that invisible characters, an optional slash and the start
    of a tag name follow; every repetition possessive, so no position is scanned twice.
    ``ascii_only``: the pattern for ASCII text, without the characters it cannot hold."""
    raw = _ascii if ascii_only else str
    gap = f"(?:{_invisible(ascii_only)})*+"
    slash = _spelled(raw(_SLASHES), ("sol",), r"\\/", encoded=_SLASHES)
    letters = [[_letter(char, raw) for char in name] for name in _TAG_NAMES]
    names = _alternatives(gap.join(name) for name in letters)
    initials = "".join(raw(_same(name[0])) for name in _TAG_NAMES)
    ahead = f"{gap}(?:{slash}{gap})?(?={_one_of(initials + '&%')}){names}"
    opener = _spelled(raw(_LESS_THAN), _LESS_THAN_NAMES, encoded=_LESS_THAN)
    return re.compile(f"(?P<opener>{opener}){_FOLLOWING}(?={ahead})")


def _ascii(chars: str) -> str:
    return "".join(char for char in chars if char.isascii())


def _alternatives(options: Iterable[str]) -> str:
    return f"(?:{'|'.join(options)})"


def _spelled(chars: str, names: tuple[str, ...], *extra: str, encoded: str) -> str:
    """Any of ``chars`` as itself, ``extra``, or any of ``encoded`` encoded (``_encodings``)."""
    raw = [_one_of(chars)] if chars else []
    return _alternatives([*raw, *extra, *_encodings(encoded, names)])


def _encodings(chars: str, names: tuple[str, ...]) -> list[str]:
    """Alternatives matching any of ``chars`` as an HTML character reference (decimal, hex, or
    one of ``names``; the ``;`` optional, as HTML allows), a percent-escape of its UTF-8 or a
    backslash escape (``\\u003c``, ``\\u{3c}``, ``\\x3c``), in any case."""
    points = [ord(char) for char in chars]
    decimal = _alternatives(map(str, points))
    hexes = _alternatives(_any_case(f"{point:x}") for point in points)
    named = [_any_case(name) for name in names]
    references = _alternatives([f"#0*{decimal}(?![0-9])", f"#[xX]0*{hexes}(?![0-9a-fA-F])", *named])
    utf8 = (char.encode("utf-8") for char in chars)
    percents = _alternatives("%".join(_any_case(f"{byte:02x}") for byte in data) for data in utf8)
    escapes = [f"[uU]{_alternatives(_any_case(f'{p:04x}') for p in points)}"]
    escapes.append(f"u\\{{0*{hexes}\\}}")
    if latin := [_any_case(f"{point:02x}") for point in points if point < 256]:
        escapes.append(f"[xX]{_alternatives(latin)}")
    return [f"&{references};?", f"%{percents}", f"\\\\{_alternatives(escapes)}"]


def _any_case(text: str) -> str:
    """``text`` (ASCII letters and digits) as a pattern matching it in any case."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)


def _letter(char: str, raw: Callable[[str], str]) -> str:
    """One character of a tag name, in any of its spellings (see the module docstring); ``raw``
    keeps the characters the text may hold."""
    if char == "_":
        separators = _SEPARATORS + _compat("_") + _compat("-")
        return _spelled(raw(separators), (), encoded=separators) + "?"
    points = sorted({ord(char.lower()), ord(char.upper())})
    decimal = _alternatives(map(str, points))
    hexes = _alternatives(_any_case(f"{point:x}") for point in points)
    encoded = [f"&#(?:0*{decimal}(?![0-9])|[xX]0*{hexes}(?![0-9a-fA-F]));?", f"%{hexes}"]
    return _alternatives([_one_of(raw(_same(char))), *encoded])


def _same(char: str) -> str:
    """``char`` in either case, and each compatibility form of it."""
    return char.lower() + char.upper() + _compat(char)


@functools.cache
def _compatibility_forms() -> dict[str, str]:
    """ASCII character -> the code points NFKC folds to it (either case), from the ranges."""
    forms: dict[str, str] = {}
    for start, stop in _COMPAT_RANGES:
        for point in range(start, stop):
            folded = unicodedata.normalize("NFKC", chr(point)).lower()
            if len(folded) == 1 and folded.isascii():
                forms[folded] = forms.get(folded, "") + chr(point)
    return forms


def _compat(char: str) -> str:
    return _compatibility_forms().get(char.lower(), "")


def _invisible(ascii_only: bool) -> str:
    """What may sit unseen between the parts of a tag: a character (white space, a format
    character, a combining mark), or white space as an HTML reference or percent-escape."""
    numbers = "#(?:0*(?:9|10|13|32|160)(?![0-9])|[xX]0*(?:9|[aA]|[dD]|20|[aA]0)(?![0-9a-fA-F]))"
    spaces = [f"&(?:{_any_case('nbsp')}|{numbers});?", "%(?:09|0[aAdD]|20)"]
    invisible = _ranges(_ASCII_SPACE) if ascii_only else _invisible_class()
    return _alternatives([invisible, *spaces])


@functools.cache
def _invisible_class() -> str:
    """White space, format characters (Cf), combining marks (Mn) and the invisible letters."""
    category = unicodedata.category
    found = {
        point
        for start, stop in _MARK_RANGES
        for point in range(start, stop)
        if category(chr(point)) in ("Cf", "Mn") or chr(point).isspace()
    }
    found.update(map(ord, _INVISIBLE_LETTERS))
    found.update(point for start, stop in _FORMAT_BEYOND_BMP for point in range(start, stop))
    return _one_of("".join(map(chr, sorted(found))))


def _one_of(chars: str) -> str:
    """A pattern matching one of ``chars``, written as ranges. A class beyond the Basic
    Multilingual Plane is a list that every check walks (the BMP is one table lookup), so its
    characters beyond it sit behind a one-range test that no BMP character passes."""
    bmp = "".join(char for char in chars if char <= "\uffff")
    beyond = "".join(char for char in chars if char > "\uffff")
    if not beyond:
        return _ranges(bmp)
    return f"(?:{_ranges(bmp)}|(?=[\U00010000-\U0010ffff]){_ranges(beyond)})"


def _ranges(chars: str) -> str:
    """A character class of ``chars``, runs of consecutive code points written as ranges."""
    spans: list[list[int]] = []
    for point in sorted(set(map(ord, chars))):
        if spans and point == spans[-1][1] + 1:
            spans[-1][1] = point
        else:
            spans.append([point, point])
    body = (re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in spans)
    return f"[{''.join(body)}]"
