"""Golden scenarios: loader and checker (an independent oracle for the dealing engine).

HOW TO ADD A SCENARIO
=====================
1. Create ``tests/scenarios/NN-short-name[-tda|-robert].json`` (NN = the procedure number of
   docs/engine.md, ``00`` for a plain hand). Keys: ``title``, ``game``, ``rules`` (``tda2024`` or
   ``robert``), ``house`` (overrides, usually ``{}``), ``seats``, ``button``, ``deck``, ``seed``,
   ``steps`` and ``expect`` (format: issue 2 / docs/engine.md "Scenario files").
2. Deck: write the cards that matter first, in load order (first card out first), and end the
   list with the string ``"..."``; then run ``python tests/scenarios/make_deck.py fill FILE`` which
   replaces ``"..."`` by the game's remaining cards in a fixed order (2c..Ac, 2d..Ad, 2h..Ah,
   2s..As; 6..A for shortdeck). The script only completes decks; it never computes expectations.
3. Write ``expect`` BY HAND from the rules (docs/engine.md, rules.md section 5): card by card,
   never by copying the engine's output. Keys:
     * ``status`` (exact), ``reason_contains`` (case-insensitive substring of ``reason``),
     * ``seats``: ``{"3": ["4c", "Kd^"]}``: every seat that holds cards must be listed (``[]``
       matches an absent or empty seat); ``^`` = face up; ``??`` = any face-down card, ``??^`` =
       any face-up card (use them only for the outcome of a random reshuffle or pick),
     * ``board``, ``burns``, ``muck``, ``aside``, ``removed``: lists in order of arrival (``??``
       allowed; orientation is not compared for these zones),
     * ``stub`` (exact count), ``procedures`` (exact list of ids, in order), ``faults`` (the
       stopping faults, exact list of kinds in order), ``log`` (exact, rarely useful),
     * ``one_of``: ``{"board": [cands], "burns": [cands], "3": [cands]}``: every card matched by a
       ``??`` in that zone (or seat) must be one of the candidates (the whole zone if the zone
       itself is not in ``expect``),
     * ``returned``: cards that left the stub and went back into it during the hand (premature
       cards, reshuffled discards/burns/muck): the log may name them although they may be in the
       stub at the end,
     * ``betting`` (a table that is bet: ``house`` holds ``"betting": {...}``, action steps may
       give ``"amount"`` and ``"out_of_turn": true``): the betting at the end, chip by chip;
       each key given is exact (``pot``, ``to_act``, ``round``, ``over``, ``options``), and
       ``seats`` seat by seat (``{"3": {"bet": 0, "in": 300, "stack": 9700}}``).
   Always checked, whatever ``expect`` says: conservation (every card of the game's deck exactly
   once across seats/board/burns/muck/aside, plus the stub count = the deck size; nothing outside
   the game's deck except in ``removed``), and secrecy (the log names no card that never left the
   stub).
4. A scenario the engine must reject goes to ``tests/scenarios/bad/`` with ``"expect_error":
   "substring"`` (case-sensitive) and, for an error in a step, ``"expect_step": n`` (1-based:
   the n-th step, like the 1-based ``at`` of faults; the message must contain ``step n``).
5. Run ``.venv/bin/python -m pytest tests/test_golden.py -q``.
"""

import json
import re

RANKS = "23456789TJQKA"
SUITS = "cdhs"
ZONES = ("board", "burns", "muck", "aside", "removed")
CONSERVED_ZONES = ("board", "burns", "muck", "aside")
RECORD_KEYS = ("status", "reason", "seats", "board", "burns", "muck", "aside", "removed",
               "stub", "procedures", "faults", "log")
EXTRA_KEYS = ("reason_contains", "one_of", "returned", "betting")
WILD = "??"
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9?])((?:[2-9TJQKA][cdhs])|Jk)(?![A-Za-z0-9])")


def deck_of(game):
    """The game's deck as a list (our own definition: the oracle does not import the engine)."""
    ranks = RANKS[4:] if game == "shortdeck" else RANKS
    return [r + s for s in SUITS for r in ranks]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------------------- normalising

def _card(x):
    if isinstance(x, dict):
        return x.get("card")
    return x


def _seat_card(x):
    """A seat entry as the compact string: 'Ah' (down) or 'Ah^' (up)."""
    if isinstance(x, dict):
        return x.get("card", "?") + ("^" if x.get("up") else "")
    return x


def compact(record):
    """The record in the compact expect notation (handy for printing and diffs)."""
    out = {}
    for key in ("status", "reason"):
        if key in record:
            out[key] = record[key]
    seats = record.get("seats") or {}
    out["seats"] = {str(k): [_seat_card(c) for c in v] for k, v in seats.items() if v}
    for zone in ZONES:
        out[zone] = [_card(c) for c in (record.get(zone) or [])]
    for key in ("stub", "procedures"):
        if key in record:
            out[key] = record[key]
    return out


# ---------------------------------------------------------------------------- matching

def _match_seat(pattern, actual):
    if pattern == WILD:
        return not actual.endswith("^")
    if pattern == WILD + "^":
        return actual.endswith("^")
    return pattern == actual


def _match_zone(pattern, actual):
    pattern = pattern.rstrip("^")
    return pattern == WILD or pattern == actual


def _match_list(exp, act, match):
    return len(exp) == len(act) and all(match(e, a) for e, a in zip(exp, act))


def _wild_cards(exp, act, seat):
    """The actual cards matched by a wildcard (or all of them when exp is None)."""
    if exp is None:
        return [a.rstrip("^") for a in act]
    return [a.rstrip("^") for e, a in zip(exp, act) if e.rstrip("^") == WILD]


