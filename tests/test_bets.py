"""The table's betting wired into the hand (firmware/shoe/bets.py): a hand configured with
betting checks every action (whose turn, the amount) and logs the seat's total after it; a
refused action changes nothing; a street waits for the round's betting; the bets come back from
the hand's log after a power cut; stud's first actor comes from the cards showing. Today's
hands, without betting, are untouched (their logs hold no bet entry)."""

import json

import pytest

from journal import OpenHand, config_json
from recorder import rebuild
from shoe import snapshot
from shoe.bets import Bets, _show_key
from shoe.errors import ShoeError
from shoe.hand import Hand
from shoe.record import record
from shoe.rng import SeededRandom
from shoe.zones import OP_BET
from hal.simmech import SimMech

NL = {"blinds": [50, 100], "stacks": 10000}


def bet_hand(game="holdem", seats=(1, 2, 3, 4), button=4, betting=NL, rules="tda2024",
             house=None, seed=7):
    overrides = dict(house or {}, betting=betting)
    h = Hand(game, list(seats), button, rules, overrides, SeededRandom(seed), SimMech())
    h.bets = Bets(h, betting)
    return h, overrides


def state(h):
    return (bytes(h.z.log), json.dumps(h.bets.view(), sort_keys=True))


def test_a_bet_hand_checks_turn_and_amount_and_logs_the_total():
    h, _ = bet_hand()
    h.deal()
    v = h.bets.view()
    assert (v["to_act"], v["pot"], v["options"]) == (3, 150, {"fold": None, "call": 100,
                                                             "raise": [200, 10000]})
    h.action(3, "raise", 300)
    rec = record(h)["log"]
    assert rec[-1] == {"action": "raise", "seat": 3, "total": 300}
    h.action(4, "call")
    assert record(h)["log"][-1] == {"action": "call", "seat": 4, "total": 300}
    h.action(1, "fold")  # its cards go to the muck after the action's entry
    assert [e for e in record(h)["log"] if "action" in e][-1] == {"action": "fold", "seat": 1}
    h.action(2, "call", 200)  # a call may name the chips it adds
    assert h.bets.view()["pot"] == 950 and h.bets.view()["to_act"] is None
    h.street()
    assert h.bets.view()["to_act"] == 2  # the flop's first seat, before its first action
    h.action(2, "check")
    h.action(3, "bet", 500)
    assert h.bets.view()["seats"]["3"] == {"bet": 500, "in": 800, "stack": 9200}


@pytest.mark.parametrize("steps, seat, kind, amount, says", [
    ((), 4, "call", None, "seat 4 acted out of turn: seat 3 is to act (TDA 50)"),
    ((), 3, "raise", 150, "a raise to 150 is under the minimum, 200 (TDA 43)"),
    ((), 3, "raise", 20000, "more than seat 3 has (10000) (TDA 41)"),
    ((), 3, "check", None, "seat 3 faces a bet of 100: call, raise or fold (TDA 50)"),
    ((), 3, "raise", None, "a raise needs its amount"),
    ((("fold", 3),), 3, "call", None, "seat 3 has folded (TDA 50)"),
    ((("allin", 3),), 3, "call", None, "seat 3 is all in (TDA 50)"),
    ((), 3, "call", 50, "the call is 100, not 50 (TDA 41)"),
])
def test_an_illegal_action_is_refused_naming_the_rule_and_changes_nothing(steps, seat, kind,
                                                                            amount, says):
    h, _ = bet_hand()
    h.deal()
    for k, s in steps:
        h.action(s, k)
    before = state(h)
    with pytest.raises(ShoeError) as info:
        h.action(seat, kind, amount)
    assert says in info.value.message
    assert state(h) == before


def test_raise_after_the_cap_is_refused_in_fixed_limit():
    h, _ = bet_hand(betting={"structure": "fl", "blinds": [1, 2]}, seats=(1, 2, 3))
    h.deal()  # button 3: seat 1 small blind, 2 big blind, 3 first
    h.action(3, "raise")  # 4: the second bet (the blind is the first)
    h.action(1, "raise")  # 6
    h.action(2, "raise")  # 8: the cap, four bets
    before = state(h)
    with pytest.raises(ShoeError, match=r"the betting is capped at 4 bets \(TDA 48\)"):
        h.action(3, "raise")
    assert state(h) == before
    h.action(3, "call")
    assert record(h)["log"][-1]["total"] == 8


