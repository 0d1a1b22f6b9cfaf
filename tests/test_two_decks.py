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
    """The real firmware under MicroPython (FACEDOWN_SIM=two_decks=1): hands go on through the
    protocol as with one deck; the power goes mid-hand (the next deck loading in the pockets is
    lost with the RAM), the hand goes on from the journal, every card once, and the next hand
    starts (shuffling its own deck: its next deck was lost)."""
    from facedown.virtualshoe import VirtualShoe

    seats = list(range(1, 10))
    with VirtualShoe(env={"FACEDOWN_SIM": "two_decks=1,seed=19"}) as shoe:
        shoe.start(ready_line="ready", timeout=20)
        c = shoe.connect(timeout=30)
        c.call("config", "holdem", sum(1 << s for s in seats), 9, "tda2024", "{}")
        for hand in range(3):
            c.call("hand", 0)
            c.call("deal", 0)
            if hand == 1:
                shoe.restart(ready_line="ready", timeout=20)   # the power cut
                c.resume()
            c.call("street")
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
