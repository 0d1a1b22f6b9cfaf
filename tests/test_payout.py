"""The payout of a hand that was bet, from the shoe's record alone (host/facedown/payout.py): the
bets played back through the firmware's engine, the pots and odd chips by facedown.pots, every
chip accounted for (payout = chips put out), stacks carried; a misdeal gives the chips back."""

import json

from shoe import cards as C
from shoe.bets import Bets
from shoe.hand import Hand
from shoe.record import record
from hal.simmech import SimMech

from facedown import payout


def play(order, seats, button, betting, steps, game="holdem", rules="tda2024"):
    rest = [c for c in range(52) if C.name(c) not in order]
    deck = [C.parse(t) for t in order] + rest
    h = Hand(game, seats, button, rules, {"betting": betting}, None, SimMech(), deck)
    h.bets = Bets(h, betting)
    h.deal()
    for step in steps:
        if step == "street":
            h.street()
        elif step == "end":
            h.end()
        else:
            h.action(*step)
    rec = json.loads(json.dumps(record(h)))
    rec["config"] = {"game": game, "seats": seats, "button": button, "rules": rules,
                     "house": {"betting": betting}}
    return h, rec


# seats 1, 2, 3; button 3: seat 1 small blind, 2 big blind, 3 first. Hole cards: 1 AsAh,
# 2 KsKh, 3 QsQh; the board 2c 7d 9h Jc 3d (burns between): aces win, then kings.
ORDER = ["As", "Ks", "Qs", "Ah", "Kh", "Qh", "4c", "2c", "7d", "9h", "5c", "Jc", "6c", "3d"]
STREETS = ["street", "street", "street", "end"]


def test_side_pots_from_the_tracked_bets_chip_by_chip():
    betting = {"blinds": [5, 10], "stacks": {"1": 100, "2": 300, "3": 500}}
    h, rec = play(ORDER, [1, 2, 3], 3, betting,
                  [(3, "raise", 500), (1, "allin"), (2, "allin")] + STREETS)
    s = payout.settle(rec)
    assert s["contributions"] == {"1": 100, "2": 300, "3": 300}
    assert s["returned"] == {"3": 200}  # the uncalled part of seat 3's raise
    assert [(p["amount"], p["eligible"], p["high"]) for p in s["pots"]] == [
        (300, [1, 2, 3], {"1": 300}), (400, [2, 3], {"2": 400})]
    assert s["payouts"] == {"1": 300, "2": 400}
    assert s["stacks"]["end"] == {"1": 300, "2": 400, "3": 200}
    assert sum(s["stacks"]["end"].values()) == sum(s["stacks"]["start"].values())
    text = "\n".join(payout.lines(s))
    assert "side pot 1 400 (seats 2 3): seat 2 400" in text


def test_a_hand_won_without_a_showdown_and_the_big_blind_ante():
    betting = {"blinds": [50, 100], "bb_ante": 100, "stacks": 5000}
    h, rec = play(ORDER, [1, 2, 3], 3, betting, [(3, "raise", 300), (1, "fold"), (2, "fold"),
                                                  "end"])
    s = payout.settle(rec)
    assert s["dead"] == 100 and s["contributions"] == {"1": 50, "2": 100, "3": 100}
    assert s["payouts"] == {"3": 350}
    assert s["stacks"]["end"] == {"1": 4950, "2": 4800, "3": 5250}


def test_an_odd_chip_by_the_rulebook():
    # the board is a royal flush: seats 2 and 3 tie; seat 1's small blind stays in the pot
    order = ["2c", "3c", "4c", "2d", "3d", "4d", "5h", "Ts", "Js", "Qs", "6h", "Ks", "7h", "As"]
    checks = ["street", (2, "check"), (3, "check")]
    for rules, seat in (("tda2024", 2), ("robert", 2)):
        h, rec = play(order, [1, 2, 3], 3, {"blinds": [1, 2], "stacks": 100},
                      [(3, "call"), (1, "fold"), (2, "check")] + checks * 3 + ["end"],
                      rules=rules)
        s = payout.settle(rec)
        assert s["contributions"] == {"1": 1, "2": 2, "3": 2}
        assert s["payouts"] == {"2": 3, "3": 2}  # 5 chips: the odd one left of the button
        odd = s["pots"][0]["odd_chips"]
        assert [c["seat"] for c in odd] == [seat]
        assert odd[0]["rule"] == ("TDA 20-A" if rules == "tda2024" else odd[0]["rule"])


def test_a_misdeal_gives_every_chip_back():
    betting = {"blinds": [50, 100], "bb_ante": 100, "stacks": 5000}
    h, rec = play(ORDER, [1, 2, 3], 3, betting, [(3, "fold")])
    h.misdeal()
    rec = dict(rec, status="misdeal")
    s = payout.settle(rec)
    assert s["payouts"] == {"1": 50, "2": 200}


def test_a_table_not_bet_has_no_chips():
    assert payout.settle({"config": {"house": {}}, "seats": {}}) is None


