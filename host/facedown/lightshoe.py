"""A lighter simulated shoe for a room's demo and benchmark: no firmware, but the same topics
and the same guarantees as a served shoe, because it hands its events to the same MqttSink a
`facedown serve --mqtt` uses (numbered events keyed by boot epoch, kept until the ledger's
retained saved marker covers them, published again after a reconnect; masked live, the full
record only after the hand's end). It deals Hold'em hands at a chosen event rate, with now and
then a jam (a mechanism stop, then the card comes out) and a misdeal."""

import random
import threading
import time

from .engine import firmware_imports
from .mqtt import MqttSink

SEATS = 9
CONFIG = {"game": "holdem", "rules": "tda2024", "house": {}, "seats": list(range(1, SEATS + 1))}


def hand_entries(rng, jam=False, misdeal=False):
    """One hold'em hand's entries (op, a, b, c) as a shoe reports them: two down cards a seat,
    burns and the board face up, then the hand's end (or a misdeal); a jam stops the flop."""
    fw = firmware_imports()
    F = fw.faults

    z = fw.zones
    deck = [fw.cards.parse(r + s) for r in "23456789TJQKA" for s in "cdhs"]
    rng.shuffle(deck)
    out = [(z.OP_SHUFFLE, 0, 52, 0), (z.OP_CUT, rng.randrange(10, 40), 0, 0)]
    for _ in range(2):
        for seat in range(1, SEATS + 1):
            out.append((z.OP_MOVE, deck.pop(), 0, z.SEAT0 + seat))
    if misdeal:
        return out + [(z.OP_STATUS, 2, 0, 0)]
    for street, n in enumerate((3, 1, 1)):
        out.append((z.OP_MOVE, deck.pop(), 0, z.BURNS))
        if jam and street == 0:
            out.append((z.OP_FAULT, F.FAULTS[0][0], z.BOARD, 3))
        for _ in range(n):
            out.append((z.OP_MOVE, deck.pop(), 0, z.BOARD | 0x80))
    return out + [(z.OP_STATUS, 1, 0, 0)]


class LightShoe:
    """A simulated shoe `shoe` (its broker user and password) offering `rate` events a second
    to the room's broker through MqttSink, from a thread of its own."""

    def __init__(self, shoe, host, port, password, rate=0.4, table=None, dealer=None, seed=0,
                 jams=0.02, misdeals=0.01, boots=1):
        self.shoe = shoe
        self.rate = rate
        self.rng = random.Random(seed)
        self.jams, self.misdeals = jams, misdeals
        self.boots = boots
        self.sink = MqttSink(host, port, shoe, password, name=shoe, table=table, dealer=dealer)
        self.number = 0
        self.hand = 0
        self.offered = 0
        self.stop_flag = threading.Event()
        self.thread = None

    def start(self):
        self.sink.start(self.shoe, self.boots, {"next": 1, "info": {}})
        self.sink.status_from({"table": {"status": "idle"}, "hand": 0})
        self.thread = threading.Thread(target=self._run, daemon=True, name="light-" + self.shoe)
        self.thread.start()
        return self

    def _run(self):
        gap = 1.0 / self.rate
        nxt = time.monotonic() + self.rng.random() * gap
        while not self.stop_flag.is_set():
            self.hand += 1
            self.sink.configure(CONFIG, button=1 + self.hand % SEATS, hand=self.hand)
            entries = hand_entries(self.rng, jam=self.rng.random() < self.jams,
                                   misdeal=self.rng.random() < self.misdeals)
            for entry in entries:
                delay = nxt - time.monotonic()
                if delay > 0 and self.stop_flag.wait(delay):
                    return
                nxt += gap
                self.number += 1
                self.sink.offer(self.number, self.hand, bytes(entry), time.time())
                self.offered += 1

    def pause(self):
        """Stop offering events (what is offered stays until saved)."""
        self.stop_flag.set()
        if self.thread is not None:
            self.thread.join(5)

    def drained(self):
        return self.sink.saved() >= self.number

    def crash(self):
        """The shoe's host dies: its connection drops with no goodbye, the broker publishes
        its last will (offline)."""
        self.pause()
        c = self.sink.client
        c.loop_stop()
        sock = c.socket()
        if sock is not None:
            sock.close()

    def revive(self):
        """The shoe's host is back after a crash(): it connects again, and MqttSink publishes
        whatever the ledger had not marked saved (the shoe kept it)."""
        c = self.sink.client
        c.reconnect()
        c.loop_start()

    def drop_line(self):
        """The network drops the shoe's connection; paho reconnects and MqttSink publishes again
        whatever the ledger has not marked saved."""
        sock = self.sink.client.socket()
        if sock is not None:
            import socket

            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.pause()
        self.sink.close()
