"""One process per shoe port (and per virtual shoe's flash folder): a lock file with the
owner's pid, held with flock(2) for as long as the process uses the port.

Two processes on one serial line corrupt each other's frames (a `watch` and a `deal` from a
second shell), and two virtual shoes on one flash folder damage each other's journal. The
second one gets one clear line ("PORT is in use by pid N (facedown watch)") and changes nothing.
flock is released by the kernel when its holder dies, so a crash leaves no stale lock. Within
one process the lock is shared (counted): several clients of one program may open the port.

`facedown serve` owns its port with the same lock (its serial client takes it) and every other
command goes through the server instead of the port; hold() is the one function to call."""

import fcntl
import os
import re
import sys

from .errors import UserError

_held = {}  # lock file path -> [fd, count] in this process


def lock_dir():
    """Beside the key store's (FACEDOWN_HOME/run, as facedown serve's sockets)."""
    from . import keys

    return os.environ.get("FACEDOWN_RUN") or os.path.join(keys.home(), "run")


def lock_path(name):
    real = os.path.realpath(name)
    return os.path.join(lock_dir(), re.sub(r"[^A-Za-z0-9_.-]", "_", real) + ".lock")


class PortBusy(UserError):
    def __init__(self, message, hint, pid):
        UserError.__init__(self, message, hint)
        self.pid = pid


class Lock:
    def __init__(self, path):
        self.path = path
        self.released = False

    def release(self):
        if self.released:
            return
        self.released = True
        entry = _held.get(self.path)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _held[self.path]
            try:
                os.close(entry[0])  # (closing the descriptor releases the flock)
            except OSError:
                pass

    def __del__(self):
        self.release()


def owner(path):
    """(pid, what) the lock file names, or (None, "")."""
    try:
        with open(path) as f:
            pid, _, what = f.read().strip().partition(" ")
        return int(pid), what
    except (OSError, ValueError):
        return None, ""


def hold(name, kind="port"):
    """Take the lock on a port (or, kind="flash", a virtual shoe's flash folder) for this
    process. Returns a Lock (release() it, or drop it); raises PortBusy if another process
    holds it."""
    path = lock_path(name)
    entry = _held.get(path)
    if entry is not None:
        entry[1] += 1
        return Lock(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        pid, what = owner(path)
        who = "pid %d%s" % (pid, " (%s)" % what if what else "") if pid else "another process"
        if kind == "flash":
            raise PortBusy("the flash folder %s is in use by %s: a second virtual shoe on it "
                           "would damage its journal" % (name, who),
                           "stop that one first, or give another folder", pid)
        raise PortBusy("%s is in use by %s" % (name, who),
                       "stop it first (only one program can use a shoe's port), or run "
                       "`facedown serve --port %s` and let every command go through it" % name,
                       pid)
    what = _me()
    os.ftruncate(fd, 0)
    os.write(fd, ("%d %s\n" % (os.getpid(), what)).encode())
    _held[path] = [fd, 1]
    return Lock(path)


def _me():
    """What this process is, for the other one's message: "facedown watch", "python"..."""
    argv = sys.argv or ["python"]
    if os.path.basename(argv[0]) != "facedown":
        return os.path.basename(argv[0])
    rest = argv[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] == "--port" else rest[1:]
    return "facedown" + (" " + rest[0] if rest else "")
