"""The M21 ruleset's spec (RULES.md Part 2): what the shared engine asks ``ruleset_of(game)`` for an M21 game."""
from __future__ import annotations

from datetime import time
from types import MappingProxyType

from django.urls import reverse

from rulesets.m21.kinds import M21InboxKind
from kernel.ruleset_parts import PhasePlan
from kernel.rulesets import RulesetSpec

from .audit_sentences import AUDIT_SENTENCES, EVENT_FAMILIES
from .events import M21ScheduledKind
from .night_pages import MORNING_POST_SECTIONS
from .policy_grants import POLICY_GRANTS
from .staff_kinds import STAFF_KINDS


class M21Ruleset(RulesetSpec):
    """M21: one town of players in no city, English pages, Europe/London, days of 48 h and nights of 24 h shifting
    at 22:00 (M-SETUP-1/2); the host (the Procurator) and co-hosts run every inbox and know every role (M-SETUP-4); the
    game thread's posts are parsed for ``##VOTE`` (M-VOTE)."""

    key = "m21"
    name = "M21"
    language = "en"
    default_time_zone = "Europe/London"
    phase_plan = PhasePlan(day_start=time(22, 0), extra={"day_hours": 48, "night_hours": 24})
    #: M-SETUP-4: the host (labelled "Host") and any number of co-hosts.
    staff_kinds = STAFF_KINDS
    #: The ruleset's own inbox kinds (``kinds.M21InboxKind``).
    inbox_kind_choices = tuple(M21InboxKind.choices)
    standing_inbox_kinds = (M21InboxKind.GAME_THREAD, M21InboxKind.MAFIA_THREAD, M21InboxKind.SPECTATORS,
                            M21InboxKind.OFFICE, M21InboxKind.ROLE_PM)
    #: M-SETUP-5: the game thread, the mafia thread, each player's role PM with the hosts, the spectators' thread
    #: and the hosts' office, nothing else; nobody opens an inbox of their own (no private channel).
    inbox_kinds = frozenset(standing_inbox_kinds)
    #: A player's role PM, the mafia thread and the hosts' office notify their readers; the game thread and the
    #: spectators' thread only those a post mentions. The site's messages in a role PM (a night's result, an
    #: action's confirmation) and in the mafia thread are worded by ``texts["notification_night_result"]``.
    reader_notified_inbox_kinds = frozenset({M21InboxKind.ROLE_PM, M21InboxKind.MAFIA_THREAD, M21InboxKind.OFFICE})
    night_result_inbox_kinds = frozenset({M21InboxKind.ROLE_PM, M21InboxKind.MAFIA_THREAD})
    post_hook_kinds = (M21InboxKind.GAME_THREAD,)
    #: The clock's kinds (``events.M21ScheduledKind``): each is handled here and its ``scheduler.<kind>`` row is
    #: the hosts'.
    scheduled_event_kinds = tuple(M21ScheduledKind)
    scheduler_kinds = tuple(kind.value for kind in M21ScheduledKind)
    #: The hosts' and the spectators' grants, and the hosts' knowledge of alignments (``policy_grants``).
    policy_grants = POLICY_GRANTS
    first_action_night = 1
    #: The audit log's sentences of the ``m21.*`` kinds and who among the staff browses them (the hosts).
    audit_sentences = AUDIT_SENTENCES
    event_families = EVENT_FAMILIES
    #: An M21 game is one town of players, no city: its seats, inboxes and hosts have none.
    has_cities = False
    #: M21 has none of Lepra's shared pages: its day, night and setup are its own pages.
    page_sections = frozenset()
    #: The rule each refusal of the shared engine cites in an M21 game (``RulesetSpec.rule_ids``: neutral key ->
    #: rule ID); the refusals M21's rules do not speak of cite none.
    rule_ids = MappingProxyType({
        "procurator_only": "M-SETUP-4",  # the host runs the game
        "staff_not_players": "M-SETUP-4",
        "replacement": "M-SETUP-4",
        "dead_are_silent": "M-SETUP-3",  # the eliminated do not post in the game thread
        "spectator_not_player": "M-SETUP-3",  # a spectator never takes a seat (the spectators' thread is theirs)
        "secret_inbox": "M-SETUP-5",  # no private channel but those the host endorses
        "secret_inbox_staff": "M-SETUP-5",
    })
    texts = MappingProxyType({
        "dead_may_not_post": "Eliminated players may not post in the game thread: talk in the spectators' "
                             "thread (M-SETUP-3).",
        "imprisoned_may_not_post": "Eliminated players may not post in the game thread: talk in the spectators' "
                                   "thread (M-VOTE-6, M-SETUP-3).",
        "archive_log_in_to_open": "Log in to open the mafia thread.",
        "procurator_title": "Host",
        "side_honest": "Town",  # a player's side, as the flips say it (M-VOTE-6)
        "side_mafia": "Mafia",
        "won_town": "The town won.",
        "won_mafia": "The mafia won.",
        "no_winner": "The game ended without a winner.",
        # A site message in a role PM is a night result, an action's confirmation or a host's word (M-NIGHT-1).
        "notification_night_result": "%(game)s: news from the hosts in your role PM “%(inbox)s”.",
    })
    new_game_url_name = "m21_new_game"
    urls_module = "rulesets.m21.urls"
    summary = "English, one game thread, power roles"
    has_demo = True
    archive_sections = ("cast", "votes", "receipts", "nights", "disclosure", "deal")
    votes_page_sections = ("votes",)
    #: M-NIGHT-4: the morning's deaths with roles, then the reporter's headlines.
    daily_post_sections = ("deaths", "herald")
    #: None of the console's Lepra tools: the hosts run the game from the M21 console page (M-SETUP-4); a stage
    #: would let the dead and the imprisoned talk to the living.
    console_tools = MappingProxyType({})

    def game_page_links(self, game, *, is_staff: bool) -> list[tuple[str, str]]:
        """The M21 game page (the day's count, deadline and powers) and, for the hosts, its setup page."""
        links = [("The day: vote count, deadline, powers", reverse("m21_game", args=[game.slug]))]
        if is_staff:
            links.append(("M21 setup", reverse("m21_setup", args=[game.slug])))
        return links

    #: An M21 seat's role, sanity and uses live in ``M21Seat`` (``resident.m21_seat``), read by M21's own pages and
    #: night through the hosts' and the flips' rules (M-ROLE, M-VOTE-6): the shared pages show no rank and no public
    #: position of an M21 seat, its posting follows alive / dead / imprisoned alone, and its standing thread's
    #: members are M21's (``create_standing_inboxes``). So no seat state is selected with the seats, no rank is in
    #: the knowledge matrix, and the default answers of the seat hooks (no rank, no position, no state, nothing
    #: after a death beyond ``after_death_memberships``) are M21's.
    seat_state_relations = ()
    seat_roles = ()

    #: A death bans the seat from the game thread, removes it from the mafia thread and makes it a spectator
    #: (M-SETUP-3); M21 has no city inbox, voting inbox or cemetery.
    own_death_memberships = True

    def after_death_memberships(self, game, residents, *, cause: str, spirit_of, now) -> None:
        """M-VOTE-6, M-NIGHT-4, M-SETUP-3: each dead seat flips (its role is announced) and leaves the living's
        threads for the spectators' thread."""
        from cities.models import Resident  # the models, which the spec must not need at import

        from .day_services import _seat_leaves_the_living

        del spirit_of  # M21 has no spirits
        Resident.objects.filter(pk__in=[r.pk for r in residents]).update(alignment_announced=True)
        for resident in residents:
            resident.alignment_announced = True
            _seat_leaves_the_living(resident, reason=cause, now=now)

    #: The game page lists the signed-up players before the deal, as a forum sign-up thread does.
    public_signups = True
    #: The day's deadline, the night's end and the Judge's casting window are reminded (``reminders``).
    reminder_texts = MappingProxyType({
        "m21_day_deadline": "%(game)s: the day ends at %(when)s (%(zone)s). Have your vote in place (M-VOTE-5).",
        "m21_night_end": "%(game)s: the night ends at %(when)s (%(zone)s). Send or check your night action.",
        "m21_casting_window_end": "%(game)s: the day ended in a tie; your casting vote as the Judge closes at "
                                  "%(when)s (%(zone)s).",
    })

    def reminder_audience(self, event) -> list:
        """Whom an approaching M21 deadline concerns (``rulesets.m21.reminders``)."""
        from .reminders import reminder_audience  # it reads the models, which the spec must not need at import

        return reminder_audience(event)

    def site_message_notice(self, kind: str, body: str):
        """A role PM's site message is told as the role card, an action recorded or a prod (``notices``)."""
        from .notices import notice_of

        return notice_of(body)

    #: M-SETUP-6 [interp]: the game thread is public during the game unless the host makes it members-only.
    public_while_running_kinds = (M21InboxKind.GAME_THREAD,)

    def public_while_running(self, game) -> bool:
        """The host's setting (``M21Game.game_thread_public``); a game without M21 settings is members-only."""
        from .models import M21Game  # the spec must not need the models at import

        try:
            return game.m21.game_thread_public
        except M21Game.DoesNotExist:
            return False

    def public_while_running_q(self):
        """The query form of ``public_while_running`` over Inbox."""
        from django.db.models import Q

        return Q(game__m21__game_thread_public=True)

    #: M-SETUP-3 [interp]: the spectators' thread is for those out for good (``seats_held_back``).
    held_back_kinds = (M21InboxKind.SPECTATORS,)

    def seats_held_back(self, game) -> frozenset[int]:
        """The imprisoned seats a bust-out could still bring back (``rulesets.m21.bust_out``): they neither read
        nor post in the spectators' thread yet."""
        from .bust_out import seats_held_back  # it reads the models, which the spec must not need at import

        return seats_held_back(game)

    def check_victory(self, game) -> str | None:
        """M-WIN-1 over the living: "town", "mafia" or None."""
        from .game_end import m21_winner  # it imports the models, which the spec must not need at import

        return m21_winner(game)

    def archive_section(self, game, key: str, *, viewer):
        """One section of the M21 archive (``rulesets.m21.archive``): an ``ArchiveSection`` or None."""
        from .archive import archive_section  # the archive reads the models, which the spec must not need at import

        return archive_section(game, key, viewer=viewer)

    def demo_exists(self) -> bool:
        """True when the M21 demo game (``rulesets.m21.demo``) is loaded."""
        from .demo import demo_exists  # the demo reads the models, which the spec must not need at import

        return demo_exists()

    def load_demo(self, *, make_user, rng, now) -> None:
        """Build the M21 demo game (``rulesets.m21.demo.load_m21_demo``)."""
        from .demo import load_m21_demo  # the demo calls the services, which the spec must not need at import

        load_m21_demo(make_user=make_user, rng=rng, now=now)

    def demo_logins(self, url: str) -> list[str]:
        """The M21 demo's personas as ``manage.py load_demo`` prints them."""
        from .demo import demo_logins  # the demo reads the models, which the spec must not need at import

        return demo_logins(url)

    def daily_post_section(self, game, day: int, key: str, context) -> str:
        """One section of the morning post (``night_pages.MORNING_POST_SECTIONS``; ``context`` a
        ``night_pages.MorningPost``); reads no row, so ``game`` may be None."""
        return MORNING_POST_SECTIONS[key](context)
