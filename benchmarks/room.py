"""The room's figures (docs/room.md "Figures"): many shoes on one Mosquitto on this machine,
events offered at 10x a room's expected peak (a table at 30 hands an hour makes about 0.4
events a second; offered here: 4), through a broker killed with SIGKILL and restarted, the
ledger service away for a while, and lines dropped (the virtual shoes' serial lines lose
frames, the simulated shoes' network connections are cut); then the events lost (must be 0),
the duplicates dropped by key, event-to-ledger latency p50/p99, the backlog's drain after
the broker's restart and after the ledger's return, a dead shoe's offline state on the floor
page; and the ledger's two dispute queries over generated stored hands on SQLite and
PostgreSQL, p99. It prints figures, it does not pass or fail on time.

    .venv/bin/python benchmarks/room.py                   # 198 simulated + 2 real, 1,000,000 hands
    .venv/bin/python benchmarks/room.py --quick           # small counts (the test suite runs it)
    FACEDOWN_PG_URL=postgresql://... (default: the room's loopback PostgreSQL)
"""

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time
import uuid


from facedown.engine import firmware_imports  # noqa: E402
from facedown.errors import UserError  # noqa: E402
from facedown.ledger import Ledger  # noqa: E402
from facedown.room import Room  # noqa: E402

PG_DEFAULT = "postgresql://facedown:facedown@127.0.0.1:5432/facedown"
HAND_S = 120.0          # 30 hands an hour
SEATS = 9


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def wait_for(cond, timeout, step=0.05):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(step)
    return None


def backlog_drain(room, timeout):
    """Seconds until the ledger's saved markers cover what every simulated shoe had offered
    when this was called (None: not within timeout)."""
    target = {s.shoe: s.number for s in room.light if not s.stop_flag.is_set()}
    return wait_for(lambda: all(s.sink.saved() >= target[s.shoe] for s in room.light
                                if s.shoe in target), timeout)


class Counts:
    """The ledger services' counts and latencies, across the services the run starts."""

    def __init__(self):
        self.total = {"events": 0, "duplicates": 0, "hands": 0, "messages": 0}
        self.latency = []

    def take(self, service):
        for k in self.total:
            self.total[k] += service.counts[k]
        self.latency.extend(service.latency)


def room_figures(a, folder):
    room = Room(folder, http=("127.0.0.1", 0))
    counts = Counts()
    out = {"shoes": a.light + a.real, "real_firmware": a.real, "simulated": a.light,
           "offered_per_table_per_s": a.rate}
    room.start(light=a.light, real=a.real, rate=a.rate, drop=a.line_drop)
    try:
        t_start = time.monotonic()
        time.sleep(a.phase)
        steady = list(room.service.latency)
        out["latency_steady_ms"] = {"p50": round(pct(steady, 50) * 1000, 1),
                                    "p99": round(pct(steady, 99) * 1000, 1), "n": len(steady)}

        room.broker.kill()                                   # SIGKILL: only the saved survives
        time.sleep(a.broker_down)
        room.broker.start()
        out["broker_restart_drain_s"] = _round(backlog_drain(room, a.drain))
        time.sleep(a.phase)

        old = room.service                                   # the ledger away
        old.stop()
        counts.take(old)
        time.sleep(a.ledger_down)
        room.start_service()
        out["ledger_away_s"] = a.ledger_down
        out["ledger_return_drain_s"] = _round(backlog_drain(room, a.drain))

        cut = room.light[::5]                                # lines dropped
        for s in cut:
            s.drop_line()
        out["connections_cut"] = len(cut)
        time.sleep(a.phase)

        dead = room.light[-1]                                # a shoe's host dies
        dead.crash()  # (wait_for times from here)
        seen = wait_for(lambda: not room.floor.tables.get(dead.shoe, {}).get("online", True), 15)
        out["offline_on_floor_s"] = _round(seen)
        dead.revive()                                        # its host is back

        offered_s = time.monotonic() - t_start
        out["final_drain_s"] = _round(room.drain(a.drain))
        counts.take(room.service)
        out["events_offered"] = sum(s.number for s in room.light)
        out["offered_events_per_s"] = round(out["events_offered"] / offered_s, 1)
        out["events_lost"] = room.lost()
        out["real_hands"] = sum(t.hands for t in room.real)
        out["real_shoes_drained"] = all(t.drained() for t in room.real)
        out["duplicates_dropped"] = counts.total["duplicates"]
        out["events_committed"] = counts.total["events"]
        out["latency_all_ms"] = {"p50": round(pct(counts.latency, 50) * 1000, 1),
                                 "p99": round(pct(counts.latency, 99) * 1000, 1)}
    finally:
        room.close()
    return out


