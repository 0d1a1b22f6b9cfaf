"""The front panel (issue 4's dealer buttons and floor key): each press runs the host's commands
for it as the table's role; the record it leaves is the one the host's commands leave; refused
presses change nothing. In this process on the device's own code, then on the virtual shoe
through its simulated panel."""

import os
import time

import pytest

from conftest import ROOT

import wire as W

import panel  # noqa: E402
from device import Device  # noqa: E402
from pyhal import PyHal  # noqa: E402
from sessions import InProcess, provision  # noqa: E402
from shoe.hand import DEALING, MISDEAL  # noqa: E402
from shoe.record import record  # noqa: E402
from shoe.zones import OP_PROC  # noqa: E402

SEATS = 0b1111111110  # seats 1..9


class PanelHal(PyHal):
    """PyHal with the panel's three calls: presses queued by the test, a floor key, the buzzer."""

    def __init__(self, folder, **kw):
        PyHal.__init__(self, folder, **kw)
        self.queue = []
        self.key = False
        self.beeps = []
        self.shows = []

    def presses(self):
        out, self.queue = self.queue, []
        return out

    def floor_key(self):
        return self.key

    def signal(self, ok):
        self.beeps.append(ok)

    def show(self, state):
        self.shows.append(state)


def shoe(folder, seed="panel"):
    """A provisioned, configured shoe whose host then logs out: (device, hal, host)."""
    hal = PanelHal(folder, seed=seed)
    key = provision(folder, hal.device_id)
    dev = Device(hal)
    host = InProcess(dev, W, key, "maintenance")
    host.call("config", "holdem", SEATS, 9, "tda2024", "")
    host.key = key
    return dev, hal, host


@pytest.fixture
def twins(tmp_path):
    """Two shoes dealing the same shuffles: one run by its panel, one by its host."""
    out = []
    for name in ("a", "b"):
        os.makedirs(tmp_path / name)
        out.append(shoe(str(tmp_path / name)))
    out[1][2].login(out[1][2].key, "table")
    return out


def press(dev, button, key=False):
    return panel.press(dev, button, key)


def same_table(a, b):
    ra, rb = record(a.hand, log=True), record(b.hand, log=True)
    assert ra == rb
    assert a.hand_no == b.hand_no and bytes(a.hand.z.log) == bytes(b.hand.z.log)


def test_deal_burn_and_the_reports_leave_the_host_s_record(twins):
    (a, ha, _), (b, _, host) = twins
    # DEAL: a hand and its initial deal
    assert press(a, "deal") == (0, "")
    host.call("hand", 0)
    host.call("deal", 0)
    same_table(a, b)
    assert a.hand.initial_complete() and a.hand.status == DEALING
    # EXPOSED: the last card dealt down (the button's second card)
    seat, index = a.hand.can_report_exposed()
    assert (seat, index) == (9, 2)
    assert press(a, "exposed") == (0, "")
    host.call("report", 1, 9, 2)
    same_table(a, b)
    assert any(a.hand.z.log[i] == OP_PROC for i in range(0, len(a.hand.z.log), 4))
    # BURN: the flop; PREMATURE: it came out too soon (Rule 39 / RP-5)
    assert press(a, "burn") == (0, "")
    host.call("street")
    assert press(a, "premature") == (0, "")
    host.call("report", 2, 0, 0)
    same_table(a, b)
    for _ in range(3):  # flop again, turn, river
        assert press(a, "burn") == (0, "")
        host.call("street")
    same_table(a, b)
    assert ha.beeps == [True] * 7
    # nothing left to burn: refused, nothing changes, a long beep
    before = bytes(a.hand.z.log)
    code, message = press(a, "burn")
    assert code == W.WRONG_STATE and "no street left" in message
    assert bytes(a.hand.z.log) == before and ha.beeps[-1] is False
    # DEAL again: the hand on the table ends, the next is dealt (the button moves on)
    first = a.hand_no
    assert press(a, "deal") == (0, "")
    host.call("end")
    host.call("hand", 0)
    host.call("deal", 0)
    assert a.hand_no == first + 1
    same_table(a, b)
    assert a.counts["panel"] == {"deal": 2, "burn": 4, "exposed": 1, "premature": 1,
                                 "refused": 1}


def test_a_misdeal_needs_the_floor_key_and_is_audited_as_the_panel(tmp_path):
    dev, hal, host = shoe(str(tmp_path))
    assert press(dev, "deal") == (0, "")
    before = bytes(dev.hand.z.log)
    code, message = press(dev, "misdeal")
    assert code == W.DENIED and "floor key" in message
    assert bytes(dev.hand.z.log) == before and dev.hand.status == DEALING
    assert press(dev, "misdeal", key=True) == (0, "")
    assert dev.hand.status == MISDEAL
    lines = dev.audit.export(1).decode().splitlines()
    assert any('"misdeal"' in ln and '"panel+floor"' in ln for ln in lines), lines[-3:]


