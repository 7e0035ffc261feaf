"""Issue 6, the headline: a simulated 3-city, 60-resident Lepra game played through the services, from recruitment
to victory, run by the game clock (``advance_clock`` under ``time_machine``), with the exact deaths, posts and
memberships of each day asserted for a fixed seed. It runs on SQLite by default and on PostgreSQL when
DATABASE_URL points there (CI's ``.ci/run``).

The literals below were recorded from a run and then checked against the rules, not copied blindly: every
execution against an independent tally of the posted votes (L-VOTE-4/5, L-COURT-2..4), every night death against
the godfathers' last decisions (L-NIGHT-1/2/4/6), every judge against a recount of the precinct ballots
(L-JUDGE-4/5), and the victory against L-WIN-1. Those cross-checks run in the test too, so a regression in the
services shows up as a disagreement with the reference, not only as a changed literal.
"""
from __future__ import annotations

from collections import defaultdict

from cities.models import GameDay, GameEvent, GameStatus, LifeStatus, PostKind, PublicPost, Resident, StaffRole
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import CommissarCheck, GameResult, GodfatherElection, NightDecision, NightResolution
from rulesets.lepra import seats
from tests.setup_factory import in_game_language
from tests.simulation.lepra_sim import DAY1, SEED, run_game
from rulesets.lepra.models import CourtCase, CourtVote, JudgeElection

ROSTER = {
    "Alpha": ["P03", "P04", "P07", "P09", "P10", "P17", "P18", "P20", "P26", "P27",
              "P28", "P33", "P40", "P43", "P44", "P48", "P49", "P50", "P52", "P54"],
    "Beta": ["P01", "P05", "P08", "P11", "P12", "P15", "P21", "P24", "P30", "P36",
             "P37", "P39", "P42", "P45", "P46", "P53", "P55", "P56", "P59", "P60"],
    "Gamma": ["P02", "P06", "P13", "P14", "P16", "P19", "P22", "P23", "P25", "P29",
              "P31", "P32", "P34", "P35", "P38", "P41", "P47", "P51", "P57", "P58"],
}
MAFIA = {"Alpha": {"P20", "P40", "P49", "P50"}, "Beta": {"P36", "P39", "P42", "P59"},
         "Gamma": {"P02", "P23", "P25", "P32"}}
#: Alpha and Beta accepted a commissar; Gamma's three candidates declined (L-COMM-3).
COMMISSARS = {"P28", "P37"}

