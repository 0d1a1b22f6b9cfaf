# Runs a scenario file (a hand described as the table saw it) against the engine and the
# simulated mechanism, and returns the hand record. The whole file is checked before anything
# runs: a bad scenario is rejected with a message naming the step.
#
# As a script (CPython or MicroPython): reads scenarios as JSON lines on stdin (one scenario a
# line) and prints one record a line; a rejected scenario prints {"error": message}. One hand
# at a time, so the heap stays what one hand needs.
import json
import sys

from shoe import cards as C
from shoe import games as G
from shoe.errors import ShoeError, E_STATE
from shoe.hand import Hand, ACTIONS
from shoe.record import record
from shoe.rng import SeededRandom
from shoe.faults import MechanismFault, JAM
from hal.simmech import (SimMech, AT_FAULTS, STOPS, UNTIL_CLEARED, FOREIGN, DUPLICATE, NO_BURN,
                         NOTICED_AT_ONCE, NOTICED_TURNED)

TOP_KEYS = ("game", "rules", "house", "seats", "button", "deck", "seed", "steps",
            "title", "description", "expect", "expect_error", "sim_only")
FAULTS = AT_FAULTS + (NO_BURN, "jam", "power_cut") + tuple(k for k in STOPS if k != JAM)


_DETECTED = {"at_once": NOTICED_AT_ONCE, "turned": NOTICED_TURNED}


class ScenarioError(Exception):
    pass


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _card(text, where):
    try:
        return C.parse(text)
    except ValueError as e:
        raise ScenarioError("%s: %s" % (where, e))


def _seat(step, key, seats, where):
    v = step.get(key)
    if not _int(v) or not (G.SEAT_MIN <= v <= G.SEAT_MAX) or v not in seats:
        raise ScenarioError("%s: impossible seat %r (seats in play: %s)" % (
            where, v, ", ".join(str(s) for s in seats)))
    return v


def check(scn):
    """Check the whole scenario. Returns (hand arguments, steps as tuples)."""
    if not isinstance(scn, dict):
        raise ScenarioError("a scenario is a JSON object")
    for key in scn:
        if key not in TOP_KEYS:
            raise ScenarioError("unknown key %r (keys: %s)" % (key, ", ".join(TOP_KEYS)))
    game = scn.get("game")
    if game not in G.GAMES:
        raise ScenarioError("unknown game %r (games: %s)" % (game, ", ".join(G.names())))
    kind, deck_kind = G.GAMES[game][0], G.GAMES[game][1]
    seats = scn.get("seats")
    if not isinstance(seats, list):
        raise ScenarioError("seats must be a list of seat numbers")
    deck = scn.get("deck")
    order = None
    if deck is not None:
        if not isinstance(deck, list):
            raise ScenarioError("deck must be a list of cards")
        order = []
        for i in range(len(deck)):
            code = _card(deck[i], "deck card %d" % (i + 1))
            if not C.in_deck(code, deck_kind):
                raise ScenarioError("deck card %d: %s is not in the %s deck" % (
                    i + 1, deck[i], game))
            order.append(code)
    if kind != G.STUD and "button" not in scn:
        raise ScenarioError("%s needs \"button\": the dealer button's seat (one of seats)"
                            % game)
    seed = scn.get("seed")
    if seed is not None and not _int(seed):
        raise ScenarioError("seed must be an integer")
    steps = scn.get("steps")
    if not isinstance(steps, list):
        raise ScenarioError("steps must be a list")
    out = []
    for i in range(len(steps)):
        out.append(_check_step(steps[i], i + 1, game, deck_kind, seats))
    args = (game, seats, scn.get("button"), scn.get("rules", "tda2024"), scn.get("house") or {},
            order, seed)
    try:  # the table itself (seats, button, rules, house, deck): a dry run of the hand
        Hand(args[0], args[1], args[2], args[3], args[4], _Zero(), None, order)
    except ShoeError as e:
        raise ScenarioError(e.message)
    return args, out


class _Zero:
    def below(self, n):
        return 0


