"""Run a command of the site (``manage.py ...`` or ``-m celery ...``) on the e2e tests' shared game clock.

Usage (by ``tests/e2e/stack.py``, never by hand)::

    python tests/e2e/clock_run.py CLOCK_FILE NAME manage.py runserver ...
    python tests/e2e/clock_run.py CLOCK_FILE NAME -m celery -A mafia_site worker ...

``CLOCK_FILE`` holds one line ``<version> <offset seconds>``: the game time is the real time plus the offset, in
every process of the stack at once (web server, Celery worker and beat, ``run_due_events``). The process travels
there with ``time_machine`` (ticking, so time flows as usual) before the command starts; a daemon thread polls the
file and moves the process's clock when the test advances it, then writes ``CLOCK_FILE.ack.NAME`` with the
version it applied, so the test knows every process has moved before it goes on. Nothing sleeps for game time:
advancing the clock by hours takes one poll (50 ms).
"""
from __future__ import annotations

import os
import runpy
import sys
import threading
import time
from pathlib import Path

import time_machine

POLL_SECONDS = 0.05


def read_clock(path: Path) -> tuple[int, float]:
    """``(version, offset seconds)`` from the clock file."""
    version, offset = path.read_text().split()
    return int(version), float(offset)


def write_ack(path: Path, name: str, version: int) -> None:
    ack = path.with_name(f"{path.name}.ack.{name}")
    tmp = ack.with_name(ack.name + ".tmp")
    tmp.write_text(str(version))
    os.replace(tmp, ack)


def real_time() -> float:
    """The real time (seconds since the epoch), travelling or not."""
    hatch = time_machine.escape_hatch
    return hatch.time.time() if hatch.is_travelling() else time.time()


def follow(path: Path, name: str, traveller, version: int) -> None:
    """Poll the clock file forever; move this process's clock when its version changes."""
    while True:
        time.sleep(POLL_SECONDS)  # time.sleep is not patched: a real 50 ms
        try:
            new_version, offset = read_clock(path)
        except (OSError, ValueError):
            continue  # being replaced
        if new_version != version:
            traveller.move_to(real_time() + offset)
            version = new_version
            write_ack(path, name, version)


def main() -> None:
    clock_file, name, *command = sys.argv[1:]
    path = Path(clock_file)
    version, offset = read_clock(path)
    traveller = time_machine.travel(real_time() + offset, tick=True).start()
    write_ack(path, name, version)
    threading.Thread(target=follow, args=(path, name, traveller, version), daemon=True, name="e2e-clock").start()
    if command[0] == "-m":
        sys.argv = [command[1], *command[2:]]
        runpy.run_module(command[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = command
        sys.path.insert(0, str(Path(command[0]).resolve().parent))
        runpy.run_path(command[0], run_name="__main__")


if __name__ == "__main__":
    main()
