# The shoe on a Raspberry Pi Pico: the simulator's HAL interface (hal/sim.py) over `machine` and
# `rp2`. Everything is wired from hardware/pinmap.json (the image carries it as board.py, checked
# and its timing budget worked out on the host: facedown.build);
# the logic lives in hal/rp2mech.py and hal/stepper_pio.py, which take these objects as
# arguments, so the tests run it all on fakes.
#
#   mech      hal.rp2mech.Mechanism: the PIO stepper, the beams, the reader (UART), the diverter;
#             with the carousel fitted (revision B), hal.carousel_rp2.ShufflingMechanism, which
#             realises the engine's reshuffle plans (carousel: its Carousel, on PIO sm 1)
#   flash     the journal's blocks: littlefs files of one block each, programmed raw through
#             rp2.Flash() (hal/reserve.py); None when the filesystem cannot hold them, and then
#             journal_fault says why and the shoe is locked (it never deals on a journal that a
#             power cut would lose)
#   clock     ticks_ms / ticks_us / ticks_diff / ticks_add / sleep_ms
#   tick()    feeds the watchdog; called by every read of the USB port (the main loop polls it
#             all the time) and by the mechanism's loops. The watchdog starts with open_port().
#   entropy(n)  n raw bytes from the ring oscillator (8 RANDOMBIT samples each, unwhitened),
#               through the continuous health tests (shoe.health): for an outside lab
#   rng(None)   a hand's random source: the HMAC-DRBG (shoe.drbg), instantiated at the first
#               hand from the health-tested raw ROSC bits, reseeded from them and cycled at
#               every hand; raises shoe.health.EntropyFault (latched) if the source fails.
#               A shoe never deals from a seed: rng(seed) raises ValueError.
#   open_port() the protocol on USB CDC (sys.stdin/stdout), Ctrl-C off (main.py turned it off
#               first); the port's close() (main.py, on every way out of the loop) stops the
#               watchdog through WATCHDOG_CTRL (machine.WDT has no way to)
#   log(msg)    kept in RAM (hal.logs): the USB line carries the protocol
#   presses()   the front panel's dealer buttons pressed since the last call (debounced edges,
#               names of hal.base.BUTTONS); floor_key(): the floor key turned; signal(ok): the
#               buzzer's answer to a press (panel.py runs the presses); show(state): the status
#               LED (Device.indication), with an alarm when the operator is needed
#
# Flash layout (RPI_PICO, 2 MB), as the stock MicroPython image has it:
#
#     0x000000 - 0x09FFFF   640 KB   MicroPython firmware (code, frozen modules)
#     0x0A0000 - 0x1FFFFF  1408 KB   the storage region, rp2.Flash(): littlefs over all of it
#                                    (the frozen _boot.py mounts it, and formats it when that
#                                    mount fails); in it the firmware's files, the shoe's data
#                                    files and the journal's blocks (journal.blocks/b000 ..., 224
#                                    blocks of 4 KB with the firmware installed: hal/reserve.py)
#
# A build with a ROMFS partition (MICROPY_HW_ROMFS_BYTES: the modules run in place from flash,
# docs/deploy.md) takes the partition from the storage region, which then starts later; the
# same stock _boot.py mounts littlefs over the rest, and the journal's blocks are reserved the
# same way.
import sys

import machine
import rp2

try:
    from typing import TYPE_CHECKING  # type: ignore
except ImportError:  # MicroPython
    TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any  # noqa: F401  (type comments)

from caps import CAP_JOURNAL  # (not wire: it would stay through the pin map's peak at boot)
from hal.rp2mech import (UsbPort, MechanismFault, ROSC_RANDOMBIT, WATCHDOG_CTRL_CLR,
                         WATCHDOG_ENABLE)
from hal.stepper_pio import STEP_HZ, step_pulses
from hal.base import Clock, Hal
from hal.store import DirStore
from journal import JOURNAL_BLOCKS
from shoe.compat import release

LOG_LINES = 32
BEEP_DUTY = 32768          # the piezo at 50 % (pinmap.json: buzzer)
BEEP_OK_MS = 60
BEEP_REFUSED_MS = 400
BEEP_ALARM_MS = 1000       # a stop: the operator is needed

__all__ = ["Rp2Hal", "MechanismFault", "Clock"]


