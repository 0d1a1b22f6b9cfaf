# The two-deck shoe on the Pico (revision C: hardware/SHUFFLER.md "Two decks"), imported by
# hal/rp2wire.py only when pinmap.json's gather_tray is fitted (a revision B shoe never loads
# it). TwoDeckMechanism is the carousel's ShufflingMechanism plus the next deck: while a hand
# is dealt from the dealing magazine, the link's idle time between commands (between(), which
# Device.poll_panel calls) takes the next deck from the gather tray, one card a call, into
# the pocket shoe.batch.NextDeck's plan gives it; every card is read on its way in, face and
# back, and one that does not belong goes to the reject bin, named.
#
# The gather tray's parts hang on the reader board (revision B uses every GPIO of the Pico),
# which the Pico speaks to on the reader's UART (hardware/pinmap.json reader.frame):
#   $MG,<A|B>*crc       the next pick takes from the dealing magazine (A) or the gather tray
#                       (B): the reader board engages that pick roller's clutch, releases the
#                       other's, and answers $MG,<A|B>,<gather beam: 1 cards, 0 none>*crc
#   $CD,<seq>,<card>,<face_up>,<confidence>,<back>*crc   the card report's sixth field: the
#                       back sensor's colour, 0 red, 1 blue, ? when it cannot tell
#
# Where the hand and the next deck meet:
# - a dealing step waits at most for the card going into the carousel (between() returns
#   only when that card is in its pocket or in the reject bin);
# - an in-hand reshuffle needs the pockets: the next deck's cards in them are emptied onto
#   the shuffle tray first and the shoe asks for them to be put into the gather tray (an
#   `empty` stop), the stub is shuffled, and the next deck starts again with a new plan;
# - a power cut loses the plan (RAM): the first reshuffle after power-up empties the pockets
#   (the operator puts those cards into the gather tray), and the first step of the hand the
#   journal brought back starts the deck again with a new plan while that hand goes on;
# - the next deck not ready when the hand ends: the next hand shuffles its own deck (the
#   pockets' cards go back first, as for an in-hand reshuffle) and the deck is loaded again.
# Nothing of the next deck's order leaves the shoe: next_status() gives its back, state,
# count and the names of missing and rejected cards (NextDeck.problem), never an order.
from hal.carousel_rp2 import ROUTE_SHUFFLE, ShufflingMechanism
from hal.readerline import DEAL, GATHER, MG  # the pick rollers: the magazine's, the tray's
from hal.rp2mech import UNREADABLE, Mechanism
from shoe import cards as C
from shoe.batch import BACKS, EMPTY as NONE, LOADED, LOADING, READY, STATES, NextDeck
from shoe.faults import EMPTY, JAM, MechanismFault

UNKNOWN_BACK = 2  # the back sensor could not tell: no deck's back

__all__ = ["TwoDeckMechanism", "GatherBeam", "fit", "select"]


def fit(hal, args):
    """The mechanism of a shoe with the gather tray fitted (hal/rp2wire.py): args as
    ShufflingMechanism's after the carousel. A deck loaded again after a power cut draws its
    plan from the shoe's random source (Rp2Hal.rng)."""
    mech = TwoDeckMechanism(hal.carousel, *args)
    mech.rng_source = lambda: hal.rng(None)
    return mech


def select(reader, magazine, wait):
    """$MG,<magazine>: the reader board puts the clutches so that the next pick takes from that
    magazine. Returns the gather tray's beam (True: cards in it), or None if the board never
    answered (after the reader's retries)."""
    f = reader.ask(MG, magazine, wait)
    return None if f is None else f[2] == "1"


class GatherBeam:
    """The gather tray's beam, as the reader board last reported it: stands in for the dealing
    magazine's beam (hal.rp2mech.Beam's face) while a card is picked from the gather tray."""

    def __init__(self):
        self.active = False

    def settle(self):
        pass

    def raw(self):
        return 1 if self.active else 0


