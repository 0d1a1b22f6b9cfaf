"""Hypothesis state machine over the dealing engine: random legal and illegal steps, with faults
armed on the simulated mechanism (stopping ones too). After every step: every card is in exactly
one zone, the stub's untouched cards appear nowhere in the record, a rejected step changed
nothing, a step a stopping fault stopped logged the fault as its last entry, and every street
or draw round took at most one burn (Rule 38; tests/burnwatch.py, with its documented
exceptions), including a street a procedure promised "without a burn".

Procedures compose: the `compose` rule applies a first irregularity (a premature street, a
double feed on a burn or on the board, a flop dealt without a burn, an exposed or extra hole
card, a boxed card) and right after it a second one (a disordered stub, an exposure, another
premature street, a boxed card, a double feed, a power cut), so that most hands hold two or more
procedures. The run collects the ordered pairs of procedures that followed one another in a
hand and checks it covered enough of them. FACEDOWN_ENGINE_EXAMPLES sets the number of hands
(200 in the suite; the issue-14 note quotes a long run).
"""

import copy
import json
import os

from hypothesis import event, settings, strategies as st, HealthCheck
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, rule,
                                 run_state_machine_as_test)

from shoe import cards as C
from shoe import games as G
from shoe.errors import ShoeError
from shoe.hand import Hand, ACTIONS
from shoe.record import record
from shoe.rng import SeededRandom
from shoe.faults import MechanismFault
from shoe.zones import STUB, NOWHERE, SEAT0, OP_FAULT
import scenario
from hal.simmech import SimMech, AT_FAULTS, STOPS, NOTICED_AT_ONCE, NOTICED_TURNED
from burnwatch import BurnWatch

GAMES = sorted(G.GAMES)
PAIRS = set()   # ordered pairs of procedures seen one after the other in a hand, over the run
HANDS = []      # procedures per hand: how many hands held two or more


def snapshot(hand):
    state = {k: copy.deepcopy(v) for k, v in vars(hand).items()
             if k not in ("rng", "mech", "z", "step")}
    state["step"] = copy.deepcopy(vars(hand.step))  # (the step in progress: its fields)
    z = hand.z
    zones = (bytes(z.where), list(z.stub), list(z.board), list(z.burns), list(z.muck),
             list(z.aside), {s: list(v) for s, v in z.seats.items()}, list(z.removed),
             bytes(z.log))
    mech = (list(hand.mech.stack), copy.deepcopy(hand.mech.faults), hand.mech.no_burn)
    return state, zones, mech


# the compose rule's first irregularity, then its second
FIRSTS = ("premature", "double_feed_burn", "double_feed_cards", "no_burn", "exposed_deal",
          "boxed", "street")
SECONDS = ("jam", "jam", "jam_kept", "expose", "premature", "boxed", "double_feed_burn",
           "double_feed_cards", "power_cut", "street")


