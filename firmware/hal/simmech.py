# The simulated mechanism: it holds the physical stack of cards in the magazine (loaded by the
# shoe's face-down shuffles), dispenses one card per feed as the card reader sees it, and
# produces the faults the scenario format names. The engine never looks inside it: it only
# sees what comes out.
#
# Two sorts of faults. Those the engine's procedures handle (a double feed, a foreign or
# duplicate card, a boxed card, a misrouted burn) come out with the cards. Stopping faults
# raise shoe.faults.MechanismFault, as the Pico's mechanism (hal/rp2mech.py) does, before any
# card of that feed is reported: the card in flight stays first in the magazine (the operator
# puts it back under the stack, where the pick takes it next), so repeating the step deals it.
# They take the time the hardware takes, from the pin map's figures (hardware/pinmap.json,
# deployed as pinmap.json; hal/simstops.py, imported when the first one is armed):
#   jam            the card sticks before the throat `times` times: the tries and reverses
#                  take what hal/rp2mech.py's take (simstops.Figures.jam_ms); more sticks than
#                  timing.jam_retries stop the shoe (JAM), fewer are cleared and counted
#   empty          the magazine beam reads clear: refused before the pick, or with a few cards
#                  left (the beam cannot see them) after the misfeed tries
#   lid_open       the lid opens while the card moves (half-way through its cycle)
#   reader_silent  the card stops at the reader, which answers neither the read nor the status
#                  request (each tried reader.retries + 1 times, reader.timeout_ms each)
from shoe.cards import UP
from shoe.faults import JAM, EMPTY, LID_OPEN, READER_SILENT, ROUTE_BURN

DOUBLE_FEED = "double_feed"
FOREIGN = "foreign"
DUPLICATE = "duplicate"
BOXED = "boxed"
NO_BURN = "no_burn"
# when a flop dealt without a burn is noticed (the value of misrouted; True reads as at once):
NOTICED_AT_ONCE = 1      # before the flop is turned over (the diverter sensor, or the dealer)
NOTICED_TURNED = 2       # only after the flop was turned: its cards are exposed (RRoP Hold'em 4)
AT_FAULTS = (DOUBLE_FEED, FOREIGN, DUPLICATE, BOXED)
STOPS = (JAM, EMPTY, LID_OPEN, READER_SILENT)  # simulated faults that stop the shoe
ESCROW_CAUGHT = "escrow_caught"  # revision D: a card caught in an escrow (hal/simfast.py)
UNTIL_CLEARED = 255  # a jam's `times`: the card sticks until the operator clears the path
# the random-fault mode's draws: (kind, code), code = a jam's times (1: cleared by a retry)
RANDOM = ((DOUBLE_FEED, 0), (BOXED, 0), (JAM, 1), (JAM, UNTIL_CLEARED), (LID_OPEN, 0),
          (READER_SILENT, 0))


