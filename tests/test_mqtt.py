"""The room's event stream on Mosquitto: a served shoe's events reach the ledger through the
broker and are acknowledged to the shoe only after the ledger's commit (the retained saved
marker); nothing is lost through a broker killed with SIGKILL, a ledger away, duplicates;
per-shoe credentials and the ACL; and secrecy: a subscriber to '#' during live hands sees no
down card and nothing of the stub."""

import json
import re
import threading
import time

import pytest

from facedown import keys
from facedown.broker import Broker, user_name
from facedown.engine import firmware_imports, wire
from facedown.ledger import Ledger
from facedown.mqtt import LedgerService, MqttSink, _client
from facedown.serve import Server
from facedown.virtualshoe import VirtualShoe

from services import mosquitto

W = wire()


class Listener:
    """A subscriber to '#' as one of the broker's users: every message it may see."""

    def __init__(self, broker, user, name):
        self.msgs = []
        self.lock = threading.Lock()
        self.c = _client("listener-%s-%s" % (name, time.monotonic_ns()), *broker.credentials(user))
        self.c.on_connect = lambda c, u, f, r, p=None: c.subscribe("#", qos=1)
        self.c.on_message = self._msg
        self.c.connect(broker.host, broker.port)
        self.c.loop_start()

    def _msg(self, c, u, msg):
        with self.lock:
            self.msgs.append((time.time(), msg.topic, bytes(msg.payload)))

    def take(self):
        with self.lock:
            out, self.msgs = self.msgs, []
        return out

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


@pytest.fixture()
def room(tmp_path):
    mosquitto()
    broker = Broker(str(tmp_path / "broker"))
    with VirtualShoe() as shoe:
        shoe.start(ready_line="ready", timeout=20)
        c = shoe.connect()
        c.call("config", "holdem", 0b1111110, 6, "tda2024", "{}")
        c.close()
        password = broker.add_user(shoe.key.device)
        broker.start()
        ledger = Ledger(str(tmp_path / "room.sqlite"))
        service = LedgerService(ledger, broker.host, broker.port,
                                broker.credentials("ledger")[1]).start()
        sink = MqttSink(broker.host, broker.port, user_name(shoe.key.device), password,
                        name="T7")
        server = Server(shoe.port, keys.Key(shoe.key.device, "table",
                                            shoe.key.for_role(W.ROLE_TABLE)),
                        sink=sink, log=lambda text: None)
        server.serve_forever()
        state = {"broker": broker, "ledger": ledger, "service": service, "sink": sink,
                 "server": server, "shoe": shoe, "tmp": tmp_path}
        try:
            yield state
        finally:
            server.close()
            state["service"].stop()
            ledger.close()
            broker.stop()


def play(cl, premature=False):
    cl.call("hand", 0)
    cl.call("deal", 0)
    cl.call("street")
    if premature:
        cl.call("report", 2, 0, 0)
    cl.call("street")
    cl.call("street")
    cl.call("end")


def saved_all(room, timeout=20):
    server, sink = room["server"], room["sink"]
    upto = server.submit(lambda cl: cl.sync())
    end = time.monotonic() + timeout
    while sink.saved() < upto and time.monotonic() < end:
        time.sleep(0.05)
    assert sink.saved() == upto, "the ledger saved up to %d of %d" % (sink.saved(), upto)
    server.submit(lambda cl: None)
    return upto


def ledger_numbers(room):
    return [n for (n,) in room["ledger"].query(
        "SELECT number FROM events WHERE shoe = ? ORDER BY number",
        (room["shoe"].key.device,))]


def test_events_reach_the_ledger_and_only_then_the_shoe_is_acknowledged(room):
    server, sink, service = room["server"], room["sink"], room["service"]
    server.submit(play)
    upto = saved_all(room)
    assert server.client.acked == upto
    assert ledger_numbers(room) == list(range(1, upto + 1))
    hands = room["ledger"].hands_between(room["shoe"].key.device, 0, time.time() + 1)
    assert len(hands) == 1 and hands[0]["status"] == "complete"
    rec = room["ledger"].hand_record(room["shoe"].key.device, hands[0]["hand"])
    assert all(c["card"] != "??" for s in rec["seats"].values() for c in s)
    # a ledger that stops committing holds the acknowledgement back
    service.stop()
    server.submit(lambda cl: (cl.call("hand", 0), cl.call("deal", 0)))
    n = server.submit(lambda cl: cl.sync())
    time.sleep(1)
    assert n > upto and server.client.acked == upto and sink.saved() == upto
    # ... and a new one (the same persistent session) takes what the broker kept for it
    room["service"] = LedgerService(room["ledger"], room["broker"].host, room["broker"].port,
                                    room["broker"].credentials("ledger")[1]).start()
    server.submit(lambda cl: cl.call("end"))
    upto = saved_all(room)
    assert ledger_numbers(room) == list(range(1, upto + 1))
    assert server.client.acked == upto


def test_nothing_is_lost_through_a_broker_killed_and_restarted(room):
    server, sink, broker = room["server"], room["sink"], room["broker"]
    server.submit(play)
    first = saved_all(room)
    time.sleep(1.5)  # (the broker's autosave: the ledger's session is on its disk)
    broker.kill()
    server.submit(lambda cl: play(cl, premature=True))  # the table does not wait for it
    n = server.submit(lambda cl: cl.sync())
    time.sleep(0.5)
    assert sink.saved() == first and server.client.acked == first
    broker.start()
    upto = saved_all(room, timeout=30)
    assert upto == n
    assert ledger_numbers(room) == list(range(1, n + 1))
    assert len(room["ledger"].hands_between(room["shoe"].key.device, 0, time.time() + 1)) == 2


