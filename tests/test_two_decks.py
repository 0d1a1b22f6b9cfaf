"""The two-deck shoe in the simulator (hardware/SHUFFLER.md "Two decks"; firmware/shoe/batch.py,
SimMech.two_decks): while a hand is dealt, the other deck goes through the carousel and lies
shuffled on the tray; the next hand starts from it with no opening shuffle, and deals exactly
the next deck's plan; a card that does not belong in the gather tray is named and left out,
a missing one too, and that next deck is then loaded again rather than dealt; nothing of the
next deck's order reaches status or the journal's events."""

import json

import pytest

from test_device_faults import Shoe, table

from shoe import batch as B
from shoe import cards as C


def two_deck_shoe():
    s = Shoe()
    s.hal.mech.two_decks()
    plans = []
    load = s.hal.mech.load

    def watched(stub, plan=None):
        plans.append(plan is not None)
        return load(stub, plan)

    s.hal.mech.load = watched
    return s, plans


def test_the_next_hand_starts_from_the_deck_shuffled_during_this_one():
    s, plans = two_deck_shoe()
    mech = s.hal.mech
    table(s)                                  # hand 1: its own opening shuffle (one deck so far)
    assert plans == [True]
    nd = mech.batch
    assert nd.state == B.READY and mech.decks.problem is None, "the other deck was loaded"
    assert nd.starts == 1 and mech.carousel.shuffles == 2
    next_order = nd.plan.cards[::-1]
    s.ok("deal", 0)
    s.ok("end")
    del plans[:]
    s.ok("hand", 0)                           # hand 2: from the shuffled deck, no shuffle
    assert plans == [False], "no opening shuffle on the table's clock"
    assert s.dev.hand.z.stub[::-1] == next_order
    s.ok("deal", 0)
    dealt = [e[1] for e in s.events() if e[0] == 1]
    assert dealt == next_order[:len(dealt)] and len(dealt) == 6
    # meanwhile hand 1's deck went into the gather tray and is the next one, of the other back
    assert nd.state == B.READY and nd.starts == 2 and nd.back == 0
    # nothing of the next deck's order in what the host sees
    assert s.status()["next_deck"] == {"back": "red", "state": "ready", "in": 52, "of": 52,
                                       "problem": None}
    st = json.dumps(s.status())
    for i in range(0, 10):
        assert " ".join(C.name(c) for c in nd.plan.cards[i:i + 3]) not in st


def test_a_card_caught_between_the_decks_is_named_and_the_deck_loads_again():
    s, plans = two_deck_shoe()
    mech = s.hal.mech
    table(s)
    s.ok("end")
    # the dealer gathers hand 2's deck with a card of the deck in play among it, one card short
    # (the 3d stayed on the table), and a joker
    # (the ready deck, mech.batch.back, is the one hand 2 is dealt from)
    in_play = mech.batch.back
    mech.decks.gather_extra = [(C.parse("9s"), in_play), (C.JOKER, 1 - in_play)]
    keep = mech.gather

    def short(cards, rng):
        keep([c for c in cards if c != C.parse("3d")], rng)
        mech.decks.gather_extra = []

    mech.gather = short
    s.ok("hand", 0)
    nd = mech.batch
    assert nd.state == B.LOADING
    text = mech.decks.problem
    assert text.startswith("the %s deck is missing 1 card(s): 3d; " % B.BACKS[nd.back]), text
    assert "Jk (foreign), 9s (other deck)" in text, text
    # the host sees it in status, named; the deck's state and count, never its order
    assert s.status()["next_deck"] == {"back": B.BACKS[nd.back], "state": "loading", "in": 51,
                                       "of": 52, "problem": text}
    # the next hand cannot start from it: its own shuffle, and the deck is loaded again
    mech.gather = keep
    s.ok("end")
    del plans[:]
    s.ok("hand", 0)
    assert plans == [True] and nd.state == B.READY and nd.starts == 3


def test_a_power_cut_loses_the_next_deck_not_the_hand():
    """The plan lives in RAM: after a power cut the next deck is loaded again with a new plan
    (batch.lost), while the hand in progress goes on from its own deck (the journal)."""
    s, plans = two_deck_shoe()
    mech = s.hal.mech
    table(s)
    s.ok("deal", 0)
    nd = mech.batch
    first = list(nd.plan.cards)
    nd.lost()                                  # what a boot finds: no plan, nothing known
    mech.carousel.pockets = [None] * 60        # emptied onto the tray at the next reshuffle
    s.ok("street")                             # the hand goes on
    assert len([e for e in s.events() if e[0] == 1]) == 6 + 4
    s.ok("end")
    del plans[:]
    s.ok("hand", 0)                            # no ready deck: its own shuffle; reloaded
    assert plans == [True] and nd.state == B.READY and nd.plan.cards != first


