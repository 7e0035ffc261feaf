"""Template tags of the thread pages: ``{% thread_messages %}`` renders the messages of a page (or of a live update)
as ``<article>`` elements.

The messages are the one part of a page that grows with its length (a page shows up to
``MAFIA_MESSAGES_PER_PAGE`` of them), so they are built here in Python, once per message, rather than by an included
template per message, whose variable lookups and nodes cost several times more. What each message shows is decided
by the view and the access policy (the context's ``names_authors``, ``can_moderate``, ``show_hidden_text``,
``editable``); this module only writes it out, escaping every text but the stored, sanitised ``body_html``.
"""
from __future__ import annotations

from datetime import datetime

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format, get_format
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from cities.staff_kinds import staff_kind_label
from kernel.templatetags.zones import when

register = template.Library()

_CSRF = CsrfTokenNode()


def _resident_url(context, public_id: str) -> str:
    """The page of the seat whose public id is ``public_id`` (escaped). The URL is reversed once per page and the
    other seats' ids put in its place (a page has 50 messages from as many authors; public ids need no quoting,
    ``kernel.public_ids``)."""
    pattern = context.render_context.get("thread_resident_url")
    if pattern is None:
        url = reverse("resident_detail", args=[context["game"].slug, public_id])
        head, _sep, tail = url.rpartition(public_id)
        pattern = context.render_context["thread_resident_url"] = (escape(head), escape(tail))
    return f"{pattern[0]}{escape(public_id)}{pattern[1]}"


#: Format characters of Django's ``date`` that show seconds or finer: a format with none of them shows the same
#: text for every moment of a minute.
_SUB_MINUTE = set("sucrUv")


def _when(context, local: datetime) -> str:
    """``when`` of the local time ``local``, each minute's text computed once per page when the active format shows
    no seconds (a page's messages often share their minutes)."""
    cache = context.render_context.get("thread_when")
    if cache is None:
        fmt = get_format("DATETIME_FORMAT")
        cache = context.render_context["thread_when"] = {"per_minute": not (_SUB_MINUTE & set(fmt))}
    if not cache["per_minute"]:
        return escape(f"{date_format(local, 'DATETIME_FORMAT')} {local.tzname()}")
    key = (local.replace(second=0, microsecond=0), local.utcoffset())
    text = cache.get(key)
    if text is None:
        text = cache[key] = escape(f"{date_format(local, 'DATETIME_FORMAT')} {local.tzname()}")
    return text


def _staff_title(context, kind: str) -> str:
    """The title of a staff role of ``kind`` as the game's ruleset names it (``RulesetSpec.staff_kinds``)."""
    return staff_kind_label(context["game"], kind)


def _author(context, m) -> str:
    """The author line (HTML): their name (a link to the seat's page when a resident wrote it), or in a check
    channel (``names_authors`` False) the staff role or "commissar" only."""
    if not context.get("names_authors"):
        if m.author_staff_id:
            return escape(_staff_title(context, m.author_staff_kind))
        if m.author_resident_id:
            return escape(_("commissar"))
        return escape(m.author_name)
    if m.author_resident_id:
        # ``author_display``: the ruleset's name for a seat whose player changed since (a post hook's annotate).
        shown = getattr(m, "author_display", None) or m.author_name
        return f'<a href="{_resident_url(context, m.author_seat_public_id)}">{escape(shown)}</a>'
    if m.author_staff_id:
        return (f'{escape(m.author_name)} <span class="badge badge-staff" data-author="staff">'
                f'{escape(_staff_title(context, m.author_staff_kind))}</span>')
    if not m.author_user_id:
        return format_html('{} <span class="badge badge-site" data-author="site">{}</span>', m.author_name, _("site"))
    return escape(m.author_name)


def _revisions(m, body_class: str) -> list[str]:
    return [format_html('<details><summary>{} · {}</summary><div class="{}">{}</div></details>', _("earlier version"),
                        when(rev.replaced_at), body_class, mark_safe(rev.body_html))  # sanitised when stored
            for rev in m.revision_list]


def _article(context, pos: int, m) -> str:
    """One message as an ``<article>`` (HTML text: every part escaped but the stored, sanitised ``body_html``)."""
    inbox = context["inbox"]
    local = timezone.localtime(m.received_at)
    header = [f'<strong>{_author(context, m)}</strong>\n      <time datetime="{local.isoformat()}">'
              f'{_when(context, local)}</time>']  # the date filter's "c" is isoformat()
    if m.edited_at:
        header.append(format_html('<span class="muted">{}</span>', _("edited")))
    if context.get("can_post") and not m.is_hidden:
        # Quoting fills the post box (without JavaScript, through the link's ``?quote=``); the author sends it.
        header.append(format_html('<a class="quote-link" href="?quote={}#post-form" data-quote-of="n{}">{}</a>',
                                  pos, pos, _("quote")))
    if pos in context.get("editable", ()):
        header.append(format_html('<a class="edit-link" href="{}">{}</a>',
                                  reverse("message_edit", args=[inbox.public_id, pos]), _("edit")))
    if context.get("can_moderate") and not m.is_hidden:
        header.append(format_html('<form method="post" action="{}" class="inline hide-form">{}'
                                  '<button type="submit">{}</button></form>',
                                  reverse("message_hide", args=[inbox.public_id, pos]), _CSRF.render(context),
                                  _("hide")))
    if m.is_hidden:
        body = [format_html('<p class="muted">{}</p>', _("This message was hidden by a moderator."))]
        if context.get("show_hidden_text"):
            body.append(f'<div class="body hidden-text">{m.body_html}</div>')  # sanitised when stored
            body += _revisions(m, "body hidden-text")
    else:
        body = [f'<div class="body">{m.body_html}</div>']  # sanitised when stored
        if m.revision_list:
            body += _revisions(m, "body")
        if getattr(m, "receipt_lines", None) and getattr(m, "receipt_template", ""):
            # The receipt the inbox's post hook attached, in the hook's template (``hooks.annotate_messages``).
            body.append(get_template(m.receipt_template).render({"receipt": m.receipt_lines,
                                                                 "edited": bool(m.edited_at)}))
    joined_header, joined_body = "\n      ".join(header), "\n      ".join(body)
    return (f'<article class="message{" hidden" if m.is_hidden else ""}" id="n{pos}">\n    <header>{joined_header}'
            f'</header>\n    {joined_body}\n  </article>')


@register.simple_tag(takes_context=True)
def thread_messages(context, positioned, first_unread=None) -> SafeString:
    """The ``<article>`` of each ``(position, message)`` in ``positioned`` (1-based thread positions), with the
    "New messages" divider before the message at ``first_unread``. The messages carry ``revision_list`` and
    ``receipt_lines`` (``inboxes.selectors``); the context gives ``inbox``, ``game``, ``names_authors``,
    ``editable`` (positions), ``can_moderate`` and ``show_hidden_text``."""
    out = []
    for pos, m in positioned:
        if first_unread is not None and pos == first_unread:
            out.append(format_html('<p class="unread-divider" id="unread">{}</p>', _("New messages")))
        out.append(_article(context, pos, m))
    return mark_safe("\n  ".join(out))  # every part escaped in ``_article``
