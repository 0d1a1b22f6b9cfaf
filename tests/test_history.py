"""Hand histories: at least the last 1,000 hands stay in the journal, each with every movement
and procedure, chained by hashes; a changed record shows; fetched over the protocol."""

import json
import os

import pytest

from hal.flashdev import RamFlash, BLOCK
from journal import Journal
from journal import JOURNAL_BLOCKS

from test_journal import Table

from facedown import history
from facedown.cli import main
from facedown.virtualshoe import VirtualShoe
from conftest import login_cli

HAND = {"game": "holdem", "seats": list(range(1, 10)), "button": 9, "seed": 1,
        "steps": [{"do": "deal"}] + [{"do": "action", "seat": s, "kind": "call"}
                                     for s in range(1, 10)]
        + sum([[{"do": "street"}] + [{"do": "action", "seat": s, "kind": "check"}
                                     for s in range(1, 10)] for _ in range(3)], [])
        + [{"do": "end"}]}


def test_the_journal_keeps_the_last_1000_hands():
    dev = RamFlash(blocks=JOURNAL_BLOCKS)
    t = Table(dev, reconfigure=False)  # one configuration, hands one after another
    for _ in range(1300):  # far enough for the ring to wrap
        t.play(HAND)
    j = Journal(dev)
    hands, problems = j.hands()
    assert problems == []
    whole = [h for h in hands if h["hash"] is not None and not h["damaged"]]
    assert len(whole) >= 1000
    assert whole[-1]["hand"] == 1300  # the newest are the ones kept
    assert max(dev.erase_counts) - min(dev.erase_counts) <= 1


def test_a_changed_record_breaks_the_chain():
    dev = RamFlash(blocks=16)
    t = Table(dev)
    for _ in range(5):
        t.play(HAND)
    hands, problems = Journal(dev).hands()
    assert problems == [] and len(hands) == 5
    # flip one bit inside hand 3's records: its CRC, or failing that its hash, gives it away
    target = None
    for b in range(16):
        data = dev.mem[b * BLOCK:(b + 1) * BLOCK]
        i = data.find(bytes((3, )) + bytes((0,)))
        if i > 0:
            target = b * BLOCK + i + 40
            break
    dev.mem[target] ^= 0x10
    hands, problems = Journal(dev).hands()
    assert problems, "the damage went unnoticed"


@pytest.fixture(scope="module")
def shoe():
    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s


def play(shoe, hands):
    from facedown.shoereplay import replay

    c = shoe.connect(timeout=30)
    records = [replay(c, dict(HAND, seed=k)) for k in range(hands)]
    c.close()
    return records


def test_history_over_the_protocol_verifies_and_matches(shoe, capsys):
    records = play(shoe, 4)
    c = shoe.connect(timeout=30)
    numbers, damaged = history.stored(c)
    assert damaged == 0 and len(numbers) >= 4
    prev = None
    fetched = []
    for n in numbers[-4:]:
        h = history.parse(history.fetch(c, n))
        assert history.verify(h, prev) == []
        fetched.append(history.to_record(h))
        prev = h
    c.close()
    for got, want in zip(fetched, records):
        got = dict(got)
        del got["hand"]
        assert got.pop("config") == {"game": "holdem", "seats": HAND["seats"], "button": 9,
                                     "rules": "tda2024", "house": {}, "profile": None}
        assert got == want
    login_cli(shoe, "maintenance")
    assert main(["--port", shoe.port, "history", "--last", "2"]) == 0
    out = capsys.readouterr().out
    assert "chain ok" in out and "0 failed verification" in out
    assert main(["--port", shoe.port, "history", "--hand", str(numbers[-1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["verified"] is True
    assert main(["--port", shoe.port, "history", "--hand", "999"]) == 2


def test_a_tampered_flash_is_reported_by_history(shoe, capsys):
    play(shoe, 3)
    shoe.stop()
    path = os.path.join(shoe.flash, "flash.bin")
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        i = data.find(b'"holdem"', 4096 * 0 + 200)  # inside a stored hand's HAND record
        data[i + 2] ^= 0x01
        f.seek(0)
        f.write(data)
    shoe.start(ready_line="ready", timeout=20)
    login_cli(shoe)  # a restart ends every session
    rc = main(["--port", shoe.port, "history", "--last", "50"])
    out = capsys.readouterr().out
    assert rc == 1  # (the flip may hit a HAND record, which fails its hand's verification,
    # or the CONFIG record before it, whose damaged area the journal then reports)
    assert "damaged area" in out or "does not match" in out or "missing" in out
