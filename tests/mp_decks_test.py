# The two-deck shoe on the Pico (hal/decks_rp2.py, revision C) under the MicroPython unix port,
# on the fakes:
#   micropython -X heapsize=320K tests/mp_decks_test.py   (run by tests/test_rp2.py)
# The fitted shoe of tests/mp_carousel_test.py with the gather tray fitted too, in its world
# plus a model of the reader board's side (GatherWorld: the clutches, the gather tray, the back
# sensor). Prints "OK" at the end; any failure raises.

from mp_rp2_world import *  # noqa: E402,F401,F403  (the fakes, the firmware, the card path)
from mp_rp2_world import main  # noqa: E402


def fitted(two_decks):
    """tests/mp_carousel_test.py's fitted shoe (tests/carousel_world.py)."""
    from carousel_world import carousel_world

    return carousel_world().fitted(two_decks)


class GatherWorld:
    """Revision C's reader board on the fake world: $MG,<A|B> puts the clutches (the pick takes
    from the dealing magazine or from the gather tray, each a list whose next card is at the
    end) and answers with the gather tray's beam; every card report carries the back (a card's
    `back` attribute, 0 red or 1 blue; the deck in play's when it has none)."""

    def __init__(self, world, in_play=0):
        self.world = world
        self.gather = []
        self.dealing = None      # the dealing magazine while the gather tray is selected
        self.in_play = in_play
        self.selects = []
        self.rx = world.reader_rx
        self.look = world.look
        world.reader_rx = self.reader_rx
        board.uart_peers[world.uart] = self.reader_rx
        world.look = self.look_back

    def reader_rx(self, data):
        w = self.world
        for line in bytes(data).split(b"\n"):
            if line[:4] != b"$MG,":
                if line:
                    self.rx(line + b"\n")
                continue
            assert int(line[-4:], 16) == crc_ccitt(line[1:-5]), line
            mag = line[4:5].decode()
            self.selects.append(mag)
            if mag == "B" and self.dealing is None:
                self.dealing, w.magazine = w.magazine, self.gather
            elif mag == "A" and self.dealing is not None:
                self.gather, w.magazine = w.magazine, self.dealing
                self.dealing = None
            beam = self.gather if self.dealing is None else w.magazine
            w.answer(1000, "MG,%s,%d" % (mag, 1 if beam else 0))

    def look_back(self):
        out = self.look()
        for f in self.world.flight:
            if abs(f[1] - self.world.H) <= 5:
                return out + ",%d" % getattr(f[0], "back", self.in_play)
        return out + ",?"


def two_deck_shoe(seed="decks"):
    """The fitted shoe with the gather tray, its carousel homed and emptied (power-up), and a
    random source; the dealing magazine holds a red deck."""
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw = fitted(True)
    gw = GatherWorld(world)
    mech = hal.mech
    assert type(mech).__name__ == "TwoDeckMechanism"
    hal.carousel.ready()
    hal.carousel.rest()
    world.magazine = [Card(c) for c in range(52)]
    mech.load(list(range(52)))
    return world, hal, cw, gw, HmacDrbg(seeded_entropy(seed))


def half_loaded(seed, n):
    """two_deck_shoe() with a blue deck in the gather tray, n of its cards in their pockets."""
    world, hal, cw, gw, rng = two_deck_shoe(seed)
    gw.gather = blue(range(52))
    hal.mech.gather(list(range(52)), rng)
    for _ in range(n):
        hal.mech.between()
    return world, hal, cw, gw, rng


def blue(codes):
    out = []
    for c in codes:
        card = Card(c)
        card.back = 1
        out.append(card)
    return out


def idle(mech, most=200):
    """The link's idle time until the next deck waits (ready, or stopped)."""
    from shoe.batch import LOADING

    n = 0
    while mech.nd.state == LOADING and not mech.waiting and n < most:
        mech.between()
        n += 1
    return n