def test_a_record_whose_bets_do_not_play_back_is_one_line():
    betting = {"blinds": [5, 10], "stacks": 100}
    h, rec = play(ORDER, [1, 2, 3], 3, betting, [(3, "raise", 50), (1, "fold"), (2, "call"),
                                                  "end"])
    acts = [e for e in rec["log"] if "action" in e]
    acts[-1]["total"] = 30  # a forged call
    assert payout.settle_record(rec) == {
        "error": "the record's bets do not play back: the call is 40, not 30 (TDA 41)"}
    assert "CANNOT SETTLE: the record's bets" in payout.lines(payout.settle_record(rec))[0]


def pokerkit_stacks(rec):
    """The PHH export replayed by pokerkit: the final stacks by seat."""
    from pokerkit import HandHistory

    from facedown.phh import dumps

    hh = HandHistory.loads(dumps(rec))
    state = None
    for state, _ in hh.state_actions:
        pass
    return {str(seat): state.stacks[i] for i, seat in enumerate(hh.seats)}


def test_the_phh_export_carries_the_bets_and_pokerkit_replays_it_to_the_same_stacks():
    for betting, steps in (
            ({"blinds": [5, 10], "stacks": {"1": 100, "2": 300, "3": 500}},
             [(3, "raise", 500), (1, "allin"), (2, "allin")] + STREETS),
            ({"blinds": [50, 100], "stacks": 5000},
             [(3, "raise", 300), (1, "call"), (2, "raise", 1000), (3, "call"), (1, "fold"),
              "street", (2, "bet", 500), (3, "raise", 1500), (2, "call"), "street",
              (2, "check"), (3, "check"), "street", (2, "allin"), (3, "call"), "end"]),
            ({"structure": "fl", "blinds": [1, 2], "stacks": 60},
             [(3, "raise"), (1, "raise"), (2, "call"), (3, "call"), "street", (1, "bet"),
              (2, "raise"), (3, "call"), (1, "call"), "street", (1, "check"), (2, "bet"),
              (3, "fold"), (1, "call"), "street", (1, "check"), (2, "check"), "end"])):
        h, rec = play(ORDER, [1, 2, 3], 3, betting, steps)
        s = payout.settle(rec)
        from facedown.phh import dumps

        text = dumps(rec)
        assert "chips are the shoe's" in text and "# added" not in text
        assert pokerkit_stacks(rec) == s["stacks"]["end"], text


def test_a_hand_a_procedure_killed_is_settled_without_it():
    # the button (seat 3) calls one card short: dead (TDA 37), folded in the betting; the
    # blinds check it down and the aces win: the dead seat put out nothing and gets nothing
    betting = {"blinds": [5, 10], "stacks": 100}
    deck = [C.parse(t) for t in ORDER] + [c for c in range(52) if C.name(c) not in ORDER]
    h = Hand("holdem", [1, 2, 3], 3, "tda2024", {"betting": betting}, None, SimMech(), deck)
    h.bets = Bets(h, betting)
    h.deal(5)
    h.action(3, "call")
    h.action(1, "call")
    h.action(2, "check")
    for _ in range(3):
        h.street()
        h.action(1, "check")
        h.action(2, "check")
    h.end()
    rec = json.loads(json.dumps(record(h)))
    rec["config"] = {"game": "holdem", "seats": [1, 2, 3], "button": 3, "rules": "tda2024",
                     "house": {"betting": betting}}
    s = payout.settle(rec)
    assert s["folded"] == [3] and s["contributions"] == {"1": 10, "2": 10, "3": 0}
    assert s["payouts"] == {"1": 20}
    assert s["stacks"]["end"] == {"1": 110, "2": 90, "3": 100}


def test_chips_left_in_the_pot_over_a_declaration_are_paid_out():
    # seed 003 (excess_chips stays): seat 3 calls 10 but puts out 15; the 5 over stay in the
    # pot as dead money; the blinds fold: seat 3 takes the pot, its own 5 with it
    betting = {"blinds": [5, 10], "stacks": 100}
    h = Hand("holdem", [1, 2, 3], 3, "tda2024", {"betting": betting, "excess_chips": "stays"},
             None, SimMech(), [C.parse(t) for t in ORDER] + [c for c in range(52) if C.name(c)
                                                          not in ORDER])
    h.bets = Bets(h, betting)
    h.deal()
    h.action(3, "call", None, False, (15, 0, 0))
    h.action(1, "fold")
    h.action(2, "fold")
    h.end()
    rec = json.loads(json.dumps(record(h)))
    rec["config"] = {"game": "holdem", "seats": [1, 2, 3], "button": 3, "rules": "tda2024",
                     "house": {"betting": betting, "excess_chips": "stays"}}
    s = payout.settle(rec)
    assert s["dead"] == 5 and s["payouts"] == {"3": 30}
    assert s["stacks"]["end"] == {"1": 95, "2": 90, "3": 115}