def _round(x):
    return None if x is None else round(x, 2)


# ------------------------------------------------------------------ the dispute queries

def hand_rows(shoe_i, hand, t, rng, z, deck):
    """One stored hand's events (final, down cards and all) and its hands row."""
    shoe = "bench-%03d" % shoe_i
    cards = deck[:]
    rng.shuffle(cards)
    first = hand * 30
    ev = []
    n = first
    for seat in range(1, SEATS + 1):
        for _ in range(2):
            n += 1
            ev.append((shoe, 1, n, hand, z.OP_MOVE, cards.pop(), 0, z.SEAT0 + seat, t, 1))
    for k in (3, 1, 1):
        n += 1
        ev.append((shoe, 1, n, hand, z.OP_MOVE, cards.pop(), 0, z.BURNS, t, 1))
        for _ in range(k):
            n += 1
            ev.append((shoe, 1, n, hand, z.OP_MOVE, cards.pop(), 0, z.BOARD | 0x80, t, 1))
    if rng.random() < 0.05:
        n += 1
        ev.append((shoe, 1, n, hand, z.OP_PROC, 1, 3, 0, t, 1))
    n += 1
    ev.append((shoe, 1, n, hand, z.OP_STATUS, 1, 0, 0, t + 90, 1))
    row = (shoe, 1, hand, first + 1, n, t, t + 90, "complete", "holdem", "tda2024", "{}",
           "[]", 1, 0, 0, 0)
    return ev, row