def _check_step(step, n, game, deck_kind, seats):
    if not isinstance(step, dict) or "do" not in step:
        raise ScenarioError("step %d: a step is an object with \"do\"" % n)
    do = step["do"]
    where = "step %d (%s)" % (n, do)
    if do == "deal":
        k = step.get("cards")
        if k is not None and (not _int(k) or k < 1):
            raise ScenarioError("%s: cards must be a positive integer" % where)
        return ("deal", k)
    if do in ("street", "premature", "misdeal", "end"):
        return (do,)
    if do == "draw":
        discards = step.get("discards", {})
        if not isinstance(discards, dict):
            raise ScenarioError("%s: discards must map seats to cards" % where)
        out = {}
        for key in discards:
            try:
                seat = int(key)
            except ValueError:
                seat = None
            if seat not in seats:
                raise ScenarioError("%s: impossible seat %r" % (where, key))
            cards = discards[key]
            if not isinstance(cards, list):
                raise ScenarioError("%s: seat %s's discards must be a list" % (where, key))
            codes = []
            for text in cards:
                code = _card(text, where)
                if not C.in_deck(code, deck_kind):
                    raise ScenarioError("%s: %s is not in the %s deck" % (where, text, game))
                codes.append(code)
            out[seat] = codes
        return ("draw", out)
    if do == "action":  # a table that is bet (house "betting"): "amount", "out_of_turn"
        seat = _seat(step, "seat", seats, where)
        if step.get("kind") not in ACTIONS:
            raise ScenarioError("%s: unknown action %r (actions: %s)" % (
                where, step.get("kind"), ", ".join(ACTIONS)))
        amount = step.get("amount")
        if amount is not None and (not _int(amount) or amount < 0):
            raise ScenarioError("%s: amount must be a whole number of chips" % where)
        if step.get("out_of_turn") not in (None, True, False):
            raise ScenarioError("%s: out_of_turn is true or false" % where)
        return ("action", seat, step["kind"], amount, bool(step.get("out_of_turn")),
                _chips_step(step.get("chips"), where))
    if do == "stacks":  # a table that is bet: every seat's stack at the start of the hand
        given = step.get("stacks")
        if not isinstance(given, dict):
            raise ScenarioError("%s: stacks maps every seat to its chips" % where)
        out = {}
        for key in given:
            seat = int(key) if str(key).isdigit() else None
            if seat not in seats or not _int(given[key]) or given[key] < 1:
                raise ScenarioError("%s: %r: %r is not a seat's stack" % (where, key, given[key]))
            out[seat] = given[key]
        return ("stacks", out)
    if do == "expose":
        seat = _seat(step, "seat", seats, where)
        k = step.get("card")
        if not _int(k) or k < 1:
            raise ScenarioError("%s: card must be the card's number (1 = first received)" % where)
        return ("expose", seat, k)
    if do == "fault":
        kind = step.get("kind")
        if kind not in FAULTS:
            raise ScenarioError("%s: unknown fault %r (faults: %s)" % (
                where, kind, ", ".join(FAULTS)))
        if kind == JAM and ("at" in step or "times" in step):  # the mechanism jams
            return _jam_step(step, where)
        if kind == "jam":  # the stub was disordered (RP-4): the dealer found it so
            mixed = step.get("mixed_with", [])
            if not isinstance(mixed, list) or [m for m in mixed if m not in ("muck", "burns")]:
                raise ScenarioError("%s: mixed_with takes \"muck\" and/or \"burns\"" % where)
            return ("jam", mixed, bool(step.get("order_kept", False)))
        if kind == NO_BURN:  # "detected": when the table notices (RRoP Hold'em 4's two cases)
            seen = step.get("detected", "at_once")
            if seen not in _DETECTED:
                raise ScenarioError("%s: detected is \"at_once\" (before the flop is turned, the "
                                    "default) or \"turned\" (after it was turned), not %r" % (
                                        where, seen))
            return ("fault", kind, 0, _DETECTED[seen])
        if kind == "power_cut":
            n = step.get("after_writes", 0)
            if not _int(n) or n < 0:
                raise ScenarioError("%s: after_writes must be 1 or more (the n-th flash write of "
                                    "the next step)" % where)
            return ("cut", n)
        at = step.get("at")
        if not _int(at) or at < 1:
            raise ScenarioError("%s: at must be 1 or more (the n-th card of the next step)" % where)
        code = 0
        if kind == FOREIGN or kind == DUPLICATE:
            code = _card(step.get("card"), where)
            if kind == FOREIGN and C.in_deck(code, deck_kind):
                raise ScenarioError("%s: %s is part of the %s deck, not a foreign card" % (
                    where, step.get("card"), game))
            if kind == DUPLICATE and not C.in_deck(code, deck_kind):
                raise ScenarioError("%s: %s is not in the %s deck: use a foreign fault" % (
                    where, step.get("card"), game))
        return ("fault", kind, at, code)
    raise ScenarioError("%s: unknown step (steps: deal, street, draw, action, stacks, expose, "
                        "premature, fault, misdeal, end)" % where)


# an action's "chips" (the chips put out, shoe.chips): its flags by name
_CHIP_FLAGS = (("declared", 1), ("one_chip", 2), ("string", 4), ("noticed", 8))


