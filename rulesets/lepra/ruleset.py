"""The Lepra ruleset's spec (RULES.md L-*): what the shared engine asks ``ruleset_of(game)`` for a Lepra game."""
from __future__ import annotations

from datetime import time
from types import MappingProxyType

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from cities.models import Alignment, GameStatus, LifeStatus
from rulesets.lepra import inbox_services
from rulesets.lepra.kinds import LepraInboxKind
from kernel.ruleset_parts import PhasePlan, SeatRole
from kernel.rulesets import RulesetSpec
from rulesets.lepra import notifications, seats, timeline, victory
from rulesets.lepra.clock.daily_post import DAILY_POST_SECTIONS
from rulesets.lepra.game_end_services import scoreboard_of
from rulesets.lepra.night.services import do_after_day_death, night_state_of, touring_rotation_list
from rulesets.lepra.staff_kinds import StaffKind

from .audit_sentences import AUDIT_KIND_CODES, AUDIT_PAYLOAD_CODES, AUDIT_SENTENCES
from .events import EVENT_FAMILIES, LepraEventKind, LepraScheduledKind
from .night import FIRST_ACTION_NIGHT, NIGHT_STEPS
from .policy_grants import POLICY_GRANTS
from .staff_kinds import STAFF_KINDS


class LepraRuleset(RulesetSpec):
    """Lepra: cities with a day vote and a Supreme Court, judges, the draws, the night of kills, touring and
    checks (L-NIGHT), victory per city (L-WIN-1). Russian pages, Moscow time, days from 10:00 (L-DAY-1), a planned
    game of 10-14 days (L-DAY-6); the recruitment and daily posts are public to everyone (L-INBOX-16)."""

    key = "lepra"
    name = _("Lepra")
    language = "ru"
    default_time_zone = "Europe/Moscow"
    phase_plan = PhasePlan(day_start=time(10, 0))
    #: L-STAFF-1..4: the Procurator (the game's host), a Tribune per city, the Supreme Arbiter, the Consigliere.
    staff_kinds = STAFF_KINDS
    #: The L-INBOX table's standing inboxes: city (L-INBOX-1), personal (L-INBOX-5), cemetery (L-INBOX-6), office
    #: (L-INBOX-7), bar (L-INBOX-8), police station (L-INBOX-3), supreme court (L-INBOX-2).
    #: The ruleset's own inbox kinds (``kinds.LepraInboxKind``).
    inbox_kind_choices = tuple(LepraInboxKind.choices)
    standing_inbox_kinds = (LepraInboxKind.CITY, LepraInboxKind.PERSONAL, LepraInboxKind.CEMETERY, LepraInboxKind.OFFICE, LepraInboxKind.BAR,
                            LepraInboxKind.POLICE, LepraInboxKind.COURT)
    #: The L-INBOX table's kinds: the standing ones, the draw's mafia inboxes and notary, the day's voting inboxes,
    #: precincts and removal demands, the check channel, stages, impeachments (L-INBOX-14), complaints and secret
    #: inboxes.
    inbox_kinds = frozenset({*standing_inbox_kinds, LepraInboxKind.MAFIA, LepraInboxKind.NOTARY, LepraInboxKind.VOTING,
                             LepraInboxKind.PRECINCT, LepraInboxKind.REMOVAL, LepraInboxKind.CHECK, LepraInboxKind.STAGE,
                             LepraInboxKind.IMPEACHMENT, LepraInboxKind.COMPLAINT, LepraInboxKind.MAFIA_COMPLAINT, LepraInboxKind.SECRET})
    #: L-INBOX-13: residents and staff (but the Consigliere) open secret inboxes.
    self_opened_inbox_kinds = frozenset({LepraInboxKind.SECRET})
    #: The parts the shared services name: secret inboxes (L-INBOX-13), the Procurator's stages (L-INBOX-19), a city's
    #: square (L-INBOX-1), the impeachment inbox (L-INBOX-14), the bar (L-INBOX-8) and the complaints of no
    #: confidence in the Arbiter and in the Consigliere (L-IMPEACH-3).
    inbox_kind_roles = MappingProxyType({
        "secret": LepraInboxKind.SECRET, "stage": LepraInboxKind.STAGE, "city_square": LepraInboxKind.CITY,
        "impeachment": LepraInboxKind.IMPEACHMENT, "bar": LepraInboxKind.BAR,
        "arbiter_complaint": LepraInboxKind.COMPLAINT, "consigliere_complaint": LepraInboxKind.MAFIA_COMPLAINT,
    })
    #: "Your inboxes": the personal and secret inboxes, the team and staff inboxes a seat or a role is in; the
    #: city inbox, the court and the voting inboxes (a vote is a message) notify only those they mention. The site's
    #: messages in the check channel (L-NIGHT-5) and the mafia inbox (L-NIGHT) are night results.
    reader_notified_inbox_kinds = frozenset({LepraInboxKind.PERSONAL, LepraInboxKind.SECRET, LepraInboxKind.MAFIA, LepraInboxKind.CHECK,
                                             LepraInboxKind.OFFICE, LepraInboxKind.IMPEACHMENT, LepraInboxKind.COMPLAINT,
                                             LepraInboxKind.MAFIA_COMPLAINT, LepraInboxKind.REMOVAL})
    night_result_inbox_kinds = frozenset({LepraInboxKind.CHECK, LepraInboxKind.MAFIA})
    #: "My inboxes" shows first what a player opens most: their city, their personal inbox, the day's votes.
    inbox_kind_order = (
        LepraInboxKind.CITY, LepraInboxKind.PERSONAL, LepraInboxKind.VOTING, LepraInboxKind.PRECINCT, LepraInboxKind.MAFIA, LepraInboxKind.POLICE,
        LepraInboxKind.CHECK, LepraInboxKind.COURT, LepraInboxKind.REMOVAL, LepraInboxKind.STAGE, LepraInboxKind.SECRET, LepraInboxKind.IMPEACHMENT,
        LepraInboxKind.OFFICE, LepraInboxKind.BAR, LepraInboxKind.CEMETERY, LepraInboxKind.NOTARY, LepraInboxKind.COMPLAINT,
        LepraInboxKind.MAFIA_COMPLAINT,
    )
    post_hook_kinds = (LepraInboxKind.VOTING, LepraInboxKind.PRECINCT)
    scheduler_kinds = ("voting_open", "voting_close", "court_deadline", "election_open", "election_close")
    #: A game is played in several cities; every seat is in one of them (L-CITY-1).
    has_cities = True
    #: The L-INBOX table's staff grants (``policy_grants.POLICY_GRANTS``).
    policy_grants = POLICY_GRANTS
    night_steps = NIGHT_STEPS
    first_action_night = FIRST_ACTION_NIGHT
    #: The shared pages only Lepra has: the cities' day pages and nominations ("cities"); the touring rotation and
    #: the night page (L-NIGHT, "touring"); the Procurator's setup pages, mafia numbers and commissar offers
    #: ("lepra_setup"); the Procurator's scheduled public posts (L-POST-2, "scheduled_posts"); the verification of the mafia draw (L-ASSIGN-3, "mafia_draw"); impeachment, the
    #: mafia's role acknowledgement and complaints of no confidence ("lepra_staff", ``staff_views``).
    page_sections = frozenset({"cities", "touring", "lepra_setup", "scheduled_posts", "mafia_draw", "lepra_staff"})
    #: The audit log's sentences of the kinds only Lepra records, and the payload codes they word (L-STAFF-6).
    audit_sentences = AUDIT_SENTENCES
    audit_payload_codes = AUDIT_PAYLOAD_CODES
    audit_kind_codes = AUDIT_KIND_CODES
    #: The event kinds Lepra's services record and those they plan, with their audiences (L-STAFF-6).
    event_kinds = tuple(LepraEventKind)
    event_families = EVENT_FAMILIES
    scheduled_event_kinds = tuple(LepraScheduledKind)
    #: The vote tables of each day and city with their charts (L-ARCH-3, ``rulesets.lepra.archive``).
    votes_page_sections = ("vote_tables",)
    texts = MappingProxyType({
        "dead_may_not_post": _("The dead have no voice among the living: they post only in the cemetery, their "
                               "personal inbox and on a stage opened for them."),
        "imprisoned_may_not_post": _("An imprisoned player posts only in their personal inbox."),
        "archive_log_in_to_open": _("Log in to open the mafia inboxes, the office and the bar."),
        "procurator_title": _("Procurator"),
        "won_honest": _("The honest residents won."),
        "won_mafia": _("The mafia won."),
        "no_winner": _("The game ended without a winner."),
        #: L-INBOX-13: the staff kinds of ``policy_grants["secret_barred_staff"]`` (the Consigliere).
        "secret_inbox_barred_staff": _("The Consigliere may not take part in secret inboxes."),
        #: L-IMPEACH-3: the mafia, read-only members of their complaint, write on its page, signed by their city.
        "complaint_page_posting": _("Write to the Procurator on the complaint page: your messages are signed “the "
                                    "mafia of %(city)s”."),
    })
    new_game_url_name = "new_game"
    #: The Procurator's setup page (``rulesets.lepra.setup.setup_views``).
    after_create_url_name = "game_setup"
    urls_module = "rulesets.lepra.urls"
    #: Reminded deadlines: nominations close when voting opens (L-NOM), voting closes (L-VOTE-8), the night ends.
    #: The date and the time are separate: a language puts its own words between them («6 декабря в 18:00»).
    reminder_texts = MappingProxyType({
        "voting_open": _("%(game)s: nominations close on %(date)s at %(time)s (%(zone)s)."),
        "voting_close": _("%(game)s: voting closes on %(date)s at %(time)s (%(zone)s)."),
        "night_end": _("%(game)s: the night ends on %(date)s at %(time)s (%(zone)s)."),
    })

    def reminder_audience(self, event) -> list:
        """The living residents of the deadline's city and its Tribune (``rulesets.lepra.notifications``)."""
        return notifications.city_deadline_audience(event)

    def record_notifications(self, *, since, now, live_statuses) -> list[tuple[int, str, dict]]:
        """A commissar offer told to its candidate, a proxy request to its city's Tribune (L-COMM, L-VOTE-4,
        ``rulesets.lepra.notifications``)."""
        return notifications.record_notifications(since=since, now=now, live_statuses=live_statuses)

    def record_notification_querysets(self) -> list:
        """The offers and proxy requests, with what the notification hooks read (``rulesets.lepra.notifications``)."""
        return notifications.record_querysets()

    def record_still_allowed(self, user, record) -> bool:
        """An offer while unanswered, to its living candidate; a proxy request while waiting, to its city's Tribune
        (L-COMM, L-VOTE-4)."""
        return notifications.record_still_allowed(user, record)

    def record_notification_text(self, notification) -> str:
        """The offer's or the proxy request's line."""
        return notifications.record_notification_text(notification)

    def record_notification_url(self, notification) -> str:
        """The offer's page, the proxy request's city day."""
        return notifications.record_notification_url(notification)

    def attention_items(self, user, game, seat) -> list[tuple[str, str]]:
        """A commissar offer awaiting the seat's answer (L-COMM)."""
        return notifications.attention_items(user, game, seat)

    def self_told_inbox_ids(self, inbox_ids) -> set[int]:
        """The commissar offers' inboxes: the site's messages there are the offer, told as one."""
        return notifications.offer_inbox_ids(inbox_ids)

    def draw_record_q(self):
        """The mafia draw's notary (L-ASSIGN-3)."""
        return notifications.draw_notary_q()

    def is_draw_record(self, inbox) -> bool:
        """Whether ``inbox`` is the mafia draw's notary (L-ASSIGN-3)."""
        return notifications.is_draw_notary(inbox)

    def recorded_winner(self, game) -> str | None:
        """The winner recorded at the game's end (``GameResult``, else its ``game.finished`` event, L-WIN)."""
        return notifications.recorded_winner(game)

    def timeline_records(self, game) -> dict:
        """The voting sessions and court cases the archive's timeline names (``rulesets.lepra.notifications``)."""
        return notifications.timeline_records(game)

    def timeline_line(self, event, shown: str, *, viewer, residents, cities, finished: bool, related):
        """The archive timeline's line of a Lepra event (``rulesets.lepra.timeline``, L-ARCH-3)."""
        del viewer
        return timeline.timeline_line(event, shown, residents=residents, cities=cities, finished=finished,
                                      related=related)

    #: The records of the day, the court, the judges, the commissar offers and the impeachment demands that the audit
    #: log names by public id;
    #: a proxy request and a suicide declaration (written in a personal inbox) tell their city's Tribune (L-STAFF-6).
    audit_reference_models = MappingProxyType({
        "session": "lepra.VotingSession", "case": "lepra.CourtCase", "proxy": "lepra.ProxyRequest",
        "declaration": "lepra.SuicideDeclaration", "demand": "lepra.RemovalDemand", "request": "lepra.SpeechRequest",
        "offer": "lepra.CommissarOffer", "impeachment": "lepra.ImpeachmentDemand",
    })
    audit_city_references = ("proxy", "declaration")
    #: An impeachment's "demand" is an impeachment demand (L-IMPEACH), not a judge's removal demand (L-JUDGE).
    audit_kind_references = MappingProxyType({kind: MappingProxyType({"demand": "impeachment"}) for kind in (
        LepraEventKind.IMPEACHMENT_DEMANDED, LepraEventKind.IMPEACHMENT_SIGNED, LepraEventKind.IMPEACHMENT_REACHED,
        LepraEventKind.IMPEACHMENT_OPENED, LepraEventKind.IMPEACHMENT_RULED)})

    #: The rule each refusal of the shared engine cites in a Lepra game (``RulesetSpec.rule_ids``: neutral key ->
    #: rule ID). The access policy's tables are these rules too: the engine's reading membership states (L-INBOX-17)
    #: and Lepra's per-kind tables (``policy_grants``, read by ``inboxes.policy_tables``): where the dead and a spirit
    #: post (L-DEATH-1, L-SPIRIT-2), the inboxes a dead seat knows as of its death (L-STAFF-6 [interp]), the kinds a
    #: penalty ban applies to (L-INBOX-18) and the consent before a personal or secret inbox is disclosed (L-ARCH-2).
    rule_ids = MappingProxyType({
        "procurator_only": "L-STAFF-1",  # the Procurator runs the game
        "staff_not_players": "L-STAFF-1",  # staff neither sign up nor hold a seat
        "city_staff": "L-STAFF-2",  # one Tribune per city, and the stand-ins
        "court_staff": "L-STAFF-3",  # the Supreme Arbiter's powers: the court inbox, penalty bans
        "secret_inbox_staff": "L-STAFF-4",  # the Consigliere takes no part in secret inboxes
        "one_staff_role": "L-STAFF-5",
        "secret_knowledge": "L-STAFF-6",  # the dead learn nothing created after their death
        "city_formation": "L-CITY-1",  # sign-ups, forming the cities, seating
        "city_size": "L-CITY-2",
        "recruitment_post": "L-POST-1",
        "replacement": "L-REPLACE-1",
        "alignment_by_draw": "L-ASSIGN-3",  # the site's draw sets who is mafia, nobody by hand
        "inbox_moderation": "L-INBOX",  # membership changes, rolling over, killing an inbox
        "secret_inbox": "L-INBOX-13",
        "inbox_ban": "L-INBOX-17",
        "penalty_ban": "L-INBOX-18",
        "stage_inbox": "L-INBOX-19",
        "message_edit": "L-INBOX-21",
        "message_hiding": "L-INBOX-21",  # a moderator hides a message for abuse; nothing is deleted
        "spirit": "L-SPIRIT-1",  # who becomes a spirit for the day: an honest resident killed that night
        "death": "L-DEATH-1",  # recording a death and what it does to the seat's memberships
        "dead_are_silent": "L-DEATH-1",
        "play_ban_offence": "L-SANCTION-1",
        "play_ban": "L-SANCTION-2",
        "open_on_request": "L-ARCH-1",
        "disclosure_consent": "L-ARCH-2",
    })
    #: L-POST-2, L-DEATH-2: the night's victims, yesterday's results per city, other deaths, judges, the score.
    daily_post_sections = ("night", "results", "other_deaths", "judges", "score", "game_over")
    #: The staff console's tools of Lepra's rules (L-STAFF, L-DAY, L-COURT, L-JUDGE, L-SANCTION), each with the
    #: words a refusal names it by.
    console_tools = MappingProxyType({
        "clock": _("the schedule of days and votings"),  # the day/night schedule, the daily post, a missed voting
        "stage": _("stage inboxes"),
        "record_death": _("recording a death from the residents' list"),
        "replace_player": _("replacing a player from the residents' list"),
        "penalty_ban": _("penalty bans"),  # the Arbiter's
        "voting": _("voting sessions, proxies, suicides and speech requests"),  # and voting times
        "court": _("court cases"),
        "judges": _("judges and judge elections"),  # city judges, elections, removal demands, election times
        "stand_ins": _("Tribune stand-ins"),
        "impeachment": _("impeachment demands"),
        "end_game_early": _("ending the game early"),  # with a reason
        "no_confidence": _("complaints of no confidence"),
        "play_bans": _("play bans"),
        "commissar_offers": _("commissar offers"),  # the offers awaiting an answer (a dashboard line)
    })

    #: The seat's Lepra ranks (``rulesets.lepra.models.LepraSeat``, read through ``rulesets.lepra.seats``).
    seat_state_relations = (seats.SEAT,)
    #: The secret ranks and who knows them (L-STAFF-6): the commissar to the Procurator, the city's Tribune, the
    #: commissars (the police station's roster, L-INBOX-3, L-COMM-4) and all once an announced death disclosed it
    #: (L-DEATH-2); the godfather to the Consigliere and the mafia of the city (L-NIGHT-3). Never the Consigliere
    #: the commissar.
    seat_roles = (
        SeatRole("commissar", heading=_("Role"), label=_("commissar"), staff_kinds=(StaffKind.PROCURATOR,),
                 city_staff_kinds=(StaffKind.TRIBUNE,), disclosed_by_announcement=True, peers=True,
                 roster_heading=_("Commissars (you may know them; keep it secret):")),
        SeatRole("godfather", heading=_("Mafia rank"), label=_("godfather"), staff_kinds=(StaffKind.CONSIGLIERE,),
                 city_alignment=Alignment.MAFIA),
    )

    def holds_seat_role(self, resident, key: str, moment=None) -> bool:
        """The commissar (``was_commissar_at``) or the godfather (``was_godfather_at``) at ``moment``."""
        return seats.holds_rank(resident, key, moment)

    def seat_role_q(self, key: str):
        """The residents holding the rank ``key`` now (a commissar for good, a godfather until replaced)."""
        return seats.rank_q(seats.RANK_FLAGS[key])

    def seat_knows_alignment(self, seat, resident) -> bool:
        """L-NIGHT-5: a commissar knows the alignment of those of his city he checked (one query, commissars only)."""
        return seats.checked_by_commissar(seat, resident)

    def public_seat_roles(self, resident) -> list[tuple[str, object]]:
        """A sitting judge (L-CITY-4) and a spirit of the day (L-SPIRIT-2) are public."""
        return seats.public_positions(resident)

    def seat_state(self, seat) -> str | None:
        """"spirit" for a spirit of the day (L-SPIRIT-2, ``policy_grants["seat_states"]``)."""
        return "spirit" if seats.is_spirit(seat) and seat.status != LifeStatus.ALIVE else None

    def end_seat_state(self, seat, *, now) -> None:
        """A spirit laid to rest (L-SPIRIT-2)."""
        seats.lay_spirit(seat)

    def standing_members(self, game, kind: str, residents) -> list | None:
        """The cemetery without the spirits (L-INBOX-6, L-SPIRIT-2), the police station of the living commissars
        (L-INBOX-3), the court of the living sitting judges (L-INBOX-2)."""
        return seats.standing_members(kind, residents)

    def standing_members_q(self, kind: str):
        """The query form of ``standing_members``."""
        return seats.standing_members_q(kind)

    def death_facts(self, game, residents) -> dict[int, dict]:
        """Whether each dead seat was a judge (``{"judge": bool}`` on ``resident.died``)."""
        return {r.pk: {"judge": seats.is_judge(r)} for r in residents}

    #: What a death does to the seat's inboxes is Lepra's (``after_death_memberships``).
    own_death_memberships = True

    def after_death_memberships(self, game, residents, *, cause: str, spirit_of, now) -> dict[int, list[int]]:
        """The dead leave the living's inboxes for the cemetery, a spirit keeps its votes (L-INBOX-1, L-INBOX-6,
        L-SPIRIT-2; ``inbox_services.death_memberships``); the killed inboxes by resident id."""
        return inbox_services.death_memberships(game, residents, spirit_of=spirit_of, now=now)

    def after_deaths(self, game, residents, *, spirit_of, cause: str, acting_user, now) -> None:
        """Spirits for the day (L-SPIRIT-1/2); a dead judge's seat vacated and the court renewed (L-INBOX-2)."""
        seats.after_deaths(game, residents, spirit_of=spirit_of, acting_user=acting_user, now=now)

    def create_standing_inboxes(self, game, *, now) -> list:
        """The L-INBOX table's standing inboxes (city, personal, cemetery, office, bar, police, court), skipping
        those that exist; ``WrongState`` when the staff who organize them are missing."""
        return inbox_services.do_open_game_inboxes(game, acting_user=None, now=now)

    def night_state(self, game, night: int):
        """The Lepra night state (residents, city order, touring city, L-NIGHT-4) of ``night``."""
        return night_state_of(game, night)

    def after_day_death(self, game, *, now) -> str | None:
        """L-NIGHT-3, L-WIN-1, L-JUDGE-2: a godfather election where the godfather died, the victory check, then
        judge elections where a judge died."""
        return do_after_day_death(game, acting_user=None, now=now)

    def check_victory(self, game) -> str | None:
        """L-WIN-1 over the living of every city: "honest", "mafia" or None."""
        board = scoreboard_of(game)
        return victory.decide_winner({int(k): victory.CityCount(v["honest"], v["mafia"]) for k, v in board.items()})

    def winner_among(self, game, residents) -> str | None:
        """L-WIN-1 over the living of ``residents``, all cities together: "honest", "mafia" or None."""
        alive = [r for r in residents if r.status == LifeStatus.ALIVE]
        mafia = sum(1 for r in alive if r.alignment == Alignment.MAFIA)
        return victory.decide_winner({0: victory.CityCount(honest=len(alive) - mafia, mafia=mafia)})

    def game_page_notes(self, game) -> list:
        """The public touring rotation from tonight on (L-NIGHT-4) for the shared game page; [] when none."""
        rotation = touring_rotation_list(game)
        if not rotation:
            return []
        # The template escapes every value it shows.
        return [mark_safe(render_to_string("lepra/game_page/touring.html", {"game": game, "touring_rotation": rotation}))]

    def thread_links(self, viewer, inbox, *, can_moderate: bool) -> list[tuple[str, str, str]]:
        """While the game runs: in a mafia inbox, the mafia's role acknowledgement (L-ASSIGN-4); a complaint of no
        confidence (L-IMPEACH-3) in the Consigliere from a mafia inbox or a complaint to the Consigliere's, in the
        Supreme Arbiter from the viewer's own personal inbox or a complaint to the Arbiter's (in the team and
        complaint inboxes for the non-moderators only: the staff there are its addressees)."""
        if inbox.game.status != GameStatus.RUNNING:
            return []
        slug = inbox.game.slug
        links = []
        if inbox.kind == LepraInboxKind.MAFIA:
            links.append((reverse("mafia_role", args=[slug]), gettext("Acknowledging the mafia role"),
                          "mafia-role-link"))
        if inbox.kind in (LepraInboxKind.MAFIA, LepraInboxKind.MAFIA_COMPLAINT) and not can_moderate:
            text = gettext("No confidence in the Consigliere: write to the Procurator")
        elif (inbox.kind == LepraInboxKind.COMPLAINT and not can_moderate
              or inbox.kind == LepraInboxKind.PERSONAL and inbox.resident.user_id == viewer.pk):
            text = gettext("No confidence in the Supreme Arbiter: complain to the Procurator")
        else:
            return links
        links.append((reverse("no_confidence", args=[slug]), text, "no-confidence-link"))
        return links

    def archive_section(self, game, key: str, *, viewer):
        """One of Lepra's archive sections (``rulesets.lepra.archive``): an ``ArchiveSection`` or None."""
        from .archive import archive_section  # the archive reads the models, which the spec must not need at import

        return archive_section(game, key, viewer=viewer)

    def daily_post_section(self, game, day: int, key: str, context) -> str:
        """One section of the daily post of ``day`` (``rulesets.lepra.clock.daily_post.DAILY_POST_SECTIONS``; ``context`` a
        ``rulesets.lepra.clock.daily_post.DailyPostContext``), in the active language."""
        return DAILY_POST_SECTIONS[key](game, day, context)