def test_duplicates_are_dropped_by_key(room):
    server, sink, service = room["server"], room["sink"], room["service"]
    server.submit(play)
    upto = saved_all(room)
    sink._republish()  # what a reconnect does: everything not yet covered by the marker
    sink._pub_events([tuple(r) for r in room["ledger"].query(
        "SELECT number, hand, op, a, b, c, t FROM events WHERE shoe = ? AND number <= 5",
        (room["shoe"].key.device,))])
    end = time.monotonic() + 10
    while service.counts["duplicates"] < 5 and time.monotonic() < end:
        time.sleep(0.05)
    assert service.counts["duplicates"] >= 5
    assert ledger_numbers(room) == list(range(1, upto + 1))


def test_a_shoe_publishes_only_its_own_topics(room):
    broker = room["broker"]
    floor = Listener(broker, "floor", "floor")
    other = broker.add_user("shoe-other")
    broker.stop()
    broker.start()  # (the new user's password written)
    time.sleep(0.5)
    room["server"].submit(lambda cl: None)
    intruder = _client("intruder", "shoe-other", other)
    intruder.connect(broker.host, broker.port)
    intruder.loop_start()
    dev = user_name(room["shoe"].key.device)
    fake = json.dumps({"epoch": 1, "events": [[999, 1, 1, 0, 0, 17, time.time()]]})
    for topic in ("facedown/room/%s/events" % dev, "facedown/room/%s/saved" % dev,
                  "facedown/ledger/%s/hand" % dev):
        intruder.publish(topic, fake, qos=1).wait_for_publish(5)
    intruder.publish("facedown/room/shoe-other/status", json.dumps({"state": "idle"}),
                     qos=1).wait_for_publish(5)
    time.sleep(1)
    got = floor.take()
    topics = [t for _, t, _ in got]
    assert "facedown/room/shoe-other/status" in topics  # its own topic: through
    # another shoe's: dropped (the forged event is number 999 of epoch 1: "[999," in a payload,
    # not "999" anywhere, which a timestamp can hold)
    assert not [p for _, t, p in got if b"[999," in p.replace(b" ", b"")]
    assert 999 not in ledger_numbers(room)
    intruder.disconnect()
    intruder.loop_stop()
    floor.close()


def test_secrecy_a_subscriber_to_everything_sees_no_down_card_of_a_live_hand(room):
    broker, server = room["broker"], room["server"]
    fw = firmware_imports()
    floor = Listener(broker, "floor", "floor")
    everything = Listener(broker, "ledger", "all")  # the user that may read the most
    time.sleep(0.5)
    for premature in (False, True):
        server.submit(lambda cl: (cl.call("hand", 0), cl.call("deal", 0), cl.call("street")))
        if premature:
            server.submit(lambda cl: cl.call("report", 2, 0, 0))
        server.submit(lambda cl: cl.sync())
        table = server.submit(lambda cl: cl.status())["table"]  # the table session's view
        down = set(c["card"] for s in table["seats"].values() for c in s if not c["up"])
        down |= set(table["burns"]) | set(table["muck"]) | set(table["aside"])
        assert len(down) >= 12
        time.sleep(0.5)
        live = floor.take() + everything.take()
        t_end = time.time()
        server.submit(lambda cl: cl.call("end"))
        saved_all(room)
        time.sleep(0.3)
        after = everything.take()
        floor.take()
        assert live, "the live topics carried nothing"
        for t, topic, payload in live:
            assert "/ledger/" not in topic  # no hand record before the hand has ended
            text = payload.decode()
            for card in down:  # a card as a token of its own, not "2c" inside "sim-f2c6..."
                assert not re.search(r"(?<![0-9A-Za-z])%s(?![0-9A-Za-z])" % card, text), \
                    (topic, card)
            if topic.endswith("/events"):
                for n, hand, op, a, b, c, tt in json.loads(payload)["events"]:
                    if op == fw.zones.OP_MOVE and not c & 0x80 and c != fw.zones.BOARD:
                        assert a == W.HIDDEN
        records = [json.loads(p) for t, topic, p in after if topic.endswith("/hand")]
        assert len(records) == 1 and all(t >= t_end for t, topic, p in after
                                         if topic.endswith("/hand"))
        codes = set(e[2] for e in records[0]["entries"] if e[1] == fw.zones.OP_MOVE)
        assert set(fw.cards.parse(c) for c in down) <= codes  # the full record, once ended
    floor.close()
    everything.close()


def test_the_broker_configuration_keeps_what_mosquitto_defaults_lose(tmp_path):
    mosquitto()
    b = Broker(str(tmp_path / "b"))
    b.write()
    conf = open(str(tmp_path / "b" / "mosquitto.conf")).read()
    for line in ("persistence true", "autosave_interval 1", "max_queued_messages 1000000",
                 "allow_anonymous false", "max_queued_bytes 0"):
        assert line in conf.splitlines()
    acl = open(str(tmp_path / "b" / "acl")).read()
    assert "pattern write facedown/room/%u/events" in acl
    with b:
        anon = _client("anon", "nobody", "wrong")
        rc = []
        anon.on_connect = lambda c, u, f, r, p=None: rc.append(r)
        anon.connect(b.host, b.port)
        anon.loop_start()
        end = time.monotonic() + 5
        while not rc and time.monotonic() < end:
            time.sleep(0.05)
        anon.loop_stop()
        assert rc and rc[0].is_failure  # a wrong password is refused
