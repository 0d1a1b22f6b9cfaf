"""The room's broker: Eclipse Mosquitto (Debian's package), configured for the room
(docs/room.md "The broker"), and run by the project's own code for `facedown room`, the tests
and the benchmark.

Mosquitto's defaults lose a room's events: 100 queued messages a client (a ledger away for a
few minutes at 200 tables overflows it and the broker drops the rest) and a 30-minute autosave
(a broker killed between two saves forgets every queued message since the last one). Here:
persistence on, saved every second, queues of a million messages, no byte limit; no
anonymous clients; each shoe's server has its own user and may publish only its own topics."""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time

from .errors import UserError

ROOM = "facedown/room"      # live topics: facedown/room/<shoe>/{events,status,online,saved}
LEDGER = "facedown/ledger"  # finished hands' full records: facedown/ledger/<shoe>/hand
QUEUE = 1000000             # max_queued_messages per client (Mosquitto's default: 100)
AUTOSAVE_S = 1              # autosave_interval (default: 1800 s)

CONFIG = """# facedown room broker (written by facedown.broker; docs/room.md "The broker")
# (run as the user who starts it: as root, Mosquitto would switch to its own user, who
# cannot read a private folder)
user {user}
per_listener_settings false
listener {port} {host}
allow_anonymous false
password_file {dir}/passwd
acl_file {dir}/acl
# nothing queued is lost to a kill: saved every {autosave} s and at exit
persistence true
persistence_location {dir}/data/
autosave_interval {autosave}
# a ledger (or floor page) away for minutes: its persistent session keeps everything
max_queued_messages {queue}
max_queued_bytes 0
max_inflight_messages 100
queue_qos0_messages false
persistent_client_expiration 14d
log_dest file {dir}/mosquitto.log
log_type error
log_type warning
log_type notice
connection_messages true
"""

ACL = """# facedown room ACL (docs/room.md): a shoe's server publishes only its own topics
user ledger
topic read {room}/#
topic read {ledger}/#
topic write {room}/+/saved

user floor
topic read {room}/#

pattern write {room}/%u/events
pattern write {room}/%u/status
pattern write {room}/%u/online
pattern write {ledger}/%u/hand
pattern read {room}/%u/saved
"""


def find_mosquitto():
    """The broker's binary ($FACEDOWN_MOSQUITTO names one; else the PATH's, Debian's)."""
    named = os.environ.get("FACEDOWN_MOSQUITTO")
    for path in (named,) if named else (shutil.which("mosquitto"), "/usr/sbin/mosquitto"):
        if path and os.access(path, os.X_OK):
            return path
    raise UserError("Mosquitto is not installed",
                    hint="as root: apt-get install mosquitto (or bash .ci/services)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def user_name(shoe):
    """A shoe's broker user: its id (the ACL's %u), made safe for topics."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in shoe)


class Broker:
    """A Mosquitto of the room's on loopback, its configuration, users and ACL in `folder`.
    users: {name: password}; the ledger and floor users are always there."""

    def __init__(self, folder, port=None, host="127.0.0.1"):
        self.dir = os.path.abspath(folder)
        self.host = host
        self.port = port or free_port()
        self.proc = None
        self.users = {}
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        secrets_file = os.path.join(self.dir, "users")
        if os.path.exists(secrets_file):
            with open(secrets_file) as f:
                for line in f:
                    name, _, pw = line.strip().partition(" ")
                    if name:
                        self.users[name] = pw
        for name in ("ledger", "floor"):
            self.users.setdefault(name, secrets.token_hex(12))

    def add_user(self, name):
        """A user (a shoe's server), with its password; returns the password."""
        name = user_name(name)
        self.users.setdefault(name, secrets.token_hex(12))
        return self.users[name]

    def credentials(self, name):
        name = user_name(name) if name not in ("ledger", "floor") else name
        return name, self.users[name]

    def write(self):
        with open(os.path.join(self.dir, "mosquitto.conf"), "w") as f:
            import pwd

            f.write(CONFIG.format(user=pwd.getpwuid(os.geteuid()).pw_name, port=self.port,
                                  host=self.host, dir=self.dir,
                                  autosave=AUTOSAVE_S, queue=QUEUE))
        with open(os.path.join(self.dir, "acl"), "w") as f:
            f.write(ACL.format(room=ROOM, ledger=LEDGER))
        fd = os.open(os.path.join(self.dir, "users"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                     0o600)
        with os.fdopen(fd, "w") as f:
            for name, pw in sorted(self.users.items()):
                f.write("%s %s\n" % (name, pw))
        passwd = os.path.join(self.dir, "passwd")
        open(passwd, "w").close()
        os.chmod(passwd, 0o600)
        tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
        for name, pw in sorted(self.users.items()):
            subprocess.run([tool, "-b", passwd, name, pw], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self, timeout=10.0):
        self.write()
        self.proc = subprocess.Popen([find_mosquitto(), "-c",
                                      os.path.join(self.dir, "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise UserError("mosquitto did not start: %s" % (
                    self.proc.stderr.read().decode(errors="replace").strip() or self.log_tail()))
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise UserError("mosquitto did not listen on %s:%d in %d s" % (self.host, self.port,
                                                                        timeout))

    def log_tail(self, n=10):
        try:
            with open(os.path.join(self.dir, "mosquitto.log")) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def kill(self):
        """SIGKILL: what a power cut or a crash does (only what was saved survives)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
