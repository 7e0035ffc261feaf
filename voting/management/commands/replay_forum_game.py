"""``manage.py replay_forum_game FILE.json [--json]``: replay a real forum game and compare with its host.

Reads one ``real-game-replay/v1`` file (tests/data/real_games/README.md), replays every day through the forum
day parser and tally (``voting.forum_replay``) and prints, per day, where our count ends the day, the result, our
count beside the host's final count, the host's mid-day counts checked against ours, and MATCH or DIFF; then the
winner. ``--json`` prints the same as one JSON object. Exit status 0 only if every day and the winner match;
1 otherwise (or for an unreadable file). Touches no database.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from voting.forum_replay import CountCheckStatus, DayReplay, GameReplay, ReplayFormatError, replay_forum_game
from voting.forum_vote import FORUM_NO_LYNCH, ForumNoLynchThreshold, ForumVoteRules


class Command(BaseCommand):
    help = ("Replay a real forum game (real-game-replay/v1 JSON) through the forum day vote count and compare every "
            "day with the host's official outcome. Exit status 0 only if every day matches.")
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE.json", help="a real-game-replay/v1 file")
        parser.add_argument("--json", action="store_true", help="print the replay as JSON instead of tables")

    def handle(self, *args, **options):
        path = Path(options["file"])
        try:
            game = json.loads(path.read_text(encoding="utf-8"))
            replay = replay_forum_game(game)
        except (OSError, ValueError) as error:  # ReplayFormatError and JSONDecodeError are ValueErrors
            detail = error if isinstance(error, ReplayFormatError) else f"cannot read {path}: {error}"
            raise CommandError(str(detail), returncode=1) from error
        if options["json"]:
            self.stdout.write(json.dumps(replay.as_dict(), indent=2, ensure_ascii=False))
        else:
            for line in replay_table(replay):
                self.stdout.write(line)
        if not replay.matches:
            differing = sum(not day.matches for day in replay.days)
            raise CommandError(f"{replay.game_key}: {differing} of {len(replay.days)} days and the winner: "
                               f"{'MATCH' if replay.winner_matches else 'DIFF'}; see above", returncode=1)


def replay_table(replay: GameReplay) -> list[str]:
    """The replay as text lines: a heading, a block per day, the winner and a summary line."""
    lines = [f"Replay of {replay.game_key}: {replay.seats} seats, {len(replay.days)} days; "
             f"rules: {describe_rules(replay.rules)}.", ""]
    for day in replay.days:
        lines.extend(_day_block(day))
        lines.append("")
    verdict = "MATCH" if replay.winner_matches else "DIFF"
    decided = f", decided after {replay.decided_after}" if replay.decided_after else ""
    lines.append(f"Winner: {replay.winner or 'undecided'}{decided} (host: {replay.host_winner})  {verdict}")
    lines.extend(f"    - {problem}" for problem in replay.problems)
    matching = sum(day.matches for day in replay.days)
    lines.append(f"Summary: {matching} of {len(replay.days)} days MATCH, winner {verdict}.")
    return lines


def describe_rules(rules: ForumVoteRules) -> str:
    """The day-ending rules in words, e.g. "a majority ends the day at once, no END-hammer, ..."."""
    parts = [
        "a majority ends the day at once" if rules.majority_ends_day else "a majority alone does not end the day",
        "END-hammer" if rules.end_hammer else "no END marks needed",
        ("No Lynch needs " + ("one vote fewer than a lynch"
                              if rules.no_lynch_threshold is ForumNoLynchThreshold.ONE_FEWER else "the same majority"))
        if rules.no_lynch_allowed else "no No Lynch",
        "self-votes count" if rules.self_votes_allowed else "no self-votes",
        f"deadline: {rules.deadline_outcome.value.replace('_', ' ')}",
    ]
    return ", ".join(parts)


def _day_block(day: DayReplay) -> list[str]:
    verdict = "MATCH" if day.matches else "DIFF"
    at = "deadline after post" if day.how == "deadline" else "ends at post"
    ours = (f"{at} {day.ended_at}: {_result(day.result, day.eliminated)}" if day.ended_at is not None
            else "never ends")
    final = (f"final count in post {day.host_count_post}" if day.host_count_post is not None
             else "no final count")
    lines = [f"D{day.day}  {verdict}  {ours}  (host: {_result(day.host_result, day.host_eliminated)}; "
             f"{final}, day closed in post {day.announced_in_post})"]
    targets = list(day.our_count) + [target for target in day.host_count if target not in day.our_count]
    rows = [(_label(target), _cell(day.our_count.get(target, ())), _cell(day.host_count.get(target, ())))
            for target in targets]
    heading = ("target", f"our count at post {day.ended_at}" if day.ended_at is not None else "our count",
               f"host's final count (post {day.host_count_post})" if day.host_count_post is not None
               else "host's final count (none)")
    widths = [max(len(row[i]) for row in [heading, *rows]) for i in range(3)]
    for row in [heading, *rows]:
        lines.append("    " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    agree = sum(check.status is CountCheckStatus.AGREE for check in day.checks)
    host_errors = [check for check in day.checks if check.status is CountCheckStatus.HOST_ERROR]
    summary = f"    mid-day counts: {agree} of {len(day.checks)} agree"
    if host_errors:
        summary += f", {len(host_errors)} host error(s) (documented)"
    lines.append(summary)
    for check in day.checks:
        if check.status is not CountCheckStatus.AGREE:
            note = f": {check.note}" if check.note else f": ours {_flat(check.ours)}; host {_flat(check.host)}"
            lines.append(f"      count at post {check.post}: {check.status.value}{note}")
    lines.extend(f"    skipped (expected_valid: false): {action.describe()}" for action in day.skipped)
    lines.extend(f"    - {problem}" for problem in day.problems)
    return lines


def _result(result: str | None, eliminated: str | None) -> str:
    if result == "lynch":
        return f"lynch {eliminated}"
    return {"no_lynch": "No Lynch", "nobody": "nobody eliminated"}.get(str(result), str(result))


def _label(target: str) -> str:
    return "No Lynch" if target == FORUM_NO_LYNCH else target


def _cell(voters: tuple[str, ...]) -> str:
    return f"{len(voters)}  {' '.join(voters)}" if voters else "-"


def _flat(count) -> str:
    return "; ".join(f"{_label(target)}: {' '.join(voters)}" for target, voters in count.items()) or "no votes"
