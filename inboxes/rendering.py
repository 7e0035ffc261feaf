"""Markdown to safe HTML: markdown-it-py renders, nh3 sanitises (DESIGN.md "Pages").

Raw HTML in the source is escaped by markdown-it (``html`` off) and the output is cleaned again by nh3 with a
small allow-list, so no script, style, iframe or event handler can reach a reader's page.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable("strikethrough").enable("table")


def _image_as_link(self, tokens, idx, options, env):
    """Render ``![alt](src)`` as a plain link: no remote image loads in a reader's browser (a tracking pixel
    would tell its author who reads an inbox and when)."""
    token = tokens[idx]
    alt = self.renderInline(token.children or [], options, env) or token.attrGet("src")
    return f'<a href="{escapeHtml(token.attrGet("src") or "")}">{alt}</a>'


_md.add_render_rule("image", _image_as_link)

_ALLOWED_TAGS = {
    "p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}


def render_markdown(text: str) -> str:
    """Render ``text`` (Markdown, any length) to sanitised HTML (str). Links get ``rel="nofollow noopener"``.

    Short texts (at most ``_CACHED_LENGTH`` characters: the vote keywords, a ballot, a greeting) are rendered once
    per process and then taken from a bounded cache: rendering is a pure function of the text."""
    if len(text) <= _CACHED_LENGTH:
        return _render_short(text)
    return _render(text)


_CACHED_LENGTH = 64


@lru_cache(maxsize=4096)
def _render_short(text: str) -> str:
    return _render(text)


def _render(text: str) -> str:
    html = _md.render(text)
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )


#: Characters that are letters or symbols to Unicode but show nothing: the Braille blank and the Hangul fillers.
_BLANK_GLYPHS = frozenset("\u2800\u115f\u1160\u3164\uffa0")


def has_visible_text(text: str) -> bool:
    """True when ``text`` has at least one visible character: not white space, not a format or control
    character (a zero-width space), not a blank glyph (the Braille blank, a Hangul filler); a combining mark
    counts only on a visible base, so marks alone are no text."""
    return any(not (ch.isspace() or ch in _BLANK_GLYPHS
                    or unicodedata.category(ch) in ("Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me", "Mc"))
               for ch in text)
