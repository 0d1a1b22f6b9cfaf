"""Power cuts in scenarios: `{"do": "fault", "kind": "power_cut"}` (now) and with
`"after_writes": N` (while the N-th journal record of the next step is being written). The shoe
reboots from its flash journal and the hand goes on: no card lost or duplicated, the stub
reshuffled face down (RP-4), a card caught in flight settled; the same record in-process and on
the virtual shoe, and the host's event stream with no gap and no duplicate."""

import glob
import json
import os
import random

import pytest

from conftest import SCENARIOS

import scenario
from shoe import cards as C
from shoe import games as G
from facedown.shoereplay import replay
from facedown.virtualshoe import VirtualShoe

DEALING = ("deal", "street", "draw")


def bundled():
    out = []
    for path in sorted(glob.glob(os.path.join(SCENARIOS, "*.json"))):
        with open(path) as f:
            scn = json.load(f)
        scn.pop("expect", None)
        try:
            scenario.run(scn)
        except scenario.ScenarioError:
            continue
        out.append((os.path.basename(path), scn))
    return out


def with_cut(scn, at, after_writes):
    scn = json.loads(json.dumps(scn))
    cut = {"do": "fault", "kind": "power_cut"}
    if after_writes:
        cut["after_writes"] = after_writes
    scn["steps"].insert(at, cut)
    scn.setdefault("seed", 1)
    return scn


def conserved(rec):
    deck = {C.name(c) for c in C.deck(G.GAMES[rec["game"]][1])}
    seen = [c["card"] for held in rec["seats"].values() for c in held]
    seen += rec["board"] + rec["burns"] + rec["muck"] + rec["aside"]
    assert len(seen) == len(set(seen)), "a card is in two places"
    assert set(seen) <= deck
    assert len(seen) + rec["stub"] == len(deck), "a card was lost"


def cut_points(scns, rnd, n):
    """n (scenario, cut) pairs: before a dealing step, after 0 (now) to 6 journal records."""
    out = []
    while len(out) < n:
        name, scn = rnd.choice(scns)
        steps = [i for i, s in enumerate(scn["steps"]) if s["do"] in DEALING]
        if not steps:
            continue
        out.append((name, with_cut(scn, rnd.choice(steps), rnd.randint(0, 6))))
    return out


def test_in_process_cuts_keep_every_card():
    scns = bundled()
    rnd = random.Random(3)
    ran = 0
    for name, scn in cut_points(scns, rnd, 400):
        try:
            rec = scenario.run(scn)
        except scenario.ScenarioError as e:
            # only a step that cannot be repeated after the cut (the table moved on) may refuse
            assert "step" in str(e), (name, str(e))
            continue
        conserved(rec)
        ran += 1
        if scn["steps"][-1]["do"] == "end" and rec["status"] == "complete":
            assert rec["stub"] >= 0
    assert ran > 300


def test_a_cut_mid_flop_settles_the_card_in_flight():
    scn = {"game": "holdem", "seats": [1, 2, 3, 4, 5, 6], "button": 6, "seed": 7,
           "steps": [{"do": "deal"}, {"do": "action", "seat": 3, "kind": "call"},
                     {"do": "fault", "kind": "power_cut", "after_writes": 3},
                     {"do": "street"}, {"do": "street"}, {"do": "end"}]}
    rec = scenario.run(scn)
    assert rec["procedures"][:2] == ["stub-reshuffle", "card-settled"]
    assert len(rec["board"]) == 4 and len(rec["burns"]) == 2
    conserved(rec)


@pytest.fixture(scope="module")
def shoe():
    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s


@pytest.mark.slow
def test_cuts_through_the_virtual_shoe(shoe):
    delivered = []
    c = shoe.connect(timeout=30, on_event=lambda n, h, e: delivered.append(n))
    scns = bundled()
    rnd = random.Random(11)
    checked = 0
    for name, scn in cut_points(scns, rnd, 24):
        try:
            expected = scenario.run(scn)
        except scenario.ScenarioError as e:
            expected = {"error": str(e)}
        try:
            got = replay(c, scn, shoe)
        except scenario.ScenarioError as e:
            got = {"error": str(e)}
        assert got == expected, (name, json.dumps(scn["steps"]))
        checked += "error" not in got
    c.close()
    assert checked >= 18
    # the host's stream across every power cut: consecutive numbers, none twice
    assert delivered == list(range(delivered[0], delivered[0] + len(delivered)))
    assert shoe.boots > 10


def test_cuts_keep_the_burn_ledger():
    """A power cut before (or while the journal writes) any dealing step of the composed-pair
    scenarios (issue 14): the hand ends with the burns it has uncut, one a street (Rule 38,
    tests/burnwatch.py), so the ledger came back from the journal, whatever procedure had
    written it."""
    from burnwatch import BurnWatch

    names = [(n, s) for n, s in bundled() if n.startswith(("14-", "05-no-burn-flop-turned"))]
    assert len(names) >= 15
    swept = 0
    for name, scn in names:
        uncut = scenario.run(scn)
        for at in [i for i, s in enumerate(scn["steps"]) if s["do"] in DEALING]:
            for writes in range(0, 7):
                cut = with_cut(scn, at, writes)
                watch = []

                def after(op, hand):
                    if not watch:
                        watch.append(BurnWatch(hand))
                    watch[0].after(op, hand)

                try:
                    rec = scenario.run(cut, after)
                except scenario.ScenarioError as e:  # fewer writes than after_writes, or a
                    assert "step" in str(e) or "power cut" in str(e), (name, str(e))  # repeat
                    continue
                conserved(rec)
                assert len(rec["burns"]) == len(uncut["burns"]), (name, at, writes, rec["log"])
                swept += "stub-reshuffle" in rec["procedures"]  # the reboot's RP-4 reshuffle
    assert swept > 150


def test_composed_pairs_same_record_on_the_virtual_shoe(shoe):
    """Issue 14's pairs (tests/scenarios/14-*, Robert's and TDA's no-burn flops) give the same
    hand record through the real protocol on the virtual shoe as in-process, and that record
    passes the scenario's hand-written expectation card by card (MicroPython's run of the same
    files: tests/test_micropython.py)."""
    from golden import check, load

    paths = sorted(glob.glob(os.path.join(SCENARIOS, "14-*.json"))
                   + glob.glob(os.path.join(SCENARIOS, "05-no-burn-flop*.json")))
    assert len(paths) >= 19
    c = shoe.connect(timeout=30)
    try:
        for path in paths:
            data = load(path)
            scn = json.loads(json.dumps(data))
            scn.pop("expect", None)
            expected = scenario.run(json.loads(json.dumps(scn)))
            got = replay(c, scn, shoe)
            name = os.path.basename(path)
            assert got == expected, name
            assert not check(data["expect"], got, data["game"]), name
    finally:
        c.close()
