"""The flash journal: every movement committed before the next card moves, recovered exactly
after a power cut at any program or erase (clean or torn mid-page), damage always detected."""

import glob
import json
import os
import random

import pytest

from conftest import SCENARIOS

import scenario
from hal.flashdev import RamFlash, PowerCut
from journal import Journal, config_json
from recorder import Recorder, rebuild
from shoe import cards as C
from shoe.rng import SeededRandom


def session(n=50):
    """n hands with every kind of irregularity: the bundled scenarios that run to a record."""
    out = []
    for path in sorted(glob.glob(os.path.join(SCENARIOS, "*.json"))):
        with open(path) as f:
            scn = json.load(f)
        scn.pop("expect", None)
        try:
            scenario.run(scn)
        except scenario.ScenarioError:
            continue
        out.append(scn)
    return (out * 2)[:n]


class Table:
    """Plays scenarios on the engine with the journal underneath, as the device does, and
    remembers what was committed last (the state a reboot must find)."""

    def __init__(self, dev, reconfigure=True):
        self.reconfigure = reconfigure
        self.pending = None
        self.j = Journal(dev)
        self.rec = Recorder(self.j)
        self.number = self.j.hand_no
        self.seq = 0
        h = self.j.hand
        # the expectation, kept from the records as each finishes reaching the flash
        self.committed = {"event_next": self.j.event_next, "hand_no": self.j.hand_no,
                          "chain": self.j.chain, "config": self.j.config,
                          "open": None if h is None else (h.number, bytes(h.entries))}
        append = self.j._append

        def appended(t, payload):
            # while a record is being written, both the state before it and after it are
            # acceptable outcomes of a cut (a torn page may still hold all of a short record)
            self.pending = dict(self.committed)
            self.expect(self.pending, t, payload)
            at = append(t, payload)
            self.committed, self.pending = self.pending, None
            return at

        self.j._append = appended

    @staticmethod
    def expect(c, t, p):
        if t == 2:  # CONFIG
            c["config"] = p.decode()
        elif t == 3:  # HAND
            number = p[0] | p[1] << 8
            c["hand_no"] = number
            c["open"] = (number, b"")
        elif t == 4:  # COMMIT
            n = p[0]
            number, entries = c["open"]
            c["open"] = (number, entries + bytes(p[1:1 + 4 * n]))
            c["event_next"] += n
        elif t == 5:  # CLOSE
            c["chain"] = bytes(p[2:34])
            c["open"] = None

    def play(self, scn):
        args, steps = scenario.check(scn)
        hand, mech = scenario.start(args)
        game, seats, button, rules, house, order, seed = args

        def before(route):
            self.rec.commit(hand, feeding=route)

        mech.before = before
        self.number += 1
        # each hand re-configures the table first: a cut while writing the configuration must
        # leave the old one or the new one, never a mix
        if self.reconfigure:
            self.j.set_config(json.dumps([game, seats, button, rules, house, self.number]))
        self.rec.begin(hand, self.number, config_json(game, seats, button, rules, house))
        for step in steps:
            if step[0] == "cut":  # a scenario's own power cut: this table cuts on its own
                continue
            scenario.begin_step(hand, mech)
            try:
                scenario.apply(hand, mech, step)
            except (scenario.ShoeError, scenario.MechanismFault):
                pass  # (a stopped step is repeated by the scenario's next one)
            self.seq += 1
            self.rec.commit(hand, reply=(self.seq, b"\x00"))
        if hand.status == 0:
            hand.end()
            self.rec.commit(hand, reply=(self.seq, b"\x00"))


def check_recovered(dev, committed):
    j = Journal(dev)
    assert not j.problems, j.problems
    assert j.event_next == committed["event_next"]
    assert j.hand_no == committed["hand_no"]
    assert j.chain == committed["chain"]
    assert j.config == committed["config"]  # the old configuration or the new, whole
    if committed["open"] is None:
        assert j.hand is None
        return j, None
    number, entries = committed["open"]
    assert j.hand is not None and j.hand.number == number
    assert bytes(j.hand.entries) == entries
    hand = rebuild(j.hand, SeededRandom(1), None)
    z = hand.z
    seen = list(z.stub) + z.board + z.burns + z.muck + z.aside
    for held in z.seats.values():
        seen += [c & C.CODE for c in held]
    assert sorted(seen) == sorted(C.deck(hand.deck_kind))  # no card lost or duplicated
    return j, hand


def test_a_session_is_recovered_at_every_point():
    dev = RamFlash(blocks=64)
    t = Table(dev)
    for scn in session(50):
        t.play(scn)
    j, _ = check_recovered(dev, t.committed)
    assert j.verify() == []
    hands, problems = j.hands()
    assert problems == [] and len(hands) >= 50
    assert all(h["hash"] is not None for h in hands)


def total_ops(n):
    dev = RamFlash(blocks=64)
    t = Table(dev)
    for scn in session(n):
        t.play(scn)
    return dev.ops


@pytest.mark.slow
@pytest.mark.parametrize("partial", [False, True], ids=["clean", "torn"])
def test_power_cut_sweep(partial):
    """A 50-hand session, cut after the k-th program/erase for k spread over the whole session
    (every STRIDE-th operation here; FACEDOWN_SWEEP=1 sweeps every one)."""
    hands = session(50)
    total = total_ops(50)
    stride = 1 if os.environ.get("FACEDOWN_SWEEP") else max(1, total // 150)
    cuts = 0
    for k in range(1, total + 1, stride):
        dev = RamFlash(blocks=64)
        dev.arm(k, partial)
        t = None
        with pytest.raises(PowerCut):
            t = Table(dev)
            for scn in hands:
                t.play(scn)
            raise AssertionError("the power never went")
        dev.revive()
        if t is not None and t.committed is not None:
            try:
                check_recovered(dev, t.committed)
            except AssertionError:
                if t.pending is None:
                    raise
                check_recovered(dev, t.pending)  # the record in flight did reach the flash
        else:
            assert not Journal(dev).problems
        cuts += 1
        # the shoe goes on after the reboot: the next hand is journaled and recovered too
        t2 = Table(dev)
        t2.play(hands[k % len(hands)])
        check_recovered(dev, t2.committed)
    assert cuts >= 100


def test_bit_flips_are_all_detected():
    dev = RamFlash(blocks=24)
    t = Table(dev)
    for scn in session(30):
        t.play(scn)
    clean = bytes(dev.mem)
    used = [i for i in range(len(clean)) if clean[i] != 0xFF]
    r = random.Random(5)
    for _ in range(300):
        img = bytearray(clean)
        pos = r.choice(used) if r.random() < 0.9 else r.randrange(len(img))
        img[pos] ^= 1 << r.randrange(8)
        j = Journal(RamFlash(blocks=24, image=img))
        problems = j.verify()
        assert problems, "a flipped bit at %d went unnoticed" % pos


def test_wear_is_spread_over_the_ring():
    dev = RamFlash(blocks=16)
    t = Table(dev)
    for scn in session(120):
        t.play(scn)
    counts = dev.erase_counts
    assert max(counts) - min(counts) <= 1
    assert Journal(dev).verify() == []
