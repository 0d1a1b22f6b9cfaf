"""The hand ledger on SQLite and PostgreSQL (same schema, same code): what a served shoe's
hands leave there, the floor's queries (CLI and API), the OHH 1.4 export against the schema
the project keeps, and the secrecy of a live hand."""

import copy
import json
import time

import pytest

from facedown import keys, ohh
from facedown.cli import main
from facedown.engine import firmware_imports, wire
from facedown.errors import UserError
from facedown.ledger import Ledger, LedgerSink, run_query
from facedown.serve import Server
from facedown.virtualshoe import VirtualShoe

from services import drop_database, postgres_url

W = wire()


@pytest.fixture(scope="module")
def shoe():
    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        c = s.connect()
        c.call("config", "holdem", 0b1111110, 6, "tda2024",
               json.dumps({"premature_turn": "set_aside"}))
        c.close()
        yield s


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "ledger.sqlite")
        return
    u = postgres_url()
    yield u
    drop_database(u)


def serve(shoe, url):
    sink = LedgerSink(Ledger(url), name="T1")
    server = Server(shoe.port, keys.Key(shoe.key.device, "table",
                                        shoe.key.for_role(W.ROLE_TABLE)),
                    sink=sink, log=lambda text: None)
    server.serve_forever()
    wait_saved(server, sink)  # what the shoe still kept from before, in this new ledger
    return server, sink


def play(cl, premature=False, misdeal=False):
    cl.call("hand", 0)
    cl.call("deal", 0)
    if misdeal:
        cl.call("report", 3, 0, 0)
        return
    cl.call("action", 3, 1)
    cl.call("street")
    if premature:
        cl.call("report", 2, 0, 0)
    cl.call("street")
    cl.call("street")
    cl.call("end")


def wait_saved(server, sink, timeout=10):
    upto = server.submit(lambda cl: cl.sync())
    end = time.monotonic() + timeout
    while sink.saved() < upto and time.monotonic() < end:
        time.sleep(0.05)
    assert sink.saved() == upto
    server.submit(lambda cl: None)  # (the line thread acknowledges before each job)
    return upto


def test_a_served_shoe_fills_the_ledger_and_the_floor_queries_answer(shoe, url):
    server, sink = serve(shoe, url)
    dev = shoe.key.device
    try:
        t0 = time.time()
        for kw in ({}, {"premature": True}, {"misdeal": True}):
            server.submit(lambda cl: play(cl, **kw))
        upto = wait_saved(server, sink)
        time.sleep(0.2)
        assert server.client.acked == upto  # acknowledged once saved, not before
    finally:
        server.close()
    L = Ledger(url)
    try:
        # (a new ledger also takes the hands the shoe still keeps from before: the last ones)
        hands = run_query(L, "hands", {"shoe": dev, "from": t0 - 1})[-3:]
        assert [h["status"] for h in hands] == ["complete", "complete", "misdeal"]
        assert run_query(L, "hands", {"shoe": dev, "from": t0 - 100, "to": t0 - 50}) == []
        premature = hands[1]["hand"]
        rec = L.hand_record(dev, premature)
        flop = rec["board"][0]
        trail = run_query(L, "card", {"shoe": dev, "hand": premature, "card": flop})
        assert trail["moves"][-1]["to"] == "board" and trail["moves"][-1]["up"]
        assert [p["rule"] for p in trail["procedures"]] == ["TDA RP-5-A"]
        hole = rec["seats"]["1"][0]["card"]
        trail = run_query(L, "card", {"shoe": dev, "hand": premature, "card": hole})
        assert trail["moves"] == [{"event": trail["moves"][0]["event"], "t": pytest.approx(
            trail["moves"][0]["t"]), "from": "stub", "to": "seat:1", "up": False}]
        rates = run_query(L, "rates", {"shoe": dev, "from": hands[0]["started"]})
        assert rates["hands"] == 3 and rates["misdeals"] == 1
        assert rates["misdeals_per_1000"] == pytest.approx(333.33)
        assert rates["hands_per_hour"] > 0
        s = run_query(L, "settings", {"shoe": dev})
        assert s["rules"] == "tda2024" and s["house"] == {"premature_turn": "set_aside"}
        assert s["in_force"]["premature_turn"] == "set_aside" and len(s["in_force"]) > 5
        out = run_query(L, "export", {"shoe": dev, "from": hands[0]["started"]})
        assert len(out["hands"]) == 2 and "misdeal" in out["skipped"][0]
        doc = out["hands"][0]["ohh"]
        assert doc["game_type"] == "Holdem" and doc["dealer_seat"] in range(1, 7)
        dealt = [a for a in doc["rounds"][0]["actions"] if a["action"] == "Dealt Cards"]
        assert len(dealt) == 6 and all(len(a["cards"]) == 2 for a in dealt)
        assert [r["street"] for r in doc["rounds"]] == ["Preflop", "Flop", "Turn", "River"]
        assert any(a["action"] == "Call" for a in doc["rounds"][0]["actions"])
        phh = run_query(L, "export", {"shoe": dev, "hand": hands[0]["hand"], "format": "phh"})
        assert "actions = [" in phh["hands"][0]
        # the same events again (a restarted server, a broker's redelivery): dropped by key
        rows = L.query("SELECT number, hand, op, a, b, c, t FROM events WHERE shoe = ?", (dev,))
        assert L.add_events(dev, hands[0]["epoch"], rows) == len(rows)
        assert L.query("SELECT COUNT(*) FROM events WHERE shoe = ?", (dev,))[0][0] == len(rows)
    finally:
        L.close()