def test_a_street_waits_for_the_rounds_betting():
    h, _ = bet_hand()
    h.deal()
    before = state(h)
    with pytest.raises(ShoeError, match=r"the betting round is not over: seat 3 is to act"):
        h.street()
    assert state(h) == before
    for s in (3, 4, 1):
        h.action(s, "fold")
    with pytest.raises(ShoeError, match="seat 2 is the only one left; end the hand"):
        h.street()


def test_all_in_the_streets_come_without_betting():
    h, _ = bet_hand(betting={"blinds": [50, 100], "stacks": {"1": 500, "2": 800, "3": 300,
                                                             "4": 1000}})
    h.deal()
    h.action(3, "allin")
    h.action(4, "allin", 1000)
    h.action(1, "allin")
    h.action(2, "allin")
    assert h.bets.view()["over"]
    h.street()
    h.street()
    h.street()
    h.end()
    assert h.bets.b.total() == 2400 and h.bets.b.returned[4] == 200  # uncalled: back


def test_the_bets_come_back_from_the_log_after_a_power_cut():
    h, overrides = bet_hand(seats=(2, 4, 5, 7, 9), button=9)
    h.deal()
    for s, k, a in ((5, "call", None), (7, "raise", 250), (9, "fold", None), (2, "call", None),
                    (4, "raise", 900), (5, "fold", None), (7, "call", None), (2, "allin", None)):
        h.action(s, k, a)
    assert h.bets.view()["to_act"] == 4
    oh = OpenHand(1, 1, config_json("holdem", h.seats, 9, "tda2024", overrides), b"")
    oh.entries = bytearray(h.z.log)
    oh.image = snapshot.image(h)
    back = rebuild(oh, SeededRandom(3), SimMech())
    assert back.bets.view() == h.bets.view()
    back.action(4, "call")
    back.action(7, "call")
    assert back.bets.view()["to_act"] is None and back.bets.view()["pot"] == 30100


def test_stud_opens_with_the_bring_in_by_suit_and_then_the_best_hand_showing():
    # seat 1 shows 2s, seat 2 2c (the lowest: clubs), seat 3 Kh
    order = ["3c", "4c", "5c", "6c", "7c", "8c", "2s", "2c", "Kh",  # two down, then one up each
             "Qs", "As", "Ad", "Kd"]                  # a burn, then 4th street: 1 A, 2 A, 3 K
    from shoe import cards as C
    rest = [c for c in range(52) if C.name(c) not in order]
    deck = [C.parse(t) for t in order] + rest
    betting = {"ante": 5, "bring_in": 10, "small_bet": 20}
    h = Hand("stud", [1, 2, 3], None, "tda2024", {"betting": betting}, None, SimMech(), deck)
    h.bets = Bets(h, betting)
    h.deal()
    assert h.bets.view()["to_act"] == 2
    h.action(2, "bringin")
    h.action(3, "call")  # call the bring-in
    h.action(1, "call")
    h.street()
    # 4th street: seat 3 shows K K (a pair), seats 1 and 2 an ace high
    assert h.bets.view()["to_act"] == 3
    assert _show_key([C.parse("Kh"), C.parse("Kd")], False) > \
        _show_key([C.parse("2c"), C.parse("As")], False)
    # razz: the lowest hand showing is best, ace low, pairs worst
    assert _show_key([C.parse("Ah"), C.parse("2d")], True) > \
        _show_key([C.parse("Kh"), C.parse("2c")], True) > \
        _show_key([C.parse("2h"), C.parse("2c")], True)


def test_a_hand_without_betting_logs_no_bet_entry():
    h = Hand("holdem", [1, 2, 3], 3, "tda2024", None, SeededRandom(1), SimMech())
    h.deal()
    h.action(2, "call")  # out of turn and amount-less: today's shoe takes it
    h.action(1, "raise")
    assert h.bets is None and OP_BET not in bytes(h.z.log)[::4]


