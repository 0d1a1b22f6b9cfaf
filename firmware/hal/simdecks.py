# The simulator's two-deck shoe (hardware/SHUFFLER.md "Two decks"; SimMech.two_decks): the
# gather tray, the next deck's loading through the simulated carousel (hal/simcarousel.py),
# each card read on its way in by shoe/batch.py's bookkeeping, and the shuffle tray's stack
# that the next hand starts from. The shoe does the loading in the path's idle time between
# the hand's steps; the simulator does it at once, when the hand starts.
from shoe import cards as C
from shoe.batch import BACKS, EMPTY, LOADED, READY, STATES, NextDeck


class TwoDecks:
    def __init__(self, mech, kind=0):
        self.mech = mech
        self.nd = NextDeck(kind)
        self.gather_tray = []    # the gather tray: (code, back), the next card in at the end
        self.gather_extra = []   # cards a test slips into the gather tray: (code, back)
        self.problem = None      # what the next deck's loading stopped on (NextDeck.problem)
        self.tray_stack = []     # the shuffle tray's stack (the next deck), top card first

    def next_deck(self):
        """The next hand's deck when it lies shuffled on the tray: the operator puts it into
        the magazine; its order, first card out first (Hand's order). Else None (the hand's
        own opening shuffle, on the table's clock)."""
        nd = self.nd
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
        from hal.simcarousel import SimCarousel

        nd = self.nd
        nd.kind = C.SHORT if len(cards) == C.deck_size(C.SHORT) else C.FULL  # the game's deck
        back = nd.back
        self.gather_tray = [(c, back) for c in cards[::-1]] + self.gather_extra
        self.gather_extra = []
        nd.start(rng)
        mech = self.mech
        if mech.carousel is None:
            mech.carousel = SimCarousel(nd.plan.slots)
        car = mech.carousel
        self.problem = None
        while self.gather_tray:
            code, b = self.gather_tray.pop()
            verdict, slot = nd.take(code, b)
            if slot >= 0:
                car.put(code & 63, slot)
        if nd.state == LOADED:
            self.tray_stack = car.empty(nd.plan)
            nd.unloaded()
        else:
            self.problem = nd.problem()

    def status(self):
        """The next deck's back, state, cards in, and what stopped its loading (the missing
        and rejected cards by name): never its order."""
        nd = self.nd
        return {"back": BACKS[nd.back], "state": STATES[nd.state], "in": nd.count,
                "of": nd.size(), "problem": self.problem}
