"""Fill or replace Russian translations in locale/ru/LC_MESSAGES/django.po from a {msgid: msgstr} JSON file.

Usage: .venv/bin/python scripts/fill_translations.py FILE.json   (then scripts/update_translations.sh compiles)
Entries it fills lose their "fuzzy" flag. Only single-line msgids are handled (the common case).
"""
import json
import re
import sys
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "locale" / "ru" / "LC_MESSAGES" / "django.po"


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def main(path: str) -> None:
    wanted = json.loads(Path(path).read_text(encoding="utf-8"))
    blocks = PO.read_text(encoding="utf-8").split("\n\n")
    done = set()
    for i, block in enumerate(blocks):
        m = re.search(r'^msgid "(.*)"$', block, re.M)
        if not m:
            continue
        msgid = m.group(1).replace('\\"', '"')
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
