"""Stopping faults (firmware/shoe/faults.py): the shared table, the simulated mechanism's jams,
empty magazine, lid and silent reader with the pin map's timing, and the engine's promise: a
step a fault stops loses no card, every card stays in exactly one zone, and repeating the step
once the fault is cleared ends in the very table the hand would have had without the fault
(its log holding the fault entry besides)."""

import json
import random

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from conftest import ROOT

import scenario
from shoe import cards as C
from shoe import faults as F
from shoe import games as G
from shoe.errors import ShoeError
from shoe.faults import MechanismFault
from shoe.hand import Hand
from shoe.record import record
from shoe.rng import SeededRandom
from shoe.zones import OP_FAULT, NOWHERE, BOARD
from hal import simstops as S
from hal.simmech import SimMech, STOPS, UNTIL_CLEARED

from test_micropython import random_scenario, faulted, feeds_per_step

with open(ROOT + "/hardware/pinmap.json") as _f:
    PINMAP = json.load(_f)
RETRIES = PINMAP["timing"]["jam_retries"]


# ------------------------------------------------------------------------------- the table

def test_the_fault_table():
    codes = [row[0] for row in F.FAULTS]
    kinds = [row[1] for row in F.FAULTS]
    assert codes == list(range(1, len(codes) + 1)), "codes are appended, never renumbered"
    assert len(set(kinds)) == len(kinds)
    from shoe.advice import ADVICE

    assert [row[0] for row in ADVICE] == codes, "one text for each fault, in the table's order"
    for number, kind in F.FAULTS:
        assert F.code(kind) == number and F.kind(number) == kind
        advice = F.advice(number)
        assert advice and advice != F.advice(0) and advice.isascii()
    for kind in (F.JAM, F.EMPTY, F.LID_OPEN, F.READER_SILENT, F.READER_FAULT, F.MOTOR_POWER,
                 F.DOUBLE_UNRESOLVED, F.ENTROPY):
        assert kind in kinds
    assert F.code(F.ENTROPY) == F.ENTROPY_CODE
    assert F.kind(200) == "fault-200"
    with pytest.raises(ValueError, match="unknown fault kind"):
        F.code("smoke")
    e = MechanismFault(F.LID_OPEN, "close it")
    assert (e.kind, e.code, e.message, str(e)) == ("lid_open", 3, "close it", "lid_open: close it")


def test_both_hardware_layers_raise_the_shared_fault():
    from hal import rp2mech

    assert rp2mech.MechanismFault is MechanismFault
    assert (rp2mech.JAM, rp2mech.EMPTY, rp2mech.LID_OPEN, rp2mech.READER_SILENT,
            rp2mech.READER_FAULT, rp2mech.MOTOR_POWER, rp2mech.DOUBLE_UNRESOLVED) == (
        F.JAM, F.EMPTY, F.LID_OPEN, F.READER_SILENT, F.READER_FAULT, F.MOTOR_POWER,
        F.DOUBLE_UNRESOLVED)
    assert set(STOPS) <= set(row[1] for row in F.FAULTS)


# ------------------------------------------------------------------------------- the simulator

def mech_with(cards):
    m = SimMech()
    m.load([C.parse(c) for c in cards])
    return m


def test_figures_come_from_the_pin_map():
    fig = SimMech().figures()
    t, rd, fs = PINMAP["timing"], PINMAP["reader"], PINMAP["feed_stepper"]
    assert fig.jam_retries == t["jam_retries"]
    assert fig.stick_ms == t["throat_reach_ms"] and fig.misfeed_ms == t["double_reach_ms"]
    # the reverse: jam_reverse_steps at a quarter of the cruise rate, with its ramps
    q = fs["cruise_steps_per_s"] // 4
    assert fig.reverse_ms == int((t["jam_reverse_steps"] / q + q / fs["accel_steps_per_s2"])
                                 * 1000)
    assert S.move_ms(8000, 8000, 80000) == 1100.0  # 1 s at cruise + the two half ramps
    assert S.move_ms(200, 8000, 80000) == 100.0    # a triangle: 2 * sqrt(200 / 80000) s
    assert fig.silent_ms == 2 * (rd["retries"] + 1) * rd["timeout_ms"]
    assert fig.lid_ms == t["feed_ms"] // 2
    # another pin map gives other figures: nothing is built in
    pm = json.loads(json.dumps(PINMAP))
    pm["timing"]["jam_retries"] = 5
    pm["timing"]["throat_reach_ms"] = 300
    pm["feed_stepper"]["steps_per_card"] = 64000  # a turn so long that every try hits it
    fig2 = S.Figures(pm)
    assert fig2.jam_retries == 5 and fig2.jam_ms(6) == (6 * 300 + 5 * fig.reverse_ms, 6, True)
    with pytest.raises(OSError, match="no pin map"):
        S.pinmap(("/nonexistent/pinmap.json",))