#: Per day: the night's victims before it (name, cause, touring mafia's city, spirit), in resolution order; the
#: judges elected that day (None: the election failed, L-JUDGE-5); the executed per city (name, how: "court" =
#: confirmed by the court, at least half of the votes cast in the case, L-COURT-3; "fallback" = the court's
#: deadline executed the L-VOTE-5 leader, L-COURT-4); the sitting judges at the end of the day.
DAYS = {
    1: {"night": [], "elected": {"Alpha": "P26", "Beta": "P15", "Gamma": "P51"}, "executed": {},
            "court": {"P26", "P15", "P51"}},
    2: {"night": [], "elected": {},
            "executed": {"Alpha": ("P43", "court"), "Beta": ("P37", "court"), "Gamma": ("P34", "court")},
            "court": {"P26", "P15", "P51"}},
    # Day 3: one judge of three voted in each case. Before the deadline a case is decided only when the judges
    # still to vote cannot change the result, which for a lone leader takes half of the court (2 of 3); so each
    # case waited for its deadline, where 1 of the 1 vote cast confirmed the sentence (L-COURT-3): "court", not
    # the L-COURT-4 fallback.
    3: {"night": [("P28", "killed", None, False), ("P46", "killed", None, False), ("P53", "killed", "Alpha", False)],
            "elected": {}, "executed": {"Alpha": ("P48", "court"), "Beta": ("P01", "court"),
                                  "Gamma": ("P22", "court")},
            "court": {"P26", "P15", "P51"}},
    # Day 4: Beta's P55 and P24 tied (P55 the L-VOTE-5 leader, his latest counted vote the earlier); one judge
    # chose P24 and the others did not vote: at the deadline 1 of 1 vote cast sentences P24 (L-COURT-2/3).
    4: {"night": [("P33", "killed", None, False), ("P08", "killed", None, False), ("P13", "killed", None, False),
                   ("P58", "killed", "Beta", False)],
            "elected": {}, "executed": {"Alpha": ("P50", "court"), "Beta": ("P24", "court"), "Gamma": ("P19", "court")},
            "court": {"P26", "P15", "P51"}},
    5: {"night": [("P30", "killed", None, False), ("P31", "killed", None, False), ("P56", "killed", "Gamma", False)],
            "elected": {}, "executed": {"Alpha": ("P09", "court"), "Beta": ("P60", "court"),
                                  "Gamma": ("P16", "court")},
            "court": {"P26", "P15", "P51"}},
    # Night 5: Alpha's touring was "no kill" (L-NIGHT-2).
    6: {"night": [("P52", "killed", None, False), ("P55", "killed", None, False), ("P29", "killed", None, False)],
            "elected": {}, "executed": {"Alpha": ("P27", "court"), "Beta": ("P45", "court"),
                                  "Gamma": ("P02", "court")},
            "court": {"P26", "P15", "P51"}},
    # Morning of day 7: Beta has 4 living honest and 4 living mafia, so P11, killed that night, is a spirit for
    # the day (L-SPIRIT-1); Beta's touring was "no kill". Gamma's P38 and P35 tied: two of the three judges chose
    # P35, which the third could no longer outweigh (L-COURT-3).
    7: {"night": [("P10", "killed", None, False), ("P11", "killed", None, True), ("P41", "killed", None, False)],
            "elected": {}, "executed": {"Alpha": ("P03", "court"), "Beta": ("P12", "court"),
                                  "Gamma": ("P35", "court")},
            "court": {"P26", "P15", "P51"}},
    # Night 7: Alpha's mafia killed their own judge P26 (L-JUDGE-7); Gamma's touring was "no kill". The site
    # scheduled the election (L-JUDGE-2); its only candidate, P20 (a mafioso), got two "Гитлер" and no "Ганди",
    # so it failed (L-JUDGE-5) and the court sat with P15 and P51. Alpha's P18 was sentenced by P51 (1 vote, half
    # of the court). Beta's and Gamma's cases got no vote: at the deadline their leaders P21 and P06, both honest,
    # were executed (L-COURT-4); after P06, 10 honest and 10 mafia live, the mafia win (L-WIN-1). The failed
    # election's successor, due on night 8, never opens.
    8: {"night": [("P26", "killed", None, False), ("P05", "killed", None, False), ("P14", "killed", None, False)],
            "elected": {"Alpha": None}, "executed": {"Alpha": ("P18", "court"), "Beta": ("P21", "fallback"),
                                               "Gamma": ("P06", "fallback")},
            "court": {"P15", "P51"}},
    # Day 9: only the final daily post (no night 8: the game ended on day 8).
    9: {"night": [], "elected": {}, "executed": {}, "court": None},
}
LAST_DAY = 9


def _city_of(name: str) -> str:
    return next(city for city, names in ROSTER.items() if name in names)


def _side(game, name: str) -> str:
    key = "commissar" if name in COMMISSARS else "mafioso" if name in MAFIA[_city_of(name)] else "honest"
    return in_game_language(game, key)


# ---- independent references (the rules, recomputed from the stored messages) ---------------------------------

def _reference_execution_tally(city, day: int):
    """L-VOTE-2/4/5 over the messages of ``city``'s voting inboxes of ``day``: {nominee: (count, voters, latest
    counted казнить)} and the ordered leaders (most votes; tie: the earlier latest counted vote first)."""
    tallies = {}
    for inbox in Inbox.objects.filter(city=city, kind=LepraInboxKind.VOTING, day_number=day).select_related("resident"):
        last = {}
        for message in Message.objects.filter(inbox=inbox).order_by("received_at", "id"):
            word = message.body.strip().lower()
            if message.author_resident_id is None or word not in ("казнить", "не казнить"):
                continue  # the nominee's last word (L-VOTE-3) is no vote
            last[message.author_resident.name] = (word, message.received_at)
        counted = {voter: at for voter, (word, at) in last.items() if word == "казнить"}
        tallies[inbox.resident.name] = (len(counted), sorted(counted), max(counted.values(), default=None))
    ranked = sorted((name for name, t in tallies.items() if t[0] > 0), key=lambda n: (-tallies[n][0], tallies[n][2]))
    top = tallies[ranked[0]][0] if ranked else 0
    return tallies, [n for n in ranked if tallies[n][0] == top]


