# The simulated shoe for the MicroPython unix port: the mechanism model, a folder that plays the
# Pico's flash, and the serial link on a pseudo-terminal (one end of the host's null-modem).
# That pty is also the process's stdin/stdout (the REPL's, as the Pico's USB CDC is): nothing
# may print while the protocol runs, so the log is appended to shoe.log in the flash folder.
import os
import select
import sys
import time

from shoe.rng import SeededRandom
from hal.simmech import SimMech
from hal.base import Clock, Hal
from hal.store import DirStore

from journal import JOURNAL_BLOCKS
from caps import CAP_JOURNAL, CAP_SIM

LOG = "shoe.log"
PANEL = "panel"  # the front panel's presses, written by the host's VirtualShoe.press
PANEL_POLL_MS = 20


class PtyPort:
    """The device end of the virtual serial line. Reads never block."""

    def __init__(self, path):
        self.f = open(path, "r+b")
        # raw, and VMIN = VTIME = 0: a read returns what is there and never waits for more
        try:
            import termios

            fd = self.f.fileno()
            attr = termios.tcgetattr(fd)
            attr[6][6] = 0  # VMIN
            attr[6][5] = 0  # VTIME
            termios.tcsetattr(fd, termios.TCSANOW, attr)
            self.chunked = True
        except (ImportError, OSError, AttributeError):
            self.chunked = False
        self.poller = select.poll()
        self.poller.register(self.f, select.POLLIN)

    def read_into(self, buf):
        if self.chunked:
            if not self.poller.poll(0):
                return 0
            return self.f.readinto(buf) or 0
        n = 0
        size = len(buf)
        while n < size and self.poller.poll(0):
            b = self.f.read(1)
            if not b:
                break
            buf[n] = b[0]
            n += 1
        return n

    def write(self, data):
        self.f.write(data)
        try:
            self.f.flush()
        except OSError:  # flush() on a tty can raise EINVAL under the unix port
            pass

    def close(self):
        """Maintenance: the REPL (on stdin/stdout, the same pty) takes the line."""
        try:
            self.poller.unregister(self.f)
        except (OSError, ValueError, KeyError):
            pass
        self.f.close()


def power_off(exc=None):
    """A simulated power cut: the process ends at once, as a shoe's CPU stops (SIGKILL from a
    child shell: the unix port has no os._exit, and under -i an exception would leave the
    process in the REPL)."""
    if exc is not None:
        sys.print_exception(exc, sys.stderr)  # the log: where the power went
    os.system("kill -9 $PPID")


