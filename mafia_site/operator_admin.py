"""The operators' /admin/ site: Django's admin with malformed ids refused at one place, for every ModelAdmin that
any app registers (allauth's included). An object id that is not a database id in ASCII digits (for an integer
key), such as '٣', '²', '1.5' or a number beyond a bigint, finds no object (the admin's "does not exist" answer),
and the choice fields of foreign keys and many-to-many relations refuse such values as an invalid choice instead
of handing them to the database (a 500).

No operator adds, changes, verifies or deletes another account's e-mail address, and no admin shows an e-mail
confirmation key or a social login's token: an operator who could would reset that account's password by e-mail and
log in as a player of a running game, read its mafia inbox. The e-mail addresses stay listed,
read-only; accounts are seen and deactivated in the user admin (``accounts.admin``)."""
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


class CredentialsViewOnly:
    """A ModelAdmin mixin for the records that decide who can log in as an account (its e-mail addresses, its
    social logins): listed and viewed only, with no add, change or delete and no bulk action (allauth's "mark as
    verified" among them), for every account alike."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        return {}


# Models whose rows let whoever edits them log in as their account ("app_label.ModelName", as ``_meta.label``).
CREDENTIAL_MODELS_VIEW_ONLY = frozenset({"account.EmailAddress", "socialaccount.SocialAccount"})
# Models whose rows are themselves a secret that logs in or confirms an address: not in the operators' admin.
CREDENTIAL_MODELS_NOT_ADMINISTERED = frozenset({"account.EmailConfirmation", "socialaccount.SocialToken",
                                                "socialaccount.SocialApp"})


class OperatorAdminSite(admin.AdminSite):
    """``admin.site``: every ModelAdmin registered here gets ``MalformedIdsRefused``; those of a credential model
    get ``CredentialsViewOnly`` or are not registered at all (see the two sets above)."""

    def register(self, model_or_iterable, admin_class=None, **options):
        """As ``AdminSite.register``, with the mixins above; a model of ``CREDENTIAL_MODELS_NOT_ADMINISTERED`` is
        skipped silently (allauth registers its own admins on import)."""
        models_ = [model_or_iterable] if isinstance(model_or_iterable, models.base.ModelBase) else model_or_iterable
        for model in models_:
            if model._meta.label in CREDENTIAL_MODELS_NOT_ADMINISTERED:
                continue
            base = admin_class or admin.ModelAdmin
            mixins = tuple(mixin for mixin, wanted in (
                (CredentialsViewOnly, model._meta.label in CREDENTIAL_MODELS_VIEW_ONLY),
                (MalformedIdsRefused, True)) if wanted and not issubclass(base, mixin))
            cls = type(base.__name__, (*mixins, base), {"__module__": base.__module__}) if mixins else base
            super().register(model, cls, **options)