def test_on_the_virtual_shoe_a_power_cut_mid_hand_keeps_the_hand():
    """The real firmware under MicroPython (FACEDOWN_SIM=two_decks=1,gap_cards=13: the next
    deck loads 13 cards in each gap between steps): hands go on through the protocol as with
    one deck; the power goes mid-hand with the next deck half in the pockets (its plan lost
    with the RAM), the hand goes on from the journal, every card once, and the next deck is
    loaded again with a new plan while it does."""
    from facedown.virtualshoe import VirtualShoe

    seats = list(range(1, 10))
    with VirtualShoe(env={"FACEDOWN_SIM": "two_decks=1,gap_cards=13,seed=19"}) as shoe:
        shoe.start(ready_line="ready", timeout=20)
        c = shoe.connect(timeout=30)
        c.call("config", "holdem", sum(1 << s for s in seats), 9, "tda2024", "{}")
        for hand in range(3):
            c.call("hand", 0)
            c.call("deal", 0)
            if hand == 1:  # the next deck is 13 cards in (13 a gap between steps)
                assert c.status()["next_deck"]["in"] == 13
                shoe.restart(ready_line="ready", timeout=20)   # the power cut
                c.resume()
            c.call("street")
            if hand == 1:  # loaded again with a new plan, from the hand's next step on
                nd = c.status()["next_deck"]
                assert nd["state"] == "loading" and nd["in"] == 13, nd
            c.call("street")
            c.call("street")
            st = c.status()
            table = st["table"]
            assert table["status"] == "dealing", table
            cards = [x["card"] for s in table["seats"].values() for x in s] + table["board"]
            assert len(cards) == 18 + 5 and len(set(cards)) == 23, cards
            c.call("end")
        c.close()


@pytest.mark.slow
def test_facedown_sim_two_decks_shows_the_next_deck_never_its_order(tmp_path):
    """What a user meets: `facedown sim --two-decks`, a hand started and dealt with the
    facedown command; `status --json` shows the next deck ready (its back, state, count), and
    nothing of its order; --deck with --two-decks is refused in one line."""
    from cli import Sim, run

    with Sim("--two-decks", "--seed", 3, "--flash", tmp_path / "flash") as sim:
        for argv in (("login", "--role", "maintenance"),
                     ("config", "--game", "holdem", "--seats", "1-9"), ("hand",), ("deal",)):
            proc = run("--port", sim.port, *argv)
            assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        st = json.loads(run("--port", sim.port, "status", "--json").stdout)
        assert st["next_deck"] == {"back": "blue", "state": "ready", "in": 52, "of": 52,
                                   "problem": None}, st.get("next_deck")
    proc = run("sim", "--two-decks", "--deck", "".join(C.name(c) for c in range(52)))
    assert proc.returncode != 0 and "give one of them" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_short_deck_game_gathers_its_36_cards():
    s, plans = two_deck_shoe()
    s.ok("config", "shortdeck", 0b1110, 3, "tda2024", "")
    s.ok("hand", 0)
    nd = s.hal.mech.batch
    assert nd.state == B.READY and nd.size() == 36
    s.ok("end")
    del plans[:]
    s.ok("hand", 0)
    assert plans == [False] and sorted(s.dev.hand.z.stub) == C.deck(C.SHORT)