@pytest.mark.parametrize("button", ["burn", "exposed", "premature", "misdeal"])
def test_without_a_hand_only_deal_does_something(tmp_path, button):
    dev, hal, host = shoe(str(tmp_path))
    code, message = press(dev, button, key=True)
    assert code == W.WRONG_STATE and "DEAL starts one" in message
    assert dev.hand is None and hal.beeps == [False]


def test_a_stopped_deal_is_finished_by_deal_and_nothing_else(tmp_path):
    dev, hal, host = shoe(str(tmp_path))
    host.login(host.key, "table")
    host.call("hand", 0)
    host.call("sim_fault", "feed_jam", 5, 255, 0)  # the 5th card sticks until the operator
    code, message = press(dev, "deal")
    assert code == W.MECHANISM and message.startswith("jam")
    assert dev.fault["kind"] == "jam" and len(dev.hand.z.log) // 4 == 4 + 1  # 4 moves + fault
    for button in ("burn", "exposed", "premature"):
        code, message = press(dev, button)
        assert code == W.WRONG_STATE and "press DEAL again" in message, message
    assert press(dev, "deal") == (0, "")
    assert dev.hand.initial_complete() and dev.fault is None
    lines = dev.audit.export(1).decode().splitlines()
    assert any('"fault"' in ln and '"panel"' in ln for ln in lines)


def test_a_locked_or_unprovisioned_shoe_deals_nothing_from_its_panel(tmp_path):
    hal = PanelHal(str(tmp_path))
    dev = Device(hal)  # no key
    code, message = press(dev, "deal")
    assert code == W.DENIED and "no key" in message and dev.hand is None
    os.makedirs(tmp_path / "locked")
    dev, hal, host = shoe(str(tmp_path / "locked"))
    with open(os.path.join(str(tmp_path / "locked"), "evil.py"), "w") as f:
        f.write("x = 1\n")
    dev = Device(PanelHal(str(tmp_path / "locked"), flash=hal.flash))
    for button in panel.BUTTONS:
        code, message = press(dev, button, True)
        assert code == W.DENIED and "locked: evil.py" in message and dev.hand is None


def test_presses_are_polled_between_commands_by_the_link(tmp_path):
    from link import Link

    dev, hal, host = shoe(str(tmp_path))

    class Port:
        def __init__(self):
            self.out = []

        def read_into(self, buf):
            return 0

        def write(self, data):
            self.out.append(bytes(data))

    port = Port()
    link = Link(port, dev, hal.clock, 0)
    link.quiet = False
    hal.queue = ["deal", "burn"]
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and not (dev.hand and dev.hand.nstreet == 1 and
                                               link.sent == dev.event_next - 1):
        link.service()
    assert dev.hand.nstreet == 1 and hal.beeps == [True, True]
    frames = W.Decoder().feed(b"".join(port.out))
    events = [f for f in frames if f[0] == W.EVENT]
    assert events, "the panel's cards go to the host as events"
    assert not [f for f in frames if f[0] == W.REPLY], "no reply: no host sent a command"


def test_the_virtual_shoe_s_panel(virtual_shoe):
    """The simulated panel (files in the flash folder) on the real firmware: the host sees the
    hand the buttons dealt, card by card, in its event stream."""
    events = []
    c = virtual_shoe.connect(timeout=20, on_event=lambda n, h, e: events.append((n, h, e)))
    try:
        c.call("config", "holdem", 0b1110, 3, "tda2024", "{}")
        before = c.status()["hand"]
        virtual_shoe.press("deal", "burn")
        deadline = time.monotonic() + 10
        st = c.status()
        while time.monotonic() < deadline and not (st["hand"] == before + 1 and
                                                   len(st["table"]["board"]) == 3):
            c.pump(0.1)
            st = c.status()
        assert st["hand"] == before + 1 and len(st["table"]["board"]) == 3, st
        c.sync()
        moves = [e for _n, h, e in events if h == st["hand"] and e[0] == 1]
        assert len(moves) == 3 * 2 + 1 + 3  # hole cards, the burn, the flop
        code = virtual_shoe.log()
        assert code.count("panel: deal: ok") == 1 and "buzzer: beep" in code
        assert code.index("led: idle") < code.index("led: dealing"), "the status LED follows"
        virtual_shoe.press("misdeal")  # no floor key
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "misdeal: a misdeal needs" not in \
                virtual_shoe.log():
            c.pump(0.1)
        assert "long beep" in virtual_shoe.log()
        # the next hand (DEAL ends this one), then a misdeal the floor rules with the key
        virtual_shoe.floor_key(True)
        virtual_shoe.press("deal", "misdeal")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and c.status()["table"]["status"] != "misdeal":
            c.pump(0.1)
        st = c.status()
        assert st["hand"] == before + 2 and st["table"]["status"] == "misdeal", st
    finally:
        virtual_shoe.floor_key(False)
        c.close()


