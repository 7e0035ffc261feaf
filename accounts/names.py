"""Display names that cannot impersonate the site, a member of staff or another player.

A name is shown on every post; a name that looks like another is a way to pass for someone else. A new name, at
sign-up or at any change, is refused when:

* it holds a control, format or invisible character (Unicode categories Cc, Cf, Co, Cs, Cn, Zl, Zp, and the
  blank letters such as U+3164): a right-to-left override or a zero-width joiner changes how a name reads
  without changing how it looks;
* one of its words mixes look-alike letters of different scripts (a Cyrillic «а» among Latin letters), which no
  honest name needs (``confusable_homoglyphs.is_dangerous``);
* it is, or contains as words, a reserved name: the site's own author name and the staff role titles in English
  and Russian;
* its confusable skeleton (Unicode TR39: each character mapped to its prototype, from the Unicode confusables
  data shipped by ``confusable_homoglyphs``; case folded; separators dropped) equals the skeleton of another
  account's public name.

Used by the sign-up form, the allauth adapter (usernames are public names when no display name is given) and the
operators' user form. Staff posts carry a role badge rendered from the author's staff role, which no name can
produce (templates/inboxes/thread.html).
"""
from __future__ import annotations

import functools
import re
import unicodedata

from confusable_homoglyphs import confusables
from django.core.exceptions import ValidationError
from django.utils import translation
from django.utils.translation import gettext as _

#: The author name of the site's own messages (``inboxes.services.do_post_site_message``).
SITE_AUTHOR_NAME = "Mafia Host"

#: Reserved names beyond the staff roles' titles (added in English and Russian from the staff kinds the rulesets
#: register, ``cities.staff_kinds.staff_kind_choices``).
RESERVED_NAMES = (
    SITE_AUTHOR_NAME, "Мафия Хост", "Procurator", "Прокурор", "Tribune", "Трибун", "Supreme Arbiter", "Arbiter",
    "Верховный Арбитр", "Арбитр", "Consigliere", "Консильери", "Консильере", "Admin", "Administrator",
    "Администратор", "Moderator", "Модератор", "Staff", "Staff member",
)

#: Characters that render as nothing or as a blank although they are letters or symbols.
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180e")
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


@functools.cache
def _prototype_map() -> dict[str, str]:
    """Character -> its representative in the Unicode confusables data (TR39's confusables.txt as shipped by
    ``confusable_homoglyphs``, which stores each source/prototype pair in both directions). Each connected group
    maps to one representative: a multi-character prototype if any, else the character with most look-alikes,
    then ASCII, then the lowest code point. Two strings confusable by TR39 get equal skeletons."""
    data = confusables.confusables_data
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def clean(key: str) -> str:  # the shipped data keeps the direction marks around right-to-left letters
        return key.replace("\u200e", "").replace("\u200f", "") or key

    for char, entries in data.items():
        for entry in entries:
            a, b = find(clean(char)), find(clean(entry["c"]))
            if a != b:
                parent[a] = b
    groups: dict[str, list[str]] = {}
    for node in list(parent):
        groups.setdefault(find(node), []).append(node)

    def rank(node: str):
        return (node.isascii() and node.isalnum(), len(node) > 1, node.isascii(), len(data.get(node, ())),
                -ord(node[0]))

    mapping = {}
    for members in groups.values():
        representative = max(members, key=rank)
        for node in members:
            if len(node) == 1 and node != representative:
                mapping[node] = representative
    return mapping


def skeleton(text: str) -> str:
    """The TR39 skeleton of ``text``: NFD, each character replaced by its prototype, NFD again."""
    mapping = _prototype_map()
    decomposed = unicodedata.normalize("NFD", text or "")
    return unicodedata.normalize("NFD", "".join(mapping.get(ch, ch) for ch in decomposed))


def _folded(word: str) -> str:
    """``word``'s skeleton without case: each character by the skeleton of itself, its upper or its lower case,
    whichever is Latin (a Cyrillic «к» reads as «k» though only «К» is listed as confusable with «K»), then case
    folded and mapped once more."""
    out = []
    for ch in unicodedata.normalize("NFD", word):
        variants = [skeleton(ch), skeleton(ch.upper()), skeleton(ch.lower())]
        out.append(next((v for v in variants if v.isascii()), variants[0]))
    return skeleton("".join(out).casefold())


def _words(text: str) -> list[str]:
    """The words of ``text`` (split at anything but letters and digits), each as its case-folded skeleton."""
    words = re.split(r"[\W_]+", unicodedata.normalize("NFKC", text or ""))
    return [_folded(w) for w in words if w]


def name_skeleton(name: str) -> str:
    """The comparison key of a public name: its case-folded TR39 skeleton with every separator dropped
    ("Тribun_Grakh" with a Cyrillic Т and "tribun grakh" share one). "" for an empty name."""
    return "".join(_words(name))


def _reserved() -> list[list[str]]:
    from cities.staff_kinds import staff_kind_choices  # at call time: accounts.models loads this module first

    titles = set(RESERVED_NAMES)
    for language in ("en", "ru"):
        with translation.override(language):
            titles |= {str(label) for _value, label in staff_kind_choices()}
    return [_words(title) for title in sorted(titles)]


def _contains(words: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def impersonation_problem(name: str, *, exclude_user_id: int | None = None) -> str | None:
    """Why ``name`` (a display name or a username) could impersonate someone, as a message for the person
    choosing it, or None when it may be used. ``exclude_user_id``: the account changing its own name. One query
    (the skeleton clash)."""
    if not name:
        return None
    for ch in name:
        if ch in INVISIBLE or unicodedata.category(ch) in FORBIDDEN_CATEGORIES:
            return _("A name may not contain invisible or text-direction control characters.")
    normalized = unicodedata.normalize("NFKC", name)
    if any(confusables.is_dangerous(word) for word in re.split(r"[\s_\-.]+", normalized) if word):
        return _("This name mixes look-alike letters of different alphabets (for example a Cyrillic «а» among "
                 "Latin letters).")
    words = _words(name)
    key = "".join(words)
    for phrase in _reserved():
        if phrase and (_contains(words, phrase) or key == "".join(phrase)):
            return _("This name is reserved: it could pass for the site or for a member of staff.")
    from django.contrib.auth import get_user_model

    others = get_user_model().objects.filter(name_skeleton=key)
    if exclude_user_id is not None:
        others = others.exclude(pk=exclude_user_id)
    if key and others.exists():
        return _("This name looks like the name of another player.")
    return None


def validate_public_name(name: str, *, exclude_user_id: int | None = None) -> None:
    """Raise ``ValidationError`` with ``impersonation_problem``'s message when ``name`` could impersonate."""
    problem = impersonation_problem(name, exclude_user_id=exclude_user_id)
    if problem is not None:
        raise ValidationError(problem, code="impersonation")