def _reference_election_winner(election) -> str | None:
    """L-JUDGE-4/5 recount of the precinct messages: score = pros - cons; tie: the earlier latest pro wins; None
    when no candidate has pros >= cons (the election fails)."""
    scores = {}
    for precinct in election.precincts.select_related("inbox", "candidate"):
        pros = cons = 0
        latest_pro = None
        seen = set()
        for message in Message.objects.filter(inbox=precinct.inbox).order_by("received_at", "id"):
            if message.author_resident_id is None or message.author_resident_id in seen:
                continue
            seen.add(message.author_resident_id)
            if "ганди" in message.body.lower():
                pros, latest_pro = pros + 1, message.received_at
            elif "гитлер" in message.body.lower():
                cons += 1
        scores[precinct.candidate.name] = (pros - cons, latest_pro, pros >= cons)
    eligible = [n for n, s in scores.items() if s[2]]
    return min(eligible, key=lambda n: (-scores[n][0], scores[n][1])) if eligible else None


def _court_confirms(case) -> str | None:
    """L-COURT-3 (default procedure) over the case's ``CourtVote`` rows: the candidate holding at least half of the
    votes cast, no other candidate with as many (two at half is no decision); None without a decision."""
    counts = defaultdict(int)
    for vote in CourtVote.objects.filter(case=case).select_related("choice"):
        counts[vote.choice.name] += 1
    cast = sum(counts.values())
    return next((name for name, n in counts.items()
                 if 2 * n >= cast and all(m < n for other, m in counts.items() if other != name)), None)


def _night_targets(game, night: int) -> set[str]:
    """L-NIGHT-2/6: the last kill decision of each city and the touring city's last touring decision."""
    last = {}
    for decision in NightDecision.objects.filter(game=game, night=night).order_by("at", "id").select_related("target"):
        last[(decision.city_id, decision.kind)] = decision.target
    return {target.name for target in last.values() if target is not None}


# ---- the test ------------------------------------------------------------------------------------------------