def test_a_jam_the_retries_clear_is_counted_not_raised():
    fig = SimMech().figures()
    for times in range(1, RETRIES + 1):
        m = mech_with(["2c", "3d", "4h", "5s"])
        m.arm(F.JAM, 1, times)
        m.begin_step()
        assert m.feed(0) == [C.parse("5s")]
        assert m.retries == times and m.recovered == 1
        assert m.spent_ms == fig.jam_ms(times)[0] >= times * fig.reverse_ms + fig.stick_ms
        assert m.feed(0) == [C.parse("4h")] and m.retries == 0


@pytest.mark.parametrize("times", [RETRIES + 1, RETRIES + 2, UNTIL_CLEARED])
def test_a_jam_past_the_retries_stops_with_nothing_out(times):
    fig = SimMech().figures()
    m = mech_with(["2c", "3d", "4h", "5s"])
    m.arm(F.JAM, 2, times)
    m.begin_step()
    assert m.feed(0) == [C.parse("5s")]
    with pytest.raises(MechanismFault) as e:
        m.feed(0)
    assert e.value.kind == "jam" and "3 times" in e.value.message
    assert m.retries == RETRIES + 1 and m.recovered == 0
    # the first try waits out the throat window, each later one the rest of the pick roller's
    # turn (tests/test_rp2.py times the Pico's mechanism against this); all but the last are
    # reversed
    assert m.spent_ms == fig.jam_ms(times)[0]
    assert fig.stick_ms + RETRIES * fig.reverse_ms < m.spent_ms < \
        (RETRIES + 1) * (fig.stick_ms + fig.reverse_ms)
    assert m.stack == [C.parse(c) for c in ("2c", "3d", "4h")], "the card went back under"
    m.begin_step()
    assert m.feed(0) == [C.parse("4h")], "the same card comes next once cleared"


def test_empty_lid_and_reader_take_their_time():
    fig = SimMech().figures()
    for kind, cards, ms in ((F.EMPTY, ["2c", "3d", "4h", "5s", "6s"], 0),
                            (F.EMPTY, ["2c", "3d"], (fig.jam_retries + 1) * fig.misfeed_ms),
                            (F.LID_OPEN, ["2c", "3d"], fig.lid_ms),
                            (F.READER_SILENT, ["2c", "3d"], fig.silent_ms)):
        m = mech_with(cards)
        m.arm(kind, 1)
        m.begin_step()
        with pytest.raises(MechanismFault) as e:
            m.feed(1)
        assert e.value.kind == kind and e.value.message.endswith(F.advice(F.code(kind)))
        assert m.spent_ms == ms, kind
        assert m.stack == [C.parse(c) for c in cards] and m.pending() == 0
        assert m.feed(1) == [C.parse(cards[-1])]


def test_a_stop_on_the_misrouted_burn_leaves_the_misroute_for_the_repeat():
    m = mech_with(["2c", "3d", "4h"])
    m.arm("no_burn")
    m.arm(F.LID_OPEN, 1)
    m.begin_step()
    with pytest.raises(MechanismFault):
        m.feed(1)
    assert m.no_burn and not m.misrouted
    m.begin_step()
    assert m.feed(1) == [C.parse("4h")] and m.misrouted


def test_the_hand_says_what_a_stop_waits_for():
    """The queries the panel and the device ask (Hand.in_progress, can_resume,
    stopped_command) instead of reading the step record: a street a lid stopped waits for the
    street again, every other dealing command is refused meanwhile; the street again clears
    it; an ended hand is no longer in progress."""
    m = SimMech()
    h = Hand("holdem", [1, 2, 3], 3, rng=SeededRandom(5), mech=m)
    assert h.in_progress() and not h.can_resume() and h.stopped_command() is None
    m.begin_step()
    h.deal()
    m.arm(F.LID_OPEN, 2)
    m.begin_step()
    with pytest.raises(MechanismFault):
        h.street()
    assert h.can_resume() and h.stopped_command() == ("street", 0, 0)
    with pytest.raises(ShoeError, match="the street was stopped"):
        h.deal()
    m.begin_step()  # (the device's: a new step for the mechanism's counters)
    h.street()
    assert not h.can_resume() and h.stopped_command() is None and len(h.z.board) == 3
    h.end()
    assert not h.in_progress() and not h.can_resume()


