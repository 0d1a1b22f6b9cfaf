# The hardware layer's interface, declared once: what the firmware core (device.py, panel.py,
# rare.py, link.py, main.py) may ask of the shoe's hardware, with a default for every optional
# feature, so that no caller probes with getattr. Each face subclasses Hal: hal/rp2.py (the
# Pico), hal/sim.py (the virtual shoe), tests/pyhal.py (the firmware in the tests' process).
#
#   attributes      clock (a Clock), store (hal.store.DirStore: the shoe's files), mech (the
#                   mechanism: feed, burn, deal...), flash (the journal's block device: BLOCK, PAGE; or None:
#                   then journal_fault says why, and the shoe is locked), caps (the protocol's
#                   capability bits the hardware brings: CAP_SIM, CAP_JOURNAL), device_id,
#                   simulated (a simulator: seeds and sim commands are allowed), deck (the order
#                   in the magazine when the hardware knows it, else None)
#   required        log(msg); rng(seed) -> the hand's random source; entropy(n) -> n bytes;
#                   open_port() -> the protocol's port (read_into, write, close)
#   optional        tick() feeds the watchdog; start_watchdog() / stop_watchdog();
#                   maintenance_switch() the key switch is turned; presses() the front panel's
#                   buttons pressed since the last call (names of BUTTONS below); floor_key();
#                   signal(ok) the buzzer's answer to a press; show(state) the status LED
#                   (idle, dealing, attention, locked). The defaults: a shoe without them.
# Kept small: a Pico holds every imported module's bytecode in its heap.
import time

# The flash's geometry, in one place: Hal.flash is a block device of BLOCK-byte erase blocks
# programmed in PAGE-byte pages (the RP2040's flash); the journal (journal.py) is laid out on
# them, hal/reserve.py reserves littlefs's blocks of this size, hal/flashdev.py emulates it.
BLOCK = 4096
PAGE = 256

# The front panel's buttons, in one place: presses() reports these names, hal/rp2wire.py wires
# pin btn_<name> for each, panel.py runs each one's commands.
BUTTONS = ("deal", "burn", "exposed", "premature", "misdeal")


class Clock:
    """time's ticks API, bound once (no Python call in between): ticks_ms, ticks_us,
    ticks_diff, ticks_add, sleep_ms."""

    def __init__(self):
        self.ticks_ms = time.ticks_ms
        self.ticks_us = time.ticks_us
        self.ticks_diff = time.ticks_diff
        self.ticks_add = time.ticks_add
        self.sleep_ms = time.sleep_ms


class Hal:
    simulated = False
    caps = 0
    flash = None
    journal_fault = None  # why the journal is not in flash (the shoe is locked), or None
    deck = None
    device_id = "unknown"

    def log(self, msg):
        raise NotImplementedError

    def rng(self, seed):
        raise NotImplementedError

    def entropy(self, n):
        raise NotImplementedError

    def open_port(self):
        raise NotImplementedError

    def tick(self):
        pass

    def start_watchdog(self):
        pass

    def stop_watchdog(self):
        pass

    def maintenance_switch(self):
        return False

    def presses(self):  # type: () -> tuple
        return ()

    def floor_key(self):
        return False

    def signal(self, ok):
        pass

    def show(self, state):
        pass
