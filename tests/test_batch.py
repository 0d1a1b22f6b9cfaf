"""The next deck's bookkeeping (firmware/shoe/batch.py, hardware/SHUFFLER.md "Two decks"): a
deck gathered in any order goes into the pockets of a plan drawn before the first card, and the
tray's stack is the plan's order; every card is read on its way in and a missing, extra, foreign
or other deck's card is named exactly; nothing of the order shows in what the host may see; a
power cut loses the plan and the deck is loaded again with a new one."""

import random

import pytest

from shoe import batch as B
from shoe import cards as C
from shoe.drbg import HmacDrbg, seeded_entropy
from shoe.rng import cut
from shoe.shuffler import Plan


def rng(seed="next"):
    return HmacDrbg(seeded_entropy(seed))


def loaded(nd, order, back=None):
    """Every card of order into the next deck; the pockets they went to."""
    pockets = []
    for c in order:
        verdict, slot = nd.take(c, nd.back if back is None else back)
        assert verdict == B.IN, (C.name(c), B.VERDICTS[verdict])
        pockets.append(slot)
    return pockets


def test_a_deck_gathered_anyhow_comes_out_in_the_plans_order():
    outs = []
    for gather in (list(range(52)), random.Random(5).sample(range(52), 52)):
        nd = B.NextDeck()
        nd.start(rng())
        assert nd.state == B.LOADING
        pockets = loaded(nd, gather)
        assert nd.state == B.LOADED and len(set(pockets)) == 52
        assert all(0 <= p < 60 for p in pockets)
        nd.unloaded()
        assert nd.state == B.READY
        back = nd.back
        outs.append(nd.deal())
        assert nd.state == B.EMPTY and nd.back == 1 - back, "the other deck is gathered next"
    # the same plan (same random stream) whatever order the cards were gathered in
    assert outs[0] == outs[1]
    assert outs[0] == Plan(C.deck(C.FULL), rng()).cards[::-1]
    assert sorted(outs[0]) == list(range(52))


def test_the_house_cut_is_the_plans_rotation():
    nd = B.NextDeck()
    nd.start(rng("cut"), cut)
    loaded(nd, range(52))
    nd.unloaded()
    r = rng("cut")
    plan = Plan(C.deck(C.FULL), r)
    plan.rotate(cut(r, plan.cards))
    assert nd.deal() == plan.cards[::-1]


def test_every_wrong_card_is_named_and_sent_to_the_reject_bin():
    nd = B.NextDeck(back=1)
    nd.start(rng())
    gather = [c for c in range(52) if c not in (C.parse("3d"), C.parse("Kc"))]
    loaded(nd, gather[:30])
    assert nd.take(C.parse("7h"), 1) == (B.DUPLICATE, -1)          # a second 7h: extra
    assert nd.take(C.parse("9s"), 0) == (B.OTHER_DECK, -1)         # the deck in play's back
    assert nd.take(C.JOKER, 1) == (B.FOREIGN, -1)
    assert nd.take(C.parse("Qd") | C.UP, 1) == (B.FACE_UP, -1)     # lay face up in the tray
    loaded(nd, gather[30:])
    assert nd.state == B.LOADING and nd.count == 50
    assert [C.name(c) for c in nd.missing()] == ["3d", "Kc"]
    text = nd.problem()
    assert text.startswith("the blue deck is missing 2 card(s): 3d Kc; ")
    assert "turn face down and put back into the gather tray: Qd" in text
    assert "in the reject bin, not of this deck: 7h (duplicate), 9s (other deck), Jk " \
           "(foreign)" in text
    # the face-up Qd, turned and put back, came again and went in
    assert nd.inside[C.parse("Qd")] == 1
    for name in ("3d", "Kc"):
        assert nd.take(C.parse(name), 1)[0] == B.IN
    assert nd.state == B.LOADED and nd.problem() is None


def test_a_short_deck_takes_no_deuce():
    nd = B.NextDeck(kind=C.SHORT)
    nd.start(rng())
    assert nd.take(C.parse("2c"), nd.back) == (B.FOREIGN, -1)
    loaded(nd, C.deck(C.SHORT))
    assert nd.state == B.LOADED and nd.size() == 36


def test_what_the_host_sees_tells_nothing_of_the_order():
    """Two loadings of the same cards under different plans report the same words: counts,
    states and names of missing or rejected cards, never a pocket or a position."""
    texts = []
    for seed in ("a", "b"):
        nd = B.NextDeck()
        nd.start(rng(seed))
        loaded(nd, range(45))
        nd.take(C.parse("As"), 0)
        texts.append(nd.report())
    assert texts[0] == texts[1]
    assert texts[0] == ("blue deck loading, 45/52 in; still to come: Kd Kh Ks Ac Ad Ah As; "
                        "other_deck As (red back) to the reject bin")


def test_a_power_cut_mid_loading_loads_the_deck_again_with_a_new_plan():
    nd = B.NextDeck()
    r = rng("cut-power")
    nd.start(r)
    first = list(nd.plan.cards)
    loaded(nd, range(20))
    nd.lost()                     # the RAM is gone: the plan and what was in
    assert nd.state == B.EMPTY and nd.plan is None and nd.count == 0
    nd.start(r)                   # the operator put the tray's cards back into the gather tray
    assert nd.starts == 2 and nd.count == 0 and nd.plan.cards != first
    loaded(nd, range(52))         # the 20 cards come again: no duplicate
    assert nd.state == B.LOADED


def test_wrong_states_say_so():
    nd = B.NextDeck()
    with pytest.raises(ValueError, match="empty: no card goes in"):
        nd.take(0, 1)
    with pytest.raises(ValueError, match="not ready"):
        nd.deal()
    nd.start(rng())
    with pytest.raises(ValueError, match="loading, not empty"):
        nd.start(rng())
    with pytest.raises(ValueError, match="not loaded"):
        nd.unloaded()
