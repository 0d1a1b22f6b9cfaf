"""`facedown room`: a card room on one machine (docs/room.md). Mosquitto started by the
project's own code (broker.py), the room's ledger service (SQLite by default, or PostgreSQL),
the floor page, N virtual shoes (the real firmware under the MicroPython unix port, each owned
by its own `serve` Server publishing to the broker) dealing hands, and many lighter simulated
shoes (lightshoe.py) on the same topics through the same MqttSink."""

import concurrent.futures
import json
import os
import tempfile
import threading
import time

from .broker import Broker, find_mosquitto, user_name
from .errors import UserError

START_THREADS = 64
INSTALL = "Mosquitto is not installed: install it with `apt-get install mosquitto` (as root)"


def need_mosquitto():
    try:
        return find_mosquitto()
    except UserError:
        raise UserError(INSTALL)


def play_hand(cl):
    """One hold'em hand on a served virtual shoe, through its own table session."""
    cl.call("hand", 0)
    cl.call("deal", 0)
    for _ in range(3):
        cl.call("street")
    cl.call("end")


class RealTable:
    """A virtual shoe (real firmware), its Server and MqttSink, and a thread dealing hands."""

    def __init__(self, broker, name, dealer, gap=1.0, drop=0.0, seed=0):
        """The shoe is started and gets its broker user here (before the broker starts)."""
        from .virtualshoe import VirtualShoe

        self.name, self.dealer, self.gap = name, dealer, gap
        self.drop = drop
        self.shoe = VirtualShoe(nullmodem={"seed": seed})
        self.shoe.start(ready_line="ready", timeout=30)
        c = self.shoe.connect()
        c.call("config", "holdem", 0b1111111110, 9, "tda2024", "{}")
        c.close()
        self.password = broker.add_user(self.shoe.key.device)
        self.sink = self.server = self.thread = None
        self.hands = 0
        self.refused = None
        self.stop_flag = threading.Event()

    def serve(self, broker):
        """Its server, publishing to the (running) broker, and the dealing thread."""
        from . import keys
        from .engine import wire
        from .mqtt import MqttSink
        from .serve import Server

        W = wire()
        device, name = self.shoe.key.device, self.name
        self.sink = MqttSink(broker.host, broker.port, user_name(device), self.password,
                             name=name, table=name, dealer=self.dealer)
        self.server = Server(self.shoe.port, keys.Key(device, "table",
                                                      self.shoe.key.for_role(W.ROLE_TABLE)),
                             sink=self.sink, log=lambda text: None)
        self.server.serve_forever()
        if self.drop:  # the line loses frames once the server has it (a start is slow on it)
            self.shoe.modem.configure(drop=self.drop)
        self.thread = threading.Thread(target=self._deal, daemon=True, name="deal-" + name)
        self.thread.start()
        return self

    def _deal(self):
        while not self.stop_flag.is_set():
            try:
                self.server.submit(play_hand)
                self.hands += 1
                self.refused = None
            except Exception as e:  # a refusal mid-demo (BUSY while the ledger is away):
                if self.stop_flag.is_set():  # shown once, and the next hand is tried
                    return
                if str(e) != self.refused:
                    print("room: %s: %s" % (self.sink.name, e), flush=True)
                self.refused = str(e)
            self.stop_flag.wait(self.gap)

    def pause(self):
        self.stop_flag.set()
        if self.thread is not None:
            self.thread.join(30)

    def drained(self):
        upto = self.server.submit(lambda cl: cl.sync())
        return self.sink.saved() >= upto

    def close(self):
        self.pause()
        if self.server is not None:
            self.server.close()
        self.shoe.close()


