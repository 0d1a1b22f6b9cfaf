"""Revision D's pipelined loader in the simulator (hal/simfast.py; hardware/SHUFFLER.md
"Revision D"), selected by the pin map's `loader.fitted` (the one place): every two-deck test
and every mechanism-fault test of the simulator runs again on it (the pin map of the shoe in
the working folder says fitted, as a virtual shoe's flash would), and the loader's own checks:
the same plan's result as revision B's carousel, the time of fastpath.py's model to the
microsecond whatever the plan, the purge only when the pocket sensor sees cards."""

import json
import os
import shutil

import pytest

from conftest import ROOT
from hal import simmech
from hal.fastpath import load as load_model
from hal.simcarousel import SimCarousel
from hal.simfast import FastCarousel
from shoe.drbg import HmacDrbg, seeded_entropy
from shoe.shuffler import Plan

# every test of these modules, collected again here on revision D's shoe (revision_d below)
from test_device_faults import *  # noqa: F401,F403
from shoe.zones import OP_FAULT, OP_MOVE
from test_device_faults import Shoe, table
from test_two_decks import *  # noqa: F401,F403

HW = os.path.join(ROOT, "hardware")


def revision_d_map(folder):
    """A shoe's root whose pin map has revision D's loader fitted (and the carousel it needs)."""
    with open(os.path.join(HW, "pinmap.json")) as f:
        pm = json.load(f)
    pm["carousel_stepper"]["fitted"] = True
    pm["loader"]["fitted"] = True
    with open(os.path.join(folder, "pinmap.json"), "w") as f:
        json.dump(pm, f)
    shutil.copy(os.path.join(HW, "fastpath.json"), folder)
    return pm


@pytest.fixture(autouse=True)
def revision_d(tmp_path, monkeypatch):
    """The shoe is revision D: its pin map (read from the working folder first, as on the
    shoe) says so; every simulated carousel made meanwhile must be the pipelined one."""
    root = tmp_path / "shoe-root"
    root.mkdir()
    revision_d_map(str(root))
    monkeypatch.chdir(root)
    made = []
    make = simmech.SimMech.make_carousel

    def checked(self, slots=None):
        car = make(self, slots)
        made.append(type(car))
        return car

    monkeypatch.setattr(simmech.SimMech, "make_carousel", checked)
    # a virtual shoe of these tests (the real firmware under MicroPython) is revision D too:
    # its flash's pin map says so
    from facedown import virtualshoe

    lay_out = virtualshoe.lay_out
    close = virtualshoe.VirtualShoe.close
    logs = []

    def laid_out(folder, **kwargs):  # (before the installed files' manifest is signed)
        out = lay_out(folder, **kwargs)
        revision_d_map(folder)
        return out

    def closed(self):  # each virtual shoe says in its log which carousel it has
        logs.append(self.log(this_boot=False))
        close(self)

    monkeypatch.setattr(virtualshoe, "lay_out", laid_out)
    monkeypatch.setattr(virtualshoe.VirtualShoe, "close", closed)
    yield made
    assert all(t is FastCarousel for t in made), made
    for log in logs:
        assert "revision D's pipelined loader" in log, log[-2000:]


def model():
    return load_model(HW)[0]


def test_the_pin_map_selects_the_loader(revision_d):
    s = Shoe()
    table(s)
    assert type(s.hal.mech.carousel) is FastCarousel and revision_d == [FastCarousel]
    os.remove("pinmap.json")  # the checkout's own pin map: revision D not fitted
    s = Shoe()
    revision_d.clear()
    s.hal.mech.revision_d = None
    table(s)
    assert type(s.hal.mech.carousel).__name__ == "SimCarousel"
    revision_d.clear()


def test_a_reshuffle_takes_the_models_time_whatever_the_plan():
    """The simulator's reshuffles through the pipelined path: the model's schedule to the
    microsecond, the same for every plan and ring position (first after power-up: the homing
    turn too), the tray's stack the plan's order, both escrows used."""
    m = model()
    rng = HmacDrbg(seeded_entropy("revision-d"))
    spent = []
    car = FastCarousel(60, m, spent.append)
    first = m.reshuffle(list(range(52)), 0, True)["total_us"]
    nxt = m.reshuffle(list(range(52)), 0)["total_us"]
    stub = list(range(52))
    for i in range(30):
        plan = Plan(stub, rng)
        fed = stub if i % 2 else plan.cards[::-1]
        tray = car.shuffle(fed, plan)
        assert tray == SimCarousel(60).shuffle(fed, plan) == list(plan.cards), \
            "the magazine holds the plan's order, as revision B's carousel leaves it"
        assert spent[-1] == (first if i == 0 else nxt)
    assert len(set(spent[1:])) == 1 and min(car.stations_used) > 0
    # the parking window (the pockets over the gate's opening when it opens) is never loaded
    assert car.m.park == 56 and car.travel > 0
    assert car.shuffles == 30 and all(p is None for p in car.pockets)


