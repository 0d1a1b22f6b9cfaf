"""The room's event stream on MQTT (paho-mqtt, Mosquitto): each served shoe's server publishes
its own topics, the room's ledger service commits them and answers with a retained "saved up
to n" marker per shoe, which is what the server acknowledges to the shoe (docs/room.md).

Topics (ROOM = facedown/room, LEDGER = facedown/ledger), all QoS 1:
  ROOM/<shoe>/events   live events, masked as the shoe masks them for anyone (no down card)
  ROOM/<shoe>/status   retained: the table's state for the floor (no card at all)
  ROOM/<shoe>/online   retained: {"online": true}; the last will says false
  ROOM/<shoe>/saved    retained, by the ledger: {"epoch": e, "saved": n, "hand": h}
  LEDGER/<shoe>/hand   a finished hand's full record (down cards and all), after its end;
                       only the ledger user may read it
Every session is persistent (clean_session false, a fixed client id): a broker restarted,
or a ledger away for minutes, loses nothing the broker had accepted. Events are keyed (shoe,
boot epoch, number): whatever comes twice is dropped by key."""

import json
import threading
import time

from .broker import LEDGER, ROOM, user_name
from .errors import UserError
from .events import decode
from .ledger import STATUS, HandSink, choose_epoch


def _client(client_id, user, password, manual_ack=False):
    import paho.mqtt.client as mqtt

    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                    clean_session=False, protocol=mqtt.MQTTv311, manual_ack=manual_ack)
    c.username_pw_set(user, password)
    c.max_queued_messages_set(0)     # (no limit: paho keeps QoS 1 messages until PUBACK)
    c.max_inflight_messages_set(100)
    c.reconnect_delay_set(0.2, 2)
    return c


def _topic(shoe, what, base=ROOM):
    return "%s/%s/%s" % (base, user_name(shoe), what)


