# The front panel's status LED (a WS2812B, pinmap.json "status_led"), driven by a PIO state
# machine: the LED's 800 kbit/s timing never depends on the CPU. One 24-bit GRB word a pixel,
# most significant bit first, from the top of each word put in the TX FIFO (autopull at 24
# bits). Each bit is T1 + T2 + T3 = 10 cycles at LED_HZ (1.25 us): high for T1 (0.25 us) then,
# for a 1, high for T2 more (0.875 us in all), else low; low for the rest. The WS2812B's
# datasheet: T0H 0.4 us, T1H 0.8 us (+-150 ns), a bit 1.25 us (+-600 ns); it latches after
# 50 us low, which the pin is between words.
#
# The same @rp2.asm_pio source runs on the board and in the tests (tests/test_rp2.py runs it in
# a PIO emulator and measures the bits).
import rp2

try:
    from typing import TYPE_CHECKING  # type: ignore
except ImportError:
    TYPE_CHECKING = False
if TYPE_CHECKING:  # the PIO assembler's names, for type checkers (asm_pio supplies them)
    from rp2.asm_pio import jmp, label, nop, not_x, out, wrap, wrap_target, x  # noqa

LED_HZ = 8000000  # 0.125 us a cycle
T1 = 2
T2 = 5
T3 = 3

# what each state of the shoe shows (Device.indication): (R, G, B), blinking
COLORS = {
    "idle": ((0, 24, 0), False),        # green: ready for a hand
    "dealing": ((0, 0, 32), False),     # blue: a hand in progress
    "attention": ((96, 0, 0), True),    # red, blinking: a stop; the operator must act
    "locked": ((64, 28, 0), False),     # amber: the firmware check failed (deploy again)
}
BLINK_MS = 250


@rp2.asm_pio(sideset_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_LEFT, autopull=True,
             pull_thresh=24)
def ws2812():
    # (the assembler runs this with its own globals: the delays are T3 - 1, T1 - 1, T2 - 1;
    # tests/test_rp2.py measures them in the emulator against T1, T2, T3)
    wrap_target()
    label("bit")
    out(x, 1).side(0)[2]                # the bit; the pin low for the end of the last one
    jmp(not_x, "zero").side(1)[1]       # high for T1
    jmp("bit").side(1)[4]               # a 1: high for T2 more
    label("zero")
    nop().side(0)[4]                    # a 0: low for T2
    wrap()


def grb(rgb):
    """The word a pixel of colour (r, g, b) is put as (GRB in the top 24 bits)."""
    return ((rgb[1] & 0xFF) << 24) | ((rgb[0] & 0xFF) << 16) | ((rgb[2] & 0xFF) << 8)


class StatusLed:
    """The LED on its state machine: show(state) sets what it shows (COLORS), blink(now_ms)
    keeps a blinking state blinking (called from the main loop's polls)."""

    def __init__(self, sm, clock):
        self.sm = sm
        self.clock = clock
        self.state = ""  # nothing shown yet
        self.lit = False
        self.t = 0

    def show(self, state):
        self.state = state
        self._put(True)

    def blink(self):
        shown = COLORS.get(self.state)
        if shown is None or not shown[1]:
            return
        now = self.clock.ticks_ms()
        if self.clock.ticks_diff(now, self.t) >= BLINK_MS:
            self._put(not self.lit)

    def _put(self, lit):
        self.lit = lit
        self.t = self.clock.ticks_ms()
        self.sm.put(grb(COLORS[self.state][0]) if lit else 0)
