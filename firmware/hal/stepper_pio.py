# The feed stepper's STEP pulses, made by a PIO state machine so that the motor's timing never
# depends on the CPU: a flash erase stalls the CPU with interrupts off for tens of milliseconds,
# and the pulses already queued in the FIFO go on regardless.
#
# The program takes one 32-bit word per *segment* from its TX FIFO:
#
#     bits 0..15   steps - 1        (1 to 65536 STEP pulses)
#     bits 16..31  half - OVERHEAD  (half: the half-period in state-machine cycles)
#
# and emits that many pulses, each `half` cycles high then `half` cycles low (a square wave of
# STEP_HZ / (2 * half) steps/s), then pushes one word to its RX FIFO: a token saying the segment
# is finished, so the CPU knows exactly how far the motor has gone. Between segments the pin
# stays low for 3 extra cycles (push, pull, out); with an empty FIFO it waits, low, at the pull.
# The push blocks while the RX FIFO is full (4 words): up to QUEUE + 1 segments are outstanding,
# and a CPU away for all of them (a collection of a Pico's heap takes 8.4 ms, five segments at
# cruise 10 ms) would otherwise lose the fifth token, and the move would never end (it hung the
# first card of a deal on the real rp2 port in the rp2040js lab). The state machine then waits,
# STEP low, only once every queued segment has run: the motor stops there either way.
# A move is a stream of short segments (an acceleration ramp, cruise, a deceleration ramp)
# planned here and kept topped up by Stepper.pump(); the queue holds QUEUE segments ahead.
#
# The same @rp2.asm_pio source runs on the board and in the tests: tests/fakes/rp2.py assembles
# it, tests/test_rp2.py checks the words against an independent assembler (adafruit_pioasm) and
# runs them in a PIO emulator (pioemu) to measure the pulses.
import rp2

try:
    from typing import TYPE_CHECKING  # type: ignore
except ImportError:
    TYPE_CHECKING = False
if TYPE_CHECKING:  # the PIO assembler's names, for type checkers (asm_pio supplies them)
    from rp2.asm_pio import block, jmp, label, mov, noblock, osr, out, pins, pull, push  # noqa
    from rp2.asm_pio import set, x, x_dec, y, y_dec  # noqa

STEP_HZ = 2000000   # state-machine clock: 0.5 us a cycle (125 MHz / 62.5)
OVERHEAD = 4        # cycles of each half-period spent outside the delay loop
MIN_HALF = OVERHEAD  # shortest half-period: 2 us (TMC2209 needs 100 ns high and 100 ns low)
MAX_HALF = 0xFFFF + OVERHEAD
MAX_STEPS = 0x10000  # pulses in one FIFO word
GAP = 3             # extra low cycles between two segments
SEG = 16            # pulses per segment while planning a move (2 ms at 8000 steps/s)
QUEUE = 4           # segments queued ahead (the TX FIFO's depth)


@rp2.asm_pio(set_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_RIGHT)
def step_pulses():
    pull(block)             # a segment: wait for it with STEP low
    out(x, 16)              # x = steps - 1; the OSR keeps half - OVERHEAD
    label("step")
    set(pins, 1)            # STEP high: 1 + 2 + (d + 1) = half cycles
    mov(y, osr)[1]
    label("high")
    jmp(y_dec, "high")
    set(pins, 0)            # STEP low: 1 + 1 + (d + 1) + 1 = half cycles
    mov(y, osr)
    label("low")
    jmp(y_dec, "low")
    jmp(x_dec, "step")
    push(block)             # segment done: one token for the CPU (waits while the RX FIFO is full)


def half_for(rate):
    """Half-period in cycles for `rate` steps/s, rounded up (never faster than asked)."""
    if rate <= 0:
        return MAX_HALF
    h = (STEP_HZ + 2 * rate - 1) // (2 * rate)
    if h < MIN_HALF:
        return MIN_HALF
    if h > MAX_HALF:
        return MAX_HALF
    return int(h)


def rate_of(half):
    """Steps/s of a half-period (in cycles)."""
    return STEP_HZ / (2 * half)


def segment(steps, half):
    """The FIFO word for `steps` pulses of half-period `half` cycles."""
    if not (1 <= steps <= MAX_STEPS) or not (MIN_HALF <= half <= MAX_HALF):
        raise ValueError("segment out of range: %d steps, half %d" % (steps, half))
    return ((half - OVERHEAD) << 16) | (steps - 1)


def unword(w):
    """(steps, half) of a FIFO word."""
    return (w & 0xFFFF) + 1, (w >> 16) + OVERHEAD


CYCLES_US = STEP_HZ // 1000000  # cycles per us


def segment_us(steps, half):
    """How long a segment takes, in us (the gap to the next one included)."""
    return (steps * 2 * half + GAP) // CYCLES_US


def isqrt(n):
    if n <= 0:
        return 0
    x = int(n)
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