def stud_hand(rules):
    betting = {"ante": 5, "bring_in": 10, "small_bet": 20}
    h = Hand("stud", [1, 2, 3, 4], None, rules, {"betting": betting}, SeededRandom(4), SimMech())
    h.bets = Bets(h, betting)
    h.deal()
    return h


def in_turn(h, *kinds):
    for k in kinds:
        h.action(h.bets.view()["to_act"], k)


@pytest.mark.parametrize("rules, kinds, open_after", [
    # TDA 36: two actions in turn, one with chips, or any three; stud's bring-in is forced
    ("tda2024", ("bringin", "fold"), True),
    ("tda2024", ("bringin", "fold", "fold"), True),
    ("tda2024", ("bringin", "fold", "call"), False),
    ("tda2024", ("bringin", "fold", "fold", "fold"), False),
    # Robert's: two players acted after the forced bet
    ("robert", ("bringin", "call"), True),
    ("robert", ("bringin", "call", "fold"), False),
])
def test_the_misdeal_window_from_real_betting_stud(rules, kinds, open_after):
    h = stud_hand(rules)
    assert h.window_open()
    in_turn(h, *kinds)
    assert h.window_open() == open_after


@pytest.mark.parametrize("kinds, open_after", [
    (("fold", "fold"), True),      # two folds: no chips
    (("fold", "call"), False),     # two actions, one with chips
    (("call",), True),
    (("fold", "fold", "fold"), False),
])
def test_the_misdeal_window_from_real_betting_blinds_known(kinds, open_after):
    h, _ = bet_hand(seats=(1, 2, 3, 4, 5), button=5)
    h.deal()
    assert h.window_open()  # the blinds posted are no action
    in_turn(h, *kinds)
    assert h.window_open() == open_after


# -- action out of turn (TDA 53, RRoP, seed 003's home game): seat 4 acts before seat 3 ---------

def oot_hand(rule):
    h, _ = bet_hand(house={"out_of_turn": rule})
    h.deal()  # button 4: seat 1 small blind 50, 2 big blind 100, 3 first to act
    return h


def conserved(h):
    b = h.bets.b
    return sum(b.stack[s] for s in b.seats) + b.total() == sum(b.start[s] for s in b.seats)


@pytest.mark.parametrize("rule, oot, first, then", [
    # TDA 53: binding when the action to it does not change
    ("tda53", ("call", None), ("call", None), {"to_act": 1, "bet4": 100}),
    # ... if it changes, a bet or raise out of turn is taken back: every option
    ("tda53", ("raise", 300), ("raise", 400), {"to_act": 4, "bet4": 0,
                                               "options": ["call", "fold", "raise"]}),
    ("tda53", ("raise", 300), ("call", None), {"to_act": 1, "bet4": 300}),
    ("tda53", ("fold", None), ("raise", 400), {"to_act": 1, "folded": 4}),  # a fold binds
    # Robert's: a call out of turn may not become a raise
    ("robert", ("call", None), ("raise", 400), {"to_act": 4, "options": ["call", "fold"]}),
    ("robert", ("check", None), ("raise", 400), {"to_act": 4, "options": ["call", "fold"]}),
    # seed 003: the chips stay in; facing a new bet it completes or folds (no raise)
    ("home", ("raise", 300), ("raise", 600), {"to_act": 4, "bet4": 300,
                                              "options": ["call", "fold"], "call": 300}),
    # ... chips over the call are no raise: they go to the pot
    ("home", ("raise", 300), ("call", None), {"to_act": 1, "bet4": 100, "dead": 200}),
    ("home", ("call", None), ("call", None), {"to_act": 1, "bet4": 100}),
    # ... a fold binds, but new bets before it are paid
    ("home", ("fold", None), ("raise", 400), {"to_act": 1, "folded": 4, "in4": 400}),
])
def test_action_out_of_turn_by_the_house_rule(rule, oot, first, then):
    h = oot_hand(rule)
    h.action(4, oot[0], oot[1], oot=True)
    assert conserved(h)
    if rule == "home" and oot[0] in ("raise", "call"):
        assert h.bets.b.stack[4] == 10000 - (oot[1] or 100)  # its chips are in at once
    assert h.bets.view()["to_act"] == 3  # the others act as if nothing happened
    h.action(3, *first)
    v = h.bets.view()
    assert v["to_act"] == then["to_act"]
    if "bet4" in then:
        assert v["seats"]["4"]["bet"] == then["bet4"]
    if "options" in then:
        assert sorted(v["options"]) == then["options"]
    if "call" in then:
        assert v["options"]["call"] == then["call"]
    if "dead" in then:
        assert h.bets.b.dead == then["dead"]
    if "folded" in then:
        assert v["seats"][str(then["folded"])].get("folded")
    if "in4" in then:
        assert v["seats"]["4"]["in"] == then["in4"]
    assert conserved(h)
    assert [e for e in record(h)["log"] if e.get("out_of_turn")][0]["seat"] == 4