def case_two_decks_gather_between_steps():
    """The next deck from the gather tray in the idle time: a card of the deck in play (red
    back) and a joker among it, its 3d missing: each named, to the reject bin; the 3d put in,
    the deck completes, lies on the shuffle tray in the plan's order, and the next hand deals
    it, a red card left among it going to the reject bin unseen by the engine. The dealing
    magazine is never picked from meanwhile."""
    from shoe.batch import READY

    world, hal, cw, gw, rng = two_deck_shoe()
    mech = hal.mech
    deck = [c for c in range(52) if c != C.parse("3d")]
    gw.gather = blue(deck[::7] + deck[1::7] + deck[2::7] + deck[3::7] + deck[4::7] +
                     deck[5::7] + deck[6::7])
    stray = Card(C.parse("9s"))                  # red: caught between the decks
    gw.gather.insert(20, stray)
    gw.gather.insert(5, blue([C.JOKER])[0])
    dealing = list(world.magazine)
    served = []
    link_idle = lambda: served.append(1)         # noqa: E731  (the link, as main.py sets it)
    mech.idle = link_idle
    mech.gather(list(range(52)), rng)
    idle(mech)
    # a command arriving while a gather card moves would run inside its feed: the link waits
    assert served == [] and mech.idle is link_idle
    mech.idle = None
    nd = mech.nd
    assert nd.count == 51 and mech.waiting, (nd.count, mech.problem)
    text = mech.problem
    assert text.startswith("the blue deck is missing 1 card(s): 3d; "), text
    assert "Jk (foreign)" in text and "9s (other deck)" in text, text
    assert sorted(c.code for c in world.out[ROUTE_REJECT]) == sorted([C.JOKER, stray.code])
    assert world.magazine == dealing and gw.selects[-1] == "A", "the dealing magazine moved"
    st = mech.next_status()
    assert st == {"back": "blue", "state": "loading", "in": 51, "of": 52, "problem": text}, st
    gw.gather.append(blue([C.parse("3d")])[0])   # the dealer finds it
    mech.begin_step()
    idle(mech)
    assert nd.state == READY and mech.problem is None
    assert not cw.missed and cw.early == 0 and cw.wrong_way == 0
    order = mech.next_deck()
    assert [c.code for c in cw.tray] == order and len(order) == 52
    mech.load(order)                             # the next hand, from the next deck
    world.magazine = list(reversed(cw.tray))     # the operator: the tray's stack, as it is
    stray = Card(C.parse("Kh"))                  # a red card left in the dealing magazine
    stray.back = 0
    world.magazine.insert(len(world.magazine) - 2, stray)
    got = [mech.feed(ROUTE_OUT) for _ in range(4)]  # the blue deck is in play now
    assert got == [[order[0]], [order[1]], [], [order[2]]], got  # ([]: the engine feeds again)
    assert mech.nd.back == 0, "the decks swap: the red one is gathered next"
    assert world.out[ROUTE_REJECT][-1] is stray and mech.rejected[-1] == ("other_deck", stray.code)
    assert [c.code for c in world.out[ROUTE_OUT]] == order[:3]


def case_two_decks_in_hand_reshuffle_half_loaded():
    """An in-hand reshuffle with the next deck 20 cards in: its cards are emptied onto the
    shuffle tray and asked for in the gather tray, the stub goes through the carousel in its
    plan's order, and the next deck starts again with a new plan and completes."""
    from shoe.shuffler import Plan
    from shoe.batch import LOADING, READY

    world, hal, cw, gw, rng = half_loaded("inhand", 20)
    mech = hal.mech
    nd = mech.nd
    assert nd.count == 20
    first = list(nd.plan.cards)
    stub = list(range(30))                       # the hand's stub, reshuffled (RP-4)
    world.magazine = [Card(c) for c in stub]
    plan = Plan(stub, rng)
    mech.load(plan.cards, plan)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "next deck's 20 card(s)" in e.message, e.message
    assert len(cw.tray) == 20 and all(c.back == 1 for c in cw.tray)
    gw.gather += cw.tray                         # into the gather tray, as asked
    del cw.tray[:]
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    assert [c.code for c in cw.tray] == plan.cards[::-1]
    assert nd.state == LOADING and nd.count == 0 and nd.starts == 2 and nd.plan.cards != first
    world.magazine = list(reversed(cw.tray))
    del cw.tray[:]
    assert mech.feed(ROUTE_OUT) == [plan.cards[-1]]
    idle(mech)
    assert nd.state == READY and len(cw.tray) == 52 and not cw.missed


def case_two_decks_power_cut_half_loaded():
    """The power goes with the next deck 13 cards in: at boot the pockets' contents and the
    plan are unknown; the journal's hand reshuffles its stub (RP-4) and the carousel first
    empties every pocket onto the tray, asking for those cards in the gather tray; the hand's
    next step starts the next deck again with a new plan, and it completes while the hand
    goes on."""
    from shoe.shuffler import Plan
    from shoe.batch import NextDeck, LOADING, READY
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, gw, rng = half_loaded("cut", 13)
    mech = hal.mech
    assert mech.nd.count == 13
    # the power cut: the RAM's state is gone (a new mechanism's), the cards stay where they are
    mech.nd = mech.batch = NextDeck()
    mech.boot = True
    hal.carousel.pockets = None
    hal.carousel.homed = False
    mech.rng_source = lambda: HmacDrbg(seeded_entropy("after the cut"))
    stub = list(range(40))
    world.magazine = [Card(c) for c in stub]
    plan = Plan(stub, rng)
    mech.load(plan.cards, plan)                  # the journal's hand: its stub reshuffled
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "emptied its pockets" in e.message, e.message
    assert len(cw.tray) == 13 and all(c.back == 1 for c in cw.tray)
    gw.gather += cw.tray
    del cw.tray[:]
    expect_fault("empty", mech.feed, ROUTE_OUT)  # the stub's reshuffle: on the tray
    assert [c.code for c in cw.tray] == plan.cards[::-1]
    world.magazine = list(reversed(cw.tray))
    del cw.tray[:]
    mech.begin_step()                            # the hand's next step: the deck again
    nd = mech.nd
    assert nd.state == LOADING and nd.starts == 1
    assert mech.feed(ROUTE_OUT) == [plan.cards[-1]]
    idle(mech)
    assert nd.state == READY and len(cw.tray) == 52 and not cw.missed


TESTS = [case_two_decks_gather_between_steps, case_two_decks_in_hand_reshuffle_half_loaded,
         case_two_decks_power_cut_half_loaded]


if __name__ == "__main__":
    # the carousel's world, the mechanism with the gather tray and the engine's shuffler: more
    # than the carousel cases' 288 KB on this 64-bit port
    # (320 KB failed once under load after revision D's loader joined the wiring: 352 KB)
    main(TESTS, __file__, {t.__name__: "352K" for t in TESTS})
