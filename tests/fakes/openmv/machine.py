# A fake of the `machine` module of OpenMV's firmware (MicroPython's stm32 port on the Cam H7)
# for the reader board's tests (tests/mp_reader_test.py): what reader/wiring.py uses, after
# MicroPython's docs/library/machine.Pin.rst (Pin(id, mode, pull, value=); value(); irq(handler=,
# trigger=) calling handler(pin) on the edge), machine.I2C.rst (writeto, readfrom_into,
# readfrom_mem, readfrom_mem_into, writeto_mem; a device that does not acknowledge raises
# OSError) and machine.UART.rst (UART(id, baudrate, timeout=); any(), read(n) -> bytes or
# None, write(b)). The tests drive the inputs (Pin.drive), put I2C devices on the bus
# (I2C.devices) and talk on the UART (UART.feed, UART.sent).
PINS = {}    # name -> Pin: the board's pins as the script made them
UARTS = {}
BUSES = {}


class Pin:
    IN = 0
    OUT = 1
    IRQ_FALLING = 1
    IRQ_RISING = 2

    def __init__(self, name, mode=IN, pull=None, value=None):
        self.name = name
        self.mode = mode
        self.level = value if value is not None else 0
        self.handler = None
        self.trigger = 0
        self.history = []
        PINS[name] = self

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = 1 if v else 0
        self.history.append(self.level)
        return None

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING):
        self.handler = handler
        self.trigger = trigger

    def drive(self, level):
        """The test: the input's level changes (the handler runs on its edge)."""
        old, self.level = self.level, level
        if self.handler is None or old == level:
            return
        if (level and self.trigger & Pin.IRQ_RISING) or (not level and
                                                          self.trigger & Pin.IRQ_FALLING):
            self.handler(self)


class I2C:
    def __init__(self, id, freq=400000, **kw):
        self.id = id
        self.freq = freq
        self.devices = BUSES.setdefault(id, {})   # address -> a device object

    def _dev(self, addr):
        d = self.devices.get(addr)
        if d is None or getattr(d, "dead", False):
            raise OSError(19)  # ENODEV: no acknowledge
        return d

    def writeto(self, addr, buf, stop=True):
        self._dev(addr).write(bytes(buf))
        return len(buf)

    def readfrom_into(self, addr, buf, stop=True):
        data = self._dev(addr).read(len(buf))
        buf[:] = data

    def writeto_mem(self, addr, reg, buf):
        self._dev(addr).write_mem(reg, bytes(buf))

    def readfrom_mem(self, addr, reg, n):
        return self._dev(addr).read_mem(reg, n)

    def readfrom_mem_into(self, addr, reg, buf):
        buf[:] = self._dev(addr).read_mem(reg, len(buf))


class UART:
    def __init__(self, id, baudrate=9600, timeout=0, **kw):
        self.id = id
        self.baudrate = baudrate
        self.rx = bytearray()
        self.sent = bytearray()
        UARTS[id] = self

    def feed(self, data):
        """The test: the Pico's bytes arrive."""
        self.rx.extend(data)

    def any(self):
        return len(self.rx)

    def read(self, n=-1):
        if not self.rx:
            return None
        n = len(self.rx) if n < 0 else n
        out = bytes(self.rx[:n])
        self.rx = self.rx[n:]
        return out

    def write(self, data):
        self.sent.extend(data)
        return len(data)


def reset():
    PINS.clear()
    UARTS.clear()
    BUSES.clear()