def test_home_rule_first_bet_of_the_round_stands_and_power_cut_replays_it():
    h, overrides = bet_hand(house={"out_of_turn": "home"})
    h.deal()
    for s in (3, 4, 1):
        h.action(s, "call")
    h.action(2, "check")
    h.street()  # the flop: seat 1 first
    h.action(2, "bet", 200, oot=True)  # seat 2 bets out of turn: its chips are in
    h.action(1, "check")
    v = h.bets.view()
    assert v["seats"]["2"]["bet"] == 200 and v["to_act"] == 3  # the bet stands
    assert h.bets.b.high == 200
    oh = OpenHand(1, 1, config_json("holdem", h.seats, 4, "tda2024", overrides), b"")
    oh.entries = bytearray(h.z.log)
    oh.image = snapshot.image(h)
    back = rebuild(oh, SeededRandom(3), SimMech())
    assert back.bets.view() == h.bets.view()


def test_out_of_turn_refusals():
    h = oot_hand("tda53")
    with pytest.raises(ShoeError, match="seat 3 is the one to act: report its action in turn"):
        h.action(3, "call", oot=True)
    h.action(4, "call", oot=True)
    before = state(h)
    with pytest.raises(ShoeError, match=r"seat 4 already acted out of turn this round \(TDA 53\)"):
        h.action(4, "fold", oot=True)
    assert state(h) == before
    plain = Hand("holdem", [1, 2, 3], 3, "tda2024", None, SeededRandom(1), SimMech())
    plain.deal()
    with pytest.raises(ShoeError, match="an action out of turn is dealt with on a table that"):
        plain.action(2, "call", oot=True)


def test_a_raise_refused_after_an_action_out_of_turn_names_the_rule():
    h = oot_hand("robert")
    h.action(4, "call", oot=True)
    h.action(3, "raise", 400)
    with pytest.raises(ShoeError, match=r"seat 4 acted out of turn: it may call or fold, not "
                                        r"raise \(RRoP Action out of turn\)"):
        h.action(4, "raise", 800)


def test_a_seat_a_procedure_kills_is_folded_in_the_betting_and_after_a_power_cut():
    # three-handed, button 3 acts first pre-flop: dealt one card short, its call finds its hand
    # dead (TDA 37); the betting folds it: the blinds play on, the round ends without it
    h, overrides = bet_hand(seats=(1, 2, 3), button=3)
    h.deal(5)
    h.action(3, "call")
    assert record(h)["procedures"] == ["button-dead"]
    v = h.bets.view()
    assert v["seats"]["3"] == {"bet": 0, "in": 0, "stack": 10000, "folded": True}
    assert (v["to_act"], v["pot"], v["options"]["call"]) == (1, 150, 50)
    assert [e for e in record(h)["log"] if "action" in e] == [{"action": "call", "seat": 3}]
    oh = OpenHand(1, 1, config_json("holdem", h.seats, 3, "tda2024", overrides), b"")
    oh.entries = bytearray(h.z.log)
    oh.image = snapshot.image(h)
    back = rebuild(oh, SeededRandom(3), SimMech())
    assert back.bets.view() == v
    h.action(1, "call")
    h.action(2, "check")
    assert h.bets.view()["to_act"] is None and h.bets.view()["pot"] == 200
    h.street()
    h.action(1, "check")  # (seat 3 is skipped: seat 2 is next)
    assert h.bets.view()["to_act"] == 2