def test_the_virtual_shoe_waits_in_real_time_and_serves_the_link():
    import time

    m = mech_with(["2c", "3d"])
    m.realtime = True
    calls = []
    m.idle = lambda: calls.append(1)
    m.arm(F.LID_OPEN, 1)
    m.begin_step()
    t0 = time.monotonic()
    with pytest.raises(MechanismFault):
        m.feed(0)
    took = time.monotonic() - t0
    assert took >= (m.figures().lid_ms - 2) / 1000.0 and len(calls) > 10  # (ms ticks)


def test_random_faults_stop_too():
    m = SimMech()
    m.load(list(range(52)))
    m.random_faults(0.5, SeededRandom(3))
    kinds = set()
    for _ in range(200):
        m.begin_step()
        try:
            m.feed(0)
        except MechanismFault as e:
            kinds.add(e.kind)
        if len(m.stack) < 10:
            m.load(list(range(52)))
    assert kinds == {F.JAM, F.LID_OPEN, F.READER_SILENT}
    assert m.recovered > 0


# ------------------------------------------------------------------------------- scenarios

def test_scenario_fault_steps_are_checked():
    base = {"game": "holdem", "seats": [1, 2], "button": 2, "seed": 1}
    for step, text in (({"do": "fault", "kind": "jam", "at": 0}, "at must be 1 or more"),
                       ({"do": "fault", "kind": "jam", "at": 1, "times": 0}, "times must be"),
                       ({"do": "fault", "kind": "jam", "times": 256}, "times must be"),
                       ({"do": "fault", "kind": "jam", "at": 1, "mixed_with": ["muck"]},
                        "mixed_with is for a disordered stub"),
                       ({"do": "fault", "kind": "lid_open"}, "at must be 1 or more"),
                       ({"do": "fault", "kind": "lid"}, "unknown fault 'lid'")):
        with pytest.raises(scenario.ScenarioError, match=text):
            scenario.run(dict(base, steps=[step, {"do": "deal"}]))
    # without at/times, "jam" is still the disordered stub of RP-4
    rec = scenario.run(dict(base, steps=[{"do": "deal"}, {"do": "fault", "kind": "jam"}]))
    assert rec["procedures"] == ["stub-reshuffle"] and rec["faults"] == []


def stacked(game, seats, button, steps, rules="tda2024", house=None):
    deck = [C.name(c) for c in C.deck(G.GAMES[game][1])]
    return {"game": game, "seats": seats, "button": button, "rules": rules,
            "house": house or {}, "deck": deck, "seed": 1, "steps": steps}


def test_a_step_the_fault_stopped_is_continued_not_restarted():
    scn = stacked("holdem", [1, 2, 3], 3, [{"do": "fault", "kind": "jam", "at": 4},
                                           {"do": "deal"}, {"do": "deal"}])
    rec = scenario.run(scn)
    fault = [e for e in rec["log"] if "fault" in e]
    assert fault == [{"fault": "jam", "dest": "seat:1", "retries": RETRIES + 1}]
    assert rec["log"].index(fault[0]) == 3, "logged after the three cards that came out"
    # the deck's first six cards (2c 2d 2h 2s 3c 3d) in deal order from seat 1: the jammed
    # card (the 4th, 2s, for seat 1) came out first when the deal was repeated
    assert {s: [c["card"] for c in v] for s, v in rec["seats"].items()} == {
        "1": ["2c", "2s"], "2": ["2d", "3c"], "3": ["2h", "3d"]}
    assert rec["faults"] == ["jam"] and rec["stub"] == 46