def plan_rate(done, total, cruise, accel, floor):
    """The speed for the segment starting at step `done` of a move of `total` steps: a
    trapezoid from standstill, limited by cruise and by the braking distance left. (Past the
    ramp's length the cruise is taken without its square root: 2 x accel x steps would pass
    MicroPython's small ints, 2**30, and allocate, on a long move such as revision D's feed.)"""
    ramp = cruise * cruise // (2 * accel) + 1
    at = done + SEG // 2
    up = cruise if at >= ramp else isqrt(2 * accel * at)
    left = total - done
    if left - SEG // 2 >= ramp:
        down = cruise
    else:
        down = isqrt(2 * accel * max(left - SEG // 2, 0)) if left > 0 else 0
    v = min(cruise, up, max(down, floor))
    return max(v, floor)


class Stepper:
    """One stepper on a PIO state machine: moves of a number of steps, planned as segments and
    fed to the FIFO by pump(), which the caller runs in its loop (at least every few ms). The
    position of a move is exact at each segment's end (the RX token) and interpolated from the
    segment's known timing in between.

    sm: rp2.StateMachine (or a fake) already running step_pulses on the STEP pin; dir_pin and
    en_pin: machine.Pin outputs; clock: ticks_us/ticks_diff/ticks_add; restart: a function
    that re-initialises the state machine with this program (StateMachine.init)."""

    def __init__(self, sm, dir_pin, en_pin, clock, cruise, accel, max_rate,
                 restart, forward_level=1, enable_level=0):
        self.sm = sm
        self.dir = dir_pin
        self.en = en_pin
        self.clock = clock
        self.cruise = min(cruise, max_rate)
        self.accel = accel
        self.acc = accel         # the move's acceleration (start())
        self.max_rate = max_rate
        self.floor = max(isqrt(2 * accel * 1), 200)  # a stepper starts at this at once
        self.fwd = forward_level
        self.en_level = enable_level
        self.restart = restart   # re-initialises the state machine: FIFOs flushed, PC at 0
        self.forward = True
        self.total = 0           # target of the move, steps
        self.pushed = 0          # steps queued so far
        self.done = 0            # steps of segments the PIO reported finished
        # the segments queued, oldest first: a ring of QUEUE + 1 made once (no allocation as
        # the motor runs): steps, half, expected start us; head, how many
        self.qn = [0] * (QUEUE + 1)
        self.qh = [0] * (QUEUE + 1)
        self.qt = [0] * (QUEUE + 1)
        self.head = 0
        self.count = 0
        self.rate = self.cruise
        self.enabled = False
        self.en.value(1 - enable_level)

    def enable(self, on):
        self.en.value(self.en_level if on else 1 - self.en_level)
        self.enabled = on

    def start(self, steps, forward=True, rate=None, accel=None):
        """Begin a move of `steps` steps (the motor must be still); rate and accel: this move's
        cruise (at most max_rate) and acceleration, else the stepper's."""
        if self.count:
            raise RuntimeError("the stepper is still moving")
        self.forward = forward
        self.dir.value(self.fwd if forward else 1 - self.fwd)
        self.total = max(0, steps)
        self.pushed = 0
        self.done = 0
        self.rate = min(rate or self.cruise, self.max_rate)
        self.acc = accel or self.accel
        self.pump()

    def retarget(self, steps):
        """Change the move's length (what is queued already still runs)."""
        self.total = max(steps, self.pushed)

    def moving(self):
        return self.count > 0 or self.pushed < self.total

    def _finished(self):
        """The oldest queued segment is done."""
        if self.count:
            self.done += self.qn[self.head]
            self.head = (self.head + 1) % (QUEUE + 1)
            self.count -= 1

    def pump(self):
        """Collect finished segments, queue the next ones. True while the move goes on."""
        sm = self.sm
        while sm.rx_fifo():
            sm.get()
            self._finished()
        while self.pushed < self.total and sm.tx_fifo() < QUEUE and self.count < QUEUE + 1:
            n = min(SEG, self.total - self.pushed)
            v = plan_rate(self.pushed, self.total, self.rate, self.acc, self.floor)
            half = half_for(v)
            now = self.clock.ticks_us()
            t = now
            if self.count:
                k = (self.head + self.count - 1) % (QUEUE + 1)
                end = self.clock.ticks_add(self.qt[k], segment_us(self.qn[k], self.qh[k]))
                if self.clock.ticks_diff(end, now) > 0:
                    t = end
            sm.put(segment(n, half))
            k = (self.head + self.count) % (QUEUE + 1)
            self.qn[k] = n
            self.qh[k] = half
            self.qt[k] = t
            self.count += 1
            self.pushed += n
        return self.moving()

    def position(self):
        """Steps made so far in this move."""
        if not self.count:
            return self.done
        n = self.qn[self.head]
        half = self.qh[self.head]
        el = self.clock.ticks_diff(self.clock.ticks_us(), self.qt[self.head])
        if el <= 0:
            return self.done
        k = el * CYCLES_US // (2 * half)
        return self.done + min(n - 1, k)

    def halt(self):
        """Stop at once (a jam, the lid): the queue is dropped, STEP goes low. Returns the
        steps made (exact to the last finished segment, interpolated within the current one)."""
        sm = self.sm
        sm.active(0)
        while sm.rx_fifo():  # segments that finished since the last pump()
            sm.get()
            self._finished()
        pos = self.position()
        self.restart()   # StateMachine.init(): FIFOs cleared, back to the pull, STEP low
        sm.active(1)
        self.count = 0
        self.done = pos
        self.pushed = pos
        self.total = pos
        return pos
