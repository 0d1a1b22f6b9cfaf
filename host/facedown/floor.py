"""The floor's view of the room, fed from the MQTT stream: each table's state (dealing, idle,
stopped and why, fault latched, locked, offline), hand number, hands per hour, its table and
dealer names (the room's configuration first, else what its server published), and the alerts
a floor person acknowledges (mechanism stops, misdeals, locks, offline), logged in the ledger.

It subscribes, as the broker's `floor` user, to the retained status and online topics only:
they carry no card at all (mqtt.py), so nothing here could show a down card or the stub."""

import collections
import json
import threading
import time

from .broker import ROOM
from .mqtt import _client

HOUR = 3600.0
ALERT_STATES = ("stopped", "fault latched", "locked")


def load_names(path):
    """The room's configuration: {"tables": {shoe: {"table": name, "dealer": name}}}."""
    from .errors import UserError

    if not path:
        return {}
    try:
        with open(path) as f:
            doc = json.load(f)
        tables = doc["tables"]
        return {str(k): dict(v) for k, v in tables.items()}
    except OSError as e:
        raise UserError("cannot read the room's configuration %s: %s" % (path, e.strerror))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UserError("%s is not a room configuration" % path,
                        hint='it is JSON: {"tables": {"<shoe id>": {"table": "T1", '
                             '"dealer": "Ann"}}}')


class Floor:
    """Tables and alerts, kept current from the broker; `version` counts the changes, and
    wait(version) returns when there is a newer one (the page's long poll)."""

    def __init__(self, ledger=None, names=None):
        self.ledger = ledger
        self.names = names or {}
        self.tables = {}
        self.hands = collections.defaultdict(collections.deque)   # shoe -> (t, hand)
        self.alerts = []            # open and acknowledged, newest last
        self.version = 0
        self.cv = threading.Condition()
        self.client = None
        self.connected = threading.Event()

    # ---------------------------------------------------------------- the broker

    def subscribe(self, host, port, password, client_id="facedown-floor"):
        c = self.client = _client(client_id, "floor", password)
        c.on_connect = lambda cl, u, f, r, p=None: (
            cl.subscribe([("%s/+/status" % ROOM, 1), ("%s/+/online" % ROOM, 1)]),
            self.connected.set())
        c.on_message = lambda cl, u, msg: self.message(msg.topic, msg.payload)
        c.connect_async(host, port, keepalive=5)
        c.loop_start()
        return self

    def message(self, topic, payload):
        parts = topic.split("/")
        if len(parts) != 4:
            return
        shoe, what = parts[2], parts[3]
        try:
            doc = json.loads(payload)
        except ValueError:
            return
        if not isinstance(doc, dict):
            return
        with self.cv:
            if what == "status":
                self._status(shoe, doc)
            elif what == "online":
                self._online(shoe, doc)
            else:
                return
            self.version += 1
            self.cv.notify_all()

    def _table(self, shoe):
        t = self.tables.get(shoe)
        if t is None:
            t = self.tables[shoe] = {"shoe": shoe, "state": "idle", "kind": None, "hand": None,
                                     "online": True, "misdeals": 0, "per_hour": None,
                                     "table": None, "dealer": None}
        return t

    def _status(self, shoe, doc):
        t = self._table(shoe)
        before, misdeals = t["state"], t["misdeals"]
        for k in ("state", "kind", "hand", "table", "dealer", "name"):
            if k in doc:
                t[k] = doc[k]
        t["misdeals"] = int(doc.get("misdeals") or 0)
        now = time.time()
        if t["hand"] is not None:
            self._count_hand(shoe, t, now)
        if t["state"] in ALERT_STATES and (t["state"] != before or doc.get("kind") !=
                                           t.get("alerted_kind")):
            t["alerted_kind"] = doc.get("kind")
            self._alert(shoe, now, t["state"], doc.get("kind") or "")
        elif t["state"] not in ALERT_STATES:
            t["alerted_kind"] = None
        if t["misdeals"] > misdeals and before is not None:
            self._alert(shoe, now, "misdeal", "hand %s" % t["hand"])

    def _online(self, shoe, doc):
        t = self._table(shoe)
        online = bool(doc.get("online"))
        for k in ("table", "dealer", "name"):
            if doc.get(k):
                t[k] = doc[k]
        if t["online"] and not online:
            self._alert(shoe, time.time(), "offline", "its server or the network is down")
        t["online"] = online

    def _count_hand(self, shoe, t, now):
        seen = self.hands[shoe]
        if not seen or seen[-1][1] != t["hand"]:
            seen.append((now, t["hand"]))
        while len(seen) > 2 and now - seen[0][0] > HOUR:
            seen.popleft()
        (t0, h0), (t1, h1) = seen[0], seen[-1]
        if t1 - t0 >= 30 and h1 > h0:
            t["per_hour"] = round((h1 - h0) * HOUR / (now - t0), 1)

    def _alert(self, shoe, t, kind, detail):
        self.alerts.append({"shoe": shoe, "t": t, "kind": kind, "detail": detail,
                            "acked": None, "acked_by": None})
        if self.ledger is not None:
            self.ledger.add_alert(shoe, t, kind, detail)

    # ---------------------------------------------------------------- the page's API

    def acknowledge(self, shoe, t, kind, who):
        """A floor person acknowledges an alert: logged in the ledger with who and when."""
        with self.cv:
            for a in self.alerts:
                if a["shoe"] == shoe and a["t"] == t and a["kind"] == kind and not a["acked"]:
                    a["acked"], a["acked_by"] = time.time(), who
                    if self.ledger is not None:
                        self.ledger.ack_alert(shoe, t, kind, who)
                    self.version += 1
                    self.cv.notify_all()
                    return True
        return False

    def view(self):
        """What the page shows: no card, ever (the topics it reads have none)."""
        with self.cv:
            tables = []
            for shoe in sorted(self.tables, key=self._order):
                t = self.tables[shoe]
                names = self.names.get(shoe, {})
                tables.append({"shoe": shoe, "table": names.get("table") or t.get("table") or
                               t.get("name") or shoe, "dealer": names.get("dealer") or
                               t.get("dealer") or "", "state": "offline" if not t["online"]
                               else t["state"] or "idle", "kind": t["kind"], "hand": t["hand"],
                               "per_hour": t["per_hour"], "misdeals": t["misdeals"]})
            alerts = [a for a in self.alerts if not a["acked"]][-50:]
            return {"version": self.version, "t": time.time(), "tables": tables,
                    "alerts": alerts, "acked": sum(1 for a in self.alerts if a["acked"])}

    def _order(self, shoe):
        name = self.names.get(shoe, {}).get("table") or self.tables[shoe].get("table") or shoe
        digits = "".join(ch for ch in name if ch.isdigit())
        return (name.rstrip("0123456789"), int(digits) if digits else 0, name)

    def wait(self, version, timeout=10.0):
        end = time.monotonic() + timeout
        with self.cv:
            while self.version <= version and time.monotonic() < end:
                self.cv.wait(max(0.0, end - time.monotonic()))
            return self.version

    def close(self):
        if self.client is not None:
            self.client.disconnect()
            self.client.loop_stop()
