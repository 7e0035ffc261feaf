"""The roles app: the provable draw toolkit (``roles.draw``) and the night pipeline (``roles.night``), ruleset-neutral."""
from django.apps import AppConfig


class RolesConfig(AppConfig):
    name = "roles"

