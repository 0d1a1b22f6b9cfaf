# A fake of the Pico's USB CDC line and of its interrupt character, for the unix port and
# CPython, on the fake board's clock (tests/fakes/machine.py). What it models, from the port:
#
#   the interrupt character  -1 (off) until pyexec turns it to Ctrl-C for main.py's code
#                (shared/runtime/pyexec.c, parse_compile_execute: pyexec_main() here);
#                micropython.kbd_intr(c) sets it (py/modmicropython.c, mp_micropython_kbd_intr
#                -> shared/runtime/interrupt_char.c, mp_hal_set_interrupt_char). The firmware's
#                `import micropython` gets this module's stand-in (install()): kbd_intr sets
#                the line's character, everything else is the real module's.
#   the host's bytes         Cdc.send(data, after_us): they arrive on the board's clock, each
#                taken as tud_cdc_rx_cb takes it (shared/tinyusb/mp_usbd_cdc.c): the interrupt
#                character empties the stdin ring buffer and schedules a KeyboardInterrupt
#                (mp_sched_keyboard_interrupt), which the VM raises at its next check of pending
#                events: here, from the next call into the fake board (its clock, a pin, a
#                read of the line). Any other byte goes into the ring (MICROPY_HW_STDIN_BUFFER_LEN
#                512, ports/rp2/mphalport.c), or waits in the host's queue while the ring is full.
#   the device's end         Cdc.stdin: a stream the unix port's select.poll can poll (its ioctl
#                answers MP_STREAM_POLL), read(n) from the ring; Cdc.stdout collects what the
#                shoe writes (the host's end reads it: received()).
#
# On a pty (the virtual shoe) 0x03 is only a byte: this is where a test sees Ctrl-C as a Pico has it.
import io
import sys

import machine

RING = 512
CTRL_C = 3


class Stdin(io.IOBase):
    def __init__(self, cdc):
        self.cdc = cdc
        self.reads = 0

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL
            self.cdc.check()
            return arg & 1 if self.cdc.ring else 0
        return -1 if req == 10 else 0  # MP_STREAM_GET_FILENO: none

    def read(self, n):
        self.cdc.check()
        self.reads += 1
        d = bytes(self.cdc.ring[:n])
        self.cdc.ring = self.cdc.ring[n:]
        self.cdc.refill()
        return d

    def readinto(self, buf):
        d = self.read(len(buf))
        buf[:len(d)] = d
        return len(d)


class Stdout:
    def __init__(self, cdc):
        self.cdc = cdc

    def write(self, b):
        self.cdc.check()
        self.cdc.sent.extend(bytes(b))
        return len(b)


class Cdc:
    def __init__(self, board=None):
        self.board = board or machine.board
        self.intr = -1
        self.ring = bytearray()
        self.backlog = bytearray()  # the host's bytes the full ring has not taken yet
        self.sent = bytearray()
        self.pending = False        # a KeyboardInterrupt scheduled, not raised yet
        self.interrupts = 0
        self.stdin = Stdin(self)
        self.stdout = Stdout(self)
        self.board.checks.append(self.check)

    def pyexec_main(self):
        """What pyexec does just before main.py's first line runs: Ctrl-C on."""
        self.intr = CTRL_C

    def send(self, data, after_us=0):
        """The host writes data; it arrives after_us from now on the board's clock."""
        data = bytes(data)
        self.board.later(after_us, lambda: self._arrive(data))

    def _arrive(self, data):
        for b in data:
            if len(self.ring) >= RING:
                self.backlog.append(b)
            elif b == self.intr:
                self.ring = bytearray()  # "Clear the ring buffer"
                self.pending = True      # "and stop": mp_sched_keyboard_interrupt()
                self.interrupts += 1
            else:
                self.ring.append(b)

    def refill(self):
        if self.backlog and len(self.ring) < RING:
            data, self.backlog = self.backlog, bytearray()
            self._arrive(data)

    def check(self):
        """The VM's check of pending events: a scheduled KeyboardInterrupt is raised here."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt()

    def received(self):
        out = bytes(self.sent)
        self.sent = bytearray()
        return out


class _Micropython:
    """`micropython` as the firmware imports it here: the real module, but kbd_intr sets the
    fake line's interrupt character."""

    def __init__(self, real, cdc):
        self._real = real
        self._cdc = cdc

    def __getattr__(self, name):
        return getattr(self._real, name)

    def kbd_intr(self, c):
        self._cdc.intr = c


def install(cdc):
    """The firmware's `import micropython` gets the stand-in of cdc's line from now on."""
    real = sys.modules.get("micropython")
    if isinstance(real, _Micropython):
        real = real._real
    if real is None:
        import micropython as real
    sys.modules["micropython"] = _Micropython(real, cdc)


def uninstall():
    m = sys.modules.get("micropython")
    if isinstance(m, _Micropython):
        sys.modules["micropython"] = m._real
