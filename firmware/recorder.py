# Between the engine and the flash journal: what a hand commits (its new log entries and the
# changes of its counters), and how a hand is rebuilt from the journal after a power cut.
from shoe import cards as C
from shoe import games as G
from shoe.zones import Zones
import json

# shoe.hand, shoe.snapshot and shoe.logplay are imported where a hand is (play.py: the engine's
# table loads with the first hand, not at boot)


class Recorder:
    def __init__(self, journal):
        self.j = journal
        self.logged = 0          # entries of the hand's log already committed
        self.image = None        # the counter image as last committed

    def begin(self, hand, number, config_text):
        """A new hand: its HAND record, then its first image."""
        if self.j.hand is not None:
            self.j.close_hand()
        self.j.begin_hand(number, config_text)
        from shoe import snapshot

        self.logged = 0
        self.image = bytearray(snapshot.IMAGE_SIZE)
        self.commit(hand)

    def commit(self, hand, feeding=-1, reply=None):
        """Make durable what the hand did since the last commit. Returns the entries."""
        if self.j.hand is None:  # the hand is closed: nothing it does now changes the table
            return b""
        import shoe.hand  # (a commit at each card: `from ... import` allocates at each call)
        import shoe.snapshot as snapshot

        log = hand.z.log
        entries = bytes(log[self.logged * 4:])
        img = snapshot.image(hand)
        if self.image is None:  # the power went before the hand's first commit: none yet
            self.image = bytearray(snapshot.IMAGE_SIZE)
        pairs = snapshot.diff(self.image, img)
        if entries or pairs or feeding >= 0 or reply is not None:
            self.j.commit(entries, pairs, feeding, reply)
        self.logged = len(log) // 4
        self.image = img
        if hand.status != shoe.hand.DEALING and self.j.hand is not None:
            self.j.close_hand()
        return entries


    def dirty(self, hand):
        """Would a commit now write anything (new entries or counter changes)?"""
        if len(hand.z.log) // 4 > self.logged:
            return True
        import shoe.snapshot as snapshot

        img = snapshot.image(hand)
        return self.image is None or img != self.image


def rebuild(h, rng, mech):
    """A hand back from the journal (its OpenHand). Its zones come from its entries; its stub,
    whose order was never written, is reshuffled face down (RP-4) if it was still being dealt."""
    from shoe import logplay, snapshot
    from shoe.hand import Hand, DEALING

    game, seats, button, rules, house = json.loads(h.config)[:5]  # (a 6th: the profile's name)
    deck = C.deck(G.GAMES[game][1])
    hand = Hand(game, seats, button, rules, house, rng, None, deck)
    z = Zones(deck, hand.seats)
    e = h.entries
    for i in range(0, len(e), 4):
        logplay.apply(z, e[i], e[i + 1], e[i + 2], e[i + 3])
    hand.z = z
    if h.image is not None:
        snapshot.apply_image(hand, h.image)
    hand.mech = mech
    if house and "betting" in house:  # the bets again from their entries (docs/betting.md)
        from shoe.bets import Bets

        hand.bets = Bets(hand, house["betting"], replaying=True)
        hand.bets.replay(e)
    if hand.status == DEALING and z.stub:
        hand.last_street = None
        hand._proc("stub-reshuffle")
        hand._reshuffle(1)
    else:
        hand._load()
    return hand


def deliver(mech, hand, cards):
    """Cards found at the output after a power cut: the next feeds read them first, and the
    engine takes them as the stub's top cards, in that order. (Compared with the top of the
    stub reshuffled at boot, they would show as out of sequence or not: where a card lay in the
    undealt stub, which no message may tell.)"""
    stub = hand.z.stub
    mech.deliver(cards, stub)
    for c in reversed([c & 63 for c in mech.delivered]):
        stub.remove(c)
        stub.append(c)