class Rp2Hal(Hal):
    """The Pico's face of the hardware layer (hal/base.py declares the interface)."""

    if TYPE_CHECKING:  # what the wiring sets (hal/rp2wire.py), for the type checker
        timing = None  # type: Any
        sm = None  # type: Any
        mech = None  # type: Any
        carousel = None  # type: Any
        carousel_sm = None  # type: Any
        maint_pin = None  # type: Any
        maint_level = None  # type: Any
        debug = None  # type: Any
        wdt_ms = None  # type: Any
        buttons = None  # type: Any
        key = None  # type: Any
        buzzer = None  # type: Any
        beep_until = None  # type: Any
        led_sm = None  # type: Any
        led = None  # type: Any

    def __init__(self, pinmap=None, clock=None, root="", journal=None):
        """pinmap: None for the board module the image carries (board.py, generated from
        hardware/pinmap.json by facedown.build), or a function that returns a hal.pinview.PinMap
        (the tests: hal.pins.load of a map file). root: the
        littlefs root ("": the working folder, / on a Pico); journal: a block device to keep
        the journal on instead of the blocks reserved in littlefs (the tests under CPython,
        which has no littlefs)."""
        self.logs = []
        self.deck = None          # the order in the magazine is not known (no shuffler yet)
        self.clock = clock if clock is not None else Clock()
        from hal import rp2wire

        rp2wire.wire(self, pinmap)
        # the pin map was read once; its view and the wiring give their RAM back
        self.pm = None  # type: Any
        rp2wire = None
        release("hal.rp2wire")
        release("hal.pinview")
        import gc

        gc.collect()
        self.store = DirStore(root)  # the littlefs root: device.key, audit.log, counters
        # the journal's blocks, in littlefs
        self.journal_fault = None
        if journal is None:
            from hal.reserve import journal_flash

            journal, self.journal_fault, note = journal_flash(self.store, rp2.Flash(),
                                                              JOURNAL_BLOCKS)
            release("hal.reserve")  # (and off the hal package, or it stays in the heap)
            if note and journal is not None:
                self.log("flash: %s (%d blocks for the journal)" % (note, journal.ioctl(4, 0)))
            if self.journal_fault:
                self.journal_fault += " (flash the stock MicroPython image, docs/deploy.md)"
                self.log(self.journal_fault)
        self.flash = journal
        self.caps = CAP_JOURNAL if journal is not None else 0
        self.rosc = None  # type: Any  # the health-tested ROSC (shoe.health.CheckedSource)
        self.drbg = None  # type: Any  # the HMAC-DRBG, from the first hand on
        self.device_id = "pico-" + "".join("%02x" % b for b in machine.unique_id())
        self.wdt = None
        self.hands = 0

    def maintenance_switch(self):
        """The maintenance key switch is turned (now): maintenance without a session, and, at
        power-up, a firmware that fails leaves its REPL to the technician."""
        return (1 if self.maint_pin.value() else 0) == self.maint_level

    def presses(self):
        """The buttons pressed since the last call (a confirmed press edge each), as names of
        hal.base.BUTTONS; polled by the main loop between commands, every ms or so. Also ends a
        beep whose time is up."""
        now = self.clock.ticks_us()
        out = ()
        for name, b in self.buttons:
            if b.update(now) > 0:
                out += (name,)
        self.key.update(now)
        self.led.blink()
        if self.beep_until is not None and \
                self.clock.ticks_diff(self.clock.ticks_ms(), self.beep_until) >= 0:
            self.buzzer.duty_u16(0)
            self.beep_until = None
        return out

    def floor_key(self):
        """The floor key is turned (debounced)."""
        return self.key.active

    def signal(self, ok):
        """The buzzer answers a press: a short beep when it ran, a long one when refused."""
        self._beep(BEEP_OK_MS if ok else BEEP_REFUSED_MS)

    def show(self, state):
        """The status LED shows the shoe's state (hal.led_pio.COLORS: idle, dealing, attention,
        locked); a stop that needs the operator (attention) sounds the alarm too."""
        if state == "attention" and self.led.state != "attention":
            self._beep(BEEP_ALARM_MS)
        self.led.show(state)

    def _beep(self, ms):
        self.buzzer.duty_u16(BEEP_DUTY)
        self.beep_until = self.clock.ticks_add(self.clock.ticks_ms(), ms)

    # ---------------------------------------------------------------- the HAL interface

    def tick(self):
        """Feed the watchdog (once it runs)."""
        if self.wdt is not None:
            self.wdt.feed()

    def start_watchdog(self):
        if self.wdt is None:
            self.wdt = machine.WDT(timeout=self.wdt_ms)

    def _source(self):
        """The ring oscillator's raw RANDOMBIT samples through the continuous health tests
        (never whitened before the tests see them). Imported when first needed, as the
        simulator does: the HAL's boot heap stays as it was."""
        if self.rosc is None:
            from shoe.health import CheckedSource, raw_from_bits

            self.rosc = CheckedSource(raw_from_bits(_rosc_bit))
        return self.rosc

    def entropy(self, n):
        """n raw, health-tested bytes of the ring oscillator (raises EntropyFault)."""
        return self._source()(n)

    def rng(self, seed):
        """The hand's random source. The first hand instantiates the HMAC-DRBG (the start-up
        test, then 768 raw bits); every hand reseeds it with 512 fresh raw bits and cycles it
        with the microsecond timer as additional input, so a hand's shuffles depend on entropy
        drawn for it and a fault in the source shows here, before any card is dealt, as
        EntropyFault (latched: every later hand raises it too, nothing falls back)."""
        if seed is not None:
            raise ValueError("a shoe deals from its DRBG, never from a seed")
        self.hands += 1
        c = self.clock
        event = (c.ticks_diff(c.ticks_us(), 0) & 0xFFFFFFFF).to_bytes(4, "little")
        d = self.drbg
        if d is None:
            from shoe.drbg import HmacDrbg

            d = HmacDrbg(self._source(), personalization=self.device_id.encode())
            self.drbg = d
        else:
            d.reseed(event)
        d.cycle(event)
        return d

    def stop_watchdog(self):
        """machine.WDT cannot be stopped: clear WATCHDOG_CTRL.ENABLE instead."""
        if self.wdt is not None:
            self.wdt.feed()
            machine.mem32[WATCHDOG_CTRL_CLR] = WATCHDOG_ENABLE
            self.wdt = None

    def open_port(self, inp=None, out=None):
        """The protocol on USB CDC. Ctrl-C does not interrupt (a frame may hold 0x03; main.py
        turned it off first thing) unless the maintenance key was turned at power-up (a
        developer's Ctrl-C). Starts the watchdog. The port's close() (main.py, on every way
        out of the loop) stops it and releases the line; at the REPL pyexec takes care of
        Ctrl-C again (shared/runtime/pyexec.c)."""
        import select
        import micropython

        micropython.kbd_intr(3 if self.debug else -1)
        if inp is None:
            inp = sys.stdin.buffer
        if out is None:
            out = sys.stdout.buffer
        poller = select.poll()
        poller.register(sys.stdin if inp is sys.stdin.buffer else inp, select.POLLIN)
        self.start_watchdog()

        def release():
            self.stop_watchdog()
            try:
                poller.unregister(sys.stdin if inp is sys.stdin.buffer else inp)
            except (OSError, ValueError, KeyError):
                pass

        return UsbPort(inp, out, poller, self.tick, release)

    def log(self, msg):
        """Kept in RAM (USB carries the protocol); printed only in debug mode."""
        self.logs.append(msg)
        if len(self.logs) > LOG_LINES:
            self.logs.pop(0)
        if self.debug:
            print(msg)

    # ---------------------------------------------------------------- for the wiring
    # The closures the wired objects keep for good are made here, in the module that stays:
    # hal/rp2wire.py is let go after power-up (a closure made there would hold its globals)
    # and reaches these through the Hal it wires, without importing this module.

    @staticmethod
    def volts(adc, k):
        """The motor supply's voltage, read (the mechanism's motor_volts)."""
        def read():
            return adc.read_u16() * k

        return read

    @staticmethod
    def restarter(sm, step):
        """A stepper's restart of its state machine (hal.stepper_pio.Stepper)."""
        def restart():
            sm.init(step_pulses, freq=STEP_HZ, set_base=step)

        return restart


def _rosc_bit():
    return machine.mem32[ROSC_RANDOMBIT] & 1
