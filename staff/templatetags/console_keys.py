"""Template tags of the admin templates shared by the staff console and the operators' admin (``templates/admin``):
the key naming an object in the URLs of the site rendering the page."""
from __future__ import annotations

from django import template

from staff.console import staff_admin_site, url_key_of

register = template.Library()


@register.simple_tag(takes_context=True)
def admin_key(context, obj) -> str:
    """The key of ``obj`` in the URLs of the admin site rendering the page: on the staff console its console key
    (``staff.console.url_key_of``: a public id, a game's slug), never its database id; on the operators' admin
    its database id; "" for no object."""
    if obj is None:
        return ""
    request = context.get("request")
    if getattr(request, "current_app", None) == staff_admin_site.name:
        return str(getattr(obj, url_key_of(type(obj))))
    return str(obj.pk)
