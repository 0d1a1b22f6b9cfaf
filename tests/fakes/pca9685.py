# A fake NXP PCA9685 (16-channel 12-bit PWM driver) on the fake machine.I2C (board.i2c), for
# revision D's loader (firmware/hal/loader_rp2.py). What it models, from the PCA9685 datasheet
# (Rev. 4, section 7.3 and its register map):
# - MODE1 at 0x00 (power-up 0x11: SLEEP and ALLCALL set), MODE2 at 0x01 (0x04), the channels'
#   LEDn_ON_L/ON_H/OFF_L/OFF_H at 0x06 + 4n, PRE_SCALE at 0xFE (power-up 0x1E);
# - PRE_SCALE is only written while SLEEP is set (otherwise the write is ignored);
# - MODE1's AI bit: with it a transfer's bytes go to consecutive registers, without it all go
#   to the one register addressed;
# - the outputs run only while the oscillator does (SLEEP clear), in frames of
#   (PRE_SCALE + 1) x 4096 / 25 MHz; ON_H/OFF_H bit 4 is full on / full off;
# - a channel's new ON/OFF take effect at the end of the current PWM cycle (the registers are
#   loaded asynchronously to the oscillator), so a servo sees a new pulse from the next frame.
# Each channel's effective pulse is kept as (since us, pulse us) with a view that looks like the
# fake machine.PWM (history of (us, ns)), so a world model can watch a servo as it watches the
# Pico's own PWM outputs; `dead` makes the chip stop acknowledging (power lost, cable off).
import machine
from i2c import I2C

machine.I2C = I2C  # the bus (tests/fakes/i2c.py), for the firmware's machine.I2C(...)

OSC_HZ = 25000000


class Servo:
    """A channel's output as the world sees it: history of (from us, pulse ns) like the fake
    PWM's (the last 64), level (full on or off), watchers called at each change."""

    def __init__(self):
        self.history = []
        self.level = None
        self.watchers = []

    def apply(self, at_us, ns, level):
        self.level = level
        self.history.append((at_us, ns))
        if len(self.history) > 64:
            self.history.pop(0)
        for w in self.watchers:
            w(at_us, ns, level)


class PCA9685:
    def __init__(self, bus=1, address=0x40):
        self.regs = bytearray(256)
        self.regs[0x00] = 0x11
        self.regs[0x01] = 0x04
        self.regs[0xFE] = 0x1E
        self.dead = False
        self.t_wake = None       # when the oscillator started (us)
        self.ch = [Servo() for _ in range(16)]
        self.writes = 0
        machine.board.i2c[(bus, address)] = self

    def period_us(self):
        return (self.regs[0xFE] + 1) * 4096 * 1000000 // OSC_HZ

    def write(self, reg, data):
        self.writes += 1
        ai = self.regs[0x00] & 0x20
        touched = []
        for i in range(len(data)):
            r = (reg + i) & 0xFF if ai else reg
            if r == 0xFE and not self.regs[0x00] & 0x10:
                continue  # PRE_SCALE is only written while the oscillator sleeps
            if r == 0x00:
                if self.regs[0x00] & 0x10 and not data[i] & 0x10:
                    self.t_wake = machine.board.now_us()
                elif data[i] & 0x10:
                    self.t_wake = None
            self.regs[r] = data[i] & 0x7F if r == 0x00 else data[i]
            if 6 <= r < 70:
                n = (r - 6) // 4
                if n not in touched:
                    touched.append(n)
        for n in touched:
            self._schedule(n)

    def read(self, reg, n):
        return bytes(self.regs[(reg + i) & 0xFF] for i in range(n))

    def _schedule(self, n):
        """Channel n's registers changed: its output changes at the end of the current cycle."""
        if self.t_wake is None:
            return  # the oscillator sleeps: no output (taken when it wakes: not modelled)
        now = machine.board.now_us()
        p = self.period_us()
        at = self.t_wake + ((now - self.t_wake) // p + 1) * p
        base = 6 + 4 * n
        on = self.regs[base] | (self.regs[base + 1] & 0x0F) << 8
        off = self.regs[base + 2] | (self.regs[base + 3] & 0x0F) << 8
        if self.regs[base + 3] & 0x10:
            level, ns = 0, 0
        elif self.regs[base + 1] & 0x10:
            level, ns = 1, p * 1000
        else:
            level, ns = None, (off - on) % 4096 * p * 1000 // 4096
        servo = self.ch[n]
        machine.board.later(at - now, lambda: servo.apply(at, ns, level))
