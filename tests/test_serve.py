"""`facedown serve`: one owner of the shoe's line, many clients at once, roles checked, the
CLI routed through the server, events acknowledged only once the sink has saved them."""

import json
import time
import urllib.request

import pytest

from facedown import keys, served
from facedown.cli import main
from facedown.client import ShoeError
from facedown.engine import wire
from facedown.serve import Server, mask, table_key
from facedown.virtualshoe import VirtualShoe

W = wire()


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FACEDOWN_HOME", str(tmp_path / "home"))
    for name in ("FACEDOWN_KEY", "FACEDOWN_KEY_FILE", "FACEDOWN_RUN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


class HeldSink:
    """A sink that saves only what the test lets it (saved up to `upto`)."""

    def __init__(self):
        self.got = []
        self.upto = 0

    def start(self, shoe, boots, info):
        return boots

    def offer(self, number, hand, entry, t):
        self.got.append(number)

    def saved(self):
        return self.upto

    def close(self):
        pass


@pytest.fixture()
def served_shoe(home):
    with VirtualShoe() as shoe:
        shoe.start(ready_line="ready", timeout=20)
        shoe.key.save(keys.keystore_path(shoe.key.device))  # as `facedown sim` leaves it
        sink = HeldSink()
        sink.upto = 1 << 32
        server = Server(shoe.port, table_key(shoe.key.device), sink=sink,
                        http=("127.0.0.1", 0), log=lambda text: None)
        server.serve_forever()
        try:
            yield shoe, server
        finally:
            server.close()


def cli(*argv):
    return main(["--port", argv[0]] + list(argv[1:]))


def test_the_server_holds_the_table_key_only(home):
    device_key = keys.Key.generate("shoe-1")
    device_key.save(keys.keystore_path("shoe-1"))
    k = table_key("shoe-1")
    assert k.role == "table" and k.key == device_key.for_role(W.ROLE_TABLE)
    assert k.key != device_key.key
    device_key.derive("maintenance").save(str(home / "m.key"))
    with pytest.raises(Exception, match="table key, not a maintenance key"):
        table_key("shoe-1", str(home / "m.key"))


def test_console_and_watchers_at_once_through_the_cli(served_shoe, capsys):
    shoe, server = served_shoe
    port = shoe.port
    assert cli(port, "login", "--role", "maintenance") == 0
    assert "through the server" in capsys.readouterr().out
    assert cli(port, "config", "--game", "holdem", "--seats", "1-6", "--button", "6") == 0
    assert cli(port, "logout") == 0
    assert cli(port, "login", "--role", "table") == 0
    capsys.readouterr()
    # two watchers: one with no role (what the floor may see), one proven table console
    public, table = [], []
    w_pub = served.connect(port, on_event=lambda n, h, e: public.append((n, e)), stored=False)
    w_tab = served.connect(port, on_event=lambda n, h, e: table.append((n, e)), stored=False)
    w_tab.login_table(keys.find_key(shoe.key.device))
    w_tab.watch()
    assert cli(port, "deal") == 0        # the console drives the hand meanwhile
    assert cli(port, "street") == 0
    out = capsys.readouterr().out
    assert "board" in out and "[" in out  # the table console sees the down cards
    for w in (w_pub, w_tab):
        w.sync()
    assert len(public) == len(table) >= 6 * 2 + 4
    down = [e for n, e in table if e[0] == 1 and not e[3] & 0x80 and e[3] != 1]
    assert down and all(e[1] != W.HIDDEN for e in down)
    for (n1, e1), (n2, e2) in zip(public, table):
        assert n1 == n2 and e1 == mask(e2)
    assert all(e[1] == W.HIDDEN for n, e in public if e[0] == 1 and not e[3] & 0x80
               and e[3] != 1)
    # the public watcher cannot deal: the shoe refuses its plain CMD
    with pytest.raises(ShoeError) as info:
        w_pub.call("street")
    assert info.value.code == W.DENIED
    st = w_pub.status()
    assert st["session"] == "public"
    assert all(c["card"] == "??" for s in st["table"]["seats"].values() for c in s)
    w_pub.close()
    w_tab.close()
    # what anyone may see over HTTP: the masked table
    host, hport = server.ws.socket.getsockname()[:2]
    with urllib.request.urlopen("http://%s:%d/status" % (host, hport), timeout=10) as r:
        doc = json.loads(r.read())
    assert doc["session"] == "public" and doc["hand"] == 1
    assert cli(port, "end") == 0


def test_a_wrong_key_does_not_open_a_table_session(served_shoe):
    shoe, server = served_shoe
    c = served.connect(shoe.port, stored=False)
    with pytest.raises(Exception, match="table login refused"):
        c.login_table(keys.Key.generate(shoe.key.device))
    assert c.role == "public" and server.counts["failed_logins"] == 1
    c.close()


def test_maintenance_is_relayed_and_table_commands_wait_for_it(served_shoe, capsys):
    shoe, server = served_shoe
    port = shoe.port
    console = served.connect(port, stored=False)
    console.login_table(keys.find_key(shoe.key.device))
    assert cli(port, "login", "--role", "maintenance") == 0
    assert server.maint is not None
    with pytest.raises(ShoeError) as info:
        console.call("hand", 0)
    assert info.value.code == W.BUSY and "maintenance session" in info.value.message
    assert cli(port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4") == 0
    assert cli(port, "audit") == 0  # a maintenance command, chunked, relayed
    assert "hash chain intact" in capsys.readouterr().out
    assert cli(port, "logout") == 0
    assert server.maint is None
    console.call("hand", 0)  # the server's table session again
    console.call("deal", 0)
    assert console.status()["table"]["status"] == "dealing"
    console.call("end")
    console.close()


def test_events_are_acknowledged_only_once_saved(home):
    with VirtualShoe() as shoe:
        shoe.start(ready_line="ready", timeout=20)
        c = shoe.connect()
        c.call("config", "holdem", 0b1111110, 6, "tda2024", "{}")
        c.close()
        sink = HeldSink()
        server = Server(shoe.port, keys.Key(shoe.key.device, "table",
                                            shoe.key.for_role(W.ROLE_TABLE)),
                        sink=sink, log=lambda text: None)
        server.serve_forever()
        try:
            server.submit(lambda cl: (cl.call("hand", 0), cl.call("deal", 0)))
            server.submit(lambda cl: cl.sync())
            n = max(sink.got)
            assert n >= 12 and server.client.acked == 0  # nothing saved: nothing acknowledged
            sink.upto = 5
            time.sleep(0.3)
            assert server.client.acked == 5
            server.close()
            server = None
            # a new server takes up every event after 5 again: the shoe still held them
            again = HeldSink()
            server = Server(shoe.port, keys.Key(shoe.key.device, "table",
                                                shoe.key.for_role(W.ROLE_TABLE)),
                            sink=again, log=lambda text: None)
            server.serve_forever()
            server.submit(lambda cl: cl.sync())
            assert min(again.got) == 6 and max(again.got) == n
        finally:
            if server is not None:
                server.close()


def test_bad_requests_get_one_clear_line(served_shoe):
    shoe, server = served_shoe
    sock = served.server_for(shoe.port)
    f = sock.makefile("rwb")
    for line, want in ((b"not json\n", "not a JSON request"),
                       (b'{"id": 1, "op": "nope"}\n', "unknown request"),
                       (b'{"id": 2, "op": "call", "name": "deal", "args": ["x"]}\n',
                        "deal")):
        f.write(line)
        f.flush()
        reply = json.loads(f.readline())
        assert want in reply["error"], reply
    sock.close()


def test_serve_refuses_a_port_it_already_serves(served_shoe, capsys):
    shoe, server = served_shoe
    assert cli(shoe.port, "serve") == 2
    assert "already owns" in capsys.readouterr().err
