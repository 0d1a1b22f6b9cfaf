"""A virtual null-modem cable between two pseudo-terminals, with fault injection.

Two pty pairs are opened; a background thread copies every byte written on the
slave of pair A to the slave of pair B and back, relaying master A <-> master B.
The two slave device paths (``a_path`` and ``b_path``) are what the two ends
open: by convention A is the device (the MicroPython unix port) and B the host
(pyserial).

Both ttys are raw: no echo, no CR/LF translation, no signal characters, so every
byte value 0x00..0xFF (0x03 and 0x0A included) passes through as data.

Faults, each a probability per byte drawn independently for each direction:

* ``drop``       the byte is lost;
* ``corrupt``    one random bit of the byte is flipped;
* ``duplicate``  the byte is delivered twice;
* ``delay``      the byte is held back 1..``delay_ms`` ms; later bytes of the same
                 direction queue behind it (order is kept, nothing overtakes).

``baud`` paces each direction to N bit/s at 10 bits per byte (8N1), as a real
UART line; None (default) relays as fast as the ptys go.

The relay keeps its own descriptors on both slaves open for its whole life, so
that when an end closes its port (the device process dies, pyserial
disconnects) the pty is not hung up and the master never reads EIO; the end
can simply open the same path again.

Flow control: bytes on their way to an end wait in its pty and then in the
relay's queue, up to ``max_queue`` bytes per direction.  While that queue is
full the relay stops reading the sender, whose writes then block as on a USB
serial link, so a slow reader loses nothing.  If the receiving end takes no
byte for ``stall_timeout`` seconds (nobody has it open, or nobody reads), the
relay reads on and drops what does not fit, counted as ``overflow``: a sender
never hangs on a silent end (None: block for ever).  ``discard_pending(side)``
empties everything still on its way to one side (what a power cut does to the
device's receive buffer).

Usage::

    with NullModem(drop=0.01, seed=1) as nm:
        dev = open(nm.a_path, "r+b", buffering=0)
        host = serial.Serial(nm.b_path, timeout=1)
        ...
        nm.stats()["ab"]["dropped"]
"""

import errno
import math
import os
import random
import selectors
import termios
import threading
import time
import tty
from collections import deque

__all__ = ["NullModem", "FAULTS", "COUNTERS"]

FAULTS = ("drop", "corrupt", "duplicate", "delay")
COUNTERS = ("received", "relayed", "dropped", "corrupted", "duplicated", "delayed", "overflow", "discarded")

_CHUNK = 65536
_NEVER = float("inf")


