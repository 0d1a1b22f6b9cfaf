# A fake of MicroPython's `machine` module for the unix port and CPython: the classes and
# signatures of micropython-rp2-rpi-pico-stubs (Pin, PWM, UART, ADC, WDT, Timer, mem32, freq,
# unique_id...), over one simulated board with a virtual clock.
#
# `board` is the simulation: its time (in ns) only moves when the code under test asks the
# clock (each ticks_* call costs `cost_us`, like a loop iteration on the Pico) or sleeps.
# Input pins read `board.inputs[gpio]()` (a test's physical model); the PIO state machines of
# the fake rp2 module run as time passes; a UART's peer gets what is written and answers through
# board.later(); WDT feeds are checked against the timeout as time passes. The USB line and its
# interrupt character are tests/fakes/usb.py's, on this board's clock.

TICKS_PERIOD = 1 << 30  # MicroPython's ticks wrap here
# The GC heap of the stock RPI_PICO image: from the end of .bss (no C heap on a plain Pico) to the
# end of the 256 KB main SRAM, the C stack in the scratch banks (ports/rp2/memmap_mp_rp2.ld:
# __GcHeapStart = __StackLimit = __bss_end__ + __micropy_c_heap_size__, __GcHeapEnd =
# ORIGIN(RAM) + LENGTH(RAM); ports/rp2/main.c: gc_init(&__GcHeapStart, &__GcHeapEnd)). gc_init
# (py/gc.c) takes the allocation table (ATB, one byte per 4 blocks of 16 bytes) and, with
# MICROPY_ENABLE_FINALISER, the finaliser table (FTB, one bit per block) out of that region, so
# the pool is smaller than the region. Measured on the real port (MicroPython v1.29.0-preview
# af47daf3b0, RPI_PICO, stock, in rp2040js; issue 13): __GcHeapEnd - __GcHeapStart = 239,320 B
# (arm-none-eabi-nm of its firmware.elf), gc.mem_alloc() + gc.mem_free() = 233,776 B (the
# pool, what objects can have), and at the bare REPL (the raw REPL after a soft reset, after
# gc.collect()) 4,880 B allocated, 228,896 B free. Two later builds of the same source
# (pico-sdk 2.2.0, arm-none-eabi-gcc 12.2.1: stop 27's lab and stop 28's, rebuilt from
# nothing) report a pool of 233,792 B, one 16-byte block more (the .bss end moves with the
# toolchain's layout): the pool below is theirs; the bare REPL's 4,880 B are the first build's. The unix port's heap (-X heapsize) cannot be
# made 32-bit: the benchmarks scale to this pool (benchmarks/memory.py).
GC_REGION = 239320        # __GcHeapEnd - __GcHeapStart: the pool plus its tables
HEAP_POOL = 233792        # 228.3 KiB: gc.mem_alloc() + gc.mem_free()
HEAP_FREE_AT_REPL = 228912  # 223.5 KiB: gc.mem_free() at the bare REPL (the pool less 4,880 B)


class Board:
    def __init__(self):
        self.reset()

    def reset(self):
        self.ns = 0
        self.cost_us = 50
        self.outputs = {}     # gpio -> value driven
        self.modes = {}       # gpio -> Pin mode
        self.pulls = {}
        self.inputs = {}      # gpio -> function returning 0/1
        self.adc = {}         # gpio -> function returning u16
        self.pwms = {}        # gpio -> PWM
        self.uart_peers = {}  # uart id -> function(bytes)
        self.uarts = {}
        self.i2c = {}         # (bus, address) -> a device on the I2C bus (tests/fakes/i2c.py)
        self.sms = []         # fake rp2 state machines to run
        self.events = []      # [t_ns, seq, function]
        self.seq = 0
        self.wdt = None
        self.wdt_enabled = False
        self.wdt_feeds = 0
        self.wdt_last = 0
        self.wdt_max_gap_ms = 0
        self.wdt_expired = False
        self.mem = {}         # address -> value or function
        self.step_listeners = []
        self.checks = []      # the VM's checks of pending events (tests/fakes/usb.py)

    # ---------------------------------------------------------------- time
    def now_us(self):
        return self.ns // 1000

    def advance_us(self, us):
        self.run_until(self.ns + int(us * 1000))

    def run_until(self, t):
        """Run the state machines and the scheduled events, in time order, up to t (ns): at one
        instant events first (in the order they were scheduled), then the state machines (in
        the order they were made). Allocates nothing when there is nothing to run (the idle
        loop's allocations measured over these fakes are the firmware's own)."""
        while True:
            at = None
            ev = None
            sm = None
            for e in self.events:
                if e[0] <= t and (at is None or e[0] < at or (e[0] == at and e[1] < ev[1])):
                    at = e[0]
                    ev = e
            for m in self.sms:
                n = m._next_ns()
                if n is not None and n <= t and (at is None or n < at):
                    at = n
                    ev = None
                    sm = m
            if at is None:
                if t > self.ns:
                    self.ns = t
                self._check_wdt()
                for check in self.checks:  # a KeyboardInterrupt the line scheduled: now
                    check()
                return
            if at > self.ns:
                self.ns = at
            self._check_wdt()
            if ev is not None:
                self.events.remove(ev)
                ev[2]()
            else:
                sm._fire()

    def later(self, us, fn):
        """Run fn at now + us."""
        self.seq += 1
        self.events.append([self.ns + int(us * 1000), self.seq, fn])

    def _check_wdt(self):
        if self.wdt is None or not self.wdt_enabled:
            return
        gap = (self.ns - self.wdt_last) // 1000000
        if gap > self.wdt_max_gap_ms:
            self.wdt_max_gap_ms = gap
        if gap > self.wdt.timeout:
            self.wdt_expired = True

    # ---------------------------------------------------------------- pins
    def read(self, gpio):
        for check in self.checks:
            check()
        f = self.inputs.get(gpio)
        if f is not None:
            return 1 if f() else 0
        if gpio in self.outputs:
            return self.outputs[gpio]
        return 1 if self.pulls.get(gpio) == Pin.PULL_UP else 0

    def step(self, sm, gpio):
        for f in self.step_listeners:
            f(sm, gpio)


