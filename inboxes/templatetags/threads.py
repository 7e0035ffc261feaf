"""Template tags of the thread pages: ``{% thread_messages %}`` renders the messages of a page (or of a live update)
as ``<article>`` elements.

The messages are the one part of a page that grows with its length (a page shows up to
``MAFIA_MESSAGES_PER_PAGE`` of them), so they are built here in Python, once per message, rather than by an included
template per message, whose variable lookups and nodes cost several times more. What each message shows is decided
by the view and the access policy (the context's ``names_authors``, ``can_moderate``, ``show_hidden_text``,
``editable``); this module only writes it out, escaping every text but the stored, sanitised ``body_html``.
"""
from __future__ import annotations

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from kernel.templatetags.zones import when

register = template.Library()

_CSRF = CsrfTokenNode()


def _resident_url(context, resident) -> str:
    """The seat's page, reversed once per author of the page (a page has 50 messages from a few authors)."""
    urls = context.render_context.setdefault("thread_resident_urls", {})
    if resident.pk not in urls:
        urls[resident.pk] = reverse("resident_detail", args=[context["game"].slug, resident.public_id])
    return urls[resident.pk]


def _author(context, m) -> SafeString:
    """The author line: their name (a link to the seat's page when a resident wrote it), or in a check channel
    (``names_authors`` False, L-INBOX-15) the staff role or "commissar" only."""
    if not context.get("names_authors"):
        if m.author_staff_id:
            return format_html("{}", m.author_staff.get_kind_display())
        if m.author_resident_id:
            return format_html("{}", _("commissar"))
        return format_html("{}", m.author_name)
    if m.author_resident_id:
        return format_html('<a href="{}">{}</a>', _resident_url(context, m.author_resident), m.author_name)
    if m.author_staff_id:
        return format_html('{} <span class="badge badge-staff" data-author="staff">{}</span>', m.author_name,
                           m.author_staff.get_kind_display())
    if not m.author_user_id:
        return format_html('{} <span class="badge badge-site" data-author="site">{}</span>', m.author_name,
                           _("site"))
    return format_html("{}", m.author_name)


def _revisions(m, body_class: str) -> list[SafeString]:
    return [format_html('<details><summary>{} · {}</summary><div class="{}">{}</div></details>', _("earlier version"),
                        when(rev.replaced_at), body_class, mark_safe(rev.body_html))  # sanitised when stored
            for rev in m.revision_list]


def _article(context, pos: int, m) -> SafeString:
    inbox = context["inbox"]
    local = timezone.localtime(m.received_at)
    header = [format_html('<strong>{}</strong>\n      <time datetime="{}">{}</time>', _author(context, m),
                          local.isoformat(), when(m.received_at))]  # the date filter's "c" is isoformat()
    if m.edited_at:
        header.append(format_html('<span class="muted">{}</span>', _("edited")))
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
            body.append(format_html('<div class="body hidden-text">{}</div>', mark_safe(m.body_html)))
            body += _revisions(m, "body hidden-text")
    else:
        body = [format_html('<div class="body">{}</div>', mark_safe(m.body_html))]  # sanitised when stored
        body += _revisions(m, "body")
        if getattr(m, "receipt_lines", None):  # an M21 game thread's receipt (``inboxes.hooks.annotate_messages``)
            body.append(get_template("m21/_receipt.html").render({"receipt": m.receipt_lines}))
    return format_html('<article class="message{}" id="n{}">\n    <header>{}</header>\n    {}\n  </article>',
                       " hidden" if m.is_hidden else "", pos, mark_safe("\n      ".join(header)),
                       mark_safe("\n      ".join(body)))


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
    return mark_safe("\n  ".join(out))  # every part built by format_html