def _log_cards(obj, out):
    """Every card code named anywhere in the log (dict values of any key, free text)."""
    if isinstance(obj, dict):
        for v in obj.values():
            _log_cards(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _log_cards(v, out)
    elif isinstance(obj, str):
        out.update(CARD_TOKEN.findall(obj))


# ---------------------------------------------------------------------------- the checker

def check(expect, record, game):
    """All mismatches between `expect` (compact notation) and `record`, plus the invariants."""
    errors = []
    if not isinstance(record, dict):
        return ["record: expected a dict, got %r" % (type(record).__name__,)]
    seats_act = {str(k): [_seat_card(c) for c in (v or [])]
                 for k, v in (record.get("seats") or {}).items()}
    zones_act = {z: [_card(c) for c in (record.get(z) or [])] for z in ZONES}

    for key in expect:
        if key not in RECORD_KEYS and key not in EXTRA_KEYS:
            errors.append("expect: unknown key %r" % (key,))

    # -- exact scalars
    for key in ("status", "stub"):
        if key in expect and record.get(key) != expect[key]:
            errors.append("%s: expected %r, got %r" % (key, expect[key], record.get(key)))
    if "procedures" in expect and list(record.get("procedures") or []) != expect["procedures"]:
        errors.append("procedures: expected %r, got %r"
                      % (expect["procedures"], list(record.get("procedures") or [])))
    if "faults" in expect and list(record.get("faults") or []) != expect["faults"]:
        errors.append("faults: expected %r, got %r"
                      % (expect["faults"], list(record.get("faults") or [])))
    # -- the chips, on a table that is bet: each key given is exact ("seats" seat by seat)
    exp_bet = expect.get("betting") or {}
    act_bet = record.get("betting") or {}
    for key, want in sorted(exp_bet.items()):
        got = act_bet.get(key)
        if key == "seats":
            for seat, chips in sorted(want.items()):
                if (got or {}).get(seat) != chips:
                    errors.append("betting seat %s: expected %r, got %r" % (
                        seat, chips, (got or {}).get(seat)))
        elif got != want:
            errors.append("betting %s: expected %r, got %r" % (key, want, got))
    if "log" in expect and record.get("log") != expect["log"]:
        errors.append("log: expected %r, got %r" % (expect["log"], record.get("log")))
    if "reason" in expect and record.get("reason") != expect["reason"]:
        errors.append("reason: expected %r, got %r" % (expect["reason"], record.get("reason")))
    if "reason_contains" in expect:
        reason = record.get("reason") or ""
        if expect["reason_contains"].lower() not in str(reason).lower():
            errors.append("reason: expected to contain %r, got %r"
                          % (expect["reason_contains"], reason))

    # -- seats
    if "seats" in expect:
        exp_seats = {str(k): v for k, v in expect["seats"].items()}
        for seat in sorted(set(exp_seats) | set(seats_act), key=_seat_key):
            exp = exp_seats.get(seat)
            act = seats_act.get(seat, [])
            if exp is None:
                if act:
                    errors.append("seats.%s: expected no cards, got %r" % (seat, act))
                continue
            if not _match_list(exp, act, _match_seat):
                errors.append("seats.%s: expected %r, got %r" % (seat, exp, act))

    # -- zones
    for zone in ZONES:
        if zone in expect and not _match_list(expect[zone], zones_act[zone], _match_zone):
            errors.append("%s: expected %r, got %r" % (zone, expect[zone], zones_act[zone]))

    # -- one_of: wildcards (or whole zones) drawn from a candidate set
    for where, cands in (expect.get("one_of") or {}).items():
        cands = set(cands)
        if where in ZONES:
            act = zones_act[where]
            exp = expect.get(where)
        else:
            act = seats_act.get(str(where), [])
            exp = (expect.get("seats") or {}).get(str(where))
        if exp is not None and len(exp) != len(act):
            continue  # already reported as a length mismatch
        for card in _wild_cards(exp, act, where not in ZONES):
            if card not in cands:
                errors.append("one_of.%s: %r is not one of %r" % (where, card, sorted(cands)))

    errors.extend(conservation(record, game, expect.get("returned") or []))
    return errors


def conservation(record, game, returned=()):
    """The invariant: the game's deck is exactly the cards in the zones plus the stub count."""
    errors = []
    deck = deck_of(game)
    deckset = set(deck)
    where = {}
    places = []
    for seat, cards in (record.get("seats") or {}).items():
        for c in cards or []:
            places.append(("seats.%s" % seat, _card(c)))
    for zone in CONSERVED_ZONES:
        for c in record.get(zone) or []:
            places.append((zone, _card(c)))
    for zone, card in places:
        if card not in deckset:
            errors.append("conservation: %r in %s is not a card of the %s deck" % (card, zone, game))
            continue
        if card in where:
            errors.append("conservation: %s is both in %s and in %s" % (card, where[card], zone))
            continue
        where[card] = zone
    stub = record.get("stub")
    if not isinstance(stub, int) or isinstance(stub, bool) or stub < 0:
        errors.append("conservation: stub must be a count, got %r" % (stub,))
    elif len(where) + stub != len(deck):
        missing = [c for c in deck if c not in where]
        errors.append("conservation: %d cards in the zones + stub %d != %d cards in the %s deck"
                      " (%d not in any zone, %d expected in the stub)"
                      % (len(where), stub, len(deck), game, len(missing), stub))
    removed = [_card(c) for c in record.get("removed") or []]
    seen = set(where) | set(removed) | set(returned)
    named = set()
    _log_cards(record.get("log") or [], named)
    leaked = sorted(c for c in named if c in deckset and c not in seen)
    if leaked:
        errors.append("secrecy: the log names cards that never left the stub: %r" % (leaked,))
    return errors


def _seat_key(s):
    return (0, int(s)) if str(s).isdigit() else (1, str(s))
