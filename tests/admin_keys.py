"""Staff console object keys in tests: the console addresses objects of models with a ``public_id`` by it
(kernel.public_ids), others by their database id."""
from __future__ import annotations

from kernel.public_ids import new_public_id


def has_public_id(model) -> bool:
    return any(f.name == "public_id" for f in model._meta.concrete_fields)


def key_of(obj) -> str:
    """The key of ``obj`` in the console's URLs and action forms."""
    return obj.public_id if has_public_id(type(obj)) else str(obj.pk)


def keys_of(objs) -> list[str]:
    return [key_of(o) for o in objs]


def pks_from_keys(model, keys) -> list[int]:
    """The database ids of the objects of ``model`` whose console keys are ``keys``, in the order of ``keys``."""
    keys = list(keys)
    if not has_public_id(model):
        return [int(k) for k in keys]
    by_key = dict(model.objects.filter(public_id__in=keys).values_list("public_id", "pk"))
    return [by_key[k] for k in keys]


def missing_key(model) -> str:
    """A key of the right shape that names no object of ``model``."""
    if has_public_id(model):
        return new_public_id()
    return str(model.objects.order_by("-pk").first().pk + 1000)


#: A console key in a URL: a public id or a database id.
KEY_PATTERN = r"([a-z0-9]+)"
