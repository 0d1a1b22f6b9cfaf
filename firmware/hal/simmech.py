# The simulated mechanism: it holds the physical stack of cards in the magazine (loaded by the
# shoe's face-down shuffles), dispenses one card per feed as the card reader sees it, and
# produces the faults the scenario format names. The engine never looks inside it: it only
# sees what comes out.
from shoe.cards import UP

ROUTE_BURN = 1

DOUBLE_FEED = "double_feed"
FOREIGN = "foreign"
DUPLICATE = "duplicate"
BOXED = "boxed"
NO_BURN = "no_burn"
AT_FAULTS = (DOUBLE_FEED, FOREIGN, DUPLICATE, BOXED)


class SimMech:
    def __init__(self):
        self.stack = []          # physical magazine, top card at the end
        self.misrouted = False   # the last feed's card went to the other route
        self.feeds = 0           # feeds in the current step
        self.faults = []         # armed: [kind, at, code]
        self.no_burn = False
        self.fired = 0
        self._out = []
        self.feed_ms = 0         # how long one card takes to come out (0: at once)
        self.fault_rate = 0      # random faults per card, in 1/65536
        self.fault_rng = None
        self.idle = None         # called while a card is in flight (the link keeps serving)
        self.before = None       # called before each card moves
        self.world = None        # file keeping what sits at the output across power cuts
        self.delivered = []      # cards already out (found after a power cut), fed first
        self.carousel = None     # hal.simcarousel.SimCarousel, from the first reshuffle on

    def random_faults(self, rate, rng):
        """Arm a random mechanism fault (double feed or boxed card) with this chance per card."""
        self.fault_rate = int(rate * 65536)
        self.fault_rng = rng

    def _travel(self):
        import time

        try:
            start, diff, sleep = time.ticks_ms, time.ticks_diff, time.sleep_ms
        except AttributeError:  # CPython
            start, sleep = lambda: int(time.time() * 1000), lambda ms: time.sleep(ms / 1000)
            diff = lambda a, b: a - b  # noqa: E731
        t0 = start()
        while diff(start(), t0) < self.feed_ms:
            if self.idle is not None:
                self.idle()
            sleep(1)

    def load(self, stub, plan=None):
        """The shuffler has laid the stub's cards in this order (top at the end). With a plan
        (a reshuffle, shoe.shuffler.Plan) the simulated carousel realises it first: what it
        leaves in the magazine must be the stub, card for card."""
        if plan is not None:
            if self.carousel is None:
                from hal.simcarousel import SimCarousel

                self.carousel = SimCarousel(plan.slots)
            # through the carousel: what the magazine held, next card first, then the cards
            # gathered for the reshuffle (laid on top of the stack)
            fed = [c for c in self.stack[::-1] if plan.slot_of(c) >= 0]
            fed += [c for c in plan.cards if c not in fed]
            got = self.carousel.shuffle(fed, plan)
            if got != list(stub):
                raise ValueError("the carousel's order differs from the engine's stub")
        self.stack[:] = stub

    def arm(self, kind, at=0, code=0):
        if kind == NO_BURN:
            self.no_burn = True
        else:
            self.faults.append([kind, at, code])

    def begin_step(self):
        self.feeds = 0

    def pending(self):
        """Faults armed but not yet reached (they carry to the next step that dispenses)."""
        return len(self.faults) + (1 if self.no_burn else 0)

    def feed(self, route):
        if self.before is not None:
            self.before(route)  # the shoe commits what happened so far before a card moves
        if self.delivered:  # a card that came out during a power cut: the reader reads it now
            self.feeds += 1
            self.misrouted = False
            out = self._out
            del out[:]
            out.append(self.delivered.pop(0))
            return out
        if self.feed_ms:
            self._travel()
        out = self._feed(route)
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

    def _feed(self, route):
        self.feeds += 1
        out = self._out
        del out[:]
        self.misrouted = False
        if route == ROUTE_BURN and self.no_burn:
            self.no_burn = False
            self.misrouted = True
        if self.fault_rate and self.fault_rng.below(65536) < self.fault_rate:
            self.faults.append([(DOUBLE_FEED, BOXED)[self.fault_rng.below(2)], self.feeds, 0])
        fault = None
        for f in self.faults:
            if f[1] == self.feeds:
                fault = f
                break
        if fault is not None:
            self.faults.remove(fault)
            self.fired += 1
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
