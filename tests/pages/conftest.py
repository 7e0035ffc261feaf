"""Fixtures of the page tests: a Russian catalogue that marks every msgid it lacks, so a page's English label
is caught only when it bypassed gettext (the catalogue itself is merged by the coordinator)."""
from __future__ import annotations

import re

import pytest
from django.utils.translation import trans_real

#: Prefix given by ``marked_russian`` to a msgid that went through gettext but has no Russian entry yet.
MARK = "Ж"


@pytest.fixture
def marked_russian(monkeypatch):
    """Make the Russian catalogue return ``MARK + msgid`` for each English msgid it does not translate."""
    original = trans_real.DjangoTranslation.gettext

    def gettext(self, message):
        result = original(self, message)
        if self.language() == "ru" and result == message and re.search("[A-Za-z]", message):
            return MARK + message
        return result

    monkeypatch.setattr(trans_real.DjangoTranslation, "gettext", gettext)
    return MARK