class Room:
    """The room's parts, started in order and stopped in reverse."""

    def __init__(self, folder=None, ledger_url=None, http=("127.0.0.1", 0), names=None):
        need_mosquitto()
        self.tmp = None
        if folder is None:
            self.tmp = tempfile.TemporaryDirectory(prefix="facedown-room-")
            folder = self.tmp.name
        self.folder = folder
        self.ledger_url = ledger_url or os.path.join(folder, "room.sqlite")
        self.http = http
        self.names = dict(names or {})
        self.broker = Broker(os.path.join(folder, "broker"))
        self.ledger = self.service = self.floor = self.page = None
        self.real, self.light = [], []

    def start(self, light=0, real=0, rate=0.4, light_options=None, drop=0.0):
        from .floor import Floor
        from .floorpage import FloorPage
        from .ledger import Ledger
        from .lightshoe import LightShoe

        shoes = ["light-%03d" % (i + 1) for i in range(light)]
        for shoe in shoes:
            self.broker.add_user(shoe)
        for i in range(real):
            name = "R%d" % (i + 1)
            self.real.append(RealTable(self.broker, name, "dealer %s" % name, drop=drop, seed=i))
        self.broker.start()
        self.ledger = Ledger(self.ledger_url)
        self.start_service()
        self.floor = Floor(self.ledger, self.names).subscribe(
            self.broker.host, self.broker.port, self.broker.credentials("floor")[1])
        self.page = FloorPage(self.floor, *self.http).start()
        for t in self.real:
            t.serve(self.broker)
        for i, shoe in enumerate(shoes):
            names = self.names.get(shoe, {})
            self.light.append(LightShoe(
                shoe, self.broker.host, self.broker.port, self.broker.credentials(shoe)[1],
                rate=rate, table=names.get("table") or "T%d" % (i + 1),
                dealer=names.get("dealer"), seed=i, **(light_options or {})))
        # (each waits up to 1 s for its retained saved marker: started side by side)
        with concurrent.futures.ThreadPoolExecutor(START_THREADS) as pool:
            list(pool.map(lambda s: s.start(), self.light))
        return self

    def start_service(self):
        from .mqtt import LedgerService

        self.service = LedgerService(self.ledger, self.broker.host, self.broker.port,
                                     self.broker.credentials("ledger")[1]).start()

    def shoes(self):
        return self.real + self.light

    def drain(self, timeout):
        """Stop offering, then wait for the ledger's saved markers to cover everything
        offered; returns the seconds it took (None: not within timeout)."""
        for s in self.shoes():
            s.pause()
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if all(s.drained() for s in self.shoes()):
                return time.monotonic() - t0
            time.sleep(0.05)
        return None

    def lost(self):
        """Events the simulated shoes offered that are not in the ledger (each is keyed)."""
        have = dict(self.ledger.query("SELECT shoe, COUNT(*) FROM events GROUP BY shoe"))
        return sum(max(0, s.number - have.get(s.shoe, 0)) for s in self.light)

    def close(self):
        with concurrent.futures.ThreadPoolExecutor(START_THREADS) as pool:
            list(pool.map(lambda s: s.close(), self.light))
        for t in self.real:
            t.close()
        if self.page is not None:
            self.page.close()
        if self.floor is not None:
            self.floor.close()
        if self.service is not None:
            self.service.stop()
        if self.ledger is not None:
            self.ledger.close()
        self.broker.stop()
        if self.tmp is not None:
            self.tmp.cleanup()


def add_command(sub):
    p = sub.add_parser("room", help="a card room on one machine: Mosquitto, the ledger, the "
                                    "floor page, virtual and simulated shoes (docs/room.md)")
    p.add_argument("--real", type=int, default=2, metavar="N",
                   help="virtual shoes running the real firmware (default 2)")
    p.add_argument("--light", type=int, default=40, metavar="N",
                   help="lighter simulated shoes on the same topics (default 40)")
    p.add_argument("--rate", type=float, default=0.4,
                   help="events a second a simulated shoe offers (default 0.4)")
    p.add_argument("--ledger", default=None, metavar="URL",
                   help="the room's ledger: a SQLite file or postgresql://... "
                        "(default: a SQLite file in --dir)")
    p.add_argument("--dir", default=None, help="the room's folder (default: a temporary one)")
    p.add_argument("--names", default=None, metavar="FILE",
                   help='table and dealer names: {"tables": {"<shoe>": {"table": "T1", '
                        '"dealer": "Ann"}}}')
    p.add_argument("--http", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="the floor page's address (default loopback, a free port)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.set_defaults(func=run)


def run(args):
    from .floor import load_names
    from .serve import _http_address

    for opt in ("real", "light"):
        if getattr(args, opt) < 0:
            raise UserError("--%s takes a count of 0 or more" % opt)
    if args.rate <= 0:
        raise UserError("--rate takes events a second, more than 0")
    http = _http_address(args.http) or ("127.0.0.1", 0)
    names = load_names(args.names)
    room = Room(args.dir, args.ledger, http, names)
    try:
        room.start(light=args.light, real=args.real, rate=args.rate)
        print("room: %d virtual shoes (real firmware) and %d simulated shoes on mosquitto at "
              "%s:%d; ledger %s" % (args.real, args.light, room.broker.host, room.broker.port,
                                    _safe(room.ledger_url)), flush=True)
        print("floor page: %s" % room.page.url, flush=True)
        end = time.monotonic() + args.seconds if args.seconds else None
        while end is None or time.monotonic() < end:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        summary = room_summary(room)
        room.close()
    print(json.dumps(summary, sort_keys=True), flush=True)
    return 0


def room_summary(room, drain_s=15.0):
    """The room's counts once its shoes have stopped and the ledger has caught up: events
    offered by the simulated shoes and how many of them the ledger does not have (lost)."""
    if room.ledger is None or room.service is None:
        return {}
    room.drain(drain_s)
    counts = dict(room.service.counts)
    counts["lost"] = room.lost()
    counts["offered"] = sum(s.offered for s in room.light)
    counts["real_hands"] = sum(t.hands for t in room.real)
    counts["tables"] = len(room.floor.tables) if room.floor else 0
    return counts


def _safe(url):
    from .ledger import _safe as safe

    return safe(url)
