"""Staff console object keys in tests: the console addresses a game by its slug, objects of models with a
``public_id`` by it (kernel.public_ids), others by their database id."""
from __future__ import annotations

from cities.models import Game
from kernel.public_ids import new_public_id


def has_public_id(model) -> bool:
    return any(f.name == "public_id" for f in model._meta.concrete_fields)


def _key_field(model) -> str:
    """The field the console names ``model``'s objects by: a game's slug, a public id, else the database id."""
    if issubclass(model, Game):
        return "slug"
    return "public_id" if has_public_id(model) else "pk"


def key_of(obj) -> str:
    """The key of ``obj`` in the console's URLs and action forms."""
    return str(getattr(obj, _key_field(type(obj))))


def keys_of(objs) -> list[str]:
    return [key_of(o) for o in objs]


def pks_from_keys(model, keys) -> list[int]:
    """The database ids of the objects of ``model`` whose console keys are ``keys``, in the order of ``keys``."""
    keys, field = list(keys), _key_field(model)
    if field == "pk":
        return [int(k) for k in keys]
    by_key = dict(model.objects.filter(**{f"{field}__in": keys}).values_list(field, "pk"))
    return [by_key[k] for k in keys]


def missing_key(model) -> str:
    """A key of the right shape that names no object of ``model``."""
    if _key_field(model) == "slug":
        return "no-such-game"
    if has_public_id(model):
        return new_public_id()
    return str(model.objects.order_by("-pk").first().pk + 1000)


#: A console key in a URL: a public id, a game's slug or a database id.
KEY_PATTERN = r"([-a-zA-Z0-9_]+)"


def action_url(changelist: str, action: str) -> str:
    """The own URL of the console action ``action`` of the changelist at ``changelist``: its intermediate page's
    form and its confirmation post there (the changelist's action menu posts to the changelist)."""
    return f"{changelist}actions/{action}/"


def post_console_action(client, changelist: str, action: str, keys, *, submit: bool = False, follow: bool = True,
                        **fields):
    """POST the console action ``action`` on the objects of ``keys`` as a browser does: from the changelist's
    action menu (the action's name and the selection), or with ``submit`` as the action's intermediate page (the
    selection and its form's ``fields``) to the action's own URL."""
    data = {"_selected_action": list(keys), **fields}
    if submit:
        return client.post(action_url(changelist, action), data, follow=follow)
    return client.post(changelist, {"action": action, **data}, follow=follow)
