"""Opaque public ids (DESIGN.md "The access policy": ids a user can see are opaque).

A sequential id tells how many objects were made before it, so an id seen in a URL, a form, an export or the
audit log would count what the viewer may not read (messages posted in a mafia inbox, secret inboxes created, votes
and requests made). Every such object carries a ``public_id``: 12 characters drawn at random (about 59
bits; the first a letter, so it never reads as a number), unique per table, made when the row is created. Pages,
forms, exports and the audit log use it; the database id stays internal.
"""
from __future__ import annotations

import re
import secrets

from django.db import models
from django.utils.translation import gettext_lazy as _

_FIRST = "abcdefghjkmnpqrstuvwxyz"
_REST = "abcdefghjkmnpqrstuvwxyz23456789"
PUBLIC_ID_LENGTH = 12
#: The shape of a public id (path converter ``pid``, form fields).
PUBLIC_ID_REGEX = f"[{_FIRST}][{_REST}]{{{PUBLIC_ID_LENGTH - 1}}}"
_SHAPE = re.compile(PUBLIC_ID_REGEX)
_DATABASE_ID = re.compile(r"[0-9]{1,18}")


#: How many public ids there are: each number below it writes one id, and each id is written by one number.
_ID_SPACE = len(_FIRST) * len(_REST) ** (PUBLIC_ID_LENGTH - 1)


def new_public_id() -> str:
    """A fresh random public id (``secrets``: unpredictable, so one id tells nothing about another), every id as
    likely as any other: one number drawn below ``_ID_SPACE`` (one read of the system's random source, not one per
    character), written in the ids' alphabets."""
    number, first = divmod(secrets.randbelow(_ID_SPACE), len(_FIRST))
    characters = [_FIRST[first]]
    for _ in range(PUBLIC_ID_LENGTH - 1):
        number, k = divmod(number, len(_REST))
        characters.append(_REST[k])
    return "".join(characters)


def new_idempotency_key() -> str:
    """A fresh key for one rendering of a form that creates something (22 URL-safe characters): a re-submission
    of the same form (a double click, a network retry) carries the same key and creates nothing more."""
    return secrets.token_urlsafe(16)


#: The shape of an idempotency key a form may post back.
IDEMPOTENCY_KEY_REGEX = r"[A-Za-z0-9_-]{16,40}"


def is_public_id(value) -> bool:
    """True when ``value`` is a string of the public id shape."""
    return isinstance(value, str) and _SHAPE.fullmatch(value) is not None


def is_database_id(value) -> bool:
    """True when ``value`` is a positive int of a bigint or a string of 1 to 18 ASCII digits (never '٣' or '²')."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 < value < 2**63
    return isinstance(value, str) and _DATABASE_ID.fullmatch(value) is not None


class PublicIdField(models.CharField):
    """The ``public_id`` column: a random token made on creation (``new_public_id``), unique, never edited.

    Nullable so that adding it to a live table is instant and a process of the previous release, which does not
    know the column, can still insert rows (expand/contract); a data migration fills the existing rows.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", PUBLIC_ID_LENGTH)
        kwargs.setdefault("default", new_public_id)
        kwargs.setdefault("editable", False)
        kwargs.setdefault("null", True)
        kwargs.setdefault("unique", True)
        kwargs.setdefault("verbose_name", _("public id"))
        super().__init__(*args, **kwargs)


def backfill_public_ids(app_label: str, model_names: list[str]):
    """A ``RunPython`` function giving every existing row of the models a public id, in batches (a migration
    step between adding the nullable column and making it unique). Reversible as a no-op."""

    def forward(apps, schema_editor):
        for name in model_names:
            model = apps.get_model(app_label, name)
            while True:
                batch = list(model.objects.filter(public_id__isnull=True).values_list("pk", flat=True)[:1000])
                if not batch:
                    break
                for pk in batch:
                    model.objects.filter(pk=pk, public_id__isnull=True).update(public_id=new_public_id())

    return forward


def add_public_id_operations(app_label: str, model_name: str) -> list:
    """The migration operations that give an existing table its ``public_id`` without a long lock: the column added
    empty (nullable, no default: instant on a live table), each existing row given its own random id in batches of
    1,000, then the column as ``PublicIdField`` declares it. ``model_name`` is the model's lower-case name.
    Reversing drops the column."""
    from django.db import migrations

    def fill_public_ids(apps, schema_editor):
        model = apps.get_model(app_label, model_name)
        rows = list(model.objects.filter(public_id__isnull=True).only("pk"))
        for row in rows:
            row.public_id = new_public_id()
        model.objects.bulk_update(rows, ["public_id"], batch_size=1000)

    return [
        migrations.AddField(model_name=model_name, name="public_id",
                            field=PublicIdField(default=None, null=True), preserve_default=False),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop),
        migrations.AlterField(model_name=model_name, name="public_id", field=PublicIdField()),
    ]