def test_a_heads_up_hand_a_procedure_kills_is_over_in_the_betting():
    h, _ = bet_hand(seats=(3, 7), button=3)
    h.deal(3)
    h.action(3, "raise", 300)  # its raise finds its hand dead: no chips go in
    v = h.bets.view()
    assert v["over"] and v["to_act"] is None and v["pot"] == 100
    assert v["seats"]["3"] == {"bet": 0, "in": 50, "stack": 9950, "folded": True}
    assert v["seats"]["7"] == {"bet": 0, "in": 50, "stack": 9950}  # 50 of its blind uncalled
    with pytest.raises(ShoeError, match="seat 7 is the only one left; end the hand"):
        h.street()


# chips put out against what was declared (shoe.chips): seat 3 is first, facing the big blind
# 100 (blinds 50-100, stacks 10000); (put, smallest, flags): flags 1 not declared, 2 one chip,
# 4 string, 8 noticed
@pytest.mark.parametrize("house, kind, amount, chips, did, proc, stack3, pot", [
    # declared: the declaration binds (TDA 40-41), the chips are made to fit it
    ({}, "raise", 300, (200, 0, 0), ("raise", 300), "chips-short", 9700, 450),
    ({}, "call", None, (0, 0, 0), ("call", 100), "declared-binds", 9900, 250),
    ({"no_chips": "void"}, "call", None, (0, 0, 0), None, "declared-void", 10000, 150),
    ({}, "call", None, (150, 0, 0), ("call", 100), "chips-excess-returned", 9900, 250),
    ({"excess_chips": "stays"}, "call", None, (150, 0, 0), ("call", 100), "chips-excess-pot",
     9850, 300),
    ({"excess_chips": "stays"}, "call", None, (150, 0, 8), ("call", 100),
     "chips-excess-noticed", 9900, 250),
    ({}, "raise", 300, (300, 0, 0), ("raise", 300), None, 9700, 450),
    # not declared: the chips speak
    ({}, "call", None, (500, 500, 3), ("call", 100), "oversized-call", 9900, 250),
    ({}, "call", None, (1300, 500, 1), ("raise", 1300), None, 8700, 1450),
    ({}, "call", None, (140, 100, 1), ("call", 100), "multichip-call", 9900, 250),
    ({}, "call", None, (150, 25, 1), ("raise", 200), "under-raise-full", 9800, 350),
    ({"under_raise": "call"}, "call", None, (150, 25, 1), ("call", 100), "under-raise-call",
     9900, 250),
    ({}, "call", None, (140, 20, 1), ("call", 100), "under-raise-call", 9900, 250),
    ({}, "call", None, (400, 100, 4), ("call", 100), "string-call", 9900, 250),
    ({}, "call", None, (60, 20, 1), ("call", 100), "chips-short", 9900, 250),
    ({}, "call", None, (10000, 5000, 1), ("allin", 10000), None, 0, 10150),
])
def test_chips_put_out_against_what_was_declared(house, kind, amount, chips, did, proc, stack3,
                                                 pot):
    h, _ = bet_hand(house=house)
    h.deal()
    h.action(3, kind, amount, False, chips)
    log = [e for e in record(h)["log"] if "action" in e or "procedure" in e]
    acts = [(e["action"], e["total"]) for e in log if "action" in e]
    assert acts == ([did] if did else [])
    assert [e["procedure"] for e in log if "procedure" in e] == ([proc] if proc else [])
    v = h.bets.view()
    assert (v["seats"]["3"]["stack"], v["pot"]) == (stack3, pot)
    assert v["to_act"] == (3 if did is None else 4)  # void: seat 3 acts again
    b = h.bets.b
    assert sum(b.stack[s] for s in b.seats) + b.total() == 40000  # every chip accounted for


def test_chips_procedures_by_rulebook_name_their_rule():
    for rules, want in (("tda2024", "TDA 44"), ("robert", "RRoP Oversized chip")):
        h, _ = bet_hand(rules=rules)
        h.deal()
        h.action(3, "call", None, False, (500, 500, 3))
        assert record(h)["log"][-1] == {"procedure": "oversized-call", "rule": want, "seat": 3}