def _chips_step(d, where):
    """{"put": N, "smallest": N, "declared": true, "one_chip", "string", "noticed"} as
    (put, smallest, flags), or None."""
    if d is None:
        return None
    if not isinstance(d, dict) or [k for k in d if k not in ("put", "smallest") and
                                   k not in [f for f, _ in _CHIP_FLAGS]]:
        raise ScenarioError("%s: chips is an object of put, smallest, declared, one_chip, "
                            "string, noticed" % where)
    put, smallest = d.get("put"), d.get("smallest", 0)
    if not _int(put) or put < 0 or not _int(smallest) or smallest < 0:
        raise ScenarioError("%s: chips put and smallest are whole numbers of chips" % where)
    flags = 0
    for name, bit in _CHIP_FLAGS:
        v = d.get(name, name == "declared")
        if v not in (True, False):
            raise ScenarioError("%s: chips %s is true or false" % (where, name))
        if v != (name == "declared"):  # (declared: true is the default, bit 1 says not)
            flags |= bit
    return (put, smallest, flags)


def _jam_step(step, where):
    """{"do": "fault", "kind": "jam", "at": n, "times": t}: the n-th card of the next step
    sticks t times (default: until the operator clears it); more than the pin map's
    jam_retries stop the shoe."""
    for key in ("mixed_with", "order_kept"):
        if key in step:
            raise ScenarioError("%s: %s is for a disordered stub (a jam without \"at\"), not "
                                "for a jam of the mechanism" % (where, key))
    at = step.get("at", 1)
    if not _int(at) or at < 1:
        raise ScenarioError("%s: at must be 1 or more (the n-th card of the next step)" % where)
    times = step.get("times", UNTIL_CLEARED)
    if not _int(times) or not (1 <= times <= UNTIL_CLEARED):
        raise ScenarioError("%s: times must be 1..%d (how often the card sticks; %d: until "
                            "the operator clears it)" % (where, UNTIL_CLEARED, UNTIL_CLEARED))
    return ("fault", JAM, at, times)


def new_seed():
    try:
        import os
        return int.from_bytes(os.urandom(8), "big")
    except (ImportError, AttributeError):
        import random
        return random.getrandbits(30)


def start(args):
    """A fresh hand and simulated mechanism for a checked scenario."""
    game, seats, button, rules, house, order, seed = args
    mech = SimMech()
    rng = SeededRandom(new_seed() if seed is None else seed)
    try:
        hand = Hand(game, seats, button, rules, house, rng, mech, order)
        if "betting" in house:  # the table is bet (docs/betting.md)
            from shoe.bets import Bets

            hand.bets = Bets(hand, house["betting"])
    except ShoeError as e:
        raise ScenarioError(e.message)
    return hand, mech


def outcome(hand):
    """The hand record, with the betting's view when the table is bet."""
    rec = record(hand)
    if hand.bets is not None:
        rec["betting"] = hand.bets.view()
    return rec


def begin_step(hand, mech):
    """Faults are armed for the n-th card of the next step; repeating a step a stopping fault
    stopped goes on counting its cards."""
    if not hand.can_resume():
        mech.begin_step()


def apply(hand, mech, step):
    """One checked step. Raises ShoeError (nothing changed) for a step wrong in this state,
    MechanismFault when a stopping fault stopped it (the hand logged it; repeating the step
    goes on from there)."""
    do = step[0]
    if do == "deal":
        hand.deal(step[1])
    elif do == "street":
        hand.street()
    elif do == "draw":
        hand.draw(step[1])
    elif do == "action":
        if step[3] is None and not step[4] and step[5] is None:
            hand.action(step[1], step[2])  # (today's call, unchanged)
        else:
            hand.action(step[1], step[2], step[3], step[4], step[5])
    elif do == "expose":
        hand.expose(step[1], step[2])
    elif do == "stacks":
        if hand.bets is None:
            raise ShoeError(E_STATE, "this table is not bet: its house has no betting")
        hand.bets.set_stacks(step[1])
    elif do == "premature":
        hand.premature()
    elif do == "misdeal":
        hand.misdeal()
    elif do == "end":
        hand.end()
    elif do == "jam":
        hand.jam(step[1], step[2])
    else:  # fault on the mechanism, for the next step that dispenses
        mech.arm(step[1], step[2], step[3])


def run(scn, after=None):
    """Run a scenario dict; return the hand record. after(step name, hand), if given, is called
    after each step that ran (and after a reboot, as "reboot"): the tests' observers."""
    args, steps = check(scn)
    hand, mech = start(args)
    for step in steps:
        if step[0] == "cut":  # power cuts: the shoe's flash journal is part of the story
            return _run_with_journal(scn, args, steps, hand, mech, after)
    for i in range(len(steps)):
        step = steps[i]
        begin_step(hand, mech)
        try:
            apply(hand, mech, step)
        except ShoeError as e:
            raise ScenarioError("step %d (%s): %s" % (i + 1, scn["steps"][i]["do"], e.message))
        except MechanismFault:
            if after is not None:
                after(step[0], hand)
            continue  # the shoe stopped: the operator clears it; the next step repeats it
        if after is not None:
            after(step[0], hand)
        if step[0] != "fault" and mech.feeds and mech.pending():
            raise ScenarioError("step %d (%s): a fault armed for it was not reached (%d cards "
                                "dispensed)" % (i + 1, step[0], mech.feeds))
    if mech.pending():
        raise ScenarioError("a fault is armed after the last step: no step dispensed its card")
    return outcome(hand)