def _options(text):
    out = {}
    for part in (text or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


class SimHal(Hal):
    """The virtual shoe's face of the hardware layer (hal/base.py declares the interface)."""

    simulated = True

    def __init__(self):
        opts = _options(os.getenv("FACEDOWN_SIM"))
        # the simulator's own files (its flash chip, the output tray, the log, the panel's
        # switches): in the flash folder, or outside the shoe's filesystem when that is a
        # littlefs of its own (VirtualShoe(littlefs=...): outside=/host)
        out = opts.get("outside", "")
        self.out = out + "/" if out else ""
        self.mech = SimMech()
        self.mech.feed_ms = int(opts.get("feed_ms", "0"))
        self.mech.realtime = True  # a stopping fault takes the hardware's time (pinmap.json)
        self.seed = opts.get("seed")
        self.hands = 0
        self.drbg = None
        self.deck = None
        if opts.get("deck"):
            from shoe.cards import parse

            text = opts["deck"]
            self.deck = [parse(text[i:i + 2]) for i in range(0, len(text), 2)]
        if opts.get("two_decks") == "1":  # the next deck shuffled during the hand (SHUFFLER.md)
            self.mech.two_decks()
            if opts.get("gap_cards"):  # ... N cards in each gap between steps, not at once
                self.mech.decks.per_gap = int(opts["gap_cards"])
            self.mech.decks.rng_source = self.deck_rng  # a deck loaded again after a power cut
        rate = float(opts.get("mech_faults", "0"))
        if rate:
            self.mech.random_faults(rate, SeededRandom("faults/%s" % self.seed))
        self.store = DirStore(".")
        self.clock = Clock()
        self.t_panel = self.clock.ticks_ms()
        self.caps = CAP_SIM | CAP_JOURNAL
        self.device_id = self.store.read("device_id")
        if not self.device_id:
            self.device_id = "sim-" + "".join("%02x" % b for b in os.urandom(4))
            self.store.write("device_id", self.device_id)
        self.port_path = os.getenv("FACEDOWN_PORT")
        # the flash chip: a file with the Pico's geometry; the journal's partition
        from hal.flashdev import FileFlash

        self.flash = FileFlash(self.out + "flash.bin",
                               int(opts.get("flash_blocks", str(JOURNAL_BLOCKS))))
        if opts.get("settle", "sensors") == "sensors":
            self.mech.world = self.out + "world.txt"  # the output tray, outside the shoe's flash

    def rng(self, seed):
        """The random source for a hand: the host's seed or the simulator's (seed/k for hand
        k), both replayable; otherwise the shoe's HMAC-DRBG, fed by the host's entropy through
        the continuous health tests (as the Pico's is by its ring oscillator)."""
        self.hands += 1
        if seed is None and self.seed is not None:
            seed = "%s/%d" % (self.seed, self.hands)
        if seed is not None:
            return SeededRandom(seed)
        if self.drbg is None:
            from shoe.drbg import HmacDrbg
            from shoe.health import CheckedSource

            self.drbg = HmacDrbg(CheckedSource(os.urandom),
                                 personalization=self.device_id.encode())
        self.drbg.cycle((time.ticks_us() & 0xFFFFFFFF).to_bytes(4, "little"))  # move on
        return self.drbg

    def deck_rng(self):
        """The random source for the next deck's plan drawn again after a power cut: the
        simulator's seed's own stream (seed/deck/boot), or the shoe's HMAC-DRBG."""
        if self.seed is not None:
            return SeededRandom("%s/deck/%s" % (self.seed, self.store.read("boots") or "0"))
        return self.rng(None)

    def maintenance_switch(self):
        """The simulated maintenance key switch: turned while a file "keyswitch" is in the
        flash folder."""
        try:
            os.stat(self.out + "keyswitch")
            return True
        except OSError:
            return False

    def presses(self):
        """The simulated front panel: the dealer buttons pressed since the last call, from a
        file "panel" in the flash folder (a name a line, written by VirtualShoe.press), read
        and removed. Looked at every PANEL_POLL_MS."""
        now = self.clock.ticks_ms()
        if self.clock.ticks_diff(now, self.t_panel) < PANEL_POLL_MS:
            return ()
        self.t_panel = now
        try:
            with open(self.out + PANEL) as f:
                text = f.read()
            os.remove(self.out + PANEL)
        except OSError:
            return ()
        return [name for name in text.split() if name]

    def floor_key(self):
        """The simulated floor key: turned while a file "floorkey" is in the flash folder."""
        try:
            os.stat(self.out + "floorkey")
            return True
        except OSError:
            return False

    def signal(self, ok):
        """The buzzer's answer to a press (a short beep, or a long one: refused)."""
        self.log("buzzer: %s" % ("beep" if ok else "long beep (refused)"))

    def show(self, state):
        """The status LED (idle, dealing, attention, locked), in the log."""
        self.log("led: %s" % state)

    def entropy(self, n):
        """Unpredictable bytes (session nonces): the host's entropy."""
        return os.urandom(n)

    def open_port(self):
        if not self.port_path:
            raise OSError("FACEDOWN_PORT is not set: the serial line to open")
        return PtyPort(self.port_path)

    def log(self, msg):
        """A line in shoe.log (stdout is the serial line: a print would corrupt the protocol)."""
        try:
            with open(self.out + LOG, "a") as f:
                f.write(msg + "\n")
        except OSError:
            pass
