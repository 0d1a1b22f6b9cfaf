"""Stopping faults end to end, on the virtual shoe (the real firmware under the MicroPython unix
port) through protocol v1: the command answers MECHANISM after the time the pin map gives the
fault, the fault arrives as a numbered event, status shows it until the step is repeated, the
hand history on the shoe's journal keeps it (and exports to PHH), the host's mirror and the
shoe's table agree; `facedown` commands exit 3 with one line; watch shows it."""

import json
import time

import pytest

from facedown import history
from facedown.cli import main
from facedown.client import ShoeError
from facedown.mirror import Mirror
from facedown.phh import dumps as phh_dumps
from conftest import login_cli

import wire
from hal.simmech import SimMech
from shoe.zones import OP_FAULT, OP_MOVE

SEATS9 = 0b1111111110
FIG = SimMech().figures()


@pytest.fixture
def shoe(virtual_shoe):
    return virtual_shoe


@pytest.fixture
def client(shoe):
    events = []
    c = shoe.connect(timeout=20, on_event=lambda n, h, e: events.append((n, h, e)))
    try:
        c.call("end")
    except ShoeError:
        pass
    c.events = events
    yield c
    c.close()


def new_hand(c, rules="tda2024", seats=0b1110, button=3):
    c.call("config", "holdem", seats, button, rules, "{}")
    c.call("hand", 0)


def test_a_jam_stops_the_deal_and_the_repeat_finishes_it(client):
    c = client
    new_hand(c, seats=SEATS9, button=9)
    hand = c.status()["hand"]
    c.sync()
    del c.events[:]
    c.call("sim_fault", "feed_jam", 5, 255, 0)
    t0 = time.monotonic()
    with pytest.raises(ShoeError) as e:
        c.call("deal", 0)
    took = time.monotonic() - t0
    assert e.value.code == wire.MECHANISM and e.value.fault == "jam"
    assert "3 times" in e.value.message and str(e.value).count("\n") == 0
    ms, retries, stopped = FIG.jam_ms(255)
    assert stopped and took >= ms / 1000.0 - 0.01, (took, ms)
    c.sync()
    entries = [ev[2] for ev in c.events if ev[1] == hand]
    assert [x[0] for x in entries] == [OP_MOVE] * 4 + [OP_FAULT]
    assert tuple(entries[-1][:2]) == (OP_FAULT, 1) and entries[-1][3] == retries
    numbers = [ev[0] for ev in c.events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), "numbered, no gap"
    st = c.status()
    assert st["fault"]["kind"] == "jam" and st["fault"]["command"] == "deal"
    assert st["table"]["faults"] == ["jam"]
    # the host's mirror of the stream and the shoe's table agree
    m = Mirror("holdem", list(range(1, 10)), 9, "tda2024")
    for x in entries:
        m.apply(x)
    rec = m.record()
    for key in ("seats", "stub", "faults", "procedures"):
        assert rec[key] == st["table"][key]
    assert rec["log"][-1]["fault"] == "jam" and rec["log"][-1]["dest"] == "seat:5"
    # another step is refused; the repeated deal goes on with the jammed card
    with pytest.raises(ShoeError) as e:
        c.call("street")
    assert e.value.code == wire.WRONG_STATE and "repeat it" in e.value.message
    c.call("deal", 0)
    st = c.status()
    assert st["fault"] is None
    assert sum(len(v) for v in st["table"]["seats"].values()) == 18
    c.call("end")
    c.sync()
    # the hand history on the shoe keeps the fault, hash-chained; PHH carries it
    h = history.parse(history.fetch(c, hand))
    assert not history.verify(h)
    rec = history.to_record(h)
    assert rec["faults"] == ["jam"]
    text = phh_dumps(rec)
    assert "fault jam" in text


@pytest.mark.parametrize("kind, ms", [("lid_open", FIG.lid_ms),
                                      ("reader_silent", FIG.silent_ms),
                                      ("empty", 0)])
def test_each_stop_takes_its_time_and_nothing_is_lost(client, kind, ms):
    c = client
    new_hand(c, rules="robert")
    c.call("deal", 0)
    stub = c.status()["table"]["stub"]
    c.call("sim_fault", kind, 2, 0, 0)
    t0 = time.monotonic()
    with pytest.raises(ShoeError) as e:
        c.call("street")
    took = time.monotonic() - t0
    assert e.value.fault == kind and took >= ms / 1000.0 - 0.01
    st = c.status()
    assert st["table"]["stub"] == stub - 1, "only the burn left the stub"
    c.call("street")
    st = c.status()
    assert st["table"]["stub"] == stub - 4 and len(st["table"]["board"]) == 3
    assert st["fault"] is None and st["table"]["faults"] == [kind]
    c.call("end")


def test_a_jam_the_retries_clear_is_counted(client):
    c = client
    new_hand(c)
    before = c.status()["recovered"]
    c.call("sim_fault", "feed_jam", 1, 2, 0)
    t0 = time.monotonic()
    c.call("deal", 0)
    assert time.monotonic() - t0 >= FIG.jam_ms(2)[0] / 1000.0 - 0.01
    st = c.status()
    assert st["recovered"] == before + 1 and st["fault"] is None and st["table"]["faults"] == []
    c.call("end")


def test_the_command_line_says_it_in_one_line_and_exits_3(client, shoe, capsys):
    c = client
    new_hand(c)
    c.call("sim_fault", "reader_silent", 1, 0, 0)
    c.close()  # one host on the line at a time: the command line's
    login_cli(shoe, "table")
    capsys.readouterr()
    assert main(["--port", shoe.port, "deal"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("facedown: error: deal stopped by a mechanism fault (MECHANISM): "
                             "reader_silent: the card reader stopped answering")
    assert err[0].endswith("once it is cleared, send deal again")
    # status shows the standing fault under the table
    assert main(["--port", shoe.port, "status"]) == 0
    out = capsys.readouterr().out
    assert "! FAULT reader_silent: check the card reader" in out  # (status has no log)
    assert "STOPPED (deal): reader_silent: " in out
    assert main(["--port", shoe.port, "status", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["fault"]["kind"] == "reader_silent"
    assert main(["--port", shoe.port, "deal"]) == 0
    c.open()
    c.attach()  # (each command above was a session of its own)
    c.call("end")


def test_watch_shows_the_fault_and_the_operators_words(client, shoe, capsys):
    c = client
    new_hand(c)
    c.call("sim_fault", "lid_open", 3, 0, 0)
    with pytest.raises(ShoeError):
        c.call("deal", 0)
    c.sync()
    c.close()
    capsys.readouterr()
    # a watch started now reads the hand back from the journal (--backlog), and the shoe's
    # words for the fault that still stands
    assert main(["--port", shoe.port, "watch", "--lines", "--backlog", "--seconds", "2"]) == 0
    out = capsys.readouterr().out
    assert "FAULT lid_open (the card for seat 3): the shoe stopped; close the lid" in out
    assert "STOPPED (deal): lid_open: the lid was opened while a card was moving" in out
    c.open()
    c.attach()  # (the watch was a session of its own)
    c.call("deal", 0)
    c.call("end")