class MqttSink(HandSink):
    """facedown serve's sink in a room: publishes the shoe's topics; saved() is the ledger's
    retained marker. Until the marker covers them, the live events and the hand records are
    kept here too and published again after a reconnect (the ledger drops duplicates)."""

    def __init__(self, host, port, user, password, name=None, table=None, dealer=None):
        HandSink.__init__(self, name)
        self.host, self.port = host, port
        self.user, self.password = user, password
        self.table, self.dealer = table, dealer
        self.marker = None         # (epoch, saved, hand_upto) from the retained message
        self.unsaved = []          # live rows not covered by the marker
        self.hands = []            # (last number, payload) of hand records not covered yet
        self.connected = threading.Event()
        self.got_marker = threading.Event()
        self.lock = threading.Lock()
        self.state = {}
        self.published = 0
        self.base = 1              # the first event number this server took up (resume)
        self.client = None

    # ---------------------------------------------------------------- the connection

    def _open(self, shoe, boots, info):
        self.shoe = shoe
        c = self.client = _client("facedown-server-%s" % user_name(shoe), self.user,
                                  self.password)
        c.will_set(_topic(shoe, "online"), json.dumps({"online": False}), qos=1, retain=True)
        c.on_connect = self._on_connect
        c.on_message = self._on_message
        c.connect_async(self.host, self.port, keepalive=5)
        c.loop_start()
        if not self.connected.wait(10):
            raise UserError("the room's broker at %s:%d does not answer" % (self.host, self.port),
                            hint="is mosquitto running (facedown room starts one)?")
        self.got_marker.wait(1.0)  # a retained marker comes at once, if there is one
        last, saved = (self.marker[0], self.marker[1]) if self.marker else (None, 0)
        return choose_epoch(last, saved, boots, info)

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if getattr(reason, "is_failure", False) or (isinstance(reason, int) and reason):
            print("mqtt: the broker refused %s: %s" % (self.user, reason), flush=True)
            return
        client.subscribe(_topic(self.shoe, "saved"), qos=1)
        client.publish(_topic(self.shoe, "online"), json.dumps(
            {"online": True, "t": time.time(), "name": self.name, "table": self.table,
             "dealer": self.dealer}), qos=1, retain=True)
        if self.connected.is_set():  # a reconnect: again what the ledger may not have
            self._republish()
        if self.state:
            self._publish_status()
        self.connected.set()

    def _on_message(self, client, userdata, msg):
        try:
            m = json.loads(msg.payload)
            marker = (int(m["epoch"]), int(m["saved"]), int(m.get("hand", 0)))
        except (ValueError, KeyError, TypeError):
            return
        with self.lock:
            self.marker = marker
            if self.epoch and marker[0] == self.epoch:
                self.unsaved = [r for r in self.unsaved if r[0] > marker[1]]
                self.hands = [h for h in self.hands if h[0] > marker[2]]
        self.got_marker.set()

    def _republish(self):
        with self.lock:
            rows, hands = list(self.unsaved), list(self.hands)
        for i in range(0, len(rows), 100):
            self._pub_events(rows[i:i + 100])
        for _last, payload in hands:
            self.client.publish(_topic(self.shoe, "hand", LEDGER), payload, qos=1)

    # ---------------------------------------------------------------- HandSink

    def _pub_events(self, rows):
        self.client.publish(_topic(self.shoe, "events"), json.dumps(
            {"epoch": self.epoch, "base": self.base, "events": [list(r) for r in rows]},
            separators=(",", ":")), qos=1)
        self.published += len(rows)

    def _live(self, events):
        with self.lock:
            self.unsaved.extend(events)
        self._pub_events(events)
        self._track(events)

    def _hand(self, hand, entries, meta):
        payload = json.dumps({"epoch": self.epoch, "hand": hand, "meta": meta,
                              "entries": [list(e) for e in entries]}, separators=(",", ":"))
        with self.lock:
            self.hands.append((entries[-1][0], payload))
        self.client.publish(_topic(self.shoe, "hand", LEDGER), payload, qos=1)

    def _config(self, config):
        self.state["game"] = config.get("game")
        self.state["rules"] = config.get("rules")
        self._publish_status()

    def saved(self):
        m = self.marker
        return m[1] if m is not None and m[0] == self.epoch else 0

    # ---------------------------------------------------------------- the floor's view

    def _track(self, events):
        """The table's state from its (masked) events: dealing, idle, stopped (and why)."""
        from .engine import firmware_imports

        z, F = firmware_imports().zones, firmware_imports().faults

        changed = False
        for number, hand, op, a, b, c, t in events:
            if self.state.get("hand") != hand:
                self.state.update(hand=hand, state="dealing", kind=None, t_hand=t)
                changed = True
            event, fields = decode(bytes((op, a, b, c)))
            if event == "status" and fields["status"] in (1, 2, 3):
                self.state.update(state="idle", last=STATUS[fields["status"]], kind=None)
                changed = True
            elif event == "fault":
                kind = F.kind(fields["kind"])
                self.state.update(state="fault latched" if kind in ("entropy", "latched") else "stopped",
                                  kind=kind)
                changed = True
            elif event == "move" and self.state.get("state") == "stopped":
                self.state.update(state="dealing", kind=None)  # a card came out: going again
                changed = True
            if op == z.OP_STATUS and a == 2:
                self.state["misdeals"] = self.state.get("misdeals", 0) + 1
        if changed:
            self.state["t"] = time.time()
            self._publish_status()

    def status_from(self, st):
        """The shoe's own status (public) at start: locked, a standing fault."""
        if st.get("locked"):
            self.state.update(state="locked", kind=st["locked"])
        elif st.get("latched"):
            self.state.update(state="fault latched", kind=st["latched"])
        elif st.get("fault"):
            self.state.update(state="stopped", kind=st["fault"].get("kind"))
        elif self.state.get("state") is None:
            table = st.get("table")
            self.state.update(state="dealing" if table and table.get("status") == "dealing"
                              else "idle", hand=st.get("hand"))
        self._publish_status()

    def _publish_status(self):
        if self.client is None:
            return
        doc = dict(self.state, shoe=self.shoe, name=self.name, table=self.table,
                   dealer=self.dealer, epoch=self.epoch, t=time.time())
        self.client.publish(_topic(self.shoe, "status"), json.dumps(doc), qos=1, retain=True)

    def close(self):
        HandSink.close(self)
        if self.client is not None:
            # a server that stops on purpose says so (the will is for a crash)
            info = self.client.publish(_topic(self.shoe, "online"), json.dumps(
                {"online": False, "t": time.time()}), qos=1, retain=True)
            try:
                info.wait_for_publish(2)
            except Exception:
                pass
            self.client.disconnect()
            self.client.loop_stop()