def test_other_steps_are_refused_until_the_stopped_one_is_repeated():
    hand = Hand("holdem", [1, 2, 3], 3, "tda2024", {}, SeededRandom(1), SimMech(),
                list(range(52)))
    hand.mech.arm(F.READER_SILENT, 2)
    hand.mech.begin_step()
    with pytest.raises(MechanismFault):
        hand.deal()
    log = bytes(hand.z.log)
    for op, args in (("street", ()), ("action", (1, "call")), ("expose", (1, 1)),
                     ("premature", ()), ("draw", ({},))):
        with pytest.raises(ShoeError) as e:
            getattr(hand, op)(*args)
        assert e.value.message in ("the deal was stopped by a mechanism fault: repeat it to "
                                   "finish it first", "holdem has no draw"), e.value.message
    assert bytes(hand.z.log) == log and hand.step.stopped == ("deal", 0, 0)
    hand.deal(1)  # the count does not matter: the deal goes on to its target
    assert hand.initial_complete() and hand.step.stopped is None
    hand.street()
    # end (and a misdeal) are always allowed: the hand is over, nothing is owed
    with pytest.raises(ValueError, match="a jam sticks 1..255 times"):
        hand.mech.arm(F.JAM, 1, 0)
    hand.mech.arm(F.JAM, 1, UNTIL_CLEARED)
    hand.mech.begin_step()
    with pytest.raises(MechanismFault):
        hand.street()
    hand.end()
    assert hand.step.stopped is None and not hand.step.owed
    z = hand.z
    assert z.count() == 52


def test_a_repeated_report_deals_its_replacement_once():
    """Draw 5: a card exposed on the draw is mucked and replaced; the lid opens on the
    replacement. Repeating the same report deals the replacement: it is not a second report."""
    steps = [{"do": "deal"}, {"do": "draw", "discards": {"1": ["2c"]}},
             {"do": "fault", "kind": "lid_open", "at": 1},
             {"do": "expose", "seat": 2, "card": 1},
             {"do": "expose", "seat": 2, "card": 1}]
    rec = scenario.run(stacked("draw5", [1, 2], 2, steps))
    assert rec["procedures"] == ["draw-exposed-replaced"] and rec["faults"] == ["lid_open"]
    # seat 1: 2c 2h 3c 3h 4c, seat 2: 2d 2s 3d 3s 4d; the draw burns 4h and gives seat 1 4s
    # for its 2c; seat 2's exposed 2d is mucked and replaced by the next card, 5c
    assert [c["card"] for c in rec["seats"]["2"]] == ["2s", "3d", "3s", "4d", "5c"]
    assert rec["muck"] == ["2c", "2d"] and rec["burns"] == ["4h"]


def test_a_fault_entry_names_the_zone_and_the_retries():
    """A fault's entry names the zone the card was going to and the jam's retries."""
    m = SimMech()
    hand = Hand("holdem", [1, 2], 2, "tda2024", {}, SeededRandom(1), m, list(range(52)))
    hand.deal()
    m.arm(F.JAM, 1, UNTIL_CLEARED)
    m.begin_step()
    with pytest.raises(MechanismFault):
        hand.street()
    log = hand.z.log
    assert tuple(log[-4:]) == (OP_FAULT, F.code(F.JAM), 2, RETRIES + 1)  # 2: the burns
    m.arm(F.EMPTY, 2)
    m.begin_step()
    with pytest.raises(MechanismFault):
        hand.street()
    assert tuple(log[-4:]) == (OP_FAULT, F.code(F.EMPTY), BOARD, 0)
    hand.note_fault(F.ENTROPY_CODE)
    assert tuple(log[-4:]) == (OP_FAULT, F.ENTROPY_CODE, NOWHERE, 0)
    assert record(hand)["log"][-1] == {"fault": "entropy"}
    assert record(hand)["faults"] == ["jam", "empty", "entropy"]


# ------------------------------------------------------------------------------- repeat = no fault

def without_faults(rec):
    out = dict(rec)
    out["log"] = [e for e in rec["log"] if "fault" not in e]
    out["faults"] = []
    return out


def check_repeat_is_invisible(scn, r):
    try:
        base = scenario.run(scn)
    except scenario.ScenarioError:
        return None
    got = faulted(scn, r)
    if got is None:
        return None
    scn2, kind = got
    try:
        rec = scenario.run(scn2)
    except scenario.ScenarioError as e:  # it fell on the card another fault was armed for
        assert "was not reached" in str(e), (str(e), json.dumps(scn2))
        return None
    assert rec["faults"] == ([kind] if kind else []), json.dumps(scn2)
    assert without_faults(rec) == base, json.dumps(scn2)
    return kind or "cleared"


def test_a_stopped_and_repeated_step_ends_as_if_nothing_had_stopped():
    r = random.Random(44)
    kinds = []
    for _ in range(1000):
        kinds.append(check_repeat_is_invisible(random_scenario(r), r))
    done = [k for k in kinds if k is not None]
    assert set(done) == set(STOPS) | {"cleared"}, set(done)
    assert len(done) > 200


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32), pick=st.integers(0, 2 ** 32))
def test_hypothesis_a_stop_loses_nothing(seed, pick):
    check_repeat_is_invisible(random_scenario(random.Random(seed)), random.Random(pick))


