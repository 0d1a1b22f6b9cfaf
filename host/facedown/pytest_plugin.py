"""The Facedown pytest plugin: scenario files as tests, on a virtual shoe or a real one.

Registered as the ``facedown`` entry point of ``pytest11``: installing the package makes it
available to every pytest run in that environment, so it does nothing until asked to.

Collection. A scenario file (a ``*.json`` object with a ``"steps"`` key) becomes one test item
(its node id is the file's path) when it is

* under a directory of the ini option ``facedown_scenarios`` (paths relative to the rootdir),
* under a directory given with ``--facedown-scenarios DIR`` (repeatable),
* named on the command line (``pytest scenarios/03-premature-flop-tda.json``), or inside a
  directory named on the command line that itself holds scenario files (``pytest scenarios``).

A plain ``pytest`` (testpaths, or the current directory) never collects JSON files by itself.

The shoe. Without options the scenarios run on a virtual shoe (the real firmware under the
MicroPython unix port, over the serial protocol), one per session, started when first needed.
``--shoe-port PORT`` runs them on the shoe at PORT (hardware in the loop): a scenario with a
stacked ``deck`` or a ``seed`` is dealt from the shoe's own shuffle and checked on what does
not depend on the order (order_free_mismatches); one that needs the simulated mechanism's faults
or ``"sim_only": true`` is skipped with the reason; a power cut fails (only a simulator can cut
the power). A port that does not answer, or a run that played nothing there, fails.

Expectations. ``expect`` is checked with the golden checker (the compact seat notation
``["Ah", "Kd^"]``, ``??`` wildcards, ``one_of``, ``returned``, ... and the conservation and
secrecy invariants, see tests/golden.py of the Facedown repository); ``expect_error`` means the
scenario must be rejected with a message containing that text (``expect_step``: the message
names that step). A failing scenario shows the expected and the actual table side by side.

Fixtures: ``shoe_client`` (the session's connected Client) and ``shoe_replay`` (play a scenario
dict or file on it, return the hand record).
"""

import copy
import json
import os
import re
from pathlib import Path

import pytest

__all__ = ["check", "sim_only_reason", "expected_table", "side_by_side", "load_scenario",
           "ScenarioMismatch", "ShoeUnavailable", "SIM_FAULTS"]

# ================================================================================ the checker
# A self-contained copy of the golden checker (tests/golden.py of the Facedown repository), so
# that the plugin works outside the repository. tests/test_pytest_plugin.py checks that both
# give the same messages on every bundled scenario. Each mismatch also names the line of the
# table it is about (for the "!" marks of the side-by-side view).

RANKS = "23456789TJQKA"
SUITS = "cdhs"
ZONES = ("board", "burns", "muck", "aside", "removed")
CONSERVED_ZONES = ("board", "burns", "muck", "aside")
RECORD_KEYS = ("status", "reason", "seats", "board", "burns", "muck", "aside", "removed",
               "stub", "procedures", "faults", "log")
EXTRA_KEYS = ("reason_contains", "one_of", "returned", "betting")
WILD = "??"
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9?])((?:[2-9TJQKA][cdhs])|Jk)(?![A-Za-z0-9])")


def _deck_of(game):
    ranks = RANKS[4:] if game == "shortdeck" else RANKS
    return [r + s for s in SUITS for r in ranks]


def _card(x):
    return x.get("card") if isinstance(x, dict) else x


def _seat_card(x):
    if isinstance(x, dict):
        return x.get("card", "?") + ("^" if x.get("up") else "")
    return x


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


def _wild_cards(exp, act):
    if exp is None:
        return [a.rstrip("^") for a in act]
    return [a.rstrip("^") for e, a in zip(exp, act) if e.rstrip("^") == WILD]