class TwoDeckMechanism(ShufflingMechanism):
    """ShufflingMechanism with the gather tray; the arguments as ShufflingMechanism's.
    rng_source (set by the wiring): () -> a random source, for the deck loaded again after a
    power cut."""

    def __init__(self, carousel, *args):
        ShufflingMechanism.__init__(self, carousel, *args)
        self.nd = NextDeck(C.FULL)
        self.batch = self.nd
        self.gather_beam = GatherBeam()
        self.rng = None          # the random source of the hand that started the loading
        self.rng_source = None
        self.problem = None      # what stopped the loading, for status (never an order)
        self.waiting = False     # the gather tray ran empty or a fault stopped it: until a step
        self.stale = False       # the pockets hold next-deck cards whose plan is gone
        self.restart = False     # an in-hand reshuffle took the pockets: start again after it
        self.boot = True         # no hand has started since power-up
        self.gathering = False   # the card in the path comes from the gather tray
        self.taken = None        # (code, pocket) of the gather card at the hold, going in
        self.from_next = False   # the hand's stack is the next deck, on the shuffle tray
        self.aside = False       # the ready next deck was lifted off the tray for a reshuffle
        self.held_gather = False  # a fault left a gather card at the hold: never dealt
        self.other = None        # a dealt card with the next deck's back: to the reject bin

    # ---------------------------------------------------------------- the device's side

    def next_deck(self):
        """The next hand's deck when it lies shuffled on the shuffle tray (its order, first card
        out first), else None: the hand shuffles its own deck, and a deck half in the pockets
        goes back into the gather tray first."""
        nd = self.nd
        if nd.state == READY:
            self.from_next = True
            return nd.deal()
        if nd.state != NONE:
            nd.lost()
            self.stale = True
        return None

    def gather(self, cards, rng):
        """The finished hand's deck is in the gather tray: draw its plan; the loading runs in
        the idle time from now on."""
        nd = self.nd
        self.rng = rng
        self.boot = False
        if nd.state != NONE:
            return
        nd.kind = C.SHORT if len(cards) == C.deck_size(C.SHORT) else C.FULL
        nd.start(rng)
        self.problem = None
        self.waiting = False

    def next_status(self):
        nd = self.nd
        return {"back": BACKS[nd.back], "state": STATES[nd.state], "in": nd.count,
                "of": nd.size(), "problem": self.problem}

    def load(self, stub, plan=None):
        ShufflingMechanism.load(self, stub, plan)
        if self.from_next and plan is None:
            self.tray = True  # the first feed asks for the shuffle tray's stack
        self.from_next = False

    def begin_step(self):
        ShufflingMechanism.begin_step(self)
        self.waiting = False  # the dealer may have put the missing cards in: try again
        if self.boot and self.nd.state == NONE and self.rng_source is not None:
            # the first step since power-up, no hand started: the journal's hand goes on, and
            # the gather tray still holds the deck a power cut stopped loading
            self.gather(C.deck(self.nd.kind), self.rng_source())
        self.boot = False

    def feed(self, route):
        if self.held_gather:  # a next-deck card at the hold is never the hand's: out it goes
            self.held = None
            self.held_gather = False
            raise MechanismFault(JAM, "a card of the next deck (%s back) stopped in the path: open "
                                      "the lid, take it out, put it into the gather tray, close "
                                      "the lid and feed again" % BACKS[self.nd.back])
        out = ShufflingMechanism.feed(self, route)
        if self.other is not None:  # rejected as unread: it was no card of the stub
            self.unread -= 1
            self.rejected[-1] = ("other_deck", self.other)
            self.other = None
        return out

    # ---------------------------------------------------------------- the idle time

    def between(self):
        """One card of the next deck into its pocket, when the path and the carousel are free."""
        nd = self.nd
        if nd.state != LOADING or self.waiting or self.stale or self.job is not None or \
                self.held is not None or self.delivered or self.carousel.pockets is None:
            return
        self._gather_one()

    def _gather_one(self):
        nd = self.nd
        car = self.carousel
        saved = (self.before, self.feeds, self.expect, self.unread, self.b.magazine, self.idle)
        self.before = None       # not one of the hand's feeds: nothing is committed
        # nor is the link served meanwhile: a command that arrives would run inside this feed
        # (the link is not busy between commands); it waits for the card, at most a card's time
        self.idle = None
        self.taken = None
        try:
            present = select(self.reader, GATHER, self._wait)
            if not present:
                self.waiting = True
                if present is None:
                    self.problem = "the reader board does not answer: check the reader's cable"
                elif nd.count < nd.size():
                    self.problem = nd.problem()
                return
            self.gathering = True
            self.gather_beam.active = True
            self.b.magazine = self.gather_beam
            self.expect = set(nd.missing())
            self.unread = 0
            self.rate = self.t.shuffle_rate
            self.acc = self.t.shuffle_accel
            car.idle = None
            reads = Mechanism.feed(self, ROUTE_SHUFFLE)
            if self.taken is not None:
                if self.last_route == ROUTE_SHUFFLE and len(reads) == 1:
                    car.fill(self.taken[0], self.taken[1])
                else:
                    nd.untake(self.taken[0])
                self.taken = None
            if nd.state == LOADED:
                car.unload([s for s in nd.plan.drops() if car.pockets[s] is not None])
                car.rest()
                nd.unloaded()
                self.problem = None
        except MechanismFault as e:
            if self.taken is not None:  # it did not reach its pocket
                nd.untake(self.taken[0])
                self.taken = None
            self.waiting = True
            self.problem = "the next deck stopped loading: " + e.message
            self.held_gather = self.held is not None
        finally:
            self.gathering = False
            select(self.reader, DEAL, self._wait)  # (before the link is served again)
            self.before, self.feeds, self.expect, self.unread, self.b.magazine, self.idle = saved
            self.rate = None
            self.acc = None

    def _read(self):
        """The card at the hold position is read; a gather card is judged by its face and back
        (NextDeck.take) and, going in, its pocket turned to the station while it waits."""
        r = ShufflingMechanism._read(self)
        h = self.held
        if not self.gathering and isinstance(r, tuple) and h is not None and not h.double \
                and self.reader.back == ("1" if self.nd.back else "0"):
            # a card of the next deck (its back) in the dealing magazine: caught between the
            # decks, it goes to the reject bin and the engine never sees it (the next card is
            # fed instead); the next deck's loading names it missing
            self.other = r[0]
            return UNREADABLE
        if self.gathering and isinstance(r, tuple) and h is not None and \
                not (h.double or h.short or h.broken):
            code, up, _ = r
            back = self.reader.back
            back = UNKNOWN_BACK if back not in ("0", "1") else int(back)
            _, slot = self.nd.take(code | (C.UP if up else 0), back)
            if slot >= 0:
                self.taken = (code, slot)
                self.carousel.load_to(slot, self.nd.count - 1)
            else:
                self.expect.discard(code)  # the reject bin, named in NextDeck.rejected
        return r

    # ---------------------------------------------------------------- a reshuffle

    def _shuffle(self, job):
        """The hand's reshuffle: the pockets must hold none of the next deck's cards. After
        power-up (contents unknown) they are all emptied onto the shuffle tray; the next deck's
        cards of a loading cut short too; the operator puts them into the gather tray (their
        back is the next deck's) before the hand's cards come down on the tray."""
        car = self.carousel
        nd = self.nd
        if nd.state == READY and not self.aside:  # the stub's cards come down on the tray
            self.aside = True
            raise MechanismFault(EMPTY, "the next deck lies shuffled on the shuffle tray: lift it "
                                        "off as it is and keep it for the next hand, then feed "
                                        "again")
        if car.pockets is None:
            car.idle = self.idle
            car.ready()
            car.rest()
            self.stale = False
            raise MechanismFault(EMPTY, "after power-up the carousel emptied its pockets onto the "
                                        "shuffle tray: put any cards there into the gather tray, "
                                        "then feed again")
        if self.stale or nd.state == LOADING and nd.count:
            full = [s for s in range(car.t.slots - 1, -1, -1) if car.pockets[s] is not None]
            if nd.state == LOADING:
                nd.lost()
                self.restart = True
            self.stale = False
            n = len(full)
            if n:
                car.idle = self.idle
                car.unload(full)  # (consumes the list)
                car.rest()
                raise MechanismFault(EMPTY, "the next deck's %d card(s) are on the shuffle tray: "
                                            "put them into the gather tray, then feed again" % n)
        ShufflingMechanism._shuffle(self, job)
        self.aside = False
        if self.restart and nd.state == NONE and self.rng is not None:
            self.restart = False
            nd.start(self.rng)  # the next deck again, with a new plan