def test_the_pico_wires_every_button_of_the_panel():
    """The buttons are named in one place, hal/base.py (the HAL is built before panel.py loads,
    and panel.py is loaded only at a press): panel.py and hal/rp2wire.py read that list and no
    firmware file spells it again; each button is a signal of the pin map."""
    import ast
    import json

    import hal.base

    assert panel.BUTTONS is hal.base.BUTTONS
    spelled = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "firmware")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as f:
                    tree = ast.parse(f.read())
                spelled += [name for n in ast.walk(tree) if isinstance(n, ast.Tuple) and
                            [getattr(e, "value", None) for e in n.elts] == list(panel.BUTTONS)]
    assert spelled == ["base.py"], spelled
    # the capability bits are protocol/caps.py's: wire.py serves them, hal/rp2.py (built
    # before wire loads) imports the one it brings from there (tests/test_constants.py: no copy)
    with open(os.path.join(ROOT, "firmware", "hal", "rp2.py")) as f:
        tree = ast.parse(f.read())
    caps = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "caps" and
            [a.name for a in n.names] == ["CAP_JOURNAL"]]
    assert caps and W.CAP_JOURNAL == 2
    with open(os.path.join(ROOT, "hardware", "pinmap.json")) as f:
        signals = {s["name"] for s in json.load(f)["signals"]}
    assert {"btn_" + b for b in panel.BUTTONS} | {"floor_key", "buzzer_pwm"} <= signals


def test_the_status_led_follows_the_shoe(tmp_path):
    """Device.indication after each step (the link calls indicate): idle, dealing, attention
    for a stop until the step is finished, idle again; a locked shoe shows locked; the hardware
    layer hears of changes only."""
    dev, hal, host = shoe(str(tmp_path))
    host.login(host.key, "table")
    dev.indicate()
    assert hal.shows == ["idle"]
    host.call("hand", 0)
    dev.indicate()
    dev.indicate()
    assert hal.shows == ["idle", "dealing"]
    host.call("sim_fault", "feed_jam", 3, 255, 0)
    assert press(dev, "deal")[0] == W.MECHANISM
    dev.indicate()
    assert hal.shows[-1] == "attention"
    assert press(dev, "deal") == (0, "")
    dev.indicate()
    host.call("end")
    dev.indicate()
    assert hal.shows == ["idle", "dealing", "attention", "dealing", "idle"]
    with open(os.path.join(str(tmp_path), "evil.py"), "w") as f:
        f.write("x = 1\n")
    hal2 = PanelHal(str(tmp_path), flash=hal.flash)
    dev2 = Device(hal2)
    dev2.indicate()
    assert hal2.shows == ["locked"]


def test_deal_that_cannot_start_the_next_hand_leaves_this_one_alone(tmp_path):
    """Found by the device fuzzer (355 inputs): DEAL on a dealt hand ran `end`, then `hand` was
    refused (the events of 4 hands await the host's ACK): the hand on the table was ended by a
    refused press. The shoe's reasons to refuse a hand are now asked first."""
    dev, hal, host = shoe(str(tmp_path))
    for _ in range(4):  # no host acknowledges the events: 4 hands are held
        assert press(dev, "deal") == (0, "")
    assert len(dev.held) == 4 and dev.hand.status == DEALING
    before = (dev.hand_no, bytes(dev.hand.z.log), dev.event_next)
    code, message = press(dev, "deal")
    assert code == W.BUSY and "await the host's ACK" in message
    assert (dev.hand_no, bytes(dev.hand.z.log), dev.event_next) == before
    assert dev.hand.status == DEALING, "the hand on the table goes on"
    dev.ack(dev.event_next - 1)  # a host catches up: DEAL ends it and deals the next
    assert press(dev, "deal") == (0, "") and dev.hand_no == before[0] + 1


def test_deal_refused_for_any_reason_of_the_new_hand_changes_nothing(tmp_path):
    """Found by the next 1,000,000-input run (4 inputs): the same with a stacked deck the
    game refuses (the simulator's sim_deck), a reason only making the hand can find. DEAL now
    runs `hand` with the hand in progress ended once the new one is made, not before."""
    dev, hal, host = shoe(str(tmp_path))
    assert press(dev, "deal") == (0, "")
    before = (dev.hand_no, bytes(dev.hand.z.log), dev.event_next)
    host.call("sim_deck", bytes(range(10)), 0, 0)  # 10 cards: not a deck for hold'em
    code, message = press(dev, "deal")
    assert code == W.BAD_ARGUMENT and "52 cards" in message
    assert (dev.hand_no, bytes(dev.hand.z.log), dev.event_next) == before
    assert dev.hand.status == DEALING