class LedgerService:
    """The room's ledger: takes every shoe's live events and hand records from the broker
    (persistent session, QoS 1, each message acknowledged to the broker only after its commit),
    drops duplicates by key, and publishes each shoe's retained saved marker."""

    def __init__(self, ledger, host, port, password, user="ledger", client_id="facedown-ledger"):
        self.ledger = ledger
        self.host, self.port = host, port
        self.user, self.password = user, password
        self.client_id = client_id
        self.queue = []
        self.cv = threading.Condition()
        self.saved = {}            # shoe -> [epoch, saved, hand_upto]
        self.stop_flag = False
        self.counts = {"events": 0, "duplicates": 0, "hands": 0, "messages": 0}
        self.latency = []          # event time at the server -> committed here (seconds)
        self.connected = threading.Event()
        self.client = None
        self.thread = None

    def start(self):
        c = self.client = _client(self.client_id, self.user, self.password, manual_ack=True)
        c.on_connect = self._on_connect
        c.on_message = self._on_message
        c.connect_async(self.host, self.port, keepalive=5)
        c.loop_start()
        self.thread = threading.Thread(target=self._work, daemon=True, name="ledger-service")
        self.thread.start()
        if not self.connected.wait(10):
            raise UserError("the room's broker at %s:%d does not answer" % (self.host, self.port))
        return self

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        client.subscribe([("%s/+/events" % ROOM, 1), ("%s/+/hand" % LEDGER, 1)])
        self.connected.set()

    def _on_message(self, client, userdata, msg):
        with self.cv:
            self.queue.append(msg)
            self.cv.notify()

    def _work(self):
        while True:
            with self.cv:
                while not self.queue and not self.stop_flag:
                    self.cv.wait(0.5)
                if self.stop_flag and not self.queue:
                    return
                batch, self.queue = self.queue, []
            while True:
                try:
                    self._commit(batch)
                    break
                except self.ledger.errors as e:  # the database is away: nothing acked, again
                    print("ledger service: %s; retrying" % str(e).strip().splitlines()[0],
                          flush=True)
                    time.sleep(1)
                    if self.stop_flag:
                        return
            for msg in batch:
                self.client.ack(msg.mid, msg.qos)

    def _commit(self, batch):
        now = time.time()
        touched = {}
        for msg in batch:
            self.counts["messages"] += 1
            parts = msg.topic.split("/")
            shoe, what = parts[2], parts[3]
            try:
                m = json.loads(msg.payload)
                epoch = int(m["epoch"])
            except (ValueError, KeyError, TypeError):
                continue  # not ours: acknowledged and dropped
            mark = self._marker(shoe, epoch)
            if what == "events" and mark[1] < int(m.get("base", 1)) - 1:
                # the server took the stream up here: what came before was acknowledged to
                # another host (or is in the ledger under an older epoch), it is not coming
                mark[1] = int(m["base"]) - 1
            if what == "events":
                rows = [tuple(r) for r in m["events"]]
                dup = self.ledger.add_events(shoe, epoch, rows)
                self.counts["events"] += len(rows) - dup
                self.counts["duplicates"] += dup
                self.latency.extend(now - r[-1] for r in rows)
            elif what == "hand":
                entries = [tuple(e) for e in m["entries"]]
                self.ledger.add_hand(shoe, epoch, int(m["hand"]), entries, m["meta"])
                self.counts["hands"] += 1
                mark[2] = max(mark[2], entries[-1][0])
            touched[shoe] = mark
        for shoe, mark in touched.items():
            mark[1] = self._contiguous(shoe, mark[0], mark[1])
            self.ledger.execute("UPDATE shoes SET saved = ? WHERE shoe = ? AND epoch = ?",
                                (mark[1], shoe, mark[0]))
            self.ledger.db.commit()
            self.client.publish(_topic(shoe, "saved"), json.dumps(
                {"epoch": mark[0], "saved": mark[1], "hand": mark[2]}), qos=1, retain=True)

    def _marker(self, shoe, epoch):
        mark = self.saved.get(shoe)
        if mark is None or mark[0] != epoch:
            last, saved = self.ledger.last_epoch(shoe)
            mark = [epoch, saved if last == epoch else 0, 0]
            if last != epoch:
                with self.ledger.lock:
                    self.ledger._mark(self.ledger.db.cursor(), shoe, epoch, 0)
                    self.ledger.db.commit()
            self.saved[shoe] = mark
        return mark

    def _contiguous(self, shoe, epoch, saved):
        """The highest n with every event 1..n (past saved) in the ledger."""
        rows = self.ledger.query("SELECT number FROM events WHERE shoe = ? AND epoch = ? AND "
                                 "number > ? ORDER BY number LIMIT 100000", (shoe, epoch, saved))
        for (n,) in rows:
            if n != saved + 1:
                break
            saved = n
        return saved

    def stop(self):
        with self.cv:
            self.stop_flag = True
            self.cv.notify()
        if self.thread is not None:
            self.thread.join(10)
        if self.client is not None:
            self.client.disconnect()
            self.client.loop_stop()
