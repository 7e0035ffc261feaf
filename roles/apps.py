"""The roles app: the records of the draws and the night, the provable draw toolkit and the night pipeline."""
from django.apps import AppConfig


class RolesConfig(AppConfig):
    name = "roles"

