"""Turning a game-thread post into forum vote commands, as pure functions: no ORM, no clock, no I/O.

``parse_forum_post(text)`` reads the ``##`` commands of one game-thread post, in the order written;
``resolve_forum_name(written, names)`` turns the written name of a ``##VOTE`` into exactly one seat or refuses it
with the candidates. What the commands do to the day is ``voting.forum_tally.ForumDay``'s business. A ruleset's own
keywords live in its package.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from markdown_it import MarkdownIt

# ----------------------------------------------------------------------------------------------------------------
# Forum day votes: commands
# ----------------------------------------------------------------------------------------------------------------


class ForumCommandKind(StrEnum):
    """The four commands of a game-thread post."""

    VOTE = "vote"
    UNVOTE = "unvote"
    END = "end"
    UNEND = "unend"


@dataclass(frozen=True)
class ForumCommand:
    """One command found in a post.

    ``argument`` is the cleaned text after the keyword ("" when there is none): the written name of a ``##VOTE``,
    an optional name after ``##UNVOTE``; ignored for ``##END`` and ``##UNEND``. ``written`` is the command as the
    player wrote it (whitespace trimmed), for messages. ``line`` is the 1-based line of the post it is on.
    """

    kind: ForumCommandKind
    argument: str
    written: str
    line: int

    @property
    def names_no_lynch(self) -> bool:
        """True when the argument is No Lynch in any case or spacing ("No Lynch", "nolynch", "NO-LYNCH")."""
        return is_forum_no_lynch(self.argument)


# ``##`` then optional spaces, a keyword that is a whole word, an optional colon, and the argument up to the next
# ``##`` or the end of the line. The keyword is case-insensitive; "##VOTES" or "##ending" are not commands.
_COMMAND_RE = re.compile(r"##\s*(?P<keyword>unvote|unend|vote|end)(?!\w)\s*:?(?P<argument>[^\x00]*?)(?=##|\x00|$)",
                         re.IGNORECASE)
# Forum markup that can wrap a name: BBCode-like tags ("[b]", "[/vote]", a broken "[\V]") and emphasis marks.
_TAG_RE = re.compile(r"\[\s*[/\\]?\s*[a-z]+(?:=[^\]]*)?\s*\]", re.IGNORECASE)
_EMPHASIS = "*_~`"
_EDGE_PUNCTUATION = " \t.,;:!?\"'«»()-–—@"


def parse_forum_post(text: str) -> list[ForumCommand]:
    """The commands of one post, in the order written.

    A command is ``##`` + ``VOTE`` / ``UNVOTE`` / ``END`` / ``UNEND`` in any case, with any spacing after the
    ``##`` and an optional colon after the keyword (``##vote: Alice``, ``## VOTE  Alice``). Its argument runs to
    the end of the line or to the next ``##`` command on the same line, so ``##UNVOTE ##VOTE Bob`` is two
    commands. The post is read as the site renders it (Markdown, markdown-it's token stream): a command inside a
    quote (``>``), a code block (fenced with backticks or tildes, or indented) or inline code is somebody's words
    being shown and is not a command. Text that is not a command is ignored. Never raises; returns
    ``[]`` for a post without commands.
    """
    if "#" not in text:
        return []
    commands = []
    for number, line in _prose_lines(text):
        for match in _COMMAND_RE.finditer(line):
            commands.append(ForumCommand(kind=ForumCommandKind(match["keyword"].lower()),
                                         argument=clean_forum_argument(match["argument"]),
                                         written=match[0].strip(), line=number))
    return commands


#: The site's Markdown (``inboxes.rendering``): CommonMark with hard line breaks, strikethrough and tables.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    "strikethrough").enable("table")
#: A source line that opens with a quote mark, after any list markers: ``> ...``, ``- > ...``, ``1. > ...``.
_QUOTED_LINE = re.compile(r"\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)*>")
#: What stands for a span of inline code in a prose line: no command reaches across it.
_CODE_SPAN = "\x00"


_NEWLINES = re.compile(r"\r\n?")


def prose_lines(text: str) -> list[str]:
    """The lines of a post that a reader sees as its author's own words (``_prose_lines``): no line of a code
    block, fenced or indented, nor of a ``>`` quote, and inline code masked. Where a thread's commands are read."""
    return [line for _number, line in _prose_lines(text)]


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines of ``text`` that a reader sees as the author's own words, as ``(line number, text)``.

    The inline content of paragraphs, headings, list items and table cells, read from markdown-it's tokens: code
    blocks (fenced or indented) give none, nor do the lines of a quote that start with ``>``; a line right after a
    quote without ``>`` (Markdown's lazy continuation) is the author's answer, as on a forum. A line is taken as
    written, unless it holds inline code (whose spans become ``_CODE_SPAN``) or a table cell (its cell's text)."""
    # Lines as markdown-it counts them: only \n, \r\n and \r end a line (str.splitlines would also split at
    # U+2028, a form feed and the like, shifting every line after them off markdown-it's line numbers).
    text = _NEWLINES.sub("\n", text)
    source = text.split("\n")
    lines: list[tuple[int, str]] = []
    quoted = 0
    cell = False
    for token in _MARKDOWN.parse(text):
        if token.type in ("blockquote_open", "blockquote_close"):
            quoted += 1 if token.type == "blockquote_open" else -1
        elif token.type in ("th_open", "td_open", "th_close", "td_close"):
            cell = token.type.endswith("_open")
        elif token.type == "inline" and token.map is not None:
            for number, shown, rewritten in _inline_lines(token):
                raw = source[number - 1] if number - 1 < len(source) else ""
                if quoted and _QUOTED_LINE.match(raw):
                    continue
                lines.append((number, shown if rewritten or cell else raw))
    return lines


def _inline_lines(token) -> list[tuple[int, str, bool]]:
    """The lines of one inline token as ``(line number, text as shown, differs from the source line)``.

    Inline code becomes ``_CODE_SPAN``; a link keeps only its text and an image nothing, since a link's address
    and title and an image's description are not words a reader sees in the post. Such a line is read as shown,
    any other line as written."""
    lines = []
    parts: list[str] = []
    number, rewritten = token.map[0] + 1, False
    for child in token.children or ():
        if child.type in ("softbreak", "hardbreak"):
            lines.append((number, "".join(parts), rewritten))
            parts, number, rewritten = [], number + 1, False
        elif child.type == "code_inline":
            parts.append(_CODE_SPAN)
            rewritten = True
        elif child.type in ("link_open", "link_close", "image"):
            rewritten = True
        elif child.type in ("text", "html_inline"):
            parts.append(child.content)
        elif child.markup and child.type.endswith(("_open", "_close")):
            parts.append(child.markup)
    lines.append((number, "".join(parts), rewritten))
    return lines


def clean_forum_argument(raw: str) -> str:
    """The argument of a command without forum markup: tags and emphasis marks removed, surrounding white space
    and punctuation trimmed, inner white space collapsed. ``" [b]Alice[/b]. "`` → ``"Alice"``."""
    text = _TAG_RE.sub(" ", raw)
    text = "".join(ch for ch in text if ch not in _EMPHASIS)
    return " ".join(text.split()).strip(_EDGE_PUNCTUATION)


def is_forum_no_lynch(argument: str) -> bool:
    """True when ``argument`` says No Lynch: the letters ``nolynch`` in any case, with any spaces,
    hyphens or punctuation between or around them."""
    return re.sub(r"[\W_]+", "", argument.casefold()) == "nolynch"


# ----------------------------------------------------------------------------------------------------------------
# Forum day votes: name resolution
# ----------------------------------------------------------------------------------------------------------------


class ForumMatchKind(StrEnum):
    """How a written name was matched to a seat, tried in this order."""

    EXACT = "exact"
    PREFIX = "prefix"
    CLOSE = "close"


@dataclass(frozen=True)
class ForumNameResolution:
    """The result of ``resolve_forum_name``.

    Resolved: ``seat`` is set, ``how`` says which tier matched, ``candidates == (seat,)``. Refused: ``seat`` is
    None; ``candidates`` lists the seats that matched equally well (sorted; two or more: the name is ambiguous)
    or is empty (no living player has a matching name).
    """

    seat: str | None
    how: ForumMatchKind | None
    candidates: tuple[str, ...]

    @property
    def resolved(self) -> bool:
        return self.seat is not None

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


FORUM_CLOSE_MATCH_MAX_DISTANCE = 2


def forum_name_key(name: str) -> str:
    """The form names are compared in: Unicode NFKC, case folded, ё read as е, markup and edge punctuation
    removed, white space removed. ``"  Ёжик  В тумане. "`` → ``"ежиквтумане"``."""
    text = unicodedata.normalize("NFKC", clean_forum_argument(name)).casefold().replace("ё", "е")
    return "".join(text.split())


def resolve_forum_name(written: str, names: Mapping[str, Iterable[str]]) -> ForumNameResolution:
    """Resolve the written name of a vote to exactly one seat.

    ``names`` maps each candidate seat (the living seats) to the names it answers to. Names are compared by
    ``forum_name_key``. Tiers, first decisive one wins:

    1. exact: the key equals a name's key;
    2. prefix: the key starts a name (an abbreviation);
    3. close: a misspelling, at most ``FORUM_CLOSE_MATCH_MAX_DISTANCE`` edits (insert, delete, substitute, swap
       two neighbours) from a whole name and at most one edit per three written characters, so a short name is
       never "close" to everything.

    A tier in which exactly one seat matches resolves the name. A tier in which two or more seats match refuses
    it as ambiguous, listing them (a looser tier is not tried: it could only add candidates). No seat in any
    tier: refused, no candidates. An empty name matches nothing. Never raises.
    """
    key = forum_name_key(written)
    if not key:
        return ForumNameResolution(seat=None, how=None, candidates=())
    keyed = {seat: {forum_name_key(name) for name in seat_names} - {""} for seat, seat_names in names.items()}
    tiers = (
        (ForumMatchKind.EXACT, lambda candidate: candidate == key),
        (ForumMatchKind.PREFIX, lambda candidate: candidate.startswith(key)),
        (ForumMatchKind.CLOSE, lambda candidate: _is_close(key, candidate)),
    )
    for how, matches in tiers:
        seats = tuple(sorted(seat for seat, keys in keyed.items() if any(matches(k) for k in keys)))
        if len(seats) == 1:
            return ForumNameResolution(seat=seats[0], how=how, candidates=seats)
        if seats:
            return ForumNameResolution(seat=None, how=None, candidates=seats)
    return ForumNameResolution(seat=None, how=None, candidates=())


def _is_close(written: str, name: str) -> bool:
    limit = min(FORUM_CLOSE_MATCH_MAX_DISTANCE, len(written) // 3)
    return limit > 0 and abs(len(written) - len(name)) <= limit and forum_edit_distance(written, name) <= limit


def forum_edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap of two neighbouring characters) that turn ``a`` into ``b``: the
    optimal string alignment distance. ``forum_edit_distance("alcie", "alice") == 1``."""
    previous_previous: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        previous_previous, previous = previous, current
    return previous[len(b)]