board = Board()


class Clock:
    """The virtual clock, with time's ticks API (wrapping like MicroPython's)."""

    def __init__(self, b=None):
        self.b = b or board

    def ticks_us(self):
        self.b.advance_us(self.b.cost_us)
        return self.b.now_us() % TICKS_PERIOD

    def ticks_ms(self):
        self.b.advance_us(self.b.cost_us)
        return (self.b.now_us() // 1000) % TICKS_PERIOD

    @staticmethod
    def ticks_diff(a, b):
        return ((a - b + TICKS_PERIOD // 2) % TICKS_PERIOD) - TICKS_PERIOD // 2

    @staticmethod
    def ticks_add(t, d):
        return (t + d) % TICKS_PERIOD

    def sleep_ms(self, ms):
        self.b.advance_us(ms * 1000)

    def sleep_us(self, us):
        self.b.advance_us(us)


# -------------------------------------------------------------------- module functions

def freq(hz=None):
    if hz is None:
        return 125000000
    return None


def unique_id():
    return b"\xe6\x61\x41\x04\x03\x2b\x1c\x2d"


def reset():
    raise SystemExit("machine.reset()")


def soft_reset():
    raise SystemExit("machine.soft_reset()")


def reset_cause():
    return 0


def idle():
    board.advance_us(1)


def disable_irq():
    return 0


def enable_irq(state):
    return None


def lightsleep(ms=None):
    board.advance_us((ms or 0) * 1000)


class _Mem:
    def __init__(self, width):
        self.mask = (1 << width) - 1

    def __getitem__(self, addr):
        v = board.mem.get(addr, 0)
        if callable(v):
            v = v()
        return v & self.mask

    def __setitem__(self, addr, value):
        board.mem[addr] = value & self.mask
        if addr == 0x40058000 + 0x3000 and value & (1 << 30):  # WATCHDOG_CTRL: clear ENABLE
            board.wdt_enabled = False


mem8 = _Mem(8)
mem16 = _Mem(16)
mem32 = _Mem(32)


# -------------------------------------------------------------------- Pin

class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    ALT = 3
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=-1, *, value=None, drive=None, alt=None):
        if not isinstance(id, int) or not (0 <= id <= 29):
            raise ValueError("invalid pin %r" % (id,))
        self.id = id
        self.init(mode, pull, value=value)

    def init(self, mode=-1, pull=-1, *, value=None, drive=None, alt=None):
        if mode != -1:
            board.modes[self.id] = mode
        if pull != -1:
            board.pulls[self.id] = pull
        if value is not None:
            board.outputs[self.id] = 1 if value else 0

    def value(self, x=None):
        if x is None:
            return board.read(self.id)
        board.outputs[self.id] = 1 if x else 0
        return None

    def __call__(self, x=None):
        return self.value(x)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def toggle(self):
        self.value(1 - board.read(self.id))

    def irq(self, handler=None, trigger=12, *, priority=1, wake=None, hard=False):
        self.handler = handler
        return None

    def __repr__(self):
        return "Pin(GPIO%d)" % self.id


# -------------------------------------------------------------------- PWM

class PWM:
    def __init__(self, dest, *, freq=None, duty_u16=None, duty_ns=None, invert=False):
        self.pin = dest.id if isinstance(dest, Pin) else dest
        self._freq = 1000
        self._ns = 0
        self.history = []  # (time us, pulse ns), the last 64
        board.pwms[self.pin] = self
        self.init(freq=freq, duty_u16=duty_u16, duty_ns=duty_ns)

    def init(self, *, freq=None, duty_u16=None, duty_ns=None, invert=False):
        if freq is not None:
            self.freq(freq)
        if duty_u16 is not None:
            self.duty_u16(duty_u16)
        if duty_ns is not None:
            self.duty_ns(duty_ns)

    def freq(self, value=None):
        if value is None:
            return self._freq
        if not (8 <= value <= 62500000):
            raise ValueError("freq out of range")
        self._freq = value
        return None

    def duty_ns(self, value=None):
        if value is None:
            return self._ns
        if value < 0 or value > 1000000000 // self._freq:
            raise ValueError("pulse longer than the period")
        self._ns = value
        self.history.append((board.now_us(), value))
        if len(self.history) > 64:  # the last ones: a long run must not fill the heap
            self.history.pop(0)
        return None

    def duty_u16(self, value=None):
        period = 1000000000 // self._freq
        if value is None:
            return self._ns * 65535 // period
        return self.duty_ns(value * period // 65535)

    def deinit(self):
        board.pwms.pop(self.pin, None)


# -------------------------------------------------------------------- UART

class UART:
    INV_TX = 1
    INV_RX = 2

    def __init__(self, id, baudrate=9600, bits=8, parity=None, stop=1, *, tx=None, rx=None,
                 txbuf=None, rxbuf=None, timeout=None, timeout_char=None, invert=None, flow=None,
                 rts=None, cts=None):
        if id not in (0, 1):
            raise ValueError("UART(%r) does not exist" % (id,))
        self.id = id
        self.baudrate = baudrate
        self.bits = bits
        self.parity = parity
        self.stop = stop
        self.tx = tx
        self.rx = rx
        self.rxbuf_size = rxbuf or 256
        self.rxbuf = bytearray()
        self.written = []  # the last 64 writes
        board.uarts[id] = self

    def byte_us(self):
        return (1 + self.bits + (1 if self.parity is not None else 0) + self.stop) * 1000000 \
            // self.baudrate

    def write(self, buf):
        data = bytes(buf)
        self.written.append(data)
        if len(self.written) > 64:
            self.written.pop(0)
        peer = board.uart_peers.get(self.id)
        if peer is not None:
            # the bytes are on the wire for len * byte time; the peer sees them at the end
            board.later(len(data) * self.byte_us(), lambda: peer(data))
        return len(data)

    def receive(self, data):
        """The peer's bytes arrive (called by the test's model at the time they land)."""
        room = self.rxbuf_size - len(self.rxbuf)
        self.rxbuf.extend(bytes(data)[:room])

    def any(self):
        return len(self.rxbuf)

    def read(self, nbytes=None):
        if not self.rxbuf:
            return None
        n = len(self.rxbuf) if nbytes is None else min(nbytes, len(self.rxbuf))
        out = bytes(self.rxbuf[:n])
        self.rxbuf = self.rxbuf[n:]
        return out

    def readinto(self, buf, nbytes=None):
        data = self.read(len(buf) if nbytes is None else nbytes)
        if data is None:
            return None
        buf[:len(data)] = data
        return len(data)

    def readline(self):
        i = self.rxbuf.find(b"\n")
        if i < 0:
            return self.read()
        return self.read(i + 1)

    def flush(self):
        return None

    def txdone(self):
        return True

    def deinit(self):
        board.uarts.pop(self.id, None)


# -------------------------------------------------------------------- ADC

class ADC:
    CORE_TEMP = 4

    def __init__(self, id, *, sample_ns=None, atten=None):
        self.gpio = id.id if isinstance(id, Pin) else id
        if self.gpio not in (26, 27, 28, 29, 4):
            raise ValueError("no ADC on GPIO%r" % (self.gpio,))

    def read_u16(self):
        f = board.adc.get(self.gpio)
        return f() if f is not None else 0


# -------------------------------------------------------------------- WDT

class WDT:
    def __init__(self, *, id=0, timeout=5000):
        if board.wdt is not None:
            raise OSError("the watchdog runs already")
        if not (1 <= timeout <= 8388):
            raise ValueError("timeout out of range (1..8388 ms)")
        self.timeout = timeout
        board.wdt = self
        board.wdt_enabled = True
        board.wdt_last = board.ns
        board.wdt_max_gap_ms = 0

    def feed(self):
        if not board.wdt_enabled:
            raise AssertionError("feeding a stopped watchdog")  # the firmware forgot it stopped it
        board._check_wdt()
        board.wdt_feeds += 1
        board.wdt_last = board.ns


# -------------------------------------------------------------------- Timer

class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id=-1, *, mode=1, period=-1, freq=-1, callback=None, hard=False):
        self.callback = callback

    def init(self, *, mode=1, period=-1, freq=-1, callback=None, hard=False):
        self.callback = callback

    def deinit(self):
        self.callback = None

