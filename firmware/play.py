# The hand's commands: start a hand (the shuffle), deal, streets, draws, actions and bets,
# irregularities, the end, and the table's status: what a hand needs resident. One job of the
# device (firmware/device.py's Device is made of this, events.py and its own dispatch); the
# rare commands are in rare.py, imported on demand.
import json

import wire
from journal import config_json
from shoe import cards as C
from shoe import faults as F
from shoe import games as G

# The engine's table (shoe.hand, and shoe.house, shoe.shuffler, shoe.rng, shoe.record,
# shoe.snapshot, shoe.logplay with it: ~30 KB of a Pico's heap) is imported with the first hand
# (cmd_hand, the power-up's restore of a hand, config's dry run) and kept from then on: an idle
# shoe that has dealt nothing since power-up does not hold it (docs/deploy.md, "The memory
# budget"). Every use below is on a hand that exists, or imports it where the hand is made.

HELD_HANDS = 4  # hands whose events may wait for the host's ACK before a new hand is refused


class CommandError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Play:
    """The hand's commands (cmd_<name>, dispatched by Device.execute from wire.COMMANDS)."""

    def profile(self):
        """The name of the house profile the table was configured from, or None."""
        return self.config[5] if self.config is not None and len(self.config) > 5 else None

    def cmd_hand(self, button, ending=False):
        """Start the next hand: shuffle (or the simulator's stacked deck), set the button.
        ending (the panel's DEAL, never from the wire): the hand in progress ends, once the
        new one is made (a hand refused leaves it as it was)."""
        if self.config is None:
            raise CommandError(wire.WRONG_STATE, "not configured: send config first")
        h = self.hand
        if dealing(h) and h.z.log and not ending:
            raise CommandError(wire.WRONG_STATE, "the hand is in progress: end it first")
        if len(self.held) >= HELD_HANDS:
            raise CommandError(wire.BUSY, "events of %d hands await the host's ACK" % HELD_HANDS)
        import gc

        gc.collect()  # what the hand keeps (the engine's modules with the first, the Hand, its
        # recorder's state) is placed low in a collected heap, not above the last command's
        # garbage, where it would split a Pico's largest free block once that is collected
        from shoe.hand import Hand, MISDEAL
        from shoe import house as H

        game, seats, old, rules, house = self.config[:5]
        kind = G.GAMES[game][0]
        if button:
            if not (G.SEAT_MIN <= button <= G.SEAT_MAX):
                raise CommandError(wire.BAD_ARGUMENT, "button must be a seat 1..10")
        elif kind == G.STUD:
            button = None
        elif old:
            # the configured button for the first hand; an exact re-deal keeps it after a
            # misdeal (TDA 35-C); otherwise it moves to the next occupied seat
            button = old if h is None or h.status == MISDEAL else _next_seat(seats, old)
        else:
            button = seats[-1]
        if self.entropy is not None:
            raise _entropy_error(self.entropy)
        try:
            rng = self.hal.rng(self.sim_seed)
        except Exception as e:
            if _entropy_why(e) is not None:
                raise  # a failing entropy source stops dealing, never degrades (execute says so)
            raise CommandError(wire.FAULT, "the random source failed: %s" % (e,))
        order = self.sim_order if self.sim_order is not None else self.hal.deck
        if order is None:  # two decks: the next one lies shuffled already (SHUFFLER.md)
            order = self.mech.next_deck()
        hand = Hand(game, seats, button, rules, house, rng, self.mech, order)
        if H.BETTING in house:  # the table is bet: the engine loads now (docs/betting.md)
            from shoe.bets import Bets

            hand.bets = Bets(hand, house[H.BETTING])
        self.mech.gather(C.deck(hand.deck_kind), rng)  # the other deck loads while this is dealt
        # (a stacked deck the game refuses leaves all as it was) every card is gathered for the
        # shuffle: none waits outside, nothing to recover
        self.mech.delivered = []
        self.recovery = None
        self.sim_order = None
        self.sim_seed = None
        self.config[2] = hand.button
        if dealing(self.hand):
            self.hand.end()
            self.collect()
            self.rec.commit(self.hand)
        self.hand = hand
        self.histories = None  # (the journal changes: a cached history is stale)
        self.hand_no = self.hand_no % 0xFFFF + 1
        self.hal.store.write("counters", json.dumps(self.counts))  # once a hand: little wear
        self.logged = 0
        self.rec.begin(hand, self.hand_no, config_json(game, seats, hand.button, rules, house,
                                                       self.profile()))
        return ()

    def _hand(self):
        if self.hand is None:
            raise CommandError(wire.WRONG_STATE, "no hand: send hand to start one")
        return self.hand

    def cmd_deal(self, count):
        self._hand().deal(count or None)
        return ()

    def cmd_street(self):
        self._hand().street()
        return ()

    def cmd_draw(self, data):
        discards = {}
        for seat, codes in wire.unpack_discards(data):
            if seat in discards:
                raise CommandError(wire.BAD_ARGUMENT, "seat %d listed twice" % seat)
            for c in codes:
                if c >= C.NCODES:  # (a byte from the wire: the engine indexes by card code)
                    raise CommandError(wire.BAD_ARGUMENT, "unknown card code %d" % c)
            discards[seat] = codes
        self._hand().draw(discards)
        return ()

    def cmd_action(self, seat, kind):
        h = self._hand()
        from shoe.hand import ACTIONS

        if kind >= len(ACTIONS):
            raise CommandError(wire.BAD_ARGUMENT, "unknown action kind %d" % kind)
        h.action(seat, ACTIONS[kind])
        return ()

    def _bet_hand(self):
        """The hand, on a table that is bet (the bet, chips and stacks commands' one refusal)."""
        h = self._hand()
        if h.bets is None:
            raise CommandError(wire.WRONG_STATE, "this table is not bet: configure its betting "
                               "(config's betting) or report actions without amounts")
        return h

    def cmd_bet(self, seat, kind, amount, chips=None):
        """An action with its amount (the table's betting checks it); chips: (put, smallest,
        flags) when the chips command reports what the seat put out."""
        h = self._bet_hand()
        from shoe.hand import ACTIONS

        if kind & 0x7F >= len(ACTIONS):
            raise CommandError(wire.BAD_ARGUMENT, "unknown action kind %d" % kind)
        h.action(seat, ACTIONS[kind & 0x7F], None if amount == wire.NO_AMOUNT else amount,
                 bool(kind & 0x80), chips)
        return ()

    def cmd_chips(self, seat, kind, amount, put, smallest, flags):
        """An action with the chips the seat put out (shoe.chips makes the action of them)."""
        return self.cmd_bet(seat, kind, amount, (put, smallest, flags))

    def cmd_stacks(self, data):
        """Every seat's stack at the start of this hand (before its first card)."""
        h = self._bet_hand()
        try:
            stacks = wire.unpack_stacks(data)
        except wire.WireError as e:
            raise CommandError(wire.BAD_ARGUMENT, str(e))
        h.bets.set_stacks(stacks)
        return ()

    def cmd_report(self, what, seat, index):
        h = self._hand()
        if what == 1:
            h.expose(seat, index)
        elif what == 2:
            h.premature()
        elif what == 3:
            h.misdeal()
        else:
            raise CommandError(wire.BAD_ARGUMENT, "report: what is 1 exposed, 2 premature, "
                                                  "3 misdeal, not %d" % what)
        return ()

    def cmd_end(self):
        self._hand().end()
        return ()

    def cmd_ping(self, token):
        return (token,)

    def cmd_status(self, offset):
        """The table (as the hand record without its log) in chunks; offset 0 takes a new one."""
        if offset == 0xFFFF:  # the counters only: no snapshot is made
            return (self.hand_no, self.event_next, b"")
        see = self.role >= wire.ROLE_TABLE
        if offset == 0 or self.status_cache is None or self.status_cache[0] != see:
            self.status_cache = None  # (the old document goes before the new one is made)
            self.status_cache = (see, self.status_json(see))
        doc = self.status_cache[1]
        if offset >= len(doc):  # read to its end (the host's last, empty chunk): the document
            # is let go (a Pico's heap kept it until the next status, splitting its largest
            # free block); a chunk asked after this takes a new snapshot (client.status sees
            # pieces that do not join and reads again from 0)
            self.status_cache = None
        return (self.hand_no, self.event_next, doc[offset:offset + 160])

    def status_json(self, see=True):
        """The table as JSON; without see (no table session) the down cards are "??"."""
        import gc

        out = {"hand": self.hand_no, "configured": self.config is not None,
               "events": self.event_next, "fault": self.fault, "latched": self.latched,
               "recovered": self.mech.recovered, "locked": self.locked,
               "session": wire.ROLES[self.role]}
        nd = self.mech.next_status()  # two decks: the next one's state, never its order
        if nd is not None:
            out["next_deck"] = nd
        if self.config is not None:
            out["config"] = {"game": self.config[0], "seats": self.config[1],
                             "button": self.config[2], "rules": self.config[3],
                             "house": self.config[4], "profile": self.profile()}
        if self.hand is not None:
            from shoe.hand import FOLDED, DEAD
            from shoe.record import record

            gc.collect()
            rec = record(self.hand, log=False)
            del rec["log"]
            # why a seat holds nothing, without the log: folded, or its cards mucked (dead)
            why = {FOLDED: "folded", DEAD: "dead"}
            rec["out"] = {str(s): why[self.hand.seat_states[s]] for s in self.hand.seats
                          if self.hand.seat_states[s] in why}
            if not see:
                _mask_record(rec)
            if self.hand.bets is not None:
                rec["betting"] = self.hand.bets.view()
            out["table"] = rec
            rec = None
        text = json.dumps(out)
        out = None
        gc.collect()  # the dicts go first: the bytes kept while the chunks are read take their
        # room, low in the heap, not the bottom of the largest free block (on a Pico the copy
        # above them split it in two: 32.5 KB of 65 KB free during a status, in the lab)
        return text.encode()

    def _sim(self):
        if not self.hal.simulated:
            raise CommandError(wire.DENIED, "simulator commands are not available on a shoe")


