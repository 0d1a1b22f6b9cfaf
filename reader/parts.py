# The reader board's parts besides the camera (hardware/WIRING.md, J16; the pin map's
# gather_tray and loader), each built from machine objects the wiring (reader/wiring.py)
# passes in: the two pick rollers' clutches, the gather tray's beam, the pocket sensor's
# count, the escrows' beams and the back sensor.

# the TCS34725 colour sensor's registers (ams TCS3472 datasheet, "Register Set"): every
# address is sent with the command bit, auto-increment for the four colour words
CMD = 0x80
AUTO = 0x20
ENABLE = 0x00
PON = 0x01
AEN = 0x02
ATIME = 0x01
ID = 0x12
CDATA = 0x14           # clear, red, green, blue: four little-endian 16-bit words from here
TCS_IDS = (0x44, 0x4D)  # TCS34721/TCS34725, TCS34723/TCS34727
BACK_RATIO = 3         # red over blue (or blue over red) by this share of 2 to tell a back
BACK_MIN_CLEAR = 64    # under this the sensor sees no card


class Clutches:
    """The pick rollers' clutches (P0 the dealing magazine's, P1 the gather tray's, each an
    IRLML2502's gate: high engages). At power-up the dealing magazine's is engaged, so a shoe
    that never sends $MG picks from it; select() releases the other before it engages one."""

    def __init__(self, dealing, gather):
        self.pins = {"A": dealing, "B": gather}
        self.select("A")

    def select(self, mag):
        other = "B" if mag == "A" else "A"
        self.pins[other].value(0)
        self.pins[mag].value(1)
        self.engaged = mag


class Beam:
    """A beam on an input pin: blocked() at its active level."""

    def __init__(self, pin, active):
        self.pin = pin
        self.active = active

    def blocked(self):
        return self.pin.value() == self.active


class PocketCounter:
    """The pocket sensor (EE-SX1041, high = a card in its slot) on an input pin with an
    interrupt on its rising edge: start() zeroes the count and counts, stop() stops and gives
    it. An edge within gap_us of the last one counted is a glitch. The handler allocates
    nothing (MicroPython's interrupt rules)."""

    def __init__(self, pin, rising, ticks_us, ticks_diff, gap_us):
        self.ticks_us = ticks_us
        self.ticks_diff = ticks_diff
        self.gap_us = gap_us
        self.count = 0
        self.counting = False
        self.last = 0
        pin.irq(handler=self._edge, trigger=rising)

    def _edge(self, pin):
        if not self.counting:
            return
        now = self.ticks_us()
        if self.count and self.ticks_diff(now, self.last) < self.gap_us:
            return
        self.last = now
        self.count += 1

    def start(self):
        self.counting = False
        self.count = 0
        self.counting = True
        return 0

    def stop(self):
        self.counting = False
        return self.count


class Expander:
    """The escrows' beams on a PCF8574 on the reader's I2C (NXP PCF8574 datasheet: a
    quasi-bidirectional port, written high to read it as inputs; one byte read is the port),
    escrow j's receiver on its port bit j, high = a card. beam(j): '1', '0', or '?' when the
    expander does not answer."""

    def __init__(self, i2c, address):
        self.i2c = i2c
        self.address = address
        self.buf = bytearray(1)
        try:
            i2c.writeto(address, b"\xff")
        except OSError:
            pass

    def beam(self, j):
        try:
            self.i2c.readfrom_into(self.address, self.buf)
            self.i2c.writeto(self.address, b"\xff")  # (a power blip leaves the port low)
        except OSError:
            return "?"
        return "1" if self.buf[0] >> j & 1 else "0"


class BackSensor:
    """The TCS34725 under the path (revision C): the card's back colour, 0 red, 1 blue, '?'
    when it cannot tell. present: it answered with its id at power-up (only then does the
    card report carry the back field)."""

    def __init__(self, i2c, address):
        self.i2c = i2c
        self.address = address
        self.buf = bytearray(8)
        self.present = False
        try:
            got = i2c.readfrom_mem(address, CMD | ID, 1)[0]
            if got in TCS_IDS:
                i2c.writeto_mem(address, CMD | ATIME, b"\xf6")   # 24 ms integration (10 cycles)
                i2c.writeto_mem(address, CMD | ENABLE, bytes([PON | AEN]))
                self.present = True
        except OSError:
            pass

    def back(self):
        try:
            self.i2c.readfrom_mem_into(self.address, CMD | AUTO | CDATA, self.buf)
        except OSError:
            return "?"
        b = self.buf
        c = b[0] | b[1] << 8
        r = b[2] | b[3] << 8
        blue = b[6] | b[7] << 8
        if c < BACK_MIN_CLEAR:
            return "?"
        if 2 * r > BACK_RATIO * blue:
            return "0"
        if 2 * blue > BACK_RATIO * r:
            return "1"
        return "?"