def generate(ledger, hands, shoes, seed=1):
    """`hands` finished hands spread over `shoes` tables, 30 an hour each, in the ledger."""
    fw = firmware_imports()
    z = fw.zones
    deck = [fw.cards.parse(r + s) for r in "23456789TJQKA" for s in "cdhs"]
    rng = random.Random(seed)
    t0 = 1.7e9
    ev_sql = ledger._sql("INSERT INTO events (shoe, epoch, number, hand, op, a, b, c, t, final)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    hand_sql = ledger._sql("INSERT INTO hands (shoe, epoch, hand, first, last, started, ended, "
                           "status, game, rules, house, seats, button, procedures, faults, "
                           "partial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    per_shoe = (hands + shoes - 1) // shoes
    done = 0
    cur = ledger.db.cursor()
    batch_ev, batch_hands = [], []
    for h in range(1, per_shoe + 1):
        for s in range(shoes):
            if done == hands:
                break
            ev, row = hand_rows(s, h, t0 + h * HAND_S + s, rng, z, deck)
            batch_ev.extend(ev)
            batch_hands.append(row)
            done += 1
        if len(batch_hands) >= 20000 or done == hands:
            _insert(ledger, cur, ev_sql, batch_ev, hand_sql, batch_hands)
            batch_ev, batch_hands = [], []
        if done == hands:
            break
    ledger.db.commit()
    return t0, per_shoe


def _insert(ledger, cur, ev_sql, ev, hand_sql, hands):
    if ledger.kind == "postgresql":
        with cur.copy("COPY events (shoe, epoch, number, hand, op, a, b, c, t, final) FROM "
                      "STDIN") as cp:
            for r in ev:
                cp.write_row(r)
        with cur.copy("COPY hands (shoe, epoch, hand, first, last, started, ended, status, game,"
                      " rules, house, seats, button, procedures, faults, partial) FROM STDIN") \
                as cp:
            for r in hands:
                cp.write_row(r)
    else:
        cur.executemany(ev_sql, ev)
        cur.executemany(hand_sql, hands)
    ledger.db.commit()


def dispute_figures(url, hands, shoes, queries):
    ledger = Ledger(url)
    try:
        t = time.monotonic()
        t0, per_shoe = generate(ledger, hands, shoes)
        if ledger.kind == "postgresql":
            ledger.db.execute("ANALYZE")
            ledger.db.commit()
        load_s = time.monotonic() - t
        rng = random.Random(2)
        names = [r + s for r in "23456789TJQKA" for s in "cdhs"]
        between, trail = [], []
        for _ in range(queries):
            shoe = "bench-%03d" % rng.randrange(min(shoes, hands))
            h = rng.randrange(1, max(2, per_shoe - 30))
            start = t0 + h * HAND_S
            q = time.perf_counter()
            found = ledger.hands_between(shoe, start, start + 3600)
            between.append(time.perf_counter() - q)
            if not found:
                raise SystemExit("benchmark: no hands found between two times (generator bug)")
            card = rng.choice(names)
            q = time.perf_counter()
            ledger.card_trail(shoe, found[0]["hand"], card)
            trail.append(time.perf_counter() - q)
        return {"hands": hands, "load_s": round(load_s, 1), "queries": queries,
                "hands_between_p99_ms": round(pct(between, 99) * 1000, 2),
                "hands_between_p50_ms": round(pct(between, 50) * 1000, 2),
                "card_trail_p99_ms": round(pct(trail, 99) * 1000, 2),
                "card_trail_p50_ms": round(pct(trail, 50) * 1000, 2)}
    finally:
        ledger.close()


def postgres_database():
    """A fresh database on the room's PostgreSQL, or (None, why)."""
    import psycopg

    url = os.environ.get("FACEDOWN_PG_URL") or PG_DEFAULT
    name = "facedown_bench_%s" % uuid.uuid4().hex[:8]
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute("CREATE DATABASE %s" % name)
    except psycopg.Error as e:
        return None, str(e).strip().splitlines()[0]
    return url.rsplit("/", 1)[0] + "/" + name, None


def drop_database(db_url):
    import psycopg

    base, name = db_url.rsplit("/", 1)
    with psycopg.connect(os.environ.get("FACEDOWN_PG_URL") or PG_DEFAULT,
                         autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small counts (for the test suite)")
    p.add_argument("--light", type=int, help="simulated shoes (default 198; quick 10)")
    p.add_argument("--real", type=int, help="virtual shoes, real firmware (default 2; quick 1)")
    p.add_argument("--rate", type=float, default=4.0, help="events/s offered a table (4)")
    p.add_argument("--phase", type=float, help="seconds between the faults (default 20; quick 2)")
    p.add_argument("--ledger-down", type=float, help="seconds the ledger is away (60; quick 2)")
    p.add_argument("--broker-down", type=float, help="seconds the broker is dead (5; quick 1)")
    p.add_argument("--line-drop", type=float, default=0.01,
                   help="the virtual shoes' serial lines lose this share of frames (0.01)")
    p.add_argument("--hands", type=int, help="stored hands for the queries (1,000,000; quick "
                                             "2,000)")
    p.add_argument("--queries", type=int, default=None, help="queries timed (1000; quick 50)")
    p.add_argument("--drain", type=float, default=300, help="seconds allowed to drain")
    p.add_argument("--skip-room", action="store_true", help="only the dispute queries")
    p.add_argument("--skip-queries", action="store_true", help="only the room")
    a = p.parse_args(argv)
    # stopped (timeout, kill): the broker, the virtual shoes and the bench database go too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    q = a.quick
    a.light = a.light if a.light is not None else (10 if q else 198)
    a.real = a.real if a.real is not None else (1 if q else 2)
    a.phase = a.phase if a.phase is not None else (2.0 if q else 20.0)
    a.ledger_down = a.ledger_down if a.ledger_down is not None else (2.0 if q else 60.0)
    a.broker_down = a.broker_down if a.broker_down is not None else (1.0 if q else 5.0)
    a.hands = a.hands if a.hands is not None else (2000 if q else 1000000)
    a.queries = a.queries if a.queries is not None else (50 if q else 1000)
    if min(a.light, a.real, a.hands) < 0 or a.light + a.real < 2 or a.rate <= 0:
        p.error("give at least two shoes, a rate above 0 and counts of 0 or more")
    figures = {}
    try:
        with tempfile.TemporaryDirectory(prefix="facedown-bench-room-") as folder:
            if not a.skip_room:
                figures["room"] = room_figures(a, folder)
                print(json.dumps({"room": figures["room"]}), flush=True)
            if not a.skip_queries:
                shoes = 200
                figures["sqlite"] = dispute_figures(os.path.join(folder, "disputes.sqlite"),
                                                    a.hands, shoes, a.queries)
                print(json.dumps({"sqlite": figures["sqlite"]}), flush=True)
                db, why = postgres_database()
                if db is None:
                    figures["postgresql"] = {"not measured": why}
                else:
                    try:
                        figures["postgresql"] = dispute_figures(db, a.hands, shoes, a.queries)
                    finally:
                        drop_database(db)
                print(json.dumps({"postgresql": figures["postgresql"]}), flush=True)
    except UserError as e:
        print("benchmark: %s" % e, file=sys.stderr)
        return 2
    print("figures: " + json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
