"""The hand ledger: every event of every shoe, keyed (shoe, boot epoch, number), and every
finished hand's full record, in SQLite (one file, the default) or PostgreSQL (a room's), with
the same schema and the same code; the floor's queries (docs/ledger.md).

Secrecy: while a hand is live the ledger holds its events as anyone may see them (a face-down
card is HIDDEN); the hand's full record, down cards and all, is written in one transaction
once the hand has ended. Nothing of the stub is ever here (the shoe never sends it)."""

import json
import os
import sqlite3
import threading
import time

from .engine import firmware_imports, wire
from .errors import UserError
from .events import decode, mask

W = wire()

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS shoes (
        shoe TEXT PRIMARY KEY, name TEXT, table_name TEXT, dealer TEXT, epoch BIGINT,
        saved BIGINT NOT NULL DEFAULT 0, game TEXT, rules TEXT, house TEXT, seats TEXT,
        t_config DOUBLE PRECISION)""",
    """CREATE TABLE IF NOT EXISTS events (
        shoe TEXT NOT NULL, epoch BIGINT NOT NULL, number BIGINT NOT NULL,
        hand INTEGER NOT NULL, op SMALLINT NOT NULL, a SMALLINT NOT NULL, b SMALLINT NOT NULL,
        c SMALLINT NOT NULL, t DOUBLE PRECISION NOT NULL, final SMALLINT NOT NULL DEFAULT 0,
        PRIMARY KEY (shoe, epoch, number))""",
    "CREATE INDEX IF NOT EXISTS events_hand ON events (shoe, hand, epoch)",
    """CREATE TABLE IF NOT EXISTS hands (
        shoe TEXT NOT NULL, epoch BIGINT NOT NULL, hand INTEGER NOT NULL,
        first BIGINT NOT NULL, last BIGINT NOT NULL, started DOUBLE PRECISION NOT NULL,
        ended DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, game TEXT, rules TEXT,
        house TEXT, seats TEXT, button INTEGER, procedures INTEGER NOT NULL DEFAULT 0,
        faults INTEGER NOT NULL DEFAULT 0, partial SMALLINT NOT NULL DEFAULT 0,
        PRIMARY KEY (shoe, epoch, hand))""",
    "CREATE INDEX IF NOT EXISTS hands_time ON hands (shoe, started)",
    """CREATE TABLE IF NOT EXISTS alerts (
        shoe TEXT NOT NULL, t DOUBLE PRECISION NOT NULL, kind TEXT NOT NULL,
        detail TEXT NOT NULL, acked DOUBLE PRECISION, acked_by TEXT,
        PRIMARY KEY (shoe, t, kind))""",
)
STATUS = ("dealing", "complete", "misdeal", "void")
BUTTON_WAIT = 3.0  # seconds a finished hand's record waits for its button (LedgerSink)
SHIFT_HOURS = 8  # faults per shift: shifts of this many hours from midnight UTC


def default_path():
    from . import keys

    return os.path.join(keys.home(), "ledger.sqlite")


class Ledger:
    """One connection to the ledger (SQLite file or postgresql:// URL). Thread-safe: one lock
    around each transaction."""

    def __init__(self, url=None):
        self.url = url or default_path()
        self.lock = threading.RLock()
        if self.url.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg
            except ImportError:
                raise UserError("PostgreSQL needs psycopg", hint="pip install 'psycopg[binary]'")
            try:
                self.db = psycopg.connect(self.url, autocommit=False)
            except psycopg.Error as e:
                raise UserError("cannot reach the ledger at %s: %s" % (
                    _safe(self.url), str(e).strip().splitlines()[0]),
                    hint="is PostgreSQL running (`.ci/services` starts one)?")
            self.kind = "postgresql"
            self.mark = "%s"
            self.errors = (psycopg.Error,)
        else:
            path = self.url[len("sqlite:///"):] if self.url.startswith("sqlite:///") else self.url
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a commit is on the disk
            self.kind = "sqlite"
            self.mark = "?"
            self.errors = (sqlite3.Error,)
        with self.lock:
            cur = self.db.cursor()
            for stmt in SCHEMA:
                cur.execute(stmt)
            self.db.commit()

    def close(self):
        try:
            self.db.close()
        except Exception:
            pass

    def _sql(self, text):
        return text if self.mark == "?" else text.replace("?", "%s")

    def execute(self, text, args=()):
        cur = self.db.cursor()
        cur.execute(self._sql(text), args)
        return cur

    def query(self, text, args=()):
        with self.lock:
            rows = self.execute(text, args).fetchall()
            self.db.commit()
            return rows

    # ------------------------------------------------------------------ writing

    def add_events(self, shoe, epoch, rows, saved=None):
        """Live events (masked) [(number, hand, op, a, b, c, t)], one transaction; with saved,
        the shoe's saved marker moves to it in the same transaction. Returns the number of
        duplicates dropped (already there by their key)."""
        with self.lock:
            cur = self.db.cursor()
            dup = 0
            sql = self._sql("INSERT INTO events (shoe, epoch, number, hand, op, a, b, c, t) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
            for r in rows:
                cur.execute(sql, (shoe, epoch) + tuple(r))
                if cur.rowcount == 0:
                    dup += 1
            if saved is not None:
                self._mark(cur, shoe, epoch, saved)
            self.db.commit()
            return dup

    def add_hand(self, shoe, epoch, hand, entries, meta):
        """A finished hand: its full entries [(number, op, a, b, c, t)] (down cards and all)
        and meta (status, game, rules, house, seats, button, partial), one transaction."""
        fw = firmware_imports()
        z = fw.zones
        with self.lock:
            cur = self.db.cursor()
            ins = self._sql(
                "INSERT INTO events (shoe, epoch, number, hand, op, a, b, c, t, final) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (shoe, epoch, number) DO "
                "UPDATE SET a = excluded.a, final = 1")
            for number, op, a, b, c, t in entries:
                cur.execute(ins, (shoe, epoch, number, hand, op, a, b, c, t))
            first, last = entries[0][0], entries[-1][0]
            procs = sum(1 for e in entries if e[1] == z.OP_PROC)
            faults = sum(1 for e in entries if e[1] == z.OP_FAULT)
            cur.execute(self._sql(
                "INSERT INTO hands (shoe, epoch, hand, first, last, started, ended, status, "
                "game, rules, house, seats, button, procedures, faults, partial) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
                (shoe, epoch, hand, first, last, entries[0][5], entries[-1][5],
                 meta.get("status", "complete"), meta.get("game"), meta.get("rules"),
                 json.dumps(meta.get("house") or {}), json.dumps(meta.get("seats") or []),
                 meta.get("button"), procs, faults, 1 if meta.get("partial") else 0))
            self.db.commit()
            return last

    def _mark(self, cur, shoe, epoch, number):
        cur.execute(self._sql("INSERT INTO shoes (shoe, epoch, saved) VALUES (?, ?, ?) ON "
                              "CONFLICT (shoe) DO NOTHING"), (shoe, epoch, number))
        cur.execute(self._sql("UPDATE shoes SET epoch = ?, saved = ? WHERE shoe = ? AND "
                              "(epoch IS NULL OR epoch < ? OR (epoch = ? AND saved < ?))"),
                    (epoch, number, shoe, epoch, epoch, number))

    def saved(self, shoe, epoch):
        rows = self.query("SELECT epoch, saved FROM shoes WHERE shoe = ?", (shoe,))
        if not rows or rows[0][0] != epoch:
            return 0
        return rows[0][1]

    def last_epoch(self, shoe):
        rows = self.query("SELECT epoch, saved FROM shoes WHERE shoe = ?", (shoe,))
        return (rows[0][0], rows[0][1]) if rows and rows[0][0] is not None else (None, 0)

    def set_config(self, shoe, config, t=None):
        """The house settings in force on a shoe (from its status: game, seats, rules, house)."""
        with self.lock:
            cur = self.db.cursor()
            cur.execute(self._sql("INSERT INTO shoes (shoe) VALUES (?) ON CONFLICT (shoe) DO "
                                  "NOTHING"), (shoe,))
            cur.execute(self._sql("UPDATE shoes SET game = ?, rules = ?, house = ?, seats = ?, "
                                  "t_config = ? WHERE shoe = ?"),
                        (config.get("game"), config.get("rules"),
                         json.dumps(config.get("house") or {}),
                         json.dumps(config.get("seats") or []), t or time.time(), shoe))
            self.db.commit()

    def set_names(self, shoe, name=None, table=None, dealer=None):
        with self.lock:
            cur = self.db.cursor()
            cur.execute(self._sql("INSERT INTO shoes (shoe) VALUES (?) ON CONFLICT (shoe) DO "
                                  "NOTHING"), (shoe,))
            cur.execute(self._sql("UPDATE shoes SET name = ?, table_name = ?, dealer = ? "
                                  "WHERE shoe = ?"), (name, table, dealer, shoe))
            self.db.commit()

    def add_alert(self, shoe, t, kind, detail):
        with self.lock:
            self.execute("INSERT INTO alerts (shoe, t, kind, detail) VALUES (?, ?, ?, ?) ON "
                         "CONFLICT DO NOTHING", (shoe, t, kind, detail))
            self.db.commit()

    def ack_alert(self, shoe, t, kind, who):
        """A floor person acknowledges an alert (logged with who and when). False if there
        is no such alert."""
        with self.lock:
            cur = self.execute("UPDATE alerts SET acked = ?, acked_by = ? WHERE shoe = ? AND "
                               "t = ? AND kind = ? AND acked IS NULL",
                               (time.time(), who, shoe, t, kind))
            self.db.commit()
            return cur.rowcount > 0

    def alerts(self, shoe=None, open_only=False):
        where, args = [], []
        if shoe:
            where.append("shoe = ?")
            args.append(shoe)
        if open_only:
            where.append("acked IS NULL")
        sql = "SELECT shoe, t, kind, detail, acked, acked_by FROM alerts"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [dict(zip(("shoe", "t", "kind", "detail", "acked", "acked_by"), r))
                for r in self.query(sql + " ORDER BY t", tuple(args))]

    # ------------------------------------------------------------------ the floor's queries

    def hands_between(self, shoe, t0, t1):
        """Hands at table (shoe) started between t0 and t1 (Unix seconds)."""
        rows = self.query("SELECT hand, epoch, started, ended, status, game, procedures, "
                          "faults FROM hands WHERE shoe = ? AND started >= ? AND started < ? "
                          "ORDER BY started", (shoe, t0, t1))
        return [dict(zip(("hand", "epoch", "started", "ended", "status", "game", "procedures",
                          "faults"), r)) for r in rows]

    def _hand_row(self, shoe, hand, epoch=None):
        sql = ("SELECT epoch, first, last, started, ended, status, game, rules, house, seats, "
               "button, partial FROM hands WHERE shoe = ? AND hand = ?")
        args = (shoe, hand)
        if epoch is not None:
            sql += " AND epoch = ?"
            args += (epoch,)
        rows = self.query(sql + " ORDER BY epoch DESC LIMIT 1", args)
        if not rows:
            raise UserError("no finished hand %d of %s in the ledger" % (hand, shoe),
                            hint="facedown ledger hands --shoe %s lists them" % shoe)
        keys = ("epoch", "first", "last", "started", "ended", "status", "game", "rules",
                "house", "seats", "button", "partial")
        out = dict(zip(keys, rows[0]))
        out["house"] = json.loads(out["house"] or "{}")
        out["seats"] = json.loads(out["seats"] or "[]")
        return out

    def hand_entries(self, shoe, hand, epoch):
        # (SQLite's planner, without statistics, takes the key's (shoe, epoch) and reads all
        # of a table's events: p99 134.7 ms at 1,000,000 hands, 0.79 ms with the index named;
        # benchmarks/room.py)
        hint = " INDEXED BY events_hand" if self.kind == "sqlite" else ""
        return self.query("SELECT number, op, a, b, c, t FROM events%s WHERE shoe = ? AND "
                          "epoch = ? AND hand = ? AND final = 1 ORDER BY number" % hint,
                          (shoe, epoch, hand))

    def card_trail(self, shoe, hand, card, epoch=None):
        """Where card X went in hand H: its every move, and the procedures of the hand with
        their rule references (under the hand's rules)."""
        fw = firmware_imports()
        z = fw.zones
        try:
            code = fw.cards.parse(card) if isinstance(card, str) else card
        except ValueError as e:
            raise UserError(str(e), hint="cards are written like Ah, Td, 2c")
        row = self._hand_row(shoe, hand, epoch)
        moves, procs = [], []
        for number, op, a, b, c, t in self.hand_entries(shoe, hand, row["epoch"]):
            if op in (z.OP_MOVE, z.OP_REMOVE) and a == code:
                moves.append({"event": number, "t": t, "from": z.zone_name(b) if op == z.OP_MOVE
                              else None, "to": "removed" if op == z.OP_REMOVE else
                              z.zone_name(c & 0x7F), "up": bool(c & 0x80)})
            elif op == z.OP_PROC:
                procs.append({"event": number, "t": t, "procedure": fw.procedures.pid(a),
                              "rule": fw.procedures.rule(a, row["rules"] or "tda2024"),
                              "text": fw.procedures.text(a), "seat": b or None})
        return {"shoe": shoe, "hand": hand, "epoch": row["epoch"], "card": fw.cards.name(code),
                "status": row["status"], "rules": row["rules"], "moves": moves,
                "procedures": procs}

    def rates(self, shoe, t0, t1):
        """A table's hands per hour, misdeals per 1,000 hands, and faults per shift between t0
        and t1."""
        rows = self.query("SELECT COUNT(*), SUM(CASE WHEN status = 'misdeal' THEN 1 ELSE 0 END),"
                          " MIN(started), MAX(ended) FROM hands WHERE shoe = ? AND started >= ? "
                          "AND started < ?", (shoe, t0, t1))
        n, misdeals, first, last = rows[0]
        n, misdeals = n or 0, misdeals or 0
        hours = max((min(t1, last or t1) - max(t0, first or t0)) / 3600.0, 1e-9) if n else 0
        shift = SHIFT_HOURS * 3600
        faults = {}
        for t, kind in self.query("SELECT t, a FROM events WHERE shoe = ? AND op = ? AND t >= ?"
                                  " AND t < ?", (shoe, firmware_imports().zones.OP_FAULT, t0, t1)):
            start = int(t // shift) * shift
            key = time.strftime("%Y-%m-%d %H:%M", time.gmtime(start))
            faults[key] = faults.get(key, 0) + 1
        return {"shoe": shoe, "hands": n, "hours": round(hours, 3),
                "hands_per_hour": round(n / hours, 2) if n and hours else 0.0,
                "misdeals": misdeals,
                "misdeals_per_1000": round(1000.0 * misdeals / n, 2) if n else 0.0,
                "faults_per_shift": faults}

    def settings(self, shoe):
        """The house settings in force on a shoe: its game, seats, rules and house settings
        (the profile's values and the overrides), as last configured."""
        rows = self.query("SELECT game, rules, house, seats, t_config, name, table_name, dealer "
                          "FROM shoes WHERE shoe = ?", (shoe,))
        if not rows or rows[0][0] is None:
            raise UserError("the ledger has no configuration of %s" % shoe)
        game, rules, house, seats, t, name, table, dealer = rows[0]
        from . import profiles

        try:
            effective = profiles.effective({"rules": rules, "house": json.loads(house or "{}")})
        except UserError:
            effective = json.loads(house or "{}")
        return {"shoe": shoe, "game": game, "rules": rules, "seats": json.loads(seats or "[]"),
                "house": json.loads(house or "{}"), "in_force": effective, "configured": t,
                "name": name, "table": table, "dealer": dealer}

    def hand_record(self, shoe, hand, epoch=None):
        """A finished hand's full record (the firmware's record format, with its log), rebuilt
        from the ledger's events by the host's mirror."""
        from .mirror import Mirror

        row = self._hand_row(shoe, hand, epoch)
        if row["partial"]:
            raise UserError("hand %d of %s is partial in the ledger (its first events were "
                            "acknowledged before this server took the line)" % (hand, shoe))
        m = Mirror(row["game"], row["seats"], row["button"] or 0, row["rules"] or "tda2024")
        for number, op, a, b, c, t in self.hand_entries(shoe, hand, row["epoch"]):
            m.apply(bytes((op, a, b, c)))
        rec = m.record()
        rec["hand"] = hand
        rec["started"] = row["started"]
        rec["ended"] = row["ended"]
        rec["house"] = row["house"]
        return rec


def _safe(url):
    """A database URL without its password."""
    import re

    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


def choose_epoch(last_epoch, saved, boots, info):
    """The boot epoch of a shoe's events: with a journal the numbering goes on across boots,
    so the epoch stays the last one while the shoe's numbers are past what is saved; without
    one, or when the numbers restarted, it is the shoe's boot count."""
    journal = "CAP_JOURNAL" in info.get("info", {}).get("capabilities", ())
    if last_epoch is None or not journal or info.get("next", 1) <= saved:
        return boots
    return last_epoch


class HandSink:
    """What a server's sink does with the shoe's events, whatever keeps them: live events
    (masked) go on at once, each hand's full entries are gathered and go once the hand has
    ended (with the game, rules, house settings and button). A writer thread does the work,
    so the line never waits. Subclasses: _live(events), _hand(hand, entries, meta),
    saved(), _open(shoe, boots, info) -> epoch."""

    def __init__(self, name=None):
        self.name = name
        self.shoe = None
        self.epoch = 0
        self.upto = self.closed = 0
        self.cur = None        # [hand, entries, partial]
        self.config = {}
        self.buttons = {}
        self.pending = []
        self.cv = threading.Condition()
        self.stop = False
        self.dups = 0
        self.latency = []      # seconds from arrival to commit (or publication), live events
        self.thread = None
        self.errors = ()

    def start(self, shoe, boots, info):
        self.shoe = shoe
        self.epoch = self._open(shoe, boots, info)
        self.closed = self.saved()
        self.thread = threading.Thread(target=self._write, daemon=True, name="sink")
        self.thread.start()
        return self.epoch

    def configure(self, config, button=None, hand=None):
        if config:
            self.config = config
            self._config(config)
        if hand is not None and button is not None:
            self.buttons[hand] = button

    def _config(self, config):
        pass

    def offer(self, number, hand, entry, t):
        kind, fields = decode(entry)
        with self.cv:
            if self.cur is not None and self.cur[0] != hand:
                self._close("void")  # a new hand began without the old one's end: as it was
            if self.cur is None:  # whole if it follows the last hand seen (or is the first)
                self.cur = [hand, [], number not in (1, self.closed + 1)]
            self.cur[1].append((number, entry[0], entry[1], entry[2], entry[3], t))
            self.pending.append(("event", (number, hand) + tuple(mask(entry)) + (t,)))
            if kind == "status" and fields["status"] in (1, 2, 3):
                self._close(STATUS[fields["status"]])
            self.cv.notify()

    def _close(self, status):
        hand, entries, partial = self.cur
        self.cur = None
        self.closed = entries[-1][0]
        meta = dict(status=status, game=self.config.get("game"),
                    rules=self.config.get("rules"), house=self.config.get("house"),
                    seats=self.config.get("seats"), partial=partial)
        self.pending.append(("hand", (hand, entries, meta, time.monotonic())))

    def _write(self):
        while True:
            with self.cv:
                while not self.pending and not self.stop:
                    self.cv.wait(0.5)
                if self.stop and not self.pending:
                    return
                batch, self.pending = self.pending, []
            try:
                rest = self._commit(batch)
            except self.errors as e:  # the database is away: keep all, try again
                print("ledger: %s; retrying" % str(e).strip().splitlines()[0], flush=True)
                rest = batch
                time.sleep(1)
            if rest:
                with self.cv:
                    self.pending[:0] = rest
                time.sleep(0.02)

    def _commit(self, batch):
        """Hand on the batch in order; returns what must wait (from a hand whose button has
        not been read yet on: the server reads it right after the command that started the
        hand)."""
        events = []
        for i, (kind, item) in enumerate(batch):
            if kind == "event":
                events.append(item)
                continue
            hand, entries, meta, t_closed = item
            if hand not in self.buttons and time.monotonic() - t_closed < BUTTON_WAIT:
                self._events(events)
                return batch[i:]
            self._events(events)
            events = []
            meta["button"] = self.buttons.pop(hand, None)
            self._hand(hand, entries, meta)
        self._events(events)
        return []

    def _events(self, events):
        if events:
            self._live(list(events))
            now = time.time()
            self.latency.extend(now - e[-1] for e in events)
            del events[:]

    def close(self):
        with self.cv:
            self.stop = True
            self.cv.notify()
        if self.thread is not None:
            self.thread.join(10)


class LedgerSink(HandSink):
    """The server's own ledger (SQLite by default): live events (masked) committed with the
    saved marker (saved(): what the server may acknowledge to the shoe), each finished hand's
    full record in one transaction. (Holding the shoe's ACKs until a hand's end instead would
    keep a whole hand in go-back-N retransmission: the table would wait on its own events.)"""

    def __init__(self, ledger, name=None):
        HandSink.__init__(self, name)
        self.ledger = ledger
        self.errors = ledger.errors

    def _open(self, shoe, boots, info):
        last, saved = self.ledger.last_epoch(shoe)
        epoch = choose_epoch(last, saved, boots, info)
        self.upto = self.ledger.saved(shoe, epoch)
        if self.name:
            self.ledger.set_names(shoe, self.name)
        return epoch

    def _config(self, config):
        self.ledger.set_config(self.shoe, config)

    def _live(self, events):
        # (the events come in order with no gap: the server's client sees to it)
        upto = max(self.upto, events[-1][0])
        self.dups += self.ledger.add_events(self.shoe, self.epoch, events, saved=upto)
        self.upto = upto

    def _hand(self, hand, entries, meta):
        self.ledger.add_hand(self.shoe, self.epoch, hand, entries, meta)

    def saved(self):
        return self.upto

    def close(self):
        HandSink.close(self)
        self.ledger.close()


# ---------------------------------------------------------------------- queries by name

def parse_time(text, default):
    """Unix seconds from an ISO date/time (UTC) or a number; default when empty."""
    import calendar

    if text in (None, ""):
        return default
    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M",
                "%Y-%m-%d"):
        try:
            return float(calendar.timegm(time.strptime(str(text).rstrip("Z"), fmt)))
        except ValueError:
            continue
    raise UserError("%r is not a time" % (text,),
                    hint="write it as 2026-12-02T18:30 (UTC) or Unix seconds")


def _int(params, name):
    try:
        return int(params[name])
    except KeyError:
        raise UserError("the %s query needs %s" % (params.get("query", ""), name))
    except (TypeError, ValueError):
        raise UserError("%s is a number, not %r" % (name, params[name]))


def _shoe(params):
    if not params.get("shoe"):
        raise UserError("which table? give the shoe's id (--shoe ID)",
                        hint="facedown ledger shoes lists them")
    return params["shoe"]


def run_query(ledger, name, params):
    """One floor query by name (the CLI's `facedown ledger NAME` and the API's
    /api/ledger/NAME): a JSON-ready answer."""
    t0 = parse_time(params.get("from"), 0.0)
    t1 = parse_time(params.get("to"), time.time() + 1)
    if name == "shoes":
        rows = ledger.query("SELECT shoe, name, table_name, dealer, epoch, saved FROM shoes "
                            "ORDER BY shoe")
        return [dict(zip(("shoe", "name", "table", "dealer", "epoch", "saved"), r))
                for r in rows]
    if name == "hands":
        return ledger.hands_between(_shoe(params), t0, t1)
    if name == "card":
        if not params.get("card"):
            raise UserError("the card query needs --card (e.g. Ah)")
        return ledger.card_trail(_shoe(params), _int(params, "hand"), params["card"],
                                 params.get("epoch"))
    if name == "rates":
        return ledger.rates(_shoe(params), t0, t1)
    if name == "settings":
        return ledger.settings(_shoe(params))
    if name == "export":
        return export(ledger, _shoe(params), params)
    raise UserError("no ledger query %r" % (name,),
                    hint="shoes, hands, card, rates, settings, export")


def export(ledger, shoe, params):
    """Finished hands as OHH 1.4 objects (validated) or PHH text: one hand (hand) or those
    started between from and to. Returns {"hands": [...], "skipped": [why, ...]}."""
    from . import ohh, phh

    fmt = params.get("format") or "ohh"
    if fmt not in ("ohh", "phh"):
        raise UserError("export formats are ohh and phh, not %r" % fmt)
    if params.get("hand") not in (None, ""):
        hands = [(_int(params, "hand"), params.get("epoch"))]
    else:
        hands = [(h["hand"], h["epoch"]) for h in ledger.hands_between(
            shoe, parse_time(params.get("from"), 0.0),
            parse_time(params.get("to"), time.time() + 1))]
    out, skipped = [], []
    names = ledger.query("SELECT table_name FROM shoes WHERE shoe = ?", (shoe,))
    table = names[0][0] if names and names[0][0] else shoe
    for hand, epoch in hands:
        try:
            rec = ledger.hand_record(shoe, hand, epoch)
        except UserError as e:
            skipped.append(str(e))
            continue
        row = ledger._hand_row(shoe, hand, epoch)
        if fmt == "phh":
            if rec["status"] != "complete":
                skipped.append("hand %d was a %s" % (hand, rec["status"]))
                continue
            out.append(phh.dumps(rec))
            continue
        why = ohh.exportable(rec)
        if why:
            skipped.append(why)
            continue
        out.append(ohh.to_ohh(rec, shoe, row["epoch"], table_name=table))
    return {"format": fmt, "hands": out, "skipped": skipped}


def add_command(sub):
    p = sub.add_parser("ledger", help="the hand ledger's floor queries: hands, where a card "
                                      "went, rates, house settings, OHH/PHH export")
    p.add_argument("query", choices=("shoes", "hands", "card", "rates", "settings", "export"))
    p.add_argument("--ledger", default=os.environ.get("FACEDOWN_LEDGER"), metavar="URL",
                   help="a SQLite file or postgresql://... (default $FACEDOWN_LEDGER, else "
                        "FACEDOWN_HOME/ledger.sqlite)")
    p.add_argument("--shoe", help="the table's shoe id")
    p.add_argument("--hand", help="card, export: the hand number")
    p.add_argument("--card", help="card: the card, e.g. Ah")
    p.add_argument("--from", dest="from_", metavar="TIME", help="from (UTC, e.g. 2026-12-02T18:00)")
    p.add_argument("--to", metavar="TIME", help="until (UTC)")
    p.add_argument("--format", choices=("ohh", "phh"), default="ohh", help="export's format")
    p.add_argument("--json", action="store_true", help="the answer as JSON")
    p.set_defaults(func=run_command)


def run_command(args):
    url = args.ledger or default_path()
    if not url.startswith(("postgres", "sqlite")) and not os.path.exists(url):
        raise UserError("no ledger at %s" % url,
                        hint="`facedown serve` writes one; or give --ledger URL")
    ledger = Ledger(url)
    try:
        params = {"shoe": args.shoe, "hand": args.hand, "card": args.card, "from": args.from_,
                  "to": args.to, "format": args.format, "query": args.query}
        out = run_query(ledger, args.query, params)
    finally:
        ledger.close()
    if args.json or args.query == "export" and args.format == "ohh":
        if args.query == "export":
            for h in out["hands"]:
                print(json.dumps(h))
        else:
            print(json.dumps(out, indent=1))
    elif args.query == "export":
        print("\n".join(out["hands"]))
    else:
        _print(args.query, out)
    if args.query == "export" and out["skipped"]:
        import sys

        for why in out["skipped"]:
            print("skipped: %s" % why, file=sys.stderr)
    return 0


def _when(t):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) if t else "-"


def _print(query, out):
    if query == "shoes":
        for r in out:
            print("%-24s %-12s %-12s saved up to %s (epoch %s)" % (
                r["shoe"], r["name"] or "-", r["table"] or "-", r["saved"], r["epoch"]))
    elif query == "hands":
        for h in out:
            print("hand %-6d %s .. %s  %-8s %-8s %d procedure(s), %d fault(s)" % (
                h["hand"], _when(h["started"]), _when(h["ended"])[11:], h["status"],
                h["game"] or "-", h["procedures"], h["faults"]))
        print("%d hand(s)" % len(out))
    elif query == "card":
        print("%s in hand %d of %s (%s, %s):" % (out["card"], out["hand"], out["shoe"],
                                                 out["status"], out["rules"]))
        for m in out["moves"]:
            print("  #%-6d %s %s -> %s%s" % (m["event"], _when(m["t"]), m["from"] or "stub",
                                             m["to"], " (face up)" if m["up"] else ""))
        if not out["moves"]:
            print("  never left the stub (its place there is never recorded)")
        for p in out["procedures"]:
            print("  #%-6d PROCEDURE %s %s%s: %s" % (p["event"], p["rule"], p["procedure"],
                                                    " (seat %d)" % p["seat"] if p["seat"] else "",
                                                    p["text"]))
    elif query == "rates":
        print("%s: %d hands in %.2f h: %.1f hands/hour; %d misdeal(s), %.1f per 1,000 hands"
              % (out["shoe"], out["hands"], out["hours"], out["hands_per_hour"],
                 out["misdeals"], out["misdeals_per_1000"]))
        for shift, n in sorted(out["faults_per_shift"].items()):
            print("  shift from %s UTC: %d fault(s)" % (shift, n))
    elif query == "settings":
        print("%s: %s, seats %s, rules %s (configured %s)" % (
            out["shoe"], out["game"], out["seats"], out["rules"], _when(out["configured"])))
        for k in sorted(out["in_force"]):
            mark = " *" if k in out["house"] else ""
            print("  %-28s %s%s" % (k, out["in_force"][k], mark))
        print("  (* set by the house, over the rulebook)")
