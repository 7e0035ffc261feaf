"""Who consents before an inbox is disclosed after the game (as each ruleset declares it), in both
renderings of the access policy: the bool form per inbox (``consenters_of``, ``has_consented``) and the ``Q`` form
over Inbox (``consented_q``). Which kinds wait for consent is the ruleset's ``consent_after_game`` table; of those,
a kind whose staff organizer takes part (``organized_kinds``) waits for its members and organizer, any other for
the seat it is about (``Inbox.resident``). Read through ``inboxes.policies``."""
from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from archive.models import DisclosureConsent

from .models import Inbox, Membership
from .policy_tables import READING_STATES, kinds_of, kinds_q


def consenters_of(inbox: Inbox) -> tuple[list[int], int | None]:
    """Who must consent before ``inbox`` is disclosed: (resident ids, staff role id or None).

    A kind its ruleset discloses with consent (``consent_after_game``): a personal inbox or a role PM,
    its resident; an organised kind (``organized_kinds``: a secret inbox), every seat that is a member there
    now (member or banned; one who left or was removed is no longer a member and sees nothing of it), plus the staff
    role that organised it; it opens when the last of them consents. Other kinds need no consent: ([], None). The
    seat's current holder consents for it (the seat, not the account, is the member).
    """
    if inbox.kind not in kinds_of(inbox.game, "consent_after_game"):
        return [], None
    if inbox.kind not in kinds_of(inbox.game, "organized_kinds"):
        return [inbox.resident_id], None
    members = list(Membership.objects.filter(inbox=inbox, state__in=READING_STATES)
                   .order_by("resident_id").values_list("resident_id", flat=True))
    return members, inbox.organizer_id


def consented_q() -> Q:
    """``Q`` over Inbox, the ``Q`` form of ``has_consented(inbox, consenters_of(inbox))``: an inbox of a consent
    kind about a seat whose resident consents; one of an organised consent kind whose every member (and staff
    organizer) consents and that has at least one consent. Game state not included."""

    active = DisclosureConsent.objects.filter(revoked_at__isnull=True)
    consent = kinds_q("consent_after_game")
    organized = kinds_q("organized_kinds")
    personal = consent & ~organized & Q(Exists(active.filter(inbox=OuterRef("pk"), resident=OuterRef("resident_id"))))
    missing_member = Membership.objects.filter(inbox=OuterRef("pk"), state__in=READING_STATES).exclude(
        Exists(active.filter(inbox=OuterRef(OuterRef("pk")), resident=OuterRef("resident_id"))))
    organizer_ok = Q(organizer__isnull=True) | Q(Exists(active.filter(inbox=OuterRef("pk"),
                                                                        staff_role=OuterRef("organizer_id"))))
    secret = (consent & organized & ~Q(Exists(missing_member)) & organizer_ok
              & Q(Exists(active.filter(inbox=OuterRef("pk")))))
    return personal | secret


def has_consented(inbox: Inbox, consenters: tuple[list[int], int | None]) -> bool:
    """True when every consenter of ``inbox`` (``consenters_of``) has an active consent and there is one at least."""

    residents, role = consenters
    if not residents and role is None:
        return False
    active = DisclosureConsent.objects.filter(inbox=inbox, revoked_at__isnull=True)
    given = set(active.filter(resident__isnull=False).values_list("resident_id", flat=True))
    if not set(residents) <= given:
        return False
    return role is None or active.filter(staff_role_id=role).exists()