class _Shoe:
    """The engine with the flash journal under it, as the device runs it: a commit before each
    card moves, and one per step with its reply; a power cut, and the reboot after it."""

    def __init__(self, args, hand, mech):
        from hal.flashdev import RamFlash
        from journal import Journal, config_json
        from recorder import Recorder

        game, seats, button, rules, house, order, seed = args
        self.seed = seed
        self.dev = RamFlash(blocks=8)
        self.j = Journal(self.dev)
        self.rec = Recorder(self.j)
        self.attach(hand, mech)
        self.rec.begin(hand, 1, config_json(game, seats, hand.button, rules, house))

    def attach(self, hand, mech):
        self.hand = hand
        self.mech = mech
        mech.before = self.before

    def before(self, route):
        self.rec.commit(self.hand, feeding=route)

    def reboot(self):
        """Power back on: the hand as the journal has it; its stub reshuffled (RP-4); a card
        caught in flight settled from what the output sensor and reader see."""
        from journal import Journal
        from recorder import Recorder, deliver, rebuild

        self.dev.revive()
        out = list(self.mech._out)  # what sits at the output (the sensors' view)
        self.j = Journal(self.dev)
        self.rec = Recorder(self.j)
        j = self.j
        oh = j.hand if j.hand is not None else j.last
        mech = SimMech()
        rng = SeededRandom("%s/1" % self.seed if self.seed is not None else new_seed())
        hand = rebuild(oh, rng, mech)
        self.rec.logged = len(oh.entries) // 4
        self.rec.image = bytearray(oh.image) if oh.image is not None else None
        if j.hand is not None:
            if j.hand.feeding >= 0:
                found = [c for c in out if hand.z.where[c & 63] == 0]
                if found:
                    hand._proc("card-settled")
                deliver(mech, hand, found)  # as the shoe does (device.py)
            self.rec.commit(hand)
        self.attach(hand, mech)
        return oh.reply


def _run_with_journal(scn, args, steps, hand, mech, after=None):
    from hal.flashdev import PowerCut

    shoe = _Shoe(args, hand, mech)
    armed = 0
    i = 0
    while i < len(steps):
        step = steps[i]
        if step[0] == "cut":
            if step[1]:
                armed = step[1]  # during the next step's flash writes
            else:
                shoe.reboot()  # the power goes now, between steps
                if after is not None:
                    after("reboot", shoe.hand)
            i += 1
            continue
        begin_step(shoe.hand, shoe.mech)
        if armed and step[0] != "fault":
            shoe.j.cut_at(armed)
            armed = 0
        stopped = False
        try:
            try:
                apply(shoe.hand, shoe.mech, step)
            except ShoeError as e:
                raise ScenarioError("step %d (%s): %s" % (i + 1, scn["steps"][i]["do"],
                                                          e.message))
            except MechanismFault:
                stopped = True  # the fault's entry and the error reply reach the flash
            if step[0] != "fault":
                shoe.rec.commit(shoe.hand, reply=(i + 1, b"\x09" if stopped else b"\x00"))
            if after is not None:
                after(step[0], shoe.hand)
        except PowerCut:
            reply = shoe.reboot()
            if after is not None:  # what the step did before the power went, and the reboot
                after(step[0], shoe.hand)
            if reply is None or reply[0] != i + 1:
                continue  # the step's reply never reached the flash: the host sends it again
        if step[0] != "fault" and not stopped and shoe.mech.feeds and shoe.mech.pending():
            raise ScenarioError("step %d (%s): a fault armed for it was not reached (%d cards "
                                "dispensed)" % (i + 1, step[0], shoe.mech.feeds))
        i += 1
    if shoe.mech.pending() or armed:
        raise ScenarioError("a fault is armed after the last step: no step dispensed its card")
    if shoe.j.cut:
        raise ScenarioError("a power cut is armed after the last step: the steps after it wrote "
                            "fewer journal records than after_writes")
    return outcome(shoe.hand)


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        try:
            out = run(json.loads(line))
        except ValueError as e:
            out = {"error": "not a JSON scenario: %s" % e}
        except ScenarioError as e:
            out = {"error": str(e)}
        json.dump(out, sys.stdout)  # streamed: no whole-record string in the heap
        sys.stdout.write("\n")
        out = None


if __name__ == "__main__":
    main()