@pytest.mark.parametrize("kind, chips, says", [
    ("call", (20000, 0, 0), "seat 3 put out 20000, more than it has (10000) (TDA 41)"),
    ("call", (0, 0, 1), "no chips put out and nothing declared: report the check or fold"),
    ("raise", (100, 0, 0), "a raise needs its amount"),
    ("call", (1 << 24, 0, 0), "chips are at most 16777215 here"),
    ("call", (100, 0, 16), "chips flags are 1 not declared"),
])
def test_chips_that_make_no_action_are_refused_and_change_nothing(kind, chips, says):
    h, _ = bet_hand()
    h.deal()
    before = state(h)
    with pytest.raises(ShoeError) as info:
        h.action(3, kind, None, False, chips)
    assert says in info.value.message
    assert state(h) == before


def test_chips_to_the_pot_come_back_after_a_power_cut_and_are_paid_out():
    h, overrides = bet_hand(house={"excess_chips": "stays"})
    h.deal()
    h.action(3, "call", None, False, (150, 0, 0))  # 50 over the call: stays in the pot
    h.action(4, "fold")
    h.action(1, "fold")
    oh = OpenHand(1, 1, config_json("holdem", h.seats, 4, "tda2024", overrides), b"")
    oh.entries = bytearray(h.z.log)
    oh.image = snapshot.image(h)
    back = rebuild(oh, SeededRandom(3), SimMech())
    assert back.bets.view() == h.bets.view() and back.bets.b.dead == 50


def test_the_stacks_of_this_hand_before_its_first_card_and_after_a_power_cut():
    h, overrides = bet_hand(betting={"blinds": [50, 100]})  # no stacks in the configuration
    h.bets.set_stacks({1: 500, 2: 80, 3: 2000, 4: 1000})
    assert [e for e in record(h)["log"] if "stack" in e] == [
        {"seat": 1, "stack": 500}, {"seat": 2, "stack": 80}, {"seat": 3, "stack": 2000},
        {"seat": 4, "stack": 1000}]
    h.deal()
    v = h.bets.view()
    assert v["seats"]["2"] == {"bet": 80, "in": 80, "stack": 0, "allin": True}  # a short blind
    # called as the full blind, raised over it (house short_blind full: RRoP No-limit 2)
    assert v["options"] == {"fold": None, "call": 100, "raise": [200, 2000]}
    before = state(h)
    with pytest.raises(ShoeError, match=r"a raise to 3000 is more than seat 3 has \(2000\)"):
        h.action(3, "raise", 3000)
    with pytest.raises(ShoeError, match="before its first card"):
        h.bets.set_stacks({1: 500, 2: 500, 3: 500, 4: 500})
    assert state(h) == before
    h.action(3, "allin")
    assert record(h)["log"][-1] == {"action": "allin", "seat": 3, "total": 2000}
    oh = OpenHand(1, 1, config_json("holdem", h.seats, 4, "tda2024", overrides), b"")
    oh.entries = bytearray(h.z.log)
    oh.image = snapshot.image(h)
    back = rebuild(oh, SeededRandom(3), SimMech())
    assert back.bets.view() == h.bets.view()


@pytest.mark.parametrize("stacks, says", [
    ({1: 500, 2: 500, 3: 500}, "no stack for seat 4: give every seat's"),
    ({1: 500, 2: 500, 3: 500, 4: 500, 6: 500}, "a stack for seat 6, which is not dealt in"),
    ({1: 500, 2: 500, 3: 500, 4: 0}, "seat 4's stack must be 1..16777215 chips, not 0"),
    ({1: 500, 2: 500, 3: 500, 4: 503}, "stack of seat 4 (503) is not a multiple of the chip"),
])
def test_stacks_that_do_not_fit_the_hand_are_refused_and_change_nothing(stacks, says):
    h, _ = bet_hand(betting={"blinds": [50, 100], "chip": 5})
    before = state(h)
    with pytest.raises(ShoeError) as info:
        h.bets.set_stacks(stacks)
    assert says in info.value.message
    assert state(h) == before
