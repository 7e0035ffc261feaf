"""Properties of the forum day tally (RULES.md M-VOTE; DESIGN.md "Messages are the record") over random days:
random rules, 1 to 7 seats, posts of several commands (valid, misspelt, ambiguous, unknown, chatter), deaths
and replacements during the day, and a deadline at the end.

- the count never holds more votes than there are living voters, and only living voters vote for living targets;
- replaying the same records gives the same result (the tally is a pure function of the ordered messages);
- how the commands are split into messages does not matter as long as their order is kept (M-VOTE-7, M-VOTE-8).
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from voting.forum_tally import ForumDay, tally_forum_day
from voting.forum_vote import (
    FORUM_NO_LYNCH,
    ForumDeadlineOutcome,
    ForumNoLynchThreshold,
    ForumPost,
    ForumRecord,
    ForumRemoval,
    ForumRemovalCause,
    ForumReplacement,
    ForumSeat,
    ForumVoteRules,
)

SEATS = ("Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus")
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)

rules_strategy = st.builds(
    ForumVoteRules,
    majority_ends_day=st.booleans(), end_hammer=st.booleans(),
    deadline_outcome=st.sampled_from(ForumDeadlineOutcome), no_lynch_allowed=st.booleans(),
    no_lynch_threshold=st.sampled_from(ForumNoLynchThreshold), self_votes_allowed=st.booleans(),
)


def command_lines(focus: str):
    """Lines of a post: every kind of command, and in a third of the lines a vote on the day's ``focus`` seat,
    mostly with END, so that hammers happen."""
    return st.sampled_from([
        *(f"##VOTE {seat}" for seat in SEATS),
        *(f"## vote: {seat[:2].lower()}" for seat in SEATS),  # a prefix; dead seats' too
        "##VOTE No Lynch", "##UNVOTE", "##END", "##UNEND", "##VOTE Zed", "##VOTE", "##vote a", "just chatting",
        "##UNVOTE ##VOTE Ben",
        *[f"##VOTE {focus} ##END"] * 6, *[f"##VOTE {focus}\n##END"] * 3, *[f"##VOTE {focus}"] * 3,
    ])


@dataclass(frozen=True)
class PostStep:
    seat: int
    lines: tuple[str, ...]
    old_account: bool  # post from the seat's first account even after a replacement


@dataclass(frozen=True)
class KillStep:
    seat: int


@dataclass(frozen=True)
class ReplaceStep:
    seat: int


@st.composite
def day_plans(draw):
    """(rules, number of seats, steps, close at the deadline?)"""
    n = draw(st.integers(min_value=1, max_value=len(SEATS)))
    seat = st.integers(min_value=0, max_value=n - 1)
    focus = SEATS[draw(seat)]
    post = st.builds(PostStep, seat=seat, lines=st.lists(command_lines(focus), min_size=1, max_size=4).map(tuple),
                     old_account=st.integers(0, 9).map(lambda k: k == 0))
    # Mostly posts: one step in ten a death, one in ten a replacement.
    step = st.integers(0, 9).flatmap(lambda k: st.builds(KillStep, seat=seat) if k == 0
                                     else st.builds(ReplaceStep, seat=seat) if k == 1 else post)
    steps = draw(st.lists(step, min_size=3, max_size=30))
    return draw(rules_strategy), n, steps, draw(st.booleans())


def seats_of(n: int) -> list[ForumSeat]:
    return [ForumSeat(seat=name, account=name.lower()) for name in SEATS[:n]]


def records_of(n: int, steps, splits: list[list[bool]] | None = None) -> list[ForumRecord]:
    """The steps as ordered records; step k is record seq k. Kills and replacements of seats that are already dead
    are dropped. ``splits[i][j]`` True starts a new message before line j + 1 of the i-th post (same seq)."""
    living = set(SEATS[:n])
    accounts = {name: name.lower() for name in SEATS[:n]}
    records: list[ForumRecord] = []
    post_index = 0
    for seq, step in enumerate(steps, 1):
        name = SEATS[step.seat]
        if isinstance(step, KillStep):
            if name in living:
                living.discard(name)
                records.append(ForumRemoval(seq=seq, seat=name, cause=ForumRemovalCause.KILLED))
        elif isinstance(step, ReplaceStep):
            if name in living:
                accounts[name] = f"{name.lower()}-{seq}"
                records.append(ForumReplacement(seq=seq, seat=name, account=accounts[name]))
        else:
            author = name.lower() if step.old_account else accounts[name]
            cuts = splits[post_index] if splits is not None else [False] * (len(step.lines) - 1)
            post_index += 1
            message = [step.lines[0]]
            for line, cut in zip(step.lines[1:], cuts):
                if cut:
                    records.append(ForumPost(seq=seq, author=author, text="\n".join(message)))
                    message = []
                message.append(line)
            records.append(ForumPost(seq=seq, author=author, text="\n".join(message)))
    return records


@PROPERTY_SETTINGS
@given(day_plans())
def test_the_count_never_has_more_votes_than_living_voters_M_VOTE_8_M_VOTE_9(plan):
    rules, n, steps, _ = plan
    day = ForumDay(rules, seats_of(n))
    for record in records_of(n, steps):
        day.apply(record)
        count = day.count()
        voters = [voter for voters in count.votes.values() for voter in voters]
        assert len(voters) == len(set(voters)) <= len(count.living)
        assert set(voters) <= set(count.living)
        assert set(count.votes) <= set(count.living) | {FORUM_NO_LYNCH}
        assert set(count.not_voting) | set(count.voided) | set(voters) == set(count.living)
        assert count.majority == len(count.living) // 2 + 1
        if day.end is None and rules.majority_ends_day:
            assert all(len(v) < count.threshold(target) for target, v in count.votes.items())


@PROPERTY_SETTINGS
@given(day_plans())
def test_replaying_a_day_twice_gives_the_same_result(plan):
    rules, n, steps, deadline = plan
    first = tally_forum_day(rules, seats_of(n), records_of(n, steps), deadline_reached=deadline)
    second = tally_forum_day(rules, seats_of(n), records_of(n, steps), deadline_reached=deadline)
    assert first == second
    if deadline:
        assert first.end is not None


def outcome(report):
    """What must not depend on message boundaries: the end, the count, the voided votes, and what became of each
    command (its line number within a message aside)."""
    receipts = [(r.seq, r.author, r.seat, r.command.kind, r.command.argument, r.refusal, r.target, r.candidates)
                for r in report.receipts]
    return report.end, report.count, report.voided, receipts


@PROPERTY_SETTINGS
@given(day_plans(), st.data())
def test_the_outcome_does_not_depend_on_how_posts_are_split_into_messages_M_VOTE_7(plan, data):
    rules, n, steps, deadline = plan
    posts = [step for step in steps if isinstance(step, PostStep)]
    splits = [data.draw(st.lists(st.booleans(), min_size=len(post.lines) - 1, max_size=len(post.lines) - 1))
              for post in posts]
    whole = tally_forum_day(rules, seats_of(n), records_of(n, steps), deadline_reached=deadline)
    split = tally_forum_day(rules, seats_of(n), records_of(n, steps, splits), deadline_reached=deadline)
    assert outcome(split) == outcome(whole)
