"""The policy matrix's expectations (persona x inbox kind x game state -> what the persona may do), shared by the suites that check the policy's four forms agree."""
from __future__ import annotations

from django.utils import timezone

from cities.models import Resident
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats


def label(inbox: Inbox) -> str:
    """A stable name for a demo inbox: city1, mafia2, personal:<name>, offer:<candidate>, police, court, ..."""
    if inbox.kind in (LepraInboxKind.CITY, LepraInboxKind.MAFIA):
        return f"{inbox.kind}{inbox.city.number}"
    if inbox.kind == LepraInboxKind.PERSONAL:
        return f"personal:{inbox.resident.name}"
    if inbox.kind == LepraInboxKind.SECRET:
        from rulesets.lepra.models import CommissarOffer

        candidate = CommissarOffer.objects.filter(inbox=inbox).values_list("candidate__name", flat=True).first()
        return f"offer:{candidate}" if candidate else f"secret:{inbox.title}"
    if inbox.kind == LepraInboxKind.COMPLAINT:
        return f"complaint:{inbox.no_confidence_case.complainant.name}"
    if inbox.kind == LepraInboxKind.MAFIA_COMPLAINT:
        return f"mafia_compl{inbox.city.number}"
    return inbox.kind


def offer_labels(game) -> dict[str, str]:
    """Candidate name -> label of the commissar offer inbox the demo's draw sent them (L-COMM-1)."""
    from rulesets.lepra.models import CommissarOffer

    return {name: f"offer:{name}" for name in CommissarOffer.objects.filter(game=game).values_list("candidate__name", flat=True)}


def personal_of_city(game, number: int) -> set[str]:
    return {f"personal:{n}" for n in Resident.objects.filter(game=game, city__number=number).values_list("name", flat=True)}


def expected_access(demo) -> dict[str, tuple[set[str], set[str]]]:
    """persona -> (labels they may read, labels they may post in), while the demo game runs."""
    game = demo.game

    def own(persona: str) -> str:
        return f"personal:{demo.seat(persona).name}"

    def mafia_inbox_if_mafia(persona: str) -> set[str]:
        seat = demo.seat(persona)
        return {f"mafia{seat.city.number}"} if seat.alignment == "mafia" else set()

    offers = offer_labels(game)

    # L-IMPEACH-3: complaints of no confidence (when a test filed some): the Procurator reads and answers them;
    # a resident's complaint is theirs to read and post in; a mafia complaint the living mafia of its city read
    # (they write through the complaint page, signed by the city).
    complaints = {label(i) for i in Inbox.objects.filter(game=game, kind__in=[LepraInboxKind.COMPLAINT,
                                                                              LepraInboxKind.MAFIA_COMPLAINT])
                  .select_related("city", "no_confidence_case__complainant")}

    def resident(persona: str, extra: set[str] = frozenset()) -> tuple[set[str], set[str]]:
        seat = demo.seat(persona)
        labels = {f"city{seat.city.number}", own(persona)} | mafia_inbox_if_mafia(persona) | set(extra)
        if seat.name in offers:  # the commissar offer made to this resident, answered or not (L-COMM-1)
            labels.add(offers[seat.name])
        if seats.is_commissar(seat):
            labels.add("police")
        if seats.is_judge(seat):
            labels.add("court")
        labels |= {f"complaint:{seat.name}"} & complaints
        readable = set(labels)
        if seat.alignment == "mafia" and seat.status == "alive":
            readable |= {f"mafia_compl{seat.city.number}"} & complaints
        return readable, labels

    return {
        # L-STAFF-1, L-STAFF-5: hosts, reads the cities, the court, runs police/cemetery/office/bar and the
        # commissar offers he sent (L-COMM-1); never a mafia inbox, a personal inbox, the notary.
        "procurator": ({"city1", "city2", "city3", "court", "police", "cemetery", "office", "bar"} | set(offers.values())
                       | complaints,
                       {"police", "cemetery", "office", "bar"} | set(offers.values()) | complaints),
        # L-STAFF-2, L-INBOX-1, L-INBOX-5: own city's inbox and personal inboxes, and the office.
        "tribune1": ({"city1", "office"} | personal_of_city(game, 1),) * 2,
        "tribune2": ({"city2", "office"} | personal_of_city(game, 2),) * 2,
        # L-STAFF-3, L-INBOX-2, L-INBOX-7: the court and the office.
        "arbiter": ({"court", "office"},) * 2,
        # L-STAFF-4, L-INBOX-4, L-INBOX-8: every mafia inbox and the bar.
        "consigliere": ({"mafia1", "mafia2", "mafia3", "bar"},) * 2,
        "mafioso": resident("mafioso"),
        "honest": resident("honest"),
        "commissar": resident("commissar"),
        "judge": resident("judge"),
        "resident2": resident("resident2"),
        "anonymous": (set(), set()),
        "outsider": (set(), set()),
        "superuser": (set(), set()),  # L-STAFF-5: a site administrator is nobody in the game
    }


def _offer_inbox(demo, persona: str = "honest"):
    """A commissar offer's inbox for ``persona`` in the demo game (the offer clause, L-COMM-1/2), plus a plain
    secret inbox with the same member for contrast."""
    from cities.models import StaffRole
    from inboxes.services import do_create_inbox
    from rulesets.lepra.models import CommissarOffer

    seat = demo.seat(persona)
    procurator = StaffRole.objects.get(game=demo.game, kind="procurator")
    offer_inbox = do_create_inbox(demo.game, LepraInboxKind.SECRET, title="Offer", city=seat.city, organizer=procurator,
                                  members=[seat], acting_user=None)
    number = CommissarOffer.objects.filter(city=seat.city).count() + 1  # after the demo draw's own offers
    assert number <= 3
    CommissarOffer.objects.create(game=demo.game, city=seat.city, candidate=seat, inbox=offer_inbox, number=number,
                                  offered_at=timezone.now(), answered_at=timezone.now(), accepted=False,
                                  decline_reason="Secret reason of the candidate")
    from inboxes.services import do_post_site_message

    do_post_site_message(offer_inbox, "The Procurator offers you the post.", acting_user=None)
    plain = do_create_inbox(demo.game, LepraInboxKind.SECRET, title="Plain secret", members=[seat], acting_user=None)
    return Inbox.objects.select_related("game").get(pk=offer_inbox.pk), Inbox.objects.select_related("game").get(pk=plain.pk)
