"""Every word a Lepra page can show reaches the Russian catalogue: each translatable string of the templates, the
template tags and the rest of the code (but for the packages of rulesets whose pages are in another language) has a
Russian translation in the compiled catalogue (what Django reads),
and no gettext call hides its string from the message extractor (an f-string passed to ``_()``, or ``_()`` inside
an f-string, is never extracted, so the page stays English)."""
from __future__ import annotations

import ast
import gettext as gnu_gettext
import re
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.utils.translation.template import templatize

from kernel.rulesets import registered_rulesets

ROOT = Path(settings.BASE_DIR)
#: Folders that hold no code of the site (the virtualenv, generated files, the tests' own gettext helpers).
NOT_APP_CODE = {".venv", "node_modules", "var", "staticfiles", "tests", ".git", "docs"}
#: The names gettext is called by in the site's code (``django.utils.translation`` and the ``_`` alias).
GETTEXT_NAMES = {"_", "gettext", "gettext_lazy", "gettext_noop", "ngettext", "ngettext_lazy", "pgettext",
                 "pgettext_lazy", "npgettext", "npgettext_lazy"}
#: How many leading arguments of each gettext function are message strings (the rest are counts).
STRING_ARGS = {"ngettext": 2, "ngettext_lazy": 2, "pgettext": 2, "pgettext_lazy": 2, "npgettext": 3,
               "npgettext_lazy": 3}
#: A call in ``templatize``'s output (what makemessages hands the extractor for a template).
_STRING = r"""u?'(?:[^'\\]|\\.)*'|u?"(?:[^"\\]|\\.)*\""""
TEMPLATE_CALL = re.compile(rf"\b(gettext|ngettext|pgettext|npgettext|_)\(\s*((?:(?:{_STRING})\s*,?\s*)+)", re.DOTALL)


def _app_files(pattern: str) -> list[Path]:
    return sorted(path for path in ROOT.rglob(pattern)
                  if not NOT_APP_CODE & set(path.relative_to(ROOT).parts))


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _message_key(name: str, strings: list[str]) -> tuple[str, object]:
    """(what a reader sees, the key of the compiled catalogue) of one gettext call's literal strings."""
    context = ""
    if name.startswith(("pgettext", "npgettext")):
        context, strings = strings[0] + "\x04", strings[1:]
    if name.startswith(("ngettext", "npgettext")):
        return strings[0], (context + strings[0], 0)
    return strings[0], context + strings[0]


def _template_messages(path: Path) -> list[tuple[str, object]]:
    """The messages of one template, as makemessages extracts them (``templatize``)."""
    found = []
    for match in TEMPLATE_CALL.finditer(templatize(path.read_text(encoding="utf-8"), origin=str(path))):
        name = match.group(1)
        strings = [ast.literal_eval(s) for s in re.findall(_STRING, match.group(2))]
        found.append(_message_key({"_": "gettext"}.get(name, name), strings))
    return found


def _python_messages(path: Path) -> list[tuple[str, object]]:
    """The messages of one module: the literal strings of its gettext calls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and _call_name(node) in GETTEXT_NAMES:
            name = _call_name(node)
            args = node.args[:STRING_ARGS.get(name, 1)]
            if args and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
                found.append(_message_key(name, [a.value for a in args]))
    return found


def _russian_catalogue() -> dict:
    with open(ROOT / "locale" / "ru" / "LC_MESSAGES" / "django.mo", "rb") as compiled:
        return gnu_gettext.GNUTranslations(compiled)._catalog


def _russian_pages(path: Path) -> bool:
    """False for a file of a ruleset package whose games' pages are in another language (an M21 game's are
    English, M-SETUP): nothing there is ever shown in Russian."""
    other = {Path(ruleset_app(spec).path) for spec in registered_rulesets().values() if spec.language != "ru"}
    return not any(folder in path.parents for folder in other)


def ruleset_app(spec):
    """The Django app that registered ``spec`` (its package holds the ruleset's code and templates)."""
    return next(config for config in apps.get_app_configs() if type(spec).__module__.startswith(config.name + "."))


def test_every_string_of_the_templates_template_tags_and_code_has_a_russian_translation():
    catalogue = _russian_catalogue()
    sources = [(path, _template_messages) for path in _app_files("*.html") if _russian_pages(path)]
    sources += [(path, _python_messages) for path in _app_files("*.py")
                if "migrations" not in path.parts and _russian_pages(path)]
    assert sum(path.parent.name == "templatetags" for path, _extract in sources) >= 5
    assert len(sources) > 200  # the templates and modules were found
    missing = sorted({f"{path.relative_to(ROOT)}: {text!r}" for path, extract in sources
                      for text, key in extract(path) if not catalogue.get(key)})
    assert missing == [], "not in locale/ru/LC_MESSAGES/django.mo (translate in django.po, compile):\n" + "\n".join(
        missing)


def test_the_catalogue_check_sees_template_tags_templates_and_plurals():
    """The extraction above finds what it must: a template's ``translate`` and ``blocktranslate count``, and a
    template tag's ``_()``, each with its Russian translation."""
    catalogue = _russian_catalogue()
    badge = dict(_template_messages(ROOT / "templates" / "inboxes" / "_unread_badge.html"))
    assert badge == {"%(n)s unread message": ("%(n)s unread message", 0)}
    assert catalogue[("%(n)s unread message", 2)] == "%(n)s непрочитанных сообщений"
    tags = dict(_python_messages(ROOT / "inboxes" / "templatetags" / "threads.py"))
    assert {"New messages", "edited", "This message was hidden by a moderator."} <= set(tags)
    assert catalogue["New messages"] == "Новые сообщения"


def test_no_gettext_call_is_given_or_sits_inside_an_f_string():
    """The extractor reads an f-string as one opaque literal: ``_(f"...")`` extracts nothing, and neither does a
    ``_("...")`` written inside an f-string's braces; both leave the page English. Placeholders instead:
    ``_("... %(x)s") % {"x": ...}`` or ``format_html("...{}", _("..."))``."""
    hidden = []
    for path in _app_files("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for fstring in (n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)):
            hidden += [f"{path.relative_to(ROOT)}:{n.lineno}: {_call_name(n)}() inside an f-string"
                       for n in ast.walk(fstring) if isinstance(n, ast.Call) and _call_name(n) in GETTEXT_NAMES]
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _call_name(n) in GETTEXT_NAMES):
            if any(isinstance(arg, ast.JoinedStr | ast.BinOp) for arg in call.args):
                hidden.append(f"{path.relative_to(ROOT)}:{call.lineno}: {_call_name(call)}() of a built string")
    assert hidden == []