class EngineMachine(RuleBasedStateMachine):
    @initialize(game=st.sampled_from(GAMES), data=st.data(),
                rules=st.sampled_from(["tda2024", "robert"]), seed=st.integers(0, 2**30))
    def start(self, game, data, rules, seed):
        maxp = G.GAMES[game][4]
        seats = data.draw(st.lists(st.integers(1, 10), min_size=2, max_size=maxp, unique=True))
        button = data.draw(st.integers(1, 10))
        self.mech = SimMech()
        self.hand = Hand(game, seats, button, rules, None, SeededRandom(seed), self.mech)
        # the flash journal under the hand, committed as the device commits it
        self.shoe = scenario._Shoe((game, seats, button, rules, {}, None, seed), self.hand,
                                   self.mech)
        self.deck = set(C.deck(G.GAMES[game][1]))
        self.untouched = set(self.deck)  # cards that never left the stub
        self.rejected = 0
        self.burns = BurnWatch(self.hand)

    def teardown(self):
        if hasattr(self, "burns"):
            PAIRS.update(self.burns.pairs())
            HANDS.append(len(self.burns.procs))

    def attempt(self, fn, *args):
        before = snapshot(self.hand)
        try:
            fn(*args)
            self.shoe.rec.commit(self.hand)
        except MechanismFault as e:  # stopped: the card stayed in the stub; logged
            log = self.hand.z.log
            assert log[-4] == OP_FAULT and log[-3] == e.code
            assert self.hand.step.stopped is not None
            self.shoe.rec.commit(self.hand)
            self.burns.after(fn.__name__)
            event("stopped " + fn.__name__)
            return False
        except ShoeError as e:
            assert e.message
            assert snapshot(self.hand) == before, "rejected step changed the state"
            self.rejected += 1
            event("rejected " + fn.__name__)
            return False
        self.burns.after(fn.__name__)
        event("%s %s" % (fn.__name__, record(self.hand)["status"]))
        return True

    @rule(data=st.data())
    def deal(self, data):
        count = data.draw(st.one_of(st.none(), st.none(), st.integers(-1, 12)))
        self.attempt(self.hand.deal, count)

    @rule()
    def street(self):
        self.attempt(self.hand.street)

    @rule(data=st.data())
    def draw(self, data):
        discards = {}
        for seat in data.draw(st.lists(st.sampled_from(self.hand.seats), max_size=4, unique=True)):
            held = [c & C.CODE for c in self.hand.z.seats[seat]]
            pool = sorted(set(held) | {data.draw(st.integers(0, 51))})
            discards[seat] = data.draw(st.lists(st.sampled_from(pool), max_size=5))
        self.attempt(self.hand.draw, discards)

    @rule(data=st.data(), kind=st.sampled_from(ACTIONS + ("shove",)))
    def action(self, data, kind):
        seat = data.draw(st.one_of(st.sampled_from(self.hand.seats), st.integers(0, 11)))
        self.attempt(self.hand.action, seat, kind)

    @rule(data=st.data())
    def play_on(self, data):
        """Move the hand forward the way a table mostly does."""
        h = self.hand
        if not h.initial_complete():
            self.attempt(h.deal, None)
        elif h.kind == G.DRAW:
            seats = h.live_seats()
            discards = {s: [c & C.CODE for c in h.z.seats[s]][:data.draw(st.integers(0, 5))]
                        for s in seats}
            self.attempt(h.draw, discards)
        else:
            self.attempt(h.street)

    @rule(data=st.data())
    def expose(self, data):
        seat = data.draw(st.sampled_from(self.hand.seats + [11]))
        self.attempt(self.hand.expose, seat, data.draw(st.integers(0, 8)))

    @rule()
    def premature(self):
        self.attempt(self.hand.premature)

    @rule(mixed=st.lists(st.sampled_from(["muck", "burns", "board"]), max_size=2, unique=True),
          kept=st.booleans())
    def jam(self, mixed, kept):
        self.attempt(self.hand.jam, mixed, kept)

    # Ending a hand stops the interesting part: both are drawn rarely.
    @rule(roll=st.integers(0, 9))
    def misdeal(self, roll):
        if roll == 0:
            self.attempt(self.hand.misdeal)

    @rule(roll=st.integers(0, 9))
    def end(self, roll):
        if roll == 0:
            self.attempt(self.hand.end)

    @rule(seed=st.integers(0, 2**30))
    def power_cut(self, seed):
        """A power cut, and the hand rebuilt from its flash journal: every card that left the
        stub stays where it was; the stub keeps its cards, reshuffled (RP-4)."""
        h = self.hand
        before = record(h)
        stub = sorted(h.z.stub)
        self.shoe.reboot()
        self.hand, self.mech = self.shoe.hand, self.shoe.mech
        self.burns.after("reboot", self.hand)
        after = record(self.hand)
        for key in ("seats", "board", "burns", "muck", "aside", "removed", "status", "stub"):
            assert after[key] == before[key]
        assert sorted(self.hand.z.stub) == stub
        assert after["log"][:len(before["log"])] == before["log"]
        if h.status == 0 and stub:
            assert after["procedures"][-1] == "stub-reshuffle"

    @rule(kind=st.sampled_from(AT_FAULTS + ("no_burn",)), at=st.integers(1, 6), data=st.data())
    def fault(self, kind, at, data):
        if self.mech.pending() >= 2:
            return
        code = 0
        if kind == "foreign":
            code = C.JOKER if self.hand.deck_kind == C.FULL else data.draw(st.integers(0, 15))
        elif kind == "duplicate":
            code = data.draw(st.sampled_from(sorted(self.deck)))
        self.mech.arm(kind, at, code)

    @rule(kind=st.sampled_from(STOPS), at=st.integers(1, 6), times=st.integers(1, 4))
    def stop(self, kind, at, times):
        """A stopping fault on a coming card (a jam sticking `times` times: the retries clear
        up to the pin map's jam_retries)."""
        if self.mech.pending() >= 2:
            return
        self.mech.arm(kind, at, times if kind == "jam" else 0)

    # Three rules, so that hypothesis (which picks among the rules evenly) composes often.
    @rule(first=st.sampled_from(FIRSTS), second=st.sampled_from(SECONDS), data=st.data())
    def compose(self, first, second, data):
        self._compose(first, second, data)

    @rule(first=st.sampled_from(("premature", "no_burn", "double_feed_cards")),
          second=st.sampled_from(SECONDS), data=st.data())
    def compose_on_a_street(self, first, second, data):
        self._compose(first, second, data)

    @rule(first=st.sampled_from(("jam", "expose", "boxed", "power_cut", "double_feed_burn")),
          second=st.sampled_from(FIRSTS), data=st.data())
    def compose_before_a_street(self, first, second, data):
        self._compose(first, second, data)

    def _compose(self, first, second, data):
        """Two irregularities one right after the other, then the hand goes on."""
        h = self.hand
        if h.status != 0 or h.step.stopped is not None:
            return
        self._irregular(first, data)
        if self.hand.status == 0 and self.hand.step.stopped is None:
            self._irregular(second, data)
        for _ in range(data.draw(st.integers(0, 3))):
            if self.hand.status != 0 or self.hand.step.stopped is not None:
                break
            self.play_on(data)

    def _irregular(self, what, data):
        h = self.hand
        if what == "premature":  # a street, then it was premature
            self.play_on(data)
            self.attempt(self.hand.premature)
        elif what in ("double_feed_burn", "double_feed_cards", "no_burn", "boxed"):
            if self.mech.pending() >= 2:
                return
            at = 1 if what == "double_feed_burn" else data.draw(st.integers(1, 4))
            if what == "no_burn":  # noticed at once, or only after the flop was turned
                self.mech.arm("no_burn", 0, data.draw(st.sampled_from([NOTICED_AT_ONCE,
                                                                        NOTICED_TURNED])))
            else:
                self.mech.arm("boxed" if what == "boxed" else "double_feed", at, 0)
            self.play_on(data)
        elif what == "exposed_deal":  # a hole card exposed while the deal goes on
            self.attempt(h.deal, data.draw(st.integers(1, 4)))
            seat = data.draw(st.sampled_from(h.seats))
            self.attempt(self.hand.expose, seat, data.draw(st.integers(1, 2)))
        elif what == "expose":
            seat = data.draw(st.sampled_from(h.live_seats() or h.seats))
            self.attempt(h.expose, seat, data.draw(st.integers(1, 7)))
        elif what == "jam":
            self.attempt(h.jam, data.draw(st.sampled_from([[], ["muck"], ["burns"],
                                                            ["muck", "burns"]])), False)
        elif what == "jam_kept":
            self.attempt(h.jam, [], True)
        elif what == "power_cut":
            self.power_cut(data.draw(st.integers(0, 2**30)))
        else:  # "street": no irregularity, the hand simply goes on
            self.play_on(data)

    @invariant()
    def every_card_in_exactly_one_zone(self):
        z = self.hand.z
        seen = []
        for name in ("stub", "board", "burns", "muck", "aside"):
            seen += getattr(z, name)
        for s, held in z.seats.items():
            seen += [c & C.CODE for c in held]
            for c in held:
                assert z.where[c & C.CODE] == SEAT0 + s
        assert sorted(seen) == sorted(self.deck), "a card was lost or duplicated"
        for c in z.stub:
            assert z.where[c] == STUB
        for c in range(C.NCODES):
            if c not in self.deck:
                assert z.where[c] == NOWHERE
        for c in z.removed:
            assert c not in z.stub

    @invariant()
    def stub_never_disclosed(self):
        left = set()
        log = self.hand.z.log
        for i in range(0, len(log), 4):
            if log[i] == 1 and log[i + 2] == STUB:  # a move out of the stub
                left.add(log[i + 1])
        self.untouched -= left
        untouched = self.untouched & set(self.hand.z.stub)
        rec = record(self.hand)
        text = json.dumps(rec)
        assert rec["stub"] == len(self.hand.z.stub)
        for c in untouched:
            assert '"%s"' % C.name(c) not in text, "stub card %s disclosed" % C.name(c)


EXAMPLES = int(os.environ.get("FACEDOWN_ENGINE_EXAMPLES", "200"))


def test_engine_state_machine():
    """The machine over EXAMPLES hands; then the pairs of procedures it composed."""
    del HANDS[:]
    PAIRS.clear()
    run_state_machine_as_test(EngineMachine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=50, deadline=None,
        suppress_health_check=[HealthCheck.too_slow]))
    several = sum(1 for n in HANDS if n >= 2)
    print("engine state machine: %d hands, %d with two or more procedures, %d distinct ordered "
          "pairs of procedures" % (len(HANDS), several, len(PAIRS)))
    assert several * 3 >= len(HANDS), "fewer than a third of the hands composed procedures"
    assert len(PAIRS) >= min(35, EXAMPLES // 4), sorted(PAIRS)
