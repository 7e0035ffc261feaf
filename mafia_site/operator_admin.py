"""The operators' /admin/ site: Django's admin with malformed ids refused at one place, for every ModelAdmin that
any app registers (allauth's included). An object id that is not a database id in ASCII digits (for an integer
key), such as '٣', '²', '1.5' or a number beyond a bigint, finds no object (the admin's "does not exist" answer),
and the choice fields of foreign keys and many-to-many relations refuse such values as an invalid choice instead
of handing them to the database (a 500)."""
from __future__ import annotations

from django.contrib import admin
from django.db import models

from kernel.form_fields import ObjectChoiceField, ObjectMultipleChoiceField, well_formed_key


class MalformedIdsRefused:
    """A ModelAdmin mixin: ``get_object`` finds nothing for an ill-formed id; relation fields check their keys."""

    def get_object(self, request, object_id, from_field=None):
        field = self.model._meta.pk if from_field is None else self.model._meta.get_field(from_field)
        if isinstance(field, models.IntegerField | models.AutoField) and not well_formed_key(object_id, "pk"):
            return None
        return super().get_object(request, object_id, from_field)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        kwargs.setdefault("form_class", ObjectChoiceField)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        kwargs.setdefault("form_class", ObjectMultipleChoiceField)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class OperatorAdminSite(admin.AdminSite):
    """``admin.site``: every ModelAdmin registered here gets ``MalformedIdsRefused``."""

    def register(self, model_or_iterable, admin_class=None, **options):
        base = admin_class or admin.ModelAdmin
        if not issubclass(base, MalformedIdsRefused):
            admin_class = type(base.__name__, (MalformedIdsRefused, base), {"__module__": base.__module__})
        return super().register(model_or_iterable, admin_class, **options)