def _set_raw(fd):
    """Raw 8-bit mode: nothing added, removed or interpreted (0x03 is data, LF stays LF)."""
    tty.setraw(fd, termios.TCSANOW)
    attrs = termios.tcgetattr(fd)
    attrs[0] &= ~(termios.IXON | termios.IXOFF | termios.IXANY | termios.ICRNL | termios.INLCR | termios.IGNCR
                  | termios.ISTRIP | termios.BRKINT | termios.PARMRK | termios.INPCK)
    attrs[1] &= ~termios.OPOST
    attrs[2] |= termios.CS8 | termios.CREAD | termios.CLOCAL
    attrs[3] &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
    attrs[6][termios.VMIN] = 1
    attrs[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def _check_probability(name, p):
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError("%s must be a probability in [0, 1], got %r" % (name, p))
    return p


class _Direction:
    """One way of the cable: reads from ``src`` master, queues, writes to ``dst`` master."""

    def __init__(self, name, src, dst, rng):
        self.name = name
        self.src = src
        self.dst = dst
        self.rng = rng
        self.queue = deque()  # [release_time, bytearray], FIFO
        self.queued = 0
        self.next_tx = 0.0  # baud pacing: earliest time the next byte may go on the line
        self.blocked = False  # dst pty full: wait for EVENT_WRITE
        self.read_paused_until = 0.0  # back-off after EIO on src
        self.last_progress = 0.0  # last time dst took bytes (or the queue started filling)
        self.write_paused_until = 0.0  # back-off after EIO on dst
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.countdown = dict.fromkeys(FAULTS, math.inf)  # bytes to pass before the next event
        self.probs = dict.fromkeys(FAULTS, 0.0)

    # -- faults -----------------------------------------------------------------------------------

    def _gap(self, p):
        """Number of clean bytes before the next event of probability p per byte (geometric)."""
        if p <= 0.0:
            return math.inf
        if p >= 1.0:
            return 0
        u = 1.0 - self.rng.random()  # (0, 1]
        return int(math.log(u) / math.log1p(-p))

    def set_probs(self, probs):
        for k in FAULTS:
            if probs[k] != self.probs[k]:
                self.probs[k] = probs[k]
                self.countdown[k] = self._gap(probs[k])

    def _enqueue(self, data, release, now, max_queue):
        if not data:
            return
        room = max_queue - self.queued
        if room <= 0:
            self.counters["overflow"] += len(data)
            return
        if len(data) > room:
            self.counters["overflow"] += len(data) - room
            data = data[:room]
        if not self.queued:
            self.last_progress = now
        q = self.queue
        if q and release <= max(q[-1][0], now):
            q[-1][1] += data
        else:
            q.append([release, bytearray(data)])
        self.queued += len(data)

    def take(self, data, now, max_queue, delay_ms):
        """Run a chunk just read from src through the fault model into the queue."""
        c = self.counters
        c["received"] += len(data)
        cd = self.countdown
        if all(v == math.inf for v in cd.values()):
            self._enqueue(data, now, now, max_queue)
            return
        mv = memoryview(data)
        i, n = 0, len(data)
        while i < n:
            step = min(cd.values())
            if i + step >= n:
                self._enqueue(mv[i:n], now, now, max_queue)
                for k in FAULTS:
                    cd[k] -= n - i
                break
            j = i + step
            if step:
                self._enqueue(mv[i:j], now, now, max_queue)
            hit = []
            for k in FAULTS:
                if cd[k] == step:
                    hit.append(k)
                    cd[k] = self._gap(self.probs[k])
                else:
                    cd[k] -= step + 1
            i = j + 1
            if "drop" in hit:
                c["dropped"] += 1
                continue
            b = data[j]
            if "corrupt" in hit:
                b ^= 1 << self.rng.randrange(8)
                c["corrupted"] += 1
            out = bytes((b, b)) if "duplicate" in hit else bytes((b,))
            if "duplicate" in hit:
                c["duplicated"] += 1
            release = now
            if "delay" in hit:
                c["delayed"] += 1
                release = now + self.rng.uniform(1.0, max(1.0, float(delay_ms))) / 1000.0
            self._enqueue(out, release, now, max_queue)

    # -- output -----------------------------------------------------------------------------------

    def service(self, now, byte_time):
        """Write what is due to dst; return the next time there is something to do (or inf)."""
        if self.blocked:
            return _NEVER
        if now < self.write_paused_until:
            return self.write_paused_until
        q = self.queue
        while q:
            release, buf = q[0]
            if release > now:
                return release
            if byte_time:
                if self.next_tx < release:
                    self.next_tx = release  # the line was idle: no credit for the idle time
                if self.next_tx > now:
                    return self.next_tx
                allowed = int((now - self.next_tx) / byte_time) + 1
                clen = min(allowed, len(buf))
            else:
                clen = len(buf)
            try:
                if clen == len(buf):
                    w = os.write(self.dst, buf)
                else:
                    with memoryview(buf) as mv:
                        w = os.write(self.dst, mv[:clen])
            except BlockingIOError:
                self.blocked = True  # pty full: wait until it is writable
                return _NEVER
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                self.write_paused_until = now + 0.02
                return self.write_paused_until
            self.counters["relayed"] += w
            self.queued -= w
            if w:
                self.last_progress = now
            if byte_time:
                self.next_tx += w * byte_time
            if w == len(buf):
                q.popleft()
            else:
                del buf[:w]
                if w < clen:
                    self.blocked = True  # pty full
                    return _NEVER
        return _NEVER

    def discard(self):
        n = self.queued
        self.queue.clear()
        self.queued = 0
        self.counters["discarded"] += n
        return n


class NullModem:
    """Two raw ptys joined by a relay thread; see the module docstring.

    NullModem(drop=0.0, corrupt=0.0, duplicate=0.0, delay=0.0, delay_ms=20, seed=None,
              baud=None, max_queue=1 << 20, stall_timeout=0.5)
    """

    def __init__(self, drop=0.0, corrupt=0.0, duplicate=0.0, delay=0.0, delay_ms=20, seed=None, baud=None,
                 max_queue=1 << 20, stall_timeout=0.5):
        self._lock = threading.RLock()
        self._opts = {}
        self._opts_version = 0
        self._closed = False
        self._thread = None
        self._fds = []
        self._seed = seed
        base = random.Random(seed)
        seeds = (base.getrandbits(64), base.getrandbits(64))

        self.configure(drop=drop, corrupt=corrupt, duplicate=duplicate, delay=delay, delay_ms=delay_ms, baud=baud,
                       max_queue=max_queue, stall_timeout=stall_timeout)
        try:
            ma, sa = os.openpty()
            self._fds += [ma, sa]
            mb, sb = os.openpty()
            self._fds += [mb, sb]
            for fd in (ma, sa, mb, sb):
                _set_raw(fd)
            os.set_blocking(ma, False)
            os.set_blocking(mb, False)
            self._wake_r, self._wake_w = os.pipe()
            self._fds += [self._wake_r, self._wake_w]
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
        except BaseException:
            self._close_fds()
            raise
        self._ma, self._sa, self._mb, self._sb = ma, sa, mb, sb
        self.a_path = os.ttyname(sa)
        self.b_path = os.ttyname(sb)
        # "ab": written on a_path, read on b_path; "ba": the other way.
        self._dirs = {
            "ab": _Direction("ab", ma, mb, random.Random(seeds[0])),
            "ba": _Direction("ba", mb, ma, random.Random(seeds[1])),
        }
        self._error = None
        self._thread = threading.Thread(target=self._run, name="nullmodem %s<->%s" % (self.a_path, self.b_path),
                                        daemon=True)
        self._thread.start()

    # -- options ------------------------------------------------------------------------------------

    def configure(self, **opts):
        """Change options at run time: drop, corrupt, duplicate, delay, delay_ms, baud, max_queue,
        stall_timeout."""
        with self._lock:
            new = dict(self._opts)
            for k, v in opts.items():
                if k in FAULTS:
                    new[k] = _check_probability(k, v)
                elif k == "delay_ms":
                    if float(v) < 1:
                        raise ValueError("delay_ms must be >= 1")
                    new[k] = float(v)
                elif k == "baud":
                    if v is not None and float(v) <= 0:
                        raise ValueError("baud must be positive or None")
                    new[k] = None if v is None else float(v)
                elif k == "stall_timeout":
                    if v is not None and float(v) < 0:
                        raise ValueError("stall_timeout must be >= 0 or None")
                    new[k] = None if v is None else float(v)
                elif k == "max_queue":
                    if int(v) < 1:
                        raise ValueError("max_queue must be >= 1")
                    new[k] = int(v)
                else:
                    raise TypeError("unknown NullModem option %r" % k)
            self._opts = new
            self._opts_version += 1
        self._wake()

    def _opt(name):  # noqa: N805 - property factory
        def get(self):
            with self._lock:
                return self._opts[name]

        def set_(self, value):
            self.configure(**{name: value})

        return property(get, set_, doc="%s (settable at run time)" % name)

    drop = _opt("drop")
    corrupt = _opt("corrupt")
    duplicate = _opt("duplicate")
    delay = _opt("delay")
    delay_ms = _opt("delay_ms")
    baud = _opt("baud")
    max_queue = _opt("max_queue")
    stall_timeout = _opt("stall_timeout")
    del _opt

    @property
    def seed(self):
        return self._seed

    # -- counters -----------------------------------------------------------------------------------

    def stats(self):
        """Counters per direction: {"ab": {...}, "ba": {...}} with keys COUNTERS, plus "queued".

        received   bytes read from the sending end
        relayed    bytes delivered to the receiving end (duplicates included)
        dropped / corrupted / duplicated / delayed   fault events
        overflow   bytes lost because the queue towards a silent end was full
        discarded  bytes thrown away by discard_pending()
        queued     bytes held in the relay right now
        """
        with self._lock:
            out = {}
            for name, d in self._dirs.items():
                c = dict(d.counters)
                c["queued"] = d.queued
                out[name] = c
            return out

    def reset_stats(self):
        with self._lock:
            for d in self._dirs.values():
                for k in d.counters:
                    d.counters[k] = 0

    def pending(self, direction=None):
        """Bytes still held in the relay for one direction ("ab"/"ba") or both."""
        with self._lock:
            if direction is None:
                return sum(d.queued for d in self._dirs.values())
            return self._dirs[direction].queued

    def wait_idle(self, timeout=5.0):
        """Wait until the relay holds no bytes (both directions); True if it got there in time."""
        deadline = time.monotonic() + timeout
        while True:
            if self.pending() == 0:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)

    def discard_pending(self, side):
        """Throw away every byte on its way to ``side`` ("a" or "b"): the relay's queue and what
        waits unread in that end's pty.  Returns the number of bytes discarded from the relay."""
        if side not in ("a", "b"):
            raise ValueError("side must be 'a' or 'b'")
        with self._lock:
            n = self._dirs["ba" if side == "a" else "ab"].discard()
            if not self._closed:
                try:
                    termios.tcflush(self._sa if side == "a" else self._sb, termios.TCIFLUSH)
                except termios.error:
                    pass
        return n

    def set_raw(self, side):
        """Put one end's tty back in raw mode with VMIN=1/VTIME=0, undoing whatever termios
        changes the program at that end made (done by VirtualShoe at each boot)."""
        if side not in ("a", "b"):
            raise ValueError("side must be 'a' or 'b'")
        with self._lock:
            if not self._closed:
                _set_raw(self._sa if side == "a" else self._sb)

    # -- life cycle ---------------------------------------------------------------------------------

    @property
    def closed(self):
        return self._closed

    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except (AttributeError, BlockingIOError, OSError):
            pass

    def close(self):
        """Stop the relay thread and close every descriptor (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        self._close_fds()

    def _close_fds(self):
        fds, self._fds = self._fds, []
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<NullModem a=%s b=%s%s>" % (getattr(self, "a_path", "?"), getattr(self, "b_path", "?"),
                                            " closed" if self._closed else "")

    # -- relay thread -------------------------------------------------------------------------------

    def _run(self):
        try:
            self._loop()
        except BaseException as e:  # pragma: no cover - surfaced through .error
            self._error = e
            raise

    @property
    def error(self):
        """The exception that stopped the relay thread, if any."""
        return self._error

    def _loop(self):
        sel = selectors.DefaultSelector()
        dirs = self._dirs
        by_src = {d.src: d for d in dirs.values()}
        by_dst = {d.dst: d for d in dirs.values()}
        masks = {self._ma: 0, self._mb: 0}
        sel.register(self._wake_r, selectors.EVENT_READ)
        for fd in masks:
            sel.register(fd, selectors.EVENT_READ)
            masks[fd] = selectors.EVENT_READ
        version = -1
        opts = None
        wake_at = _NEVER
        try:
            while True:
                now = time.monotonic()
                timeout = None if wake_at == _NEVER else max(0.0, wake_at - now)
                events = sel.select(timeout)
                now = time.monotonic()
                with self._lock:
                    if self._closed:
                        return
                    if version != self._opts_version:
                        version = self._opts_version
                        opts = dict(self._opts)
                        probs = {k: opts[k] for k in FAULTS}
                        for d in dirs.values():
                            d.set_probs(probs)
                    byte_time = 10.0 / opts["baud"] if opts["baud"] else 0.0
                    for key, ev in events:
                        fd = key.fd
                        if fd == self._wake_r:
                            try:
                                while os.read(fd, 4096):
                                    pass
                            except BlockingIOError:
                                pass
                            continue
                        if ev & selectors.EVENT_WRITE:
                            by_dst[fd].blocked = False
                        if ev & selectors.EVENT_READ:
                            d = by_src[fd]
                            # Take no more than fits (flow control), unless the receiver stalled:
                            # then read on and let the queue limit drop the excess.
                            room = opts["max_queue"] - d.queued
                            stall = opts["stall_timeout"]
                            if room > 0:
                                size, limit = min(_CHUNK, room), math.inf
                            elif stall is not None and now - d.last_progress >= stall:
                                size, limit = _CHUNK, opts["max_queue"]
                            else:
                                size = 0
                            try:
                                data = os.read(fd, size) if size else b""
                            except BlockingIOError:
                                data = b""
                            except OSError as e:
                                if e.errno != errno.EIO:
                                    raise
                                # No slave open (cannot happen while we hold the slaves): back off.
                                d.read_paused_until = now + 0.02
                                data = b""
                            if data:
                                d.take(data, now, limit, opts["delay_ms"])
                    wake_at = _NEVER
                    want = {}
                    stall = opts["stall_timeout"]
                    for d in dirs.values():
                        wake_at = min(wake_at, d.service(now, byte_time))
                        readable = True
                        if d.read_paused_until > now:
                            readable = False
                            wake_at = min(wake_at, d.read_paused_until)
                        elif d.queued >= opts["max_queue"]:
                            # Flow control: leave the bytes in the sender's pty (its writes block)
                            # while the receiver keeps taking them; once it has taken nothing for
                            # stall_timeout, read on and drop (overflow) so the sender never hangs.
                            if stall is None or now - d.last_progress < stall:
                                readable = False
                                if stall is not None:
                                    wake_at = min(wake_at, d.last_progress + stall)
                        # Selector interest: read a src unless held back; write-wait a blocked dst.
                        want[d.src] = want.get(d.src, 0) | (selectors.EVENT_READ if readable else 0)
                        want[d.dst] = want.get(d.dst, 0) | (selectors.EVENT_WRITE if d.blocked else 0)
                    for fd, m in want.items():
                        if m != masks[fd]:
                            if masks[fd] == 0:
                                sel.register(fd, m)
                            elif m == 0:
                                sel.unregister(fd)
                            else:
                                sel.modify(fd, m)
                            masks[fd] = m
        finally:
            sel.close()
