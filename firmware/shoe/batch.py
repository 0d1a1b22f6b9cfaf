# The next deck (hardware/SHUFFLER.md, "Two decks: the opening shuffle off the table's clock").
# A hand is dealt from the deck in the dealing magazine while the other deck (the last hand's
# cards, gathered into the gather tray) goes through the same card path into the carousel,
# card by card, in the path's idle time between the hand's steps; it lies shuffled on the
# shuffle tray before the hand ends, and the next hand starts from it: no opening shuffle on
# the table's clock. The decks have backs of two colours, which the reader's back sensor
# tells; this file is the bookkeeping, pure logic: which deck is where, every card read on its
# way into the carousel, a missing, extra, foreign or other deck's card named exactly.
#
# The plan (shoe.shuffler.Plan, the carousel's uniform shuffle) is drawn over the deck's cards
# when loading starts, so each card goes into its own pocket as it comes, whatever order the
# gather tray holds them in (SHUFFLER.md's proof). The plan, and so the next deck's order,
# lives in RAM only: never journaled, never in status or an event. A power cut loses it:
# the pockets are emptied at the next reshuffle, and the next deck is loaded again with a new
# plan (lost()), while the hand in progress goes on from its own deck.
from shoe import cards as C
from shoe.compat import const
from shoe.shuffler import Plan

EMPTY = const(0)      # no next deck: the gather tray waits for the finished hand's cards
LOADING = const(1)    # its cards go into the carousel
LOADED = const(2)     # every card in its pocket: the carousel empties them onto the tray
READY = const(3)      # shuffled, on the shuffle tray: the next hand's deck
STATES = ("empty", "loading", "loaded", "ready")

IN = const(0)         # take(): the card goes into its pocket
DUPLICATE = const(1)  # a second card of a name already in: extra, to the reject bin
OTHER_DECK = const(2)  # a card of the deck in play (its back): caught between the decks
FOREIGN = const(3)    # not a card of the game (a joker, a short deck's 2-5, a third back)
FACE_UP = const(4)    # the reader saw its back from below: it lay face up in the tray
VERDICTS = ("in", "duplicate", "other_deck", "foreign", "face_up")

BACKS = ("red", "blue")  # the two decks' backs, as the reader's back sensor names them


class NextDeck:
    """The next deck's bookkeeping. kind: cards.FULL or cards.SHORT; back: the next deck's back
    (0 or 1: BACKS), the deck in play having the other."""

    def __init__(self, kind=C.FULL, back=1):
        self.kind = kind
        self.back = back
        self.state = EMPTY
        self.plan = None
        self.inside = bytearray(C.NCODES)  # 1: the card is in its pocket (or on the tray)
        self.count = 0
        self.rejected = []     # (code, verdict, back) of the cards sent to the reject bin
        self.starts = 0        # loadings started (a power cut starts it again)

    def size(self):
        return C.deck_size(self.kind)

    def start(self, rng, cut=None):
        """The gather tray holds the finished hand's cards: draw the plan over the deck's cards
        (cut: the house's cut, a function (rng, cards) -> k, or None) and start loading."""
        if self.state != EMPTY:
            raise ValueError("the next deck is %s, not empty" % STATES[self.state])
        plan = Plan(C.deck(self.kind), rng)
        if cut is not None:
            plan.rotate(cut(rng, plan.cards))
        self.plan = plan
        inside = self.inside
        for i in range(len(inside)):
            inside[i] = 0
        self.count = 0
        del self.rejected[:]
        self.state = LOADING
        self.starts += 1

    def take(self, code, back):
        """A card read on its way in from the gather tray (code as the reader reports it, the
        UP bit for a card seen face up; back: the back sensor's 0 or 1). Returns (verdict,
        pocket): pocket is the card's slot for IN, else -1 (the card goes to the reject bin,
        named in self.rejected)."""
        if self.state != LOADING:
            raise ValueError("the next deck is %s: no card goes in" % STATES[self.state])
        c = code & C.CODE
        if code & C.UP:
            verdict = FACE_UP
        elif back != self.back:
            verdict = OTHER_DECK if back == 1 - self.back and C.in_deck(c, self.kind) \
                else FOREIGN
        elif not C.in_deck(c, self.kind):
            verdict = FOREIGN
        elif self.inside[c]:
            verdict = DUPLICATE
        else:
            self.inside[c] = 1
            self.count += 1
            if self.count == self.size():
                self.state = LOADED
            return IN, self.plan.slot_of(c)
        self.rejected.append((c, verdict, back))
        if len(self.rejected) > 16:
            self.rejected.pop(0)
        return verdict, -1

    def untake(self, code):
        """A card take() let in did not reach its pocket (a jam, the lid): it is still to come."""
        if self.inside[code]:
            self.inside[code] = 0
            self.count -= 1
            if self.state == LOADED:
                self.state = LOADING

    def missing(self):
        """The deck's cards not in yet, by code."""
        return [c for c in C.deck(self.kind) if not self.inside[c]]

    def unloaded(self):
        """The carousel emptied the pockets onto the shuffle tray."""
        if self.state != LOADED:
            raise ValueError("the next deck is %s, not loaded" % STATES[self.state])
        self.state = READY

    def deal(self):
        """The tray's stack went into the dealing magazine for the next hand: its order, first
        card out first (Hand's order), and the backs swap (the other deck is gathered next)."""
        if self.state != READY:
            raise ValueError("the next deck is %s, not ready" % STATES[self.state])
        order = self.plan.cards[::-1]  # the plan's stub order has the first card out at its end
        self.plan = None
        self.state = EMPTY
        self.back = 1 - self.back
        return order

    def lost(self):
        """A power cut: the plan is gone with the RAM. Whatever was loaded is emptied from the
        pockets at the next reshuffle; the deck is gathered and loaded again (start())."""
        self.plan = None
        self.state = EMPTY
        self.count = 0

    def report(self):
        """What the operator and the host may see: the state, how many cards are in, the
        missing and rejected cards by name (never an order, never a pocket)."""
        text = "%s deck %s, %d/%d in" % (BACKS[self.back], STATES[self.state], self.count,
                                         self.size())
        if self.state == LOADING and self.count:
            gone = self.missing()
            if len(gone) <= 8:
                text += "; still to come: " + " ".join(C.name(c) for c in gone)
        for c, verdict, back in self.rejected:
            text += "; %s %s (%s back) to the reject bin" % (VERDICTS[verdict], C.name(c),
                                                              BACKS[back] if back < 2 else "?")
        return text

    def problem(self):
        """Once the gather tray is empty: None when every card is in, else what to do, naming
        every missing card and what was rejected."""
        if self.state != LOADING:
            return None
        gone = self.missing()
        extra = [r for r in self.rejected if r[1] != FACE_UP]
        up = [r for r in self.rejected if r[1] == FACE_UP]
        text = "the %s deck is missing %d card(s): %s" % (
            BACKS[self.back], len(gone), " ".join(C.name(c) for c in gone))
        if up:
            text += "; turn face down and put back into the gather tray: " + \
                " ".join(C.name(r[0]) for r in up)
        if extra:
            text += "; in the reject bin, not of this deck: " + ", ".join(
                "%s (%s)" % (C.name(r[0]), VERDICTS[r[1]].replace("_", " ")) for r in extra)
        return text + "; look on the table, in the burn tray and the reject bin"