def test_simulated_lepra_game_from_recruitment_to_victory_L_WIN_1_L_POST_2_L_DEATH_1(db):
    sim = run_game(SEED)
    game = sim.game
    days = {d.number: d for d in sim.days}

    # The game ran by the clock alone: no scheduled event failed, it ended on day 8 within 14 days (L-DAY-6).
    assert not GameEvent.objects.filter(game=game, kind="scheduler.event_failed").exists()
    assert sorted(days) == list(range(1, LAST_DAY + 1))
    assert game.status == GameStatus.FINISHED and game.day_number == LAST_DAY - 1

    # The cities and the draw (L-CITY-2, L-ASSIGN-2, L-COMM).
    for city, names in ROSTER.items():
        residents = Resident.objects.filter(game=game, city__name=city)
        assert sorted(residents.values_list("name", flat=True)) == names
        assert set(residents.filter(alignment="mafia").values_list("name", flat=True)) == MAFIA[city]
    assert set(Resident.objects.filter(seats.rank_q("is_commissar"), game=game).values_list("name", flat=True)) == COMMISSARS

    dead: set[str] = set()
    judges_before: set[str] = set()
    for number in range(1, LAST_DAY + 1):
        expected, day = DAYS[number], days[number]

        # The night before: exactly the godfathers' last decisions died (L-NIGHT-1/2/4/6), recorded as expected.
        assert day.night_deaths == expected["night"], number
        victims = {name for name, *_rest in expected["night"]}
        assert victims == (_night_targets(game, number - 1) if number < LAST_DAY else set()), number
        assert not victims & dead
        dead |= victims

        # Judges: each election's winner, or its failure, is the recount's (L-JUDGE-4/5).
        assert day.elections == expected["elected"], number
        for city, winner in expected["elected"].items():
            election = JudgeElection.objects.get(game=game, city__name=city, closed_at__isnull=False,
                                                 **({"winner__name": winner} if winner else {"winner__isnull": True}))
            assert _reference_election_winner(election) == winner

        # Executions: the leader of an independent tally of the posted votes, or (a tie before the court) the
        # tied leader the court chose, confirmed by at least half of the votes cast in the case (its CourtVote
        # rows), no other candidate with as many; the fallback only when the votes cast decided nothing
        # (L-VOTE-5, L-COURT-1..4). Only sitting judges voted (L-COURT-1).
        assert day.executed == expected["executed"], number
        assert sorted(day.day_deaths) == sorted((n, "executed", None, False) for n, _h in expected["executed"].values())
        for city, (name, how) in expected["executed"].items():
            case = CourtCase.objects.get(game=game, city__name=city, day=number)
            _tallies, leaders = _reference_execution_tally(case.city, number)
            assert case.sentenced.name == name and case.fallback == (how == "fallback")
            sitting = (judges_before | {w for w in expected["elected"].values() if w}) - dead
            assert set(CourtVote.objects.filter(case=case).values_list("judge__name", flat=True)) <= sitting
            if how == "fallback":
                assert name == leaders[0] and _court_confirms(case) is None
            else:
                assert name in leaders and _court_confirms(case) == name
        dead |= {name for name, _how in expected["executed"].values()}

        # Memberships at the end of the day (L-INBOX-1/2/4/6, L-DEATH-1): the dead banned in their city inbox,
        # removed from their mafia inbox, members of the cemetery (the spirit too, once its day ended); the court
        # is the sitting judges.
        if number < LAST_DAY:
            snapshot = day.memberships
            for city, names in ROSTER.items():
                assert snapshot[f"city:{city}"] == {n: "banned" if n in dead else "member" for n in names}, number
                assert snapshot[f"mafia:{city}"] == {n: "removed" if n in dead else "member" for n in MAFIA[city]}
            assert snapshot["cemetery"] == dict.fromkeys(dead, "member"), number
            assert snapshot["court"] == dict.fromkeys(expected["court"], "member"), number
            assert snapshot["police"] == {n: "removed" if n in dead else "member" for n in COMMISSARS}, number
            assert set(Resident.objects.filter(game=game, name__in=dead).exclude(status=LifeStatus.ALIVE)
                       .values_list("name", flat=True)) == dead
            judges_before = expected["court"]

    # The spirit of day 7 (L-SPIRIT-2): a member of every voting inbox of Beta that day, in the cemetery after.
    spirit = Resident.objects.get(game=game, name="P11")
    beta_voting = Inbox.objects.filter(game=game, city__name="Beta", kind=LepraInboxKind.VOTING, day_number=7)
    assert beta_voting.count() == 3
    assert {m.state for i in beta_voting for m in i.memberships.filter(resident=spirit)} == {"member"}

    # The daily posts (L-POST-2, L-DEATH-2): one per day from day 2, published once at the day start, naming
    # each night victim and each executed resident with their side.
    posts = list(PublicPost.objects.filter(game=game, kind=PostKind.DAILY).order_by("published_at"))
    plans = {p.number: p for p in GameDay.objects.filter(game=game)}
    assert [(p.title, p.published_at) for p in posts] == [
        (in_game_language(game, "Day %(day)d", day=n), plans[n].starts_at) for n in range(2, LAST_DAY + 1)]
    assert plans[2].starts_at == DAY1.replace(day=2)
    for number in range(2, LAST_DAY + 1):
        post = plans[number].post
        assert (post.title, post.body) == days[number].post
        for name, _cause, touring, spirit in DAYS[number]["night"]:
            line = in_game_language(game, "- %(name)s (%(city)s): %(side)s", name=name, city=_city_of(name),
                                    side=_side(game, name))
            if touring:
                line += "; " + in_game_language(game, "killed by the touring mafia of %(city)s", city=touring)
            if spirit:
                line += "; " + in_game_language(game, "a spirit today")
            assert line in post.body.splitlines(), (number, line)
        # Yesterday's vote per nominee, as the reference tally counts it: the count and the counted voters.
        for city in ROSTER if number >= 3 else ():
            tallies, _leaders = _reference_execution_tally(game.cities.get(name=city), number - 1)
            lines = post.body.splitlines()
            for nominee, (count, voters, _at) in tallies.items():
                prefix = in_game_language(game, "- %(name)s: %(count)d (%(voters)s)", name=nominee, count=count,
                                          voters="\x00").split("\x00")[0]
                line = next(x for x in lines if x.startswith(prefix))
                listed = line[len(prefix):].split(")")[0]
                assert sorted(listed.split(", ")) == (voters or ["—"]), (number, nominee)
        for name, _how in DAYS[number - 1]["executed"].values():
            assert in_game_language(game, "Executed: %(name)s (%(side)s).", name=name,
                                    side=_side(game, name)) in post.body.splitlines()
    # The last post closes the game; the game ended on day 8, so there is no night 8 to report.
    assert posts[-1].body.endswith(f"**{in_game_language(game, 'The game is over.')}**")
    assert in_game_language(game, "Night %(night)d", night=8) not in posts[-1].body
    assert in_game_language(game, "Results of day %(day)d", day=8) in posts[-1].body

    # The victory (L-WIN-1): after the last execution (Gamma's P06, at the court's deadline of day 8) 10 honest
    # and 10 mafia live, all cities together; before it the honest still outnumbered the mafia (11 to 10).
    living = Resident.objects.filter(game=game, status=LifeStatus.ALIVE)
    honest, mafia = living.filter(alignment="honest").count(), living.filter(alignment="mafia").count()
    assert (honest, mafia) == (10, 10)
    assert living.count() == 60 - len(dead) == 20
    result = GameResult.objects.get(game=game)
    assert result.winner == "mafia" and result.ended_at == plans[8].starts_at + (DAY1.replace(hour=19) - DAY1)
    assert result.scoreboard == {"1": {"name": "Alpha", "honest": 5, "mafia": 3},
                                 "2": {"name": "Beta", "honest": 1, "mafia": 4},
                                 "3": {"name": "Gamma", "honest": 4, "mafia": 3}}
    assert result.post.published_at == result.ended_at
    assert result.post.body.splitlines()[0] == in_game_language(game, "The game is over: the mafia win.")

    # Touring follows the public rotation in city order (L-NIGHT-4); night 1 has none (L-DAY-5).
    assert [(r.night, r.touring_city.name if r.touring_city else None) for r in NightResolution.objects.filter(
        game=game).order_by("night").select_related("touring_city")] == [
        (1, None), (2, "Alpha"), (3, "Beta"), (4, "Gamma"), (5, "Alpha"), (6, "Beta"), (7, "Gamma")]

    # Godfathers (L-NIGHT-3): elected on night 1 by the mafia; all three lived to the end, so no other election
    # was opened. The commissar's only check was answered truly.
    elected = defaultdict(list)
    for election in GodfatherElection.objects.filter(game=game).order_by("opened_at", "id").select_related(
            "city", "winner"):
        elected[election.city.name].append((election.night, election.winner.name))
    assert dict(elected) == {"Alpha": [(1, "P40")], "Beta": [(1, "P59")], "Gamma": [(1, "P25")]}
    assert [(c.night, c.commissar.name, c.target.name, c.is_mafia) for c in CommissarCheck.objects.filter(
        game=game).select_related("commissar", "target")] == [(2, "P28", "P26", False)]

    # Staff did only what the rules give them (issue 6: "no staff action other than those the rules give them").
    staff_of = {r.user_id: r.kind for r in StaffRole.objects.filter(game=game)}
    actions = defaultdict(set)
    for actor_id, kind in GameEvent.objects.filter(game=game, at__gte=DAY1, actor__isnull=False).values_list(
            "actor_id", "kind"):
        if actor_id in staff_of:
            actions[staff_of[actor_id]].add(kind)
    assert dict(actions) == {
        "arbiter": {"election.scheduled", "court.case_opened"},
        "tribune": {"election.candidates_passed", "voting.scheduled"},
        "consigliere": {"godfather.election_opened", "godfather.election_closed"},
    }