class SimMech:
    def __init__(self, revision_d=None):
        self.stack = []          # physical magazine, top card at the end
        self.misrouted = False   # the last feed's card went to the other route (NOTICED_*)
        self.feeds = 0           # feeds in the current step
        self.faults = []         # armed: [kind, at, code]
        self.no_burn = 0         # armed: the next burn goes to the output; NOTICED_* says when
        self.fired = 0
        self._out = []
        self.feed_ms = 0         # how long one card takes to come out (0: at once)
        self.realtime = False    # faults take their time on the clock (the virtual shoe)
        self.spent_ms = 0        # time the feeds and faults took (counted either way)
        self.retries = 0         # reverse-and-retries of the last feed
        self.recovered = 0       # feeds whose jams the retries cleared
        self.fig = None          # Figures, read from the pin map when first needed
        self.fault_rate = 0      # random faults per card, in 1/65536
        self.fault_rng = None
        self.idle = None         # called while a card is in flight (the link keeps serving)
        self.before = None       # called before each card moves
        self.world = None        # file keeping what sits at the output across power cuts
        self.delivered = []      # cards already out (found after a power cut), fed first
        self.carousel = None     # hal.simcarousel.SimCarousel, from the first reshuffle on
        self.revision_d = revision_d  # the pipelined loader (hal/simfast.py); None: from the
        # pin map, read at the first reshuffle
        self.shuffle_us = 0      # time the carousel held the mechanism (revision D's timed
        #                          loader; not the next deck's unloading turn, on its own)
        self.boot_us = 0         # ... at power-up: homing, and the purge of cards a power cut
        #                          left in the pockets (revision D: before any command)
        self.left_in_pockets = None  # the simulator's world: {pocket: card} a power cut left
        self.shuffle_realtime = False  # ... waited out on the clock (FACEDOWN_SIM shuffle_time)
        self.log = None          # (message) -> the shoe's log (the virtual shoe's SimHal.log)
        self.stopped = None      # a reshuffle's stop (revision D: a card caught in an escrow),
        #                          raised by the next feed, as the Pico's comes out of feed()
        self.decks = None        # hal.simdecks.TwoDecks: the two decks are on (two_decks())
        self.batch = None        # ... its shoe.batch.NextDeck

    def random_faults(self, rate, rng):
        """Arm a random mechanism fault (one of RANDOM: a double feed, a boxed card, a jam the
        retries clear or one that stops, the lid, the reader) with this chance per card."""
        self.fault_rate = int(rate * 65536)
        self.fault_rng = rng

    def figures(self):
        if self.fig is None:
            from hal.simstops import figures

            self.fig = figures()
        return self.fig

    def _wait(self, ms):
        """The mechanism is busy for ms: counted, and on the clock in real time (the link keeps
        being served meanwhile)."""
        self.spent_ms += ms
        if not self.realtime or ms <= 0:
            return
        import time

        try:
            start, diff, sleep = time.ticks_ms, time.ticks_diff, time.sleep_ms
        except AttributeError:  # CPython
            start, sleep = lambda: int(time.monotonic() * 1000), lambda ms: time.sleep(ms / 1000)
            diff = lambda a, b: a - b  # noqa: E731
        t0 = start()
        while diff(start(), t0) < ms:
            if self.idle is not None:
                self.idle()
            sleep(1)

    def load(self, stub, plan=None):
        """The shuffler has laid the stub's cards in this order (top at the end). With a plan
        (a reshuffle, shoe.shuffler.Plan) the simulated carousel realises it first: what it
        leaves in the magazine must be the stub, card for card."""
        if plan is not None:
            if self.decks is not None:
                self.decks.clear()  # the next deck's cards in the pockets go back, for now
            if self.carousel is None:
                self.make_carousel(plan.slots)
            # through the carousel: what the magazine held, next card first, then the cards
            # gathered for the reshuffle (laid on top of the stack)
            fed = [c for c in self.stack[::-1] if plan.slot_of(c) >= 0]
            fed += [c for c in plan.cards if c not in fed]
            got = self.carousel.shuffle(fed, plan)
            self.stopped = getattr(self.carousel, "stopped", None)  # (revision D's escrows)
            if got != list(stub):
                raise ValueError("the carousel's order differs from the engine's stub")
            if self.decks is not None:
                self.decks.resume()
        self.stack[:] = stub

    def make_carousel(self, slots=None):
        """The simulated carousel, at the first reshuffle: revision D's pipelined loader
        (hal/simfast.py) when the pin map's `loader` is fitted, else revision B's. slots: the
        plan's pockets; None: the pin map's carousel_stepper.slots (revision D's model reads
        them), or the plan's own count (shoe.shuffler.SLOTS) for revision B."""
        if self.revision_d is None:
            from hal.simstops import loader_fitted  # (not simfast: revision B never loads it)

            self.revision_d = loader_fitted()
        if self.revision_d:
            from hal.simfast import FastCarousel, model
            from hal.simstops import pinmap

            m = model(pinmap())
            car = FastCarousel(m.slots if slots is None else slots, m, self._shuffling)
            self.carousel = car
            if self.log is not None:
                self.log("carousel: revision D's pipelined loader (the pin map's loader fitted)")
            if self.left_in_pockets:
                for pocket in self.left_in_pockets:
                    car.pockets[pocket] = self.left_in_pockets[pocket]
            self.power_up()
        else:
            from hal.simcarousel import SimCarousel

            if slots is None:
                from shoe.shuffler import SLOTS

                slots = SLOTS
            self.carousel = SimCarousel(slots)
        return self.carousel

    def power_up(self):
        """Revision D's power-up (hal/simfast.py's FastCarousel.power_up: the homing turn, the
        purge when a power cut left cards in the pockets), before any command: the simulator
        makes its carousel at the mechanism's first use and runs it then, counted as the
        boot's (boot_us), not a reshuffle's; waited out when reshuffles run in real time."""
        us = self.carousel.power_up()
        self.boot_us += us
        if self.shuffle_realtime:
            spent = self.spent_ms
            self._wait(us // 1000)
            self.spent_ms = spent

    def _shuffling(self, us):
        """The carousel is busy for us: counted, and waited out when the virtual shoe runs its
        reshuffles in real time."""
        self.shuffle_us += us
        if self.shuffle_realtime:
            spent = self.spent_ms
            self._wait(us // 1000)
            self.spent_ms = spent  # (spent_ms is the feeds' and the stops' time)

    # ---------------------------------------------------------------- the two decks
    # (hal/simdecks.py, imported only when they are on: SimMech's own code stays small)

    def two_decks(self, kind=0):
        """The two-deck shoe (hardware/SHUFFLER.md "Two decks"): from the next hand on, the
        finished hand's deck loads into the carousel while the next hand is dealt."""
        from hal.simdecks import TwoDecks

        self.decks = TwoDecks(self, kind)
        self.batch = self.decks.nd

    def next_deck(self):
        """The next hand's deck, shuffled (its order, first card out first), else None."""
        return None if self.decks is None else self.decks.next_deck()

    def gather(self, cards, rng):
        """The other deck goes into the gather tray and the carousel (two decks only)."""
        if self.decks is not None:
            self.decks.gather(cards, rng)

    def next_status(self):
        """For status: the next deck's state (None with one deck), never its order."""
        return None if self.decks is None else self.decks.status()

    def arm(self, kind, at=0, code=0):
        """A fault for the at-th card of the next step that dispenses; code: the card of a
        foreign or duplicate fault, the times a jam sticks (UNTIL_CLEARED: until cleared)."""
        if kind == ESCROW_CAUGHT:  # revision D: the at-th card of the next reshuffle
            if self.carousel is None:
                self.make_carousel()  # (as many pockets as the pin map's carousel has)
            if not self.revision_d:
                raise ValueError("a card caught in an escrow needs revision D's loader (the pin "
                                 "map's loader fitted)")
            self.carousel.caught_at = at
        elif kind == NO_BURN:  # code: NOTICED_TURNED if the table sees it only on the turned flop
            self.no_burn = NOTICED_TURNED if code == NOTICED_TURNED else NOTICED_AT_ONCE
        else:
            if kind == JAM:
                if not 1 <= code <= UNTIL_CLEARED:
                    raise ValueError("a jam sticks 1..%d times, not %r" % (UNTIL_CLEARED, code))
                self.figures()  # the pin map is needed: say now if it is missing
            self.faults.append([kind, at, code])

    def begin_step(self):
        """A new step: faults are counted from its first card (a step repeated after a stop is
        not a new step: the shoe does not call this then)."""
        self.feeds = 0
        if self.decks is not None:
            self.decks.step()  # the gap before the step: the next deck loads

    def between(self):
        """The link's idle time between commands: the simulator loads the next deck at a step's
        start (begin_step) instead."""

    def pending(self):
        """Faults armed but not yet reached (they carry to the next step that dispenses)."""
        return len(self.faults) + (1 if self.no_burn else 0)

    def feed(self, route):
        if self.before is not None:
            self.before(route)  # the shoe commits what happened so far before a card moves
        self.retries = 0
        if self.stopped is not None:  # the reshuffle stopped (the card path holds no card)
            e = self.stopped
            self.stopped = None
            raise e
        if self.delivered:  # a card that came out during a power cut: the reader reads it now
            self.feeds += 1
            self.misrouted = False
            out = self._out
            del out[:]
            out.append(self.delivered.pop(0))
            return out
        fault = self._due()
        if fault is not None and fault[0] in STOPS:
            self._stop(fault[0], fault[2])  # raises, unless the retries clear a jam
            fault = None
        if route == ROUTE_BURN and self.no_burn:  # (a stop above left it for the repeat)
            self.misrouted = self.no_burn
            self.no_burn = 0
        if self.feed_ms:
            self._wait(self.feed_ms)
        if self.revision_d and self.carousel is not None:  # the card's pick at the least: an
            self.carousel.elapse(self.carousel.m.pick_us)  # unloading turn goes on meanwhile
        out = self._feed(fault)
        if self.world is not None:
            self._remember(out)
        return out

    def _remember(self, out):
        f = open(self.world, "w")
        f.write(" ".join(str(c) for c in out))  # as the reader saw them (face-up bit too)
        f.close()

    def inspect(self):
        """After a power cut: the cards the output sensor and reader find (a list, maybe
        empty), or None when the mechanism cannot tell."""
        if self.world is None:
            return None
        try:
            f = open(self.world)
            text = f.read()
            f.close()
        except OSError:
            return []
        return [int(t) for t in text.split()]

    def deliver(self, codes, stub):
        """Cards found at the output that the journal does not place: they left the stub. The
        next feeds read them first; the magazine holds the rest of the stub."""
        codes = [c for c in codes if c & 63 in stub]
        self.delivered = codes
        taken = [c & 63 for c in codes]
        self.stack[:] = [c for c in stub if c not in taken]

    def _due(self):
        """Count the feed; the fault armed for it (taken off the list), or None."""
        self.feeds += 1
        self.misrouted = False
        if self.fault_rate and self.fault_rng.below(65536) < self.fault_rate:
            kind, code = RANDOM[self.fault_rng.below(len(RANDOM))]
            self.faults.append([kind, self.feeds, code])
        for f in self.faults:
            if f[1] == self.feeds:
                self.faults.remove(f)
                self.fired += 1
                return f
        return None

    def _stop(self, kind, code):
        """A stopping fault on this feed: the time it takes, then MechanismFault (nothing left
        the magazine). A jam the retries clear returns, counted."""
        from hal.simstops import stop

        stop(self, kind, code)

    def _feed(self, fault):
        out = self._out
        del out[:]
        if fault is not None:
            kind = fault[0]
            if kind == FOREIGN or kind == DUPLICATE:
                out.append(fault[2])
                return out
            if kind == BOXED:
                out.append(self.stack.pop() | UP)
                return out
            out.append(self.stack.pop())
            if self.stack:
                out.append(self.stack.pop())
            return out
        if self.stack:
            out.append(self.stack.pop())
        return out