def test_a_live_hand_is_in_the_ledger_masked_until_it_ends(shoe, url):
    server, sink = serve(shoe, url)
    dev = shoe.key.device
    z = firmware_imports().zones
    try:
        server.submit(lambda cl: (cl.call("hand", 0), cl.call("deal", 0)))
        hand = server.submit(lambda cl: cl.status()["hand"])
        end = time.monotonic() + 30  # (a loaded machine: PostgreSQL under a bulk load)
        L = Ledger(url)
        rows = []
        while time.monotonic() < end and len(rows) < 12:
            rows = L.query("SELECT a, c, final FROM events WHERE shoe = ? AND hand = ? AND "
                           "op = ?", (dev, hand, z.OP_MOVE))
            time.sleep(0.05)
        assert len(rows) == 12 and all(a == W.HIDDEN and not final for a, c, final in rows)
        assert L.query("SELECT COUNT(*) FROM hands WHERE shoe = ? AND hand = ?",
                       (dev, hand))[0][0] == 0
        server.submit(lambda cl: cl.call("end"))
        wait_saved(server, sink)
        rows = L.query("SELECT a, final FROM events WHERE shoe = ? AND hand = ? AND op = ?",
                       (dev, hand, z.OP_MOVE))
        assert all(a != W.HIDDEN and final for a, final in rows)
        L.close()
    finally:
        server.close()


def test_the_ohh_schema_refuses_what_is_not_ohh(shoe, tmp_path):
    url = str(tmp_path / "l.sqlite")
    server, sink = serve(shoe, url)
    try:
        server.submit(play)
        wait_saved(server, sink)
    finally:
        server.close()
    L = Ledger(url)
    doc = run_query(L, "export", {"shoe": shoe.key.device})["hands"][-1]
    L.close()
    ohh.validate(doc)
    for path, value in ((("ohh", "spec_version"), "1.3"),
                        (("ohh", "rounds", 0, "actions", 0, "cards", 0), "10h"),
                        (("ohh", "game_type"), "holdem")):
        bad = copy.deepcopy(doc)
        node = bad
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
        with pytest.raises(UserError, match="not valid OHH 1.4"):
            ohh.validate(bad)
    bad = copy.deepcopy(doc)
    del bad["ohh"]["players"]
    with pytest.raises(UserError, match="players"):
        ohh.validate(bad)


def test_the_ledger_cli(shoe, tmp_path, capsys):
    url = str(tmp_path / "l.sqlite")
    server, sink = serve(shoe, url)
    try:
        server.submit(lambda cl: play(cl, premature=True))
        wait_saved(server, sink)
    finally:
        server.close()
    dev = shoe.key.device
    assert main(["ledger", "hands", "--ledger", url, "--shoe", dev]) == 0
    out = capsys.readouterr().out
    assert "complete" in out and "1 procedure(s)" in out
    hand = int([line for line in out.splitlines() if "1 procedure(s)" in line and "complete"
                in line][-1].split()[1])
    assert main(["ledger", "card", "--ledger", url, "--shoe", dev, "--hand", str(hand),
                 "--card", "Ah"]) == 0
    assert "Ah in hand %d" % hand in capsys.readouterr().out
    assert main(["ledger", "export", "--ledger", url, "--shoe", dev, "--hand", str(hand)]) == 0
    ohh.validate(json.loads(capsys.readouterr().out.splitlines()[0]))
    assert main(["ledger", "card", "--ledger", url, "--shoe", dev, "--hand", "999",
                 "--card", "Ah"]) == 2
    assert "no finished hand 999" in capsys.readouterr().err
    assert main(["ledger", "card", "--ledger", url, "--shoe", dev, "--hand", str(hand),
                 "--card", "Xx"]) == 2
    assert "hint: cards are written like Ah" in capsys.readouterr().err
    assert main(["ledger", "hands", "--ledger", str(tmp_path / "none.sqlite")]) == 2
    assert "no ledger at" in capsys.readouterr().err
