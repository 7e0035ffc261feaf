"""Production settings: secrets from the environment, HTTPS only, no demo game.

``manage.py check --deploy --fail-level WARNING`` passes with these settings (tests/test_deploy.py).
"""
from .base import *  # noqa: F401,F403
from mafia_site.env import env_bool, env_int, env_required

from .base import MIDDLEWARE, STORAGES

DEBUG = False
SECRET_KEY = env_required("DJANGO_SECRET_KEY")
MAFIA_ALLOW_DEMO = False
ACCOUNT_EMAIL_VERIFICATION = "mandatory"

SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The proxies in front of the web nodes that append to X-Forwarded-For (docker-compose's has one): allauth's rate
# limits then count the client's address, not the proxy's. 0 trusts no header (a node answering clients itself).
ALLAUTH_TRUSTED_PROXY_COUNT = env_int("MAFIA_TRUSTED_PROXY_COUNT", 0)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = env_bool("DJANGO_COOKIES_SECURE", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_COOKIES_SECURE", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# WhiteNoise serves the collected static files under gunicorn (runserver serves them in development), right after
# the security middleware, as its documentation asks.
_SECURITY = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [*MIDDLEWARE[:_SECURITY], "whitenoise.middleware.WhiteNoiseMiddleware", *MIDDLEWARE[_SECURITY:]]
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