def _log_cards(obj, out):
    if isinstance(obj, dict):
        for v in obj.values():
            _log_cards(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _log_cards(v, out)
    elif isinstance(obj, str):
        out.update(CARD_TOKEN.findall(obj))


def _seat_key(s):
    return (0, int(s)) if str(s).isdigit() else (1, str(s))


def mismatches(expect, record, game):
    """(table line, message) for every mismatch; the line is "head", "seat:N", a zone name,
    "stub", "procedures" or None (log, invariants)."""
    errors = []
    if not isinstance(record, dict):
        return [(None, "record: expected a dict, got %r" % (type(record).__name__,))]
    seats_act = {str(k): [_seat_card(c) for c in (v or [])]
                 for k, v in (record.get("seats") or {}).items()}
    zones_act = {z: [_card(c) for c in (record.get(z) or [])] for z in ZONES}

    for key in expect:
        if key not in RECORD_KEYS and key not in EXTRA_KEYS:
            errors.append((None, "expect: unknown key %r" % (key,)))

    for key in ("status", "stub"):
        if key in expect and record.get(key) != expect[key]:
            errors.append(("head" if key == "status" else key, "%s: expected %r, got %r"
                           % (key, expect[key], record.get(key))))
    if "procedures" in expect and list(record.get("procedures") or []) != expect["procedures"]:
        errors.append(("procedures", "procedures: expected %r, got %r"
                       % (expect["procedures"], list(record.get("procedures") or []))))
    if "faults" in expect and list(record.get("faults") or []) != expect["faults"]:
        errors.append(("faults", "faults: expected %r, got %r"
                       % (expect["faults"], list(record.get("faults") or []))))
    for key, want in sorted((expect.get("betting") or {}).items()):  # chip by chip
        got = (record.get("betting") or {}).get(key)
        for seat, chips in sorted(want.items()) if key == "seats" else ():
            if (got or {}).get(seat) != chips:
                errors.append(("seat:" + seat, "betting seat %s: expected %r, got %r" % (
                    seat, chips, (got or {}).get(seat))))
        if key != "seats" and got != want:
            errors.append((None, "betting %s: expected %r, got %r" % (key, want, got)))
    if "log" in expect and record.get("log") != expect["log"]:
        errors.append((None, "log: expected %r, got %r" % (expect["log"], record.get("log"))))
    if "reason" in expect and record.get("reason") != expect["reason"]:
        errors.append(("head", "reason: expected %r, got %r"
                       % (expect["reason"], record.get("reason"))))
    if "reason_contains" in expect:
        reason = record.get("reason") or ""
        if expect["reason_contains"].lower() not in str(reason).lower():
            errors.append(("head", "reason: expected to contain %r, got %r"
                           % (expect["reason_contains"], reason)))

    if "seats" in expect:
        exp_seats = {str(k): v for k, v in expect["seats"].items()}
        for seat in sorted(set(exp_seats) | set(seats_act), key=_seat_key):
            exp = exp_seats.get(seat)
            act = seats_act.get(seat, [])
            if exp is None:
                if act:
                    errors.append(("seat:" + seat, "seats.%s: expected no cards, got %r"
                                   % (seat, act)))
                continue
            if not _match_list(exp, act, _match_seat):
                errors.append(("seat:" + seat, "seats.%s: expected %r, got %r"
                               % (seat, exp, act)))

    for zone in ZONES:
        if zone in expect and not _match_list(expect[zone], zones_act[zone], _match_zone):
            errors.append((zone, "%s: expected %r, got %r"
                           % (zone, expect[zone], zones_act[zone])))

    for where, cands in (expect.get("one_of") or {}).items():
        cands = set(cands)
        if where in ZONES:
            act = zones_act[where]
            exp = expect.get(where)
            line = where
        else:
            act = seats_act.get(str(where), [])
            exp = (expect.get("seats") or {}).get(str(where))
            line = "seat:%s" % where
        if exp is not None and len(exp) != len(act):
            continue  # already reported as a length mismatch
        for card in _wild_cards(exp, act):
            if card not in cands:
                errors.append((line, "one_of.%s: %r is not one of %r"
                               % (where, card, sorted(cands))))

    errors.extend((None, m) for m in conservation(record, game, expect.get("returned") or []))
    return errors


def check(expect, record, game):
    """All mismatches between `expect` (compact notation) and `record`, plus the invariants
    (the same messages as the repository's tests/golden.py)."""
    return [message for _line, message in mismatches(expect, record, game)]


def conservation(record, game, returned=()):
    """Every card of the game's deck exactly once across the zones plus the stub count, and no
    card named in the log that never left the stub."""
    errors = []
    deck = _deck_of(game)
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


# ================================================================================ sim-only

#: Faults only the simulated mechanism can produce (the "kind" of a "fault" step).
SIM_FAULTS = ("double_feed", "no_burn", "foreign", "duplicate", "boxed", "jam", "power_cut",
              "empty", "lid_open", "reader_silent")


def sim_only_reason(scn):
    """Why a scenario can only run on a simulator, or None if a real shoe can play it:
    simulated faults or power cuts, or "sim_only". (A stacked deck or a seed does not make it
    one: on a real shoe it is dealt from the shoe's own shuffle, and checked for what does not
    depend on the order, see order_free_mismatches.)"""
    if not isinstance(scn, dict):
        return None
    needs = []
    faults = []
    for step in scn.get("steps") or []:
        if not isinstance(step, dict):
            continue
        do = step.get("do")
        kind = step.get("kind") if do == "fault" else do
        if kind in SIM_FAULTS and kind not in faults:
            faults.append(kind)
    if faults:
        needs.append("simulated %s %s" % ("faults" if len(faults) > 1 else "fault",
                                          ", ".join(faults)))
    if not needs:
        return "marked sim_only (simulator only)" if scn.get("sim_only") else None
    text = needs[0] if len(needs) == 1 else ", ".join(needs[:-1]) + " and " + needs[-1]
    return "needs %s (simulator only)" % text


def hardware_skip_reason(scn):
    """Why a real shoe cannot play a scenario at all (a skip reason), or None: mechanism
    faults only the simulator makes, or "sim_only". A power cut is not skipped: the scenario
    fails at it ("a power cut needs a virtual shoe"), as nothing but the simulator can cut
    the power; `-m "not sim_only"` leaves such scenarios out."""
    reason = sim_only_reason(scn)
    if reason is None or not _faults(scn) - {"power_cut"} and not scn.get("sim_only"):
        return None
    return reason


def _faults(scn):
    return {(s.get("kind") if s.get("do") == "fault" else s.get("do"))
            for s in scn.get("steps") or [] if isinstance(s, dict)} & set(SIM_FAULTS)


# ================================================================ on a real shoe: no stacked order

_CARD = re.compile(r"(?<![0-9A-Za-z])[2-9TJQKA][cdhs](?![0-9A-Za-z])")


def _without_cards(text):
    """A message with every card's name as "??": what it says whatever the deck's order."""
    return _CARD.sub("??", text)


def without_order(scn):
    """The scenario as a real shoe plays it: no stacked deck, no seed (it shuffles)."""
    return {k: v for k, v in scn.items() if k not in ("deck", "seed", "expect", "expect_error")}


class DrawsAsDealt:
    """A draw's discards for a shoe that dealt from its own shuffle: the cards at the same
    places in each seat's hand as the scenario's named cards hold in its stacked deal (the
    engine in this process plays the steps before the draw to find those places)."""

    def __init__(self, scn, mod):
        self.scn, self.mod = scn, mod

    def __call__(self, i, discards, record):
        from .engine import firmware_imports

        C = firmware_imports().cards

        stacked = self.mod.run(dict(without_order(self.scn), deck=self.scn.get("deck"),
                                    seed=self.scn.get("seed"), steps=self.scn["steps"][:i]))
        out = {}
        for seat, codes in discards.items():
            theirs = [c["card"] for c in stacked["seats"].get(str(seat)) or []]
            mine = [c["card"] for c in record["seats"].get(str(seat)) or []]
            out[seat] = [C.parse(mine[theirs.index(C.name(code))]) if C.name(code) in theirs
                         else self._not_held(code, mine, C) for code in codes]
        return out

    @staticmethod
    def _not_held(code, mine, C):
        """A discard the seat did not hold in the stacked deal (a scenario the shoe must
        refuse): a card the seat does not hold here either."""
        if C.name(code) not in mine:
            return code
        return next(C.parse(c) for c in _deck_of("holdem") if c not in mine)


def shape(record):
    """What a hand record says that does not depend on the order of the deck: the outcome,
    the procedures applied with their rule references, the stub's count, how many cards each
    seat and zone holds (face up or down), and the stopping faults."""
    log = record.get("log") or []
    out = {"status": record.get("status"),
           "reason": CARD_TOKEN.sub("??", str(record.get("reason") or "")),
           "procedures": list(record.get("procedures") or []),
           "rules": [(e["procedure"], e.get("rule"), e.get("seat")) for e in log
                     if "procedure" in e],
           "stub": record.get("stub"), "faults": list(record.get("faults") or []),
           "seats": {str(s): ["up" if c.get("up") else "down" for c in cards or []]
                     for s, cards in (record.get("seats") or {}).items()}}
    for zone in ZONES:
        out[zone] = len(record.get(zone) or [])
    return out


def returned_cards(record):
    """The cards the log shows going back into the stub (a reshuffle): seen, not secret."""
    return sorted({e["card"] for e in record.get("log") or []
                   if e.get("to") == "stub" and e.get("card")})


def order_free_mismatches(scn, record, mod):
    """The shoe's record of a scenario dealt from its own shuffle against the scenario's
    stacked run in this process, on everything that does not depend on the order (shape), and
    the invariants (conservation, secrecy) of the shoe's record itself."""
    want, got = shape(mod.run(scn)), shape(record)
    errors = ["%s: expected %r, got %r" % (k, want[k], got[k]) for k in want if want[k] != got[k]]
    return errors + conservation(record, scn.get("game"), returned_cards(record))


# ================================================================================ the tables

def _expected_record(scn, record):
    """A record to render for the expectation: what `expect` says, the actual record's value
    where it says nothing."""
    expect = scn.get("expect") or {}
    rec = {"game": scn.get("game", record.get("game")),
           "rules": scn.get("rules", record.get("rules", "tda2024")),
           "button": scn.get("button", record.get("button")),
           "status": expect.get("status", record.get("status") or "?"),
           "reason": record.get("reason"),
           # (the actual hand's folds and movements: an empty seat reads as the actual's)
           "log": [e for e in record.get("log") or [] if "action" in e or "from" in e]}
    if "reason" in expect:
        rec["reason"] = expect["reason"]
    elif "reason_contains" in expect:
        rec["reason"] = "...%s..." % expect["reason_contains"]
    if "seats" in expect:
        rec["seats"] = {}
        for seat, held in expect["seats"].items():
            rec["seats"][str(seat)] = [{"card": c.rstrip("^"), "up": c.endswith("^")}
                                       for c in held]
    else:
        rec["seats"] = record.get("seats") or {}
    for zone in ZONES:
        if zone in expect:
            rec[zone] = [c.rstrip("^") for c in expect[zone]]
        else:
            rec[zone] = [_card(c) for c in record.get(zone) or []]
    rec["stub"] = expect.get("stub", record.get("stub"))
    if not isinstance(rec["stub"], int):
        rec["stub"] = -1
    return rec


def _procedure_line(pid, rules, actual_entry):
    if actual_entry is not None and actual_entry.get("procedure") == pid:
        from .view import procedure_lines
        return "  > " + procedure_lines({"log": [actual_entry]})[0]
    from .engine import firmware_imports
    P = firmware_imports().procedures
    if pid not in P.INDEX:
        return "  > %-22s %s: (unknown procedure)" % ("?", pid)
    num = P.INDEX[pid]
    return "  > %-22s %s: %s" % (P.rule(num, rules), pid, P.text(num))


def _keyed(text):
    """The lines of a rendered table, keyed by what they show: head, seat:N, board, burns,
    muck, aside, removed, stub, proc:i, fault:i."""
    out = []
    proc = 0
    fault = 0
    for i, line in enumerate(text.splitlines()):
        words = line.split()
        if i == 0:
            key = "head"
        elif line.startswith("  > "):
            key = "proc:%d" % proc
            proc += 1
        elif line.startswith("  ! "):
            key = "fault:%d" % fault
            fault += 1
        elif words[:1] == ["seat"] and len(words) > 1:
            key = "seat:" + words[1]
        elif words and words[0] in ZONES + ("stub",):
            key = words[0]
        else:
            key = "line:%d" % i
        out.append((key, line))
    return out


def expected_table(scn, record, unicode=True):
    """The expectation of a scenario in the layout of view.render (values `expect` does not
    give are the actual record's)."""
    from .view import render

    rec = _expected_record(scn, record)
    lines = render(rec, unicode=unicode).splitlines()
    if rec["stub"] == -1:
        lines = [line if not line.startswith("  stub ") else "  stub     ?" for line in lines]
    expect = scn.get("expect") or {}
    if "procedures" in expect:
        pids = expect["procedures"]
    else:
        pids = list(record.get("procedures") or [])
    actual = [e for e in record.get("log") or [] if "procedure" in e]
    rules = rec["rules"]
    for i, pid in enumerate(pids):
        lines.append(_procedure_line(pid, rules, actual[i] if i < len(actual) else None))
    # the stopping faults: the actual entry's line where the kind is the expected one
    from .view import fault_lines

    kinds = expect["faults"] if "faults" in expect else list(record.get("faults") or [])
    faults = [e for e in record.get("log") or [] if "fault" in e]
    for i, kind in enumerate(kinds):
        entry = faults[i] if i < len(faults) and faults[i]["fault"] == kind else {"fault": kind}
        lines.append("  ! " + fault_lines({"log": [entry]})[0])
    return "\n".join(lines)


def side_by_side(expected, actual, bad=()):
    """Two columns, "expected" and "actual", lines paired by what they show; the lines named in
    `bad` (or whose texts differ where nothing was named) are marked with "!"."""
    left = dict(_keyed(expected))
    right = dict(_keyed(actual))
    order = []
    for key, _ in _keyed(expected) + _keyed(actual):
        if key not in order:
            order.append(key)

    def rank(key):
        kind, _, rest = key.partition(":")
        if kind == "head":
            return (0, 0, "")
        if kind == "seat":
            return (1,) + _seat_key(rest)[:1] + (str(_seat_key(rest)[1]),)
        if kind in ZONES + ("stub",):
            return (2, (ZONES + ("stub",)).index(kind), "")
        if kind == "proc":
            return (3, int(rest), "")
        if kind == "fault":
            return (4, int(rest), "")
        return (5, int(rest), "")

    order.sort(key=rank)
    bad = set(bad)
    if "procedures" in bad:
        bad.update(k for k in order if k.startswith("proc:") and left.get(k) != right.get(k))
    if "faults" in bad:
        bad.update(k for k in order if k.startswith("fault:") and left.get(k) != right.get(k))
    plain = [len(v) for k, v in left.items() if not k.startswith(("proc:", "fault:"))]
    width = max([len("expected"), 40] + plain)  # long procedure lines are cut to fit
    left = {k: v if len(v) <= width else v[:width - 3] + "..." for k, v in left.items()}
    rows = ["  %-*s | %s" % (width, "expected", "actual"),
            "  %s-+-%s" % ("-" * width, "-" * max([6] + [len(v) for v in right.values()
                                                          if len(v) <= width]))]
    for key in order:
        mark = "!" if key in bad else " "
        rows.append("%s %-*s | %s" % (mark, width, left.get(key, ""), right.get(key, "")))
    return "\n".join(rows)


# ================================================================================ the shoe

class ShoeUnavailable(Exception):
    """The session's shoe could not be started or reached."""


class _SessionShoe:
    """The session's shoe: a virtual one started on first use, or the one at --shoe-port."""

    def __init__(self, port):
        self.port = port
        self.hardware = port is not None
        self.virtual = None
        self.client = None
        self.error = None
        self.played = 0  # scenarios played on it (a hardware run that played none fails)
        self.verdict = None

    def connect(self):
        if self.client is not None:
            return self.client
        if self.error is not None:
            raise ShoeUnavailable(self.error)
        from .client import Client, ShoeError, connect, connect_port

        class SessionClient(Client):
            # shoereplay asks every hand for the simulator's deck; a shoe without CAP_SIM has
            # none: asking for "no stacked deck, no seed" is asking it to shuffle as it does.
            plain = False

            def call(self, name, *args, seq=None):
                if self.plain and name == "sim_deck" and not args[0] and not args[1]:
                    return ()
                return Client.call(self, name, *args, seq=seq)

        client = None
        try:
            if not self.hardware:
                from .virtualshoe import VirtualShoe
                self.virtual = VirtualShoe()
                self.virtual.start(ready_line="ready", timeout=20)
                client = connect(self.virtual.port, self.virtual.key, cls=SessionClient,
                                 timeout=30)
            else:  # the session `facedown login` opened, or the shoe's key file
                client = connect_port(self.port, cls=SessionClient, timeout=30)
            info = client.info
            caps = info.get("capabilities") or []
            if not self.hardware and "CAP_SIM" not in caps:
                raise ShoeUnavailable("the virtual shoe does not report CAP_SIM (capabilities: "
                                      "%s)" % (", ".join(caps) or "none"))
            client.plain = "CAP_SIM" not in caps
        except Exception as e:  # noqa: BLE001 (reported on every test that needs the shoe)
            if client is not None:
                client.close()
            self.close()
            where = ("the shoe at %s" % self.port if self.hardware
                     else "the virtual shoe")
            hint = getattr(e, "hint", None)
            self.error = "cannot use %s: %s%s" % (where, e, " (%s)" % hint if hint else "")
            if isinstance(e, ShoeError):
                self.error += " [%s]" % e.command
            raise ShoeUnavailable(self.error) from e
        self.client = client
        return client

    def replay(self, scn, discards=None):
        from .shoereplay import replay

        client = self.connect()
        self.played += 1
        # the virtual shoe: power cuts restart it; a real shoe's power is not ours to cut
        return replay(client, scn, self.virtual, discards)

    def play(self, scn, mod):
        """A scenario's record as this shoe plays it: as written on the virtual shoe; on a
        real one (hardware) after the whole file's checks, from the shoe's own shuffle."""
        if not self.hardware:
            return self.replay(scn)
        mod.check(scn)  # (its deck too: a bad file is rejected as the virtual shoe rejects it)
        return self.replay(without_order(scn), DrawsAsDealt(scn, mod))

    def describe(self):
        if self.hardware:
            return ("the shoe at %s (hardware in the loop: its own shuffle; simulated faults skipped)"
                    % self.port)
        return "a virtual shoe (the firmware under the MicroPython unix port)"

    def close(self):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.virtual is not None:
            self.virtual.close()
            self.virtual = None


_SHOE = pytest.StashKey()
_ENABLED = pytest.StashKey()


def _shoe(config):
    if _SHOE not in config.stash:
        config.stash[_SHOE] = _SessionShoe(config.getoption("facedown_shoe_port"))
    return config.stash[_SHOE]


# ================================================================================ scenarios

def load_scenario(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _is_scenario(data):
    return isinstance(data, dict) and "steps" in data


class ScenarioMismatch(Exception):
    """The hand record does not match the scenario's expect."""

    def __init__(self, errors, expected, actual, bad):
        Exception.__init__(self, "; ".join(errors))
        self.errors, self.expected, self.actual, self.bad = errors, expected, actual, bad


class ScenarioFailure(Exception):
    """A scenario failed for a reason told in one message (rejected, or not rejected)."""


class ScenarioFile(pytest.File):
    """A scenario file: one ScenarioItem, with the file's node id."""

    def __init__(self, *args, data=None, problem=None, **kw):
        super().__init__(*args, **kw)
        self.data = data
        self.problem = problem

    def collect(self):
        if self.problem:
            raise self.CollectError(self.problem)
        yield ScenarioItem.from_parent(self, name=self.path.name, nodeid=self.nodeid,
                                       data=self.data)


class ScenarioItem(pytest.Item):
    """One scenario played on the session's shoe and checked against its expectations."""

    def __init__(self, *args, data=None, **kw):
        super().__init__(*args, **kw)
        self.data = data
        reason = sim_only_reason(data)
        if reason:
            self.add_marker(pytest.mark.sim_only(reason=reason))

    def runtest(self):
        scn = copy.deepcopy(self.data)
        expect_step = scn.pop("expect_step", None)  # a key of the test, not of the scenario
        expect_error = scn.get("expect_error")
        shoe = _shoe(self.config)
        from .engine import scenario_module
        mod = scenario_module()
        try:
            record = shoe.play(scn, mod)
        except mod.ScenarioError as e:
            message = str(e)
            if expect_error is None:
                if shoe.hardware and "power_cut" in _faults(scn):
                    message += ": a real shoe's power is not the host's to cut; leave such " \
                               "scenarios out with -m \"not sim_only\""
                raise ScenarioFailure("scenario rejected: %s" % message)
            if expect_error not in message and not (
                    shoe.hardware and _without_cards(expect_error) in _without_cards(message)):
                # (on a shoe's own shuffle the cards a message names are the shoe's: a draw's
                # discards are mapped to the same places in the hand, DrawsAsDealt)
                raise ScenarioFailure("scenario rejected with %r, which lacks %r"
                                      % (message, expect_error))
            if expect_step is not None and not re.search(r"\bstep %d\b" % expect_step, message):
                raise ScenarioFailure("scenario rejected with %r, which does not name step %d"
                                      % (message, expect_step))
            return
        from .view import render
        if expect_error is not None:
            raise ScenarioFailure("expected the scenario to be rejected with %r, but it was "
                                  "played:\n%s" % (expect_error, render(record)))
        if shoe.hardware:  # the shoe's own shuffle: what does not depend on the order
            found = order_free_mismatches(scn, record, mod)
            if found:
                raise ScenarioFailure(
                    "on the shoe's own shuffle, %d difference%s from the scenario's stacked "
                    "run (checks that do not depend on the order):\n%s\n\n%s" % (
                        len(found), "" if len(found) == 1 else "s",
                        "\n".join("  - " + m for m in found), render(record)))
            return
        found = mismatches(scn.get("expect") or {}, record, scn.get("game"))
        if found:
            raise ScenarioMismatch([m for _, m in found], expected_table(scn, record),
                                   render(record), {line for line, _ in found if line})

    def repr_failure(self, excinfo):
        e = excinfo.value
        if isinstance(e, ScenarioMismatch):
            lines = ["%s: %d mismatch%s" % (self.path.name, len(e.errors),
                                             "" if len(e.errors) == 1 else "es")]
            if self.data.get("title"):
                lines.append("  " + self.data["title"])
            lines += ["  - " + m for m in e.errors]
            lines += ["", side_by_side(e.expected, e.actual, e.bad)]
            return "\n".join(lines)
        if isinstance(e, (ScenarioFailure, ShoeUnavailable)):
            return "%s: %s" % (self.path.name, e)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, "scenario %s" % self.path.name


# ================================================================================ collection

def _resolve(base, text):
    return (Path(base) / text).resolve()


def _holds_scenarios(folder):
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return False
    for name in names:
        if name.endswith(".json") and os.path.isfile(os.path.join(folder, name)):
            try:
                if _is_scenario(load_scenario(os.path.join(folder, name))):
                    return True
            except (OSError, ValueError):
                continue
    return False


class _Enabled:
    """Where JSON files are collected as scenarios."""

    def __init__(self, config):
        self.dirs = []          # collected recursively
        self.files = set()      # named on the command line
        for d in config.getini("facedown_scenarios") or []:
            self.dirs.append(_resolve(config.rootpath, d))
        invocation = config.invocation_params.dir
        for d in config.getoption("facedown_scenarios") or []:
            self.dirs.append(_resolve(invocation, d))
        self.option_dirs = list(self.dirs[len(config.getini("facedown_scenarios") or []):])
        source = getattr(config, "args_source", None)
        explicit = source is not None and source.name == "ARGS"
        self.explicit = explicit
        if explicit:
            for arg in config.args:
                path = _resolve(invocation, str(arg).split("::")[0])
                if path.suffix == ".json" and path.is_file():
                    self.files.add(path)
                elif path.is_dir() and _holds_scenarios(path):
                    self.dirs.append(path)

    def __bool__(self):
        return bool(self.dirs or self.files)

    def covers(self, path):
        path = path.resolve()
        if path in self.files:
            return True
        return any(d == path or d in path.parents for d in self.dirs)


def _enabled(config):
    if _ENABLED not in config.stash:
        config.stash[_ENABLED] = _Enabled(config)
    return config.stash[_ENABLED]


def pytest_addoption(parser):
    group = parser.getgroup("facedown", "Facedown dealing shoe")
    group.addoption("--shoe-port", dest="facedown_shoe_port", metavar="PORT", default=None,
                    help="run Facedown scenarios and the shoe_client/shoe_replay fixtures on "
                         "the shoe at this serial port (hardware in the loop: its own shuffle; "
                         "scenarios with simulated faults are skipped). Default: a virtual shoe.")
    group.addoption("--facedown-scenarios", dest="facedown_scenarios", metavar="DIR",
                    action="append", default=[],
                    help="collect the Facedown scenario files (*.json with \"steps\") under DIR "
                         "as tests (repeatable)")
    parser.addini("facedown_scenarios", type="linelist", default=[],
                  help="directories (relative to the rootdir) whose Facedown scenario files "
                       "(*.json with \"steps\") are collected as tests")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sim_only(reason): needs the simulator (a stacked deck, a seed, simulated "
                   "faults): skipped when running on a real shoe with --shoe-port")
    enabled = _Enabled(config)
    config.stash[_ENABLED] = enabled
    for d in enabled.option_dirs:
        if not d.is_dir():
            raise pytest.UsageError("--facedown-scenarios: no such directory: %s" % d)
    # Scenario directories outside the paths pytest walks anyway: walk them too (the ini's only
    # for a run without paths on the command line; --facedown-scenarios always).
    extra = enabled.option_dirs if enabled.explicit else enabled.dirs
    args = list(config.args)
    walked = [_resolve(config.invocation_params.dir, str(a).split("::")[0]) for a in args]
    for d in extra:
        if d.is_dir() and not any(w == d or w in d.parents for w in walked):
            args.append(str(d))
            walked.append(d)
    if len(args) != len(config.args):
        config.args[:] = args


def pytest_report_header(config):
    enabled = config.stash.get(_ENABLED, None)
    if enabled or config.getoption("facedown_shoe_port"):
        return "facedown: scenarios on %s" % _shoe(config).describe()
    return None


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".json":
        return None
    enabled = _enabled(parent.config)
    if not enabled.covers(file_path):
        return None
    named = file_path.resolve() in enabled.files
    try:
        data = load_scenario(file_path)
    except (OSError, ValueError) as e:
        return ScenarioFile.from_parent(parent, path=file_path,
                                        problem="%s is not a readable JSON scenario: %s"
                                                % (file_path.name, e))
    if not _is_scenario(data):
        if named:
            return ScenarioFile.from_parent(parent, path=file_path,
                                            problem="%s is not a scenario file (no \"steps\")"
                                                    % file_path.name)
        return None
    return ScenarioFile.from_parent(parent, path=file_path, data=data)


def pytest_collection_modifyitems(config, items):
    if not config.getoption("facedown_shoe_port"):
        return
    for item in items:  # on a real shoe: what needs the simulator's mechanism is skipped
        if isinstance(item, ScenarioItem):
            reason = hardware_skip_reason(item.data)
        else:
            marker = item.get_closest_marker("sim_only")
            reason = None if marker is None else (
                marker.kwargs.get("reason") or (marker.args[0] if marker.args else
                                                "simulator only"))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_collection_finish(session):
    """On a real shoe, reach it before any test: a port that does not answer fails the run
    (not a green run of skips)."""
    shoe = _shoe(session.config)
    if shoe.hardware:
        try:
            shoe.connect()
        except ShoeUnavailable as e:
            raise pytest.UsageError("--shoe-port: %s" % e)


def pytest_sessionfinish(session, exitstatus):
    shoe = session.config.stash.get(_SHOE, None)
    if shoe is None:
        return
    shoe.close()
    if shoe.hardware and shoe.played == 0 and exitstatus == 0:
        # hardware in the loop that played nothing tested nothing: not a pass
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        shoe.verdict = ("facedown: no scenario was played on the shoe at %s (all skipped or "
                        "deselected): nothing was tested, the run fails" % shoe.port)


def pytest_terminal_summary(terminalreporter):
    shoe = terminalreporter.config.stash.get(_SHOE, None)
    if shoe is not None and shoe.verdict:
        terminalreporter.write_line(shoe.verdict, red=True)


def pytest_unconfigure(config):
    shoe = config.stash.get(_SHOE, None)
    if shoe is not None:
        shoe.close()


# ================================================================================ fixtures

def _skip_test(reason):
    """pytest.skip, reported at the test (not at this file)."""
    try:
        exc = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # an older pytest
        pytest.skip(reason)
    raise exc


@pytest.fixture(scope="session")
def shoe_client(request):
    """A connected Client to the session's shoe (identified and attached): the shoe at
    --shoe-port, else a virtual shoe started for the session. client.info holds the identify
    answer (capabilities: "CAP_SIM" on a simulator)."""
    try:
        return _shoe(request.config).connect()
    except ShoeUnavailable as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture
def shoe_replay(request):
    """shoe_replay(scenario) -> hand record: a scenario dict (or a path to a scenario file)
    played on the session's shoe. Raises the firmware's scenario.ScenarioError for a rejected
    scenario; skips the test when the scenario needs the simulator and the shoe is real."""
    shoe = _shoe(request.config)

    def play(scn):
        if isinstance(scn, (str, os.PathLike)):
            scn = load_scenario(scn)
        scn = copy.deepcopy(scn)
        scn.pop("expect_step", None)
        reason = hardware_skip_reason(scn)
        if shoe.hardware and reason:
            _skip_test(reason)
        from .engine import scenario_module
        try:
            return shoe.play(scn, scenario_module())
        except ShoeUnavailable as e:
            pytest.fail(str(e), pytrace=False)

    return play
