"""Fill or replace Russian translations in locale/ru/LC_MESSAGES/django.po from a {msgid: msgstr} JSON file.

Usage: .venv/bin/python scripts/fill_translations.py FILE.json   (then scripts/update_translations.sh compiles)
Entries it fills lose their "fuzzy" flag. Wrapped (multi-line) msgids are matched by their joined text; plural
entries are not handled.
"""
import json
import re
import sys
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "locale" / "ru" / "LC_MESSAGES" / "django.po"


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _msgid_of(block: str) -> str | None:
    """The unescaped msgid of a .po block (its continuation lines joined), or None when it has none."""
    lines = block.splitlines()
    for n, line in enumerate(lines):
        if line.startswith('msgid "'):
            parts = [line[len("msgid "):], *lines[n + 1:n + 1 + _continuations(lines, n)]]
            text = "".join(part[1:-1] for part in parts)
            return text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    return None


def _continuations(lines: list[str], n: int) -> int:
    """How many string-continuation lines follow line ``n``."""
    count = 0
    for line in lines[n + 1:]:
        if not line.startswith('"'):
            break
        count += 1
    return count


def main(path: str) -> None:
    wanted = json.loads(Path(path).read_text(encoding="utf-8"))
    blocks = PO.read_text(encoding="utf-8").split("\n\n")
    done = set()
    for i, block in enumerate(blocks):
        msgid = _msgid_of(block)
        if msgid is None:
            continue
        if msgid not in wanted:
            continue
        lines = block.splitlines()
        head = lines[: next(n for n, ln in enumerate(lines) if ln.startswith("msgstr"))]
        head = [re.sub(r"^#, fuzzy, ", "#, ", ln) for ln in head if ln != "#, fuzzy" and not ln.startswith("#|")]
        blocks[i] = "\n".join(head + [f'msgstr "{escape(wanted[msgid])}"'])
        done.add(msgid)
    PO.write_text("\n\n".join(blocks), encoding="utf-8")
    missing = set(wanted) - done
    if missing:
        sys.exit(f"not found in django.po: {sorted(missing)}")


if __name__ == "__main__":
    main(sys.argv[1])
