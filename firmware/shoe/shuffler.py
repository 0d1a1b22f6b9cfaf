# The shuffling mechanism's plan: a carousel of SLOTS one-card slots (hardware/pinmap.json
# carousel_stepper: 60 slots, 80 steps per slot). Loading: each card in turn goes into a
# uniformly random EMPTY slot (rng.below(number of empty slots)); unloading: the carousel
# turns once and ejects the slots in slot order. hardware/SHUFFLER.md proves the result is
# a uniformly random permutation of the cards. shelf_one_pass() is the flawed single pass of
# a shelf shuffler (Diaconis, Fulman & Holmes 2013), kept as a model for the power tests.
#
# Plan is what the engine hands the mechanism for a face-down reshuffle (Hand._reshuffle ->
# mech.load(stub, plan)): the new stack and the slot each of its cards goes into, so the
# carousel (hal/carousel_rp2.py on the Pico, hal/simcarousel.py in the simulator) realises
# exactly the order the engine drew, the house's cut included.
SLOTS = 60


def plan(cards, rng, slots=SLOTS):
    """The loading plan for `cards` (in the order they enter): returns (slot_of, unload)
    where slot_of[i] is the slot the i-th card goes into and unload lists the card indices
    in the order they leave (slot order)."""
    n = len(cards)
    if n > slots:
        raise ValueError("%d cards for %d slots" % (n, slots))
    empty = list(range(slots))
    slot_of = [0] * n
    for i in range(n):
        slot_of[i] = empty.pop(rng.below(len(empty)))
    by_slot = [-1] * slots
    for i in range(n):
        by_slot[slot_of[i]] = i
    unload = [i for i in by_slot if i >= 0]
    return slot_of, unload


class Plan:
    """One reshuffle through the carousel. cards: the new stack in the engine's stub order
    (the last card is fed first); slot[j]: the slot cards[j] is loaded into. The draws are
    plan()'s, so Plan(cards, rng).cards == shuffle(cards, rng) for the same rng state."""

    def __init__(self, cards, rng, slots=SLOTS):
        slot_of, unload = plan(cards, rng, slots)
        self.slots = slots
        self.cards = [cards[i] for i in unload]   # slot order
        self.slot = [slot_of[i] for i in unload]

    def rotate(self, k):
        """A cut at k (shoe.rng.cut's rotation): the carousel starts its unloading turn there."""
        if k:
            self.cards = self.cards[k:] + self.cards[:k]
            self.slot = self.slot[k:] + self.slot[:k]

    def slot_of(self, code):
        """The slot planned for this card, or -1 if the plan does not hold it."""
        c = self.cards
        for j in range(len(c)):
            if c[j] == code:
                return self.slot[j]
        return -1

    def drops(self):
        """The slots in the order the carousel empties them: the magazine feeds from the
        bottom and the first card out of the carousel lies at the bottom, so the last card of
        `cards` goes first. One turn, slot numbers falling (cyclically, from the cut on)."""
        return self.slot[::-1]


def shuffle(cards, rng, slots=SLOTS):
    """The carousel shuffle: a new list, uniformly permuted."""
    slot_of, unload = plan(cards, rng, slots)
    return [cards[i] for i in unload]


def ring_move(frm, to, slots=SLOTS):
    """The shortest way round a ring of `slots` from slot frm to slot to: a signed number of
    slots, positive when slot numbers rise (forward); half a turn goes forward."""
    d = (to - frm) % slots
    return d if d <= slots - d else d - slots


def travel(slot_of, slots=SLOTS, start=0):
    """Slots the carousel turns while loading in this plan (shortest way each time) plus the
    one full unloading turn: for the motion budget (80 steps per slot on the fitted one)."""
    pos = start
    total = 0
    for s in slot_of:
        total += abs(ring_move(pos, s, slots))
        pos = s
    return total + slots


def shelf_one_pass(cards, rng, shelves=10):
    """FLAWED, for the power tests only: one pass of a shelf shuffler. Each card in turn goes
    to a uniformly random shelf, on top or at the bottom of its pile with probability 1/2;
    the shelves are then unloaded in order, each pile from top to bottom. Each pile reads
    as a decreasing then an increasing run of the original order: far from uniform."""
    piles = [[] for _ in range(shelves)]
    for c in cards:
        pile = piles[rng.below(shelves)]
        if rng.below(2):
            pile.append(c)          # bottom
        else:
            pile.insert(0, c)       # top
    out = []
    for pile in piles:
        out.extend(pile)
    return out