def test_the_pocket_sensor_purges_only_cards_a_power_cut_left():
    """A loader that did not home at power-up (the Pico's today) carries the homing turn, and
    the purge only when cards were left, in its first reshuffle."""
    m = model()
    spent = []
    plan = Plan(list(range(40)), HmacDrbg(seeded_entropy("purge")))
    clean = FastCarousel(60, m, spent.append)
    clean.shuffle(list(range(40)), plan)
    left = FastCarousel(60, m, spent.append)
    left.pockets[7] = 12  # a power cut mid-reshuffle left a card in pocket 7
    left.shuffle(list(range(40)), plan)
    pockets = m.park_map(plan.drops())
    fed = [pockets[plan.slot_of(c)] for c in range(40)]
    assert spent == [m.reshuffle(fed, 0, True)["total_us"],
                     m.reshuffle(fed, 0, True, True)["total_us"]]
    assert spent[1] - spent[0] == m.unload_us()


@pytest.mark.parametrize("n", [52, 40])
def test_the_power_up_homes_and_purges_before_any_reshuffle(n):
    """The simulator's shoe homes at power-up, and purges there the cards a power cut left in
    the pockets (the pocket sensor sees them in the homing turn): the first reshuffle after it
    is a next one, within the issue's 20 s / 15 s, cards left or not; the power-up's time is
    the model's (homing, + one unloading turn only when cards were left)."""
    m = model()
    plan = Plan(list(range(n)), HmacDrbg(seeded_entropy("power-up/%d" % n)))
    pockets = m.park_map(plan.drops())
    fed = [pockets[plan.slot_of(c)] for c in range(n)]
    got = []
    for left in (None, {7: 12, 31: 40}):
        mech = simmech.SimMech(revision_d=True)
        mech.left_in_pockets = left
        mech.stack[:] = list(range(n))[::-1]
        mech.load(list(plan.cards), plan)
        assert mech.boot_us == m.power_up_us(bool(left))
        assert mech.shuffle_us == m.reshuffle(fed, mech.carousel.m.park + 1 if left else 0)[
            "total_us"] == m.reshuffle(fed)["total_us"]
        assert mech.stack == list(plan.cards)
        got.append(mech.shuffle_us)
    assert got[0] == got[1] < (20 if n == 52 else 15) * 10 ** 6
    assert m.power_up_us(True) - m.power_up_us(False) == m.unload_us()


def test_the_next_decks_unloading_turn_holds_no_dealing_command():
    """Two decks: the next deck's unloading turn runs on its own, so the dealing step after the
    gap that completed the deck is not held by it (the carousel's foreground time in that step
    is the gap's loading alone); its time still counts as the loader's; the carousel's next user
    waits for what is left of it, counted down by the cards dealt meanwhile."""
    from shoe import cards as C

    m = model()
    mech = simmech.SimMech(revision_d=True)
    mech.two_decks()
    mech.decks.per_gap = 26
    rng = HmacDrbg(seeded_entropy("turn"))
    mech.stack[:] = list(range(52))
    mech.gather(C.deck(C.FULL), rng)
    mech.begin_step()  # the first gap: 26 cards
    car = mech.carousel
    before = mech.shuffle_us
    mech.begin_step()  # the second: the deck complete, its unloading turn starts
    assert mech.next_status()["state"] == "ready"
    held = mech.shuffle_us - before
    assert held == m.reshuffle(list(range(26)))["load_us"], \
        "the step was held only by the gap's loading, never by the unloading turn"
    assert car.turning_us == m.unload_us() and car.busy_us >= held + m.unload_us()
    for _ in range(5):  # five cards dealt: the turn goes on meanwhile
        mech.feed(0)
    assert car.turning_us == m.unload_us() - 5 * m.pick_us
    car._wait_turn()  # the carousel's next user
    assert car.turn_waits == 1 and car.turn_wait_us == m.unload_us() - 5 * m.pick_us
    assert car.turning_us == 0 and m.deal_wait_us() == m.cycle_us < m.unload_us()


def test_a_card_caught_in_an_escrow_stops_the_step_and_is_named():
    """Revision D's new fault, as the others are handled: the hand's opening reshuffle meets a
    card caught on its escrow's latch; the first feed stops with escrow_caught (the card and the
    escrow named, what to do), an event of the hand and in status; the step repeated goes on,
    and the cards come in the engine's order, nothing lost."""
    import wire
    from shoe import cards as C

    s = Shoe()
    mech = s.hal.mech
    mech.arm(simmech.ESCROW_CAUGHT, 5)
    table(s)
    stub = list(s.dev.hand.z.stub)
    code, message = s.call("deal", 0)
    assert code == wire.MECHANISM and message.startswith("escrow_caught: a card (")
    assert "is caught in escrow" in message and "top of the magazine" in message
    caught = message.split("(", 1)[1].split(")", 1)[0]
    assert C.parse(caught) in stub
    assert s.status()["fault"]["kind"] == "escrow_caught"
    assert [e[0] for e in s.events()][-1] == OP_FAULT
    s.ok("deal", 0)
    assert s.status()["fault"] is None
    moved = [e[1] for e in s.events() if e[0] == OP_MOVE]
    assert moved == stub[::-1][:6], "the same cards, in the same order"
    assert mech.shuffle_us + mech.boot_us == mech.carousel.busy_us > mech.carousel.last["total_us"]


def test_a_caught_card_needs_revision_d(revision_d):
    os.remove("pinmap.json")  # the checkout's pin map: revision D's loader not fitted
    s = Shoe()
    with pytest.raises(ValueError, match="revision D"):
        s.hal.mech.arm(simmech.ESCROW_CAUGHT, 1)
    revision_d.clear()
