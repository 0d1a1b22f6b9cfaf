# The simulator's two-deck shoe (hardware/SHUFFLER.md "Two decks"; SimMech.two_decks): the
# gather tray, the next deck's loading through the simulated carousel (hal/simcarousel.py),
# each card read on its way in by shoe/batch.py's bookkeeping, and the shuffle tray's stack
# that the next hand starts from. The shoe does the loading in the path's idle time between
# the hand's steps; the simulator does it at once, when the hand starts, or with per_gap set
# (FACEDOWN_SIM=gap_cards=N) N cards in each gap before a step and one more gap at the hand's
# end. An in-hand reshuffle needs the pockets: the next deck's cards in them drop onto the
# tray and go back into the gather tray (clear()), the stub is shuffled, and the next deck
# starts again with a new plan (resume()).
from shoe import cards as C
from shoe.batch import BACKS, EMPTY, LOADED, LOADING, READY, STATES, NextDeck


class TwoDecks:
    def __init__(self, mech, kind=0):
        self.mech = mech
        self.nd = NextDeck(kind)
        self.gather_tray = []    # the gather tray: (code, back), the next card in at the end
        self.gather_extra = []   # cards a test slips into the gather tray: (code, back)
        self.problem = None      # what the next deck's loading stopped on (NextDeck.problem)
        self.tray_stack = []     # the shuffle tray's stack (the next deck), top card first
        self.per_gap = None      # cards loaded in each gap between steps (None: all at once)
        self.rng = None          # the hand's random source, for a plan drawn again
        self.restart = False     # an in-hand reshuffle took the pockets: start again after it
        self.cleared = 0         # next-deck cards taken out of the pockets for a reshuffle
        self.rng_source = None   # () -> a random source, for a deck loaded again after boot
        self.boot = True         # no hand has started since power-up

    def next_deck(self):
        """The next hand's deck when it lies shuffled on the tray: the operator puts it into
        the magazine; its order, first card out first (Hand's order). Else None (the hand's
        own opening shuffle, on the table's clock)."""
        nd = self.nd
        if nd.state == LOADING and self.per_gap is not None:
            self.work(self.per_gap)  # the last gap: the hand's end
        if nd.state == EMPTY:
            return None
        if nd.state != READY:  # the cards in the pockets drop onto the tray; the next deck is
            nd.lost()          # gathered and loaded again with a new plan
            car = self.mech.carousel
            if car is not None:
                car.pockets = [None] * len(car.pockets)
            return None
        order = nd.deal()
        if self.tray_stack[::-1] != order:
            raise ValueError("the shuffle tray's stack differs from the next deck's plan")
        return order

    def gather(self, cards, rng):
        """The other deck (the finished hand's, or the second deck before the first hand) goes
        into the gather tray, then into the carousel card by card, each read on its way in,
        and onto the shuffle tray. Cards that do not belong are named (problem), left out."""
        nd = self.nd
        nd.kind = C.SHORT if len(cards) == C.deck_size(C.SHORT) else C.FULL  # the game's deck
        back = nd.back
        self.gather_tray = [(c, back) for c in cards[::-1]] + self.gather_extra
        self.gather_extra = []
        self.rng = rng
        self.restart = False
        self.boot = False
        nd.start(rng)
        mech = self.mech
        if mech.carousel is None:
            mech.make_carousel(nd.plan.slots)
        self.problem = None
        if self.per_gap is None:
            self.work(None)

    def step(self):
        """The gap before a hand's step. The first step after power-up with no deck loading
        is a hand the journal brought back: a power cut stopped the next deck's loading (its
        plan went with the RAM, the pockets are emptied at the next reshuffle), and the gather
        tray still holds that deck: it is loaded again, with a new plan, while the hand goes
        on. Then, with per_gap, the gap's cards go in."""
        if self.boot and self.nd.state == EMPTY and self.rng_source is not None:
            car = self.mech.carousel
            if car is not None:  # the power-up's purge: whatever the pockets held drops out
                car.pockets = [None] * len(car.pockets)
            self.gather(C.deck(self.nd.kind), self.rng_source())
        self.boot = False
        if self.per_gap is not None:
            self.work(self.per_gap)

    def work(self, n):
        """The path's idle time: up to n cards (None: all) from the gather tray into their
        pockets; when the last is in, the pockets are emptied onto the shuffle tray; when the
        gather tray runs empty short of the deck, what is missing is named (problem)."""
        nd = self.nd
        if nd.state != LOADING:
            return
        car = self.mech.carousel
        run = []  # the gap's cards, in the order they go in (one pipeline on revision D)
        while self.gather_tray and (n is None or n > 0):
            code, b = self.gather_tray.pop()
            verdict, slot = nd.take(code, b)
            if slot >= 0:
                run.append((code & 63, slot))
            if n is not None:
                n -= 1
        car.put_many(run, nd.plan)
        if nd.state == LOADED:
            self.tray_stack = car.empty(nd.plan)
            nd.unloaded()
        elif not self.gather_tray:
            self.problem = nd.problem()

    def clear(self):
        """An in-hand reshuffle needs the pockets: the next deck's cards in them drop onto
        the tray and the operator puts them back into the gather tray (their back tells them
        from the stub's); the plan is dropped, drawn again after the reshuffle (resume())."""
        nd = self.nd
        car = self.mech.carousel
        if self.boot and car is not None:  # the first reshuffle after power-up: every pocket
            car.pockets = [None] * len(car.pockets)  # (contents unknown) empties onto the tray
        if nd.state != LOADING:
            return
        back = nd.back
        for slot in range(len(car.pockets)):
            code = car.pockets[slot]
            if code is not None:
                car.pockets[slot] = None
                self.gather_tray.insert(0, (code, back))
                self.cleared += 1
        nd.lost()
        self.restart = True

    def resume(self):
        """After the in-hand reshuffle: the next deck starts again with a new plan."""
        if not self.restart:
            return
        self.restart = False
        self.nd.start(self.rng)
        self.problem = None
        if self.per_gap is None:
            self.work(None)

    def status(self):
        """The next deck's back, state, cards in, and what stopped its loading (the missing
        and rejected cards by name): never its order."""
        nd = self.nd
        return {"back": BACKS[nd.back], "state": STATES[nd.state], "in": nd.count,
                "of": nd.size(), "problem": self.problem}
