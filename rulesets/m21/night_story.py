"""The M21 night's trace in English sentences for the archive (RULES.md M-NIGHT-1, M-ARCH): one sentence per event
of ``M21NightOutcome.steps`` as stored (players by name), and a title per step. Pure: no ORM.

The archive is read after the game, when every role is public: the sentences name actors, as the trace does."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from . import items as item_data

#: The title of each step of M-NIGHT-1 (step 0: what was submitted).
STEP_TITLES = {
    "submissions": "The submissions",
    "start_watching": "1. Watches begin",
    "roleblocks": "2. Roleblocks",
    "reporter_hides": "3. The reporter hides",
    "investigations": "4. Investigations",
    "inventor_delivers": "5. The inventor delivers",
    "jailbreak": "6. Jailbreak and safecracking",
    "thief_robs": "7. The thief robs",
    "kills": "8. Shots and the mafia kill",
    "protections": "9. Protections, and the deaths",
}

_ACTIONS = {
    "watch": "watch", "visit": "visit", "hide": "hide", "roleblock": "roleblock", "investigate": "investigation",
    "deliver": "delivery", "bust_out": "bust out", "safecrack": "safecracking", "rob": "robbery",
    "shoot": "shot", "strongman_kill": "strongman's kill", "protect": "protection", "kill": "kill",
    "use_item": "item use",
}

_CAUSES = {
    "mafia": "the mafia kill", "strongman": "the strongman's kill", "desperado": "the desperado's shot",
    "desperado_backfire": "the desperado's own misfired shot", "grenade_backfire": "their own grenade",
}

_COUNTERS = {
    "shots_left": "shots", "bag_left": "medical bag uses", "hide_left": "hides", "extra_left": "extras",
    "post_mortem_left": "post mortems", "strongman_left": "strongman's kills", "jailbreak_left": "jailbreaks",
    "judge_power_left": "judge's powers", "confiscate_left": "confiscations",
}

_REASONS = {
    "away": "they were away", "roleblocked": "they were roleblocked", "target away": "the target was away",
    "target hiding": "the target was hiding", "no kill decided": "the mafia decided no kill",
    "no longer holds the item": "they no longer held the item",
}


def _item(key: object) -> str:
    found = item_data.item_catalogue().get(str(key))
    return f"the {found.name.lower()}" if found is not None else str(key)


def _action(key: object) -> str:
    key = str(key)
    if key in _ACTIONS:
        return f"the {_ACTIONS[key]}"
    return _item(key)


def _answer(answer: object) -> str:
    if isinstance(answer, list):
        if answer and isinstance(answer[0], Mapping):
            return "; ".join(f"{a['target']}: {_answer(a['answer'])}" for a in answer) or "nothing"
        return ", ".join(_item(a) if str(a) in item_data.ITEM_KEYS else str(a) for a in answer) or "nothing"
    return f"“{answer}”"


def _cause(cause: object) -> str:
    return _CAUSES.get(str(cause)) or _item(cause)


def _counted(e: Mapping) -> str:
    words = f"{e['actor']} submitted {_action(e['item'] if e.get('item') and e['action'] == 'use_item' else e['action'])}"
    if e.get("item") and e["action"] != "use_item":
        words += f" of {_item(e['item'])}"
    if e.get("target"):
        words += f" on {e['target']}"
    return words + f"; it counts (resolved at step {e['step']})."


def _fails(e: Mapping) -> str:
    on = f" on {e['target']}" if e.get("target") else ""
    return f"{e['actor']}'s {_action(e['action']).removeprefix('the ')}{on} failed: " \
           f"{_REASONS.get(e['reason'], e['reason'])}."


def _spent(e: Mapping) -> str:
    if e.get("counter") == "gadgets_delivered":
        return f"{e['actor']} used up the invention of {_item(e.get('item'))}."
    return f"{e['actor']} spent one of their {_COUNTERS.get(e['counter'], e['counter'])}; {e['left']} left."


def _item_moved(e: Mapping) -> str:
    reasons = {"used": "used it up", "robbed": "was robbed of it" if e["change"] == "lost" else "stole it",
               "left play": "died, and it left play", "delivered": "received it from the inventor",
               "safecrack": "took it from the evidence safe", "stash": "received it from the mafia's stash",
               "roleblocked": "keeps it: the roleblock voided its use"}
    verb = "lost" if e["change"] == "lost" else "gained"
    return f"{e['holder']} {verb} {_item(e['item'])} ({reasons.get(e['reason'], e['reason'])})."


def _tally(e: Mapping) -> str:
    counts = e.get("counts") or {}
    if not counts:
        return "The mafia's kill vote: no valid votes."
    return "The mafia's kill vote: " + ", ".join(f"{t} {n}" for t, n in counts.items()) + "."


def _draw(e: Mapping) -> str:
    purpose = str(e["purpose"])
    if purpose.endswith("_risk") or "_risk:" in purpose:
        item, _, who = purpose.partition("_risk:")
        return f"A seeded draw for the risk of {_item(item)} used by {who}: {e['value']:.3f}."
    if purpose == "insane_item_cop":
        return f"A seeded draw for the insane item cop's answer: {_item(e['value'])}."
    return f"A seeded draw ({purpose}): {e['value']}."


def _watching(e: Mapping) -> str:
    if e["kind"] == "watch":
        return f"{e['actor']} starts watching {e['target']}."
    if e["kind"] == "visit":
        return f"{e['actor']} keeps an eye on {e['target']}: do they go out?"
    return f"{e['actor']} watches {e['target']} through {_item(e['kind'])}."


def _result(e: Mapping) -> str:
    about = f" about {e['target']}" if e.get("target") else ""
    kind = str(e["kind"]).replace("_", " ")
    return f"{e['player']} learns ({kind}){about}: {_answer(e['answer'])}."


def _death(e: Mapping) -> str:
    by = f", carried out by {e['killer']}" if e.get("killer") and e["killer"] != e["player"] else ""
    return f"{e['player']} dies of {_cause(e['cause'])}{by}."


_SENTENCES: dict[str, Callable[[Mapping], str]] = {
    "counted": _counted,
    "replaced": lambda e: f"{e['actor']}'s earlier {_action(e['action']).removeprefix('the ')} was replaced by a "
                          "later submission.",
    "ignored": lambda e: f"{e['actor']}'s {_action(e['action']).removeprefix('the ')} was set aside: "
                         f"{e['reason']}.",
    "draw": _draw,
    "fails": _fails,
    "visit": lambda e: f"{e['actor']} visits {e['target']}.",
    "visit_void": lambda e: f"{e['actor']}'s visit to {e['target']} is void: they were roleblocked.",
    "watch_void": lambda e: f"{e['actor']}'s watch on {e['target']} is void: they were roleblocked.",
    "away": lambda e: f"{e['player']} is away for the night.",
    "watching": lambda e: _watching(e),
    "roleblocked": lambda e: f"{e['actor']} roleblocks {e['target']}.",
    "hiding": lambda e: f"{e['player']} hides: actions on them fail tonight.",
    "result": _result,
    "item": _item_moved,
    "spent": _spent,
    "busted_out": lambda e: f"{e['player']} is busted out of the penitentiary.",
    "safe": lambda e: f"{_item(e['item']).capitalize()} was stolen from the evidence safe.",
    "tally": _tally,
    "tie_broken": lambda e: f"The tie is broken by the {e['by']}: {e['target']}.",
    "vote_void": lambda e: f"{e['voter']}'s vote for {e['target']} does not count: {e['reason']}.",
    "kill_pending": lambda e: (f"{e['target']} is caught by {_cause(e['cause'])}." if e["by"] == e["target"] else
                               f"{e['target']} is attacked by {e['by']} ({_cause(e['cause'])}"
                               f"{', unstoppable' if e.get('unstoppable') else ''})."),
    "cannot_carry": lambda e: f"{e['actor']} cannot carry out the kill: {_REASONS.get(e['reason'], e['reason'])}.",
    "no_kill": lambda e: f"Nobody carries out the kill on {e['target']}: {e['reason']}.",
    "carries_out": lambda e: f"{e['actor']} carries out the mafia's kill on {e['target']}.",
    "kill_cancelled": lambda e: f"{_cause(e['cause']).capitalize()} on {e['target']} is stopped by "
                                f"{'a protection' if e['by'] == 'protection' else _item(e['by'])}.",
    "protected": lambda e: f"{e['target']} is protected.",
    "saved": lambda e: f"{e['player']} survives the night: saved.",
    "death": _death,
    "headline": lambda e: f"Headline: {e['text']}",
    "wearing": lambda e: f"{e['player']} wears {_item(e['item'])} ({e['note']}).",
    "stash_uncollected": lambda e: f"{_item(e['item']).capitalize()} from the stash was not collected: "
                                   f"{e['holder']} is out of play.",
}


def event_sentence(event: Mapping) -> str:
    """One event of the stored trace as an English sentence; an event this module does not know is listed by its
    name and fields (never hidden)."""
    sentence = _SENTENCES.get(str(event.get("event")))
    if sentence is not None:
        try:
            return sentence(event)
        except (KeyError, TypeError, ValueError):
            pass  # a trace stored in an older shape: say what it holds
    details = ", ".join(f"{k} {v}" for k, v in event.items() if k != "event" and v not in (None, "", []))
    return f"{str(event.get('event', 'event')).replace('_', ' ').capitalize()}: {details}."


def step_title(key: str) -> str:
    """The title of a step of M-NIGHT-1 by its key."""
    return STEP_TITLES.get(key, key.replace("_", " ").capitalize())