def dealing(h):
    """Is h a hand being dealt (False for None)? What the device, the panel and the rare
    paths ask of the hand they hold; shoe.hand is in the heap whenever a hand is."""
    if h is None:
        return False
    import shoe.hand  # (the idle loop asks: `from shoe.hand import` allocates at each call)

    return h.status == shoe.hand.DEALING


def _mask_record(rec):
    """What anyone at the table sees: face-up and board cards; the others as "??"."""
    for held in rec["seats"].values():
        for c in held:
            if not c["up"]:
                c["card"] = "??"
    for name in ("burns", "muck", "aside"):
        rec[name] = ["??"] * len(rec[name])


class _NoRandom:
    def below(self, n):
        return 0


def _entropy_why(e):
    """What failed, if e is the random source's health-test failure (shoe.health.EntropyFault),
    else None. Imported when an exception comes: a shoe that does not test its own entropy (a
    seeded simulator) keeps the health tests' module out of its heap."""
    from shoe.health import EntropyFault

    if isinstance(e, EntropyFault):
        return "the random source failed its %s test" % e.test
    return None


def _entropy_text(why):
    return "%s: %s" % (why, F.advice(F.ENTROPY_CODE))


def _entropy_error(why):
    """The MECHANISM reply to dealing while the random source is failed."""
    return CommandError(wire.MECHANISM, "%s: %s" % (F.ENTROPY, _entropy_text(why)))


def _ends_hand(name, args):
    """end, or report misdeal: what a stopped or latched shoe still lets the table do."""
    return name == "end" or (name == "report" and args[0] == 3)


def _logged(log, op, a):
    """Does the compact log hold an entry (op, a, ...)?"""
    for i in range(0, len(log), 4):
        if log[i] == op and log[i + 1] == a:
            return True
    return False


def _next_seat(seats, button):
    for s in seats:
        if s > button:
            return s
    return seats[0]


def house_settings():
    from shoe import house as H

    return [row[0] for row in H.SETTINGS]