def test_an_in_hand_reshuffle_with_the_next_deck_half_loaded():
    """The next deck loads in the gaps between the hand's steps (13 cards a gap here); a
    premature flop reshuffles the stub mid-hand: the next deck's cards in the pockets drop
    onto the tray and go back into the gather tray, the stub goes through the carousel (the
    simulator checks it comes out as the engine's stub), and the next deck starts again with
    a new plan; it is ready by the hand's end and the next hand deals exactly that plan."""
    s, plans = two_deck_shoe()
    mech = s.hal.mech
    mech.decks.per_gap = 13
    table(s)                                   # hand 1 (its own shuffle); the other deck waits
    nd = mech.batch
    assert nd.state == B.LOADING and nd.count == 0
    s.ok("deal", 0)
    s.ok("street")                             # the flop; the next deck 26 cards in
    assert nd.count == 26 and sum(p is not None for p in mech.carousel.pockets) == 26
    first = list(nd.plan.cards)
    del plans[:]
    s.ok("report", 2, 0, 0)                    # the flop came too soon: the stub reshuffled
    assert plans == [True], "the in-hand reshuffle went through the carousel"
    assert mech.decks.cleared == 39            # 13 more went in before the report's step
    assert nd.state == B.LOADING and nd.count == 0 and nd.starts == 2
    assert nd.plan.cards != first and len(mech.decks.gather_tray) == 52
    assert all(p is None for p in mech.carousel.pockets)
    assert s.status()["next_deck"]["state"] == "loading"
    for step in ("street", "street", "street"):  # the flop again, the turn, the river
        s.ok(step)
    assert nd.count == 39
    s.ok("end")
    assert nd.state == B.READY and mech.decks.problem is None
    order = nd.plan.cards[::-1]
    del plans[:]
    s.ok("hand", 0)
    assert plans == [False] and s.dev.hand.z.stub[::-1] == order


def test_a_power_cut_with_the_next_deck_half_loaded():
    """The power goes while the next deck is half in the pockets: at boot the hand comes back
    from the journal and goes on; the next deck's plan went with the RAM, so at the hand's
    next step the pockets are emptied and the deck, still in the gather tray, is loaded again
    with a new plan; it is ready for the next hand, which deals exactly it."""
    from shoe.rng import SeededRandom

    s, plans = two_deck_shoe()
    mech = s.hal.mech
    mech.decks.per_gap = 13
    table(s)
    s.ok("deal", 0)
    nd = mech.batch
    assert nd.count == 13 and sum(p is not None for p in mech.carousel.pockets) == 13
    lost = list(nd.plan.cards)
    dealt = [e[1] for e in s.events() if e[0] == 1]
    # the power cut: the RAM's bookkeeping is gone (a fresh TwoDecks), the pockets keep cards
    mech.two_decks()
    mech.decks.per_gap = 13
    mech.decks.rng_source = lambda: SeededRandom("deck/again")
    s = Shoe(hal=s.hal)                        # the boot: the hand from the journal
    nd = mech.batch
    assert nd.state == B.EMPTY
    s.ok("street")                             # the hand goes on; the next deck loads again
    assert nd.state == B.LOADING and nd.count == 13 and nd.starts == 1
    assert nd.plan.cards != lost
    assert sum(p is not None for p in mech.carousel.pockets) == 13
    s.ok("street")
    s.ok("street")
    table_ = s.status()["table"]
    cards = [x["card"] for seat in table_["seats"].values() for x in seat] + table_["board"]
    assert len(cards) == 6 + 5 and len(set(cards)) == 11
    assert {C.name(c) for c in dealt} <= set(cards)
    s.ok("end")
    assert nd.state == B.READY
    order = nd.plan.cards[::-1]
    del plans[:]
    s.ok("hand", 0)
    assert plans == [False] and s.dev.hand.z.stub[::-1] == order


def test_facedown_sim_gap_cards_loads_the_next_deck_between_steps(tmp_path):
    """What a user meets: `facedown sim --two-decks --gap-cards 13`: after the hand starts the
    next deck waits in the gather tray; each step's gap loads 13 of its cards (status shows the
    count, never the order); --gap-cards without --two-decks, or of 0, is refused in one line."""
    from cli import Sim, run

    with Sim("--two-decks", "--gap-cards", 13, "--seed", 5, "--flash", tmp_path / "f") as sim:
        for argv in (("login", "--role", "maintenance"),
                     ("config", "--game", "holdem", "--seats", "1-9"), ("hand",)):
            proc = run("--port", sim.port, *argv)
            assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        seen = []
        for argv in (("deal",), ("street",)):
            proc = run("--port", sim.port, *argv)
            assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
            st = json.loads(run("--port", sim.port, "status", "--json").stdout)
            seen.append(st["next_deck"])
        assert seen == [{"back": "blue", "state": "loading", "in": n, "of": 52, "problem": None}
                        for n in (13, 26)], seen
    for argv, why in ((("--gap-cards", "13"), "it needs --two-decks"),
                      (("--two-decks", "--gap-cards", "0"), "1 or more")):
        proc = run("sim", *argv)
        assert proc.returncode != 0 and why in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