def test_each_procedure_that_owes_cards_survives_a_stop_in_them():
    """The places where a procedure deals after it changed the table: a fault on those cards,
    and the repeated step finishes them (the differential check on hand-made hands)."""
    cases = [
        # replacement of an exposed hole card, after the deal
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal", "cards": 5},
                                         {"do": "expose", "seat": 3, "card": 1},
                                         {"do": "deal"}, {"do": "street"}]),
        # the same, the deal being already complete: the report deals it
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal"}, {"do": "expose", "seat": 3, "card": 1},
                                         {"do": "street"}], house={"exposed_holecard": "muck"}),
        # no burn before the flop: the card added to the flop (both rulebooks)
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal"}, {"do": "fault", "kind": "no_burn"},
                                         {"do": "street"}, {"do": "street"}]),
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal"}, {"do": "fault", "kind": "no_burn"},
                                         {"do": "street"}, {"do": "street"}], rules="robert"),
        # a four-card flop reshuffled (Robert's): the new flop
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal"},
                                         {"do": "fault", "kind": "double_feed", "at": 2},
                                         {"do": "street"}, {"do": "street"}], rules="robert"),
        # stud: the exposed 7th-street card replaced
        stacked("stud", [1, 2, 3], None, [{"do": "deal"}, {"do": "street"}, {"do": "street"},
                                          {"do": "street"}, {"do": "street"},
                                          {"do": "expose", "seat": 2, "card": 7}]),
        # missing cards at the first action: the button completed (both), the short seats
        # completed (Robert's)
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal", "cards": 5},
                                         {"do": "action", "seat": 1, "kind": "call"},
                                         {"do": "street"}]),
        stacked("holdem", [1, 2, 3], 3, [{"do": "deal", "cards": 3},
                                         {"do": "action", "seat": 1, "kind": "call"},
                                         {"do": "street"}], rules="robert"),
        # a draw round, and a draw that reshuffles the discards
        stacked("draw5", [1, 2, 3], 3, [{"do": "deal"},
                                        {"do": "draw", "discards": {"1": ["2c", "5c"],
                                                                    "3": ["4c"]}}]),
    ]
    r = random.Random(7)
    seen = 0
    for scn in cases:
        base = scenario.run(scn)
        feeds, pending = feeds_per_step(scn)
        for i, n in enumerate(feeds):
            if not n:
                continue
            for at in range(1, n + 1):  # every card of every step that deals
                kind = r.choice(STOPS)
                fault = {"do": "fault", "kind": kind, "at": at}
                if kind == F.JAM:
                    fault["times"] = UNTIL_CLEARED
                steps = scn["steps"]
                scn2 = dict(scn, steps=steps[:i] + [fault, steps[i], steps[i]] + steps[i + 1:])
                try:
                    rec = scenario.run(scn2)
                except scenario.ScenarioError as e:  # the card of the double feed
                    assert pending[i] and "was not reached" in str(e), str(e)
                    continue
                assert rec["faults"] == [kind], json.dumps(scn2)
                assert without_faults(rec) == base, json.dumps(scn2)
                seen += 1
    assert seen > 60


def test_every_card_stays_in_one_zone_while_stopped():
    """Mid-way: right after the fault, before the repeat, the table is whole."""
    r = random.Random(5)
    checked = 0
    for _ in range(150):
        scn = random_scenario(r)
        got = faulted(scn, r)
        if got is None or got[1] is None:
            continue
        scn2 = got[0]
        i = [k for k, s in enumerate(scn2["steps"]) if s["do"] == "fault" and
             s.get("kind") in STOPS and "at" in s][0]  # (a jam without "at" is RP-4's)
        cut = dict(scn2, steps=scn2["steps"][:i + 2])  # up to the stopped step
        try:
            rec = scenario.run(cut)
        except scenario.ScenarioError:
            continue
        deck = {C.name(c) for c in C.deck(G.GAMES[rec["game"]][1])}
        seen = [c["card"] for held in rec["seats"].values() for c in held]
        seen += rec["board"] + rec["burns"] + rec["muck"] + rec["aside"]
        assert len(seen) == len(set(seen)) and set(seen) <= deck
        assert len(seen) + rec["stub"] == len(deck)
        assert rec["log"][-1].get("fault") == got[1] and rec["status"] == "dealing"
        checked += 1
    assert checked > 30
