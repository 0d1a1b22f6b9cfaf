# A fake of MicroPython's `rp2` module (unix port and CPython), after the signatures of
# micropython-rp2-rpi-pico-stubs:
#
#   asm_pio      a PIO assembler written from the RP2040 datasheet (section 3.4): it runs the
#                decorated function twice with its module's globals swapped for the PIO names,
#                as the board's asm_pio does (a program that uses anything else fails here as it
#                would there). The Program it returns keeps the 16-bit words, the wrap, the shift
#                settings and each instruction as pioasm text, so tests/test_rp2.py can check the
#                words against adafruit_pioasm and run them in a PIO emulator.
#   StateMachine runs hal/stepper_pio.step_pulses as a timing model on the fake board's clock:
#                a FIFO word (steps - 1 | (half - 4) << 16) gives `steps` rising edges of STEP,
#                2 * half cycles apart, the first 2 cycles after the pull, then a token in the RX
#                FIFO 2 + 2 * steps * half cycles after the pull and the next pull one cycle
#                later; the RX FIFO holds 4 tokens (8 joined), and a full one stalls the push
#                or drops the token as the program's Block bit says (_push_blocks).
#                test_rp2.py checks this model against the program in the emulator.
#   Flash        rp2.Flash(start=, len=) as ports/rp2/rp2_flash.c makes it (rp2_flash_make_new):
#                offsets in the storage region (MICROPY_HW_FLASH_STORAGE_BYTES, 1408 KB on
#                RPI_PICO: boards/RPI_PICO/mpconfigboard.cmake), start and len 4 KB aligned, else
#                ValueError; no argument: the whole region (the singleton _boot.py mounts);
#                ioctl 1-3 -> 0, 4 block count, 5 4096, 6 erase one block, others None
#                (rp2_flash_ioctl); readblocks/writeblocks with an offset (the extended
#                protocol littlefs uses), writeblocks without one erasing first
#                (rp2_flash_writeblocks). Over a sparse NOR chip with the RP2040's rules
#                (flash_range_program: whole 256-byte pages, bits only cleared; erase: 0xFF).
#                The fake is stricter than the port in one way: the C code checks no bounds on
#                a read or a program (memcpy from XIP / flash_range_program), here they raise.
#                Power cuts: chip.arm(n) stops the n-th program or erase from now (PowerCut),
#                torn (half a page programmed, half a sector erased) with partial=True, as
#                hal.flashdev.RamFlash does for the journal's own tests. Real littlefs
#                (vfs.VfsLfs2 of the unix port) mounts over it as rp2's _boot.py mounts it.
import machine

STORAGE_BYTES = 1408 * 1024  # RPI_PICO: MICROPY_HW_FLASH_STORAGE_BYTES
SECTOR = 4096
PAGE = 256


class PIOASMError(Exception):
    pass


class PIO:
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2
    IRQ_SM0 = 256
    IRQ_SM1 = 512
    IRQ_SM2 = 1024
    IRQ_SM3 = 2048

    def __init__(self, id):
        self.id = id

    def state_machine(self, id, program=None, *args, **kw):
        return StateMachine(self.id * 4 + id, program, *args, **kw)


# -------------------------------------------------------------------- the assembler

_SRC = {0: "pins", 1: "x", 2: "y", 3: "null", 4: "pindirs", 5: "pc", 6: "isr", 7: "osr"}
_MOV_SRC = {0: "pins", 1: "x", 2: "y", 3: "null", 5: "status", 6: "isr", 7: "osr"}
_MOV_DST = {0: "pins", 1: "x", 2: "y", 4: "exec", 5: "pc", 6: "isr", 7: "osr"}
_OUT_DST = {0: "pins", 1: "x", 2: "y", 3: "null", 4: "pindirs", 5: "pc", 6: "isr", 7: "exec"}
_SET_DST = {0: "pins", 1: "x", 2: "y", 4: "pindirs"}
_IN_SRC = {0: "pins", 1: "x", 2: "y", 3: "null", 6: "isr", 7: "osr"}
_COND = {0: "", 1: "!x", 2: "x--", 3: "!y", 4: "y--", 5: "x!=y", 6: "pin", 7: "!osre"}

# the names a PIO program sees (MicroPython's documented asm_pio vocabulary)
_NAMES = {
    "gpio": 0, "pins": 0, "x": 1, "y": 2, "null": 3, "pindirs": 4, "pc": 5, "status": 5,
    "isr": 6, "osr": 7, "exec": 8,
    "invert": lambda v: v | 0x08, "reverse": lambda v: v | 0x10,
    "not_x": 1, "x_dec": 2, "not_y": 3, "y_dec": 4, "x_not_y": 5, "pin": 6, "not_osre": 7,
    "noblock": 0x01, "block": 0x21, "iffull": 0x40, "ifempty": 0x40, "clear": 0x40,
    "rel": lambda v: v | 0x10,
}


class Program:
    """What asm_pio returns here (the board returns an opaque list)."""

    def __init__(self, kw):
        self.words = []
        self.lines = []          # pioasm text, one instruction a line (labels as 'name:')
        self.labels = {}
        self.wrap_target = 0
        self.wrap = None
        self.out_init = kw.get("out_init")
        self.set_init = kw.get("set_init")
        self.sideset_init = kw.get("sideset_init")
        self.side_pindir = kw.get("side_pindir", False)
        self.in_shiftdir = kw.get("in_shiftdir", PIO.SHIFT_LEFT)
        self.out_shiftdir = kw.get("out_shiftdir", PIO.SHIFT_LEFT)
        self.autopush = kw.get("autopush", False)
        self.autopull = kw.get("autopull", False)
        self.push_thresh = kw.get("push_thresh", 32)
        self.pull_thresh = kw.get("pull_thresh", 32)
        self.fifo_join = kw.get("fifo_join", PIO.JOIN_NONE)
        si = self.sideset_init
        self.sideset_count = 0 if si is None else (1 if isinstance(si, int) else len(si))
        self.sideset_opt = False

    def set_count(self):
        si = self.set_init
        return 0 if si is None else (1 if isinstance(si, int) else len(si))


class _Instr:
    def __init__(self, emit, index):
        self.emit = emit
        self.index = index

    def side(self, value):
        self.emit._side(self.index, value)
        return self

    def delay(self, value):
        self.emit._delay(self.index, value)
        return self

    def __getitem__(self, value):
        return self.delay(value)


class _Emit:
    def __init__(self, prog):
        self.p = prog
        self.pass_ = 0
        self.n = 0
        self.sides = 0
        self.wrap_set = False
        self.parts = []   # per instruction: [word without delay/side, text, delay, side]

    def begin(self, pass_):
        if pass_ == 1:
            if not self.wrap_set and self.n:
                self.p.wrap = self.n - 1
            p = self.p
            if p.sideset_count and self.sides != self.n:
                p.sideset_opt = True
        self.pass_ = pass_
        self.n = 0
        self.sides = 0
        self.parts = []

    def _bits(self):
        p = self.p
        return p.sideset_count + (1 if p.sideset_opt else 0)

    def _delay(self, index, value):
        if self.pass_ == 1:
            if not (0 <= value < (1 << (5 - self._bits()))):
                raise PIOASMError("delay too large")
            self.parts[index][2] = value

    def _side(self, index, value):
        self.sides += 1
        if self.pass_ == 1:
            if not self.p.sideset_count:
                raise PIOASMError("no sideset")
            if not (0 <= value < (1 << self.p.sideset_count)):
                raise PIOASMError("sideset too large")
            self.parts[index][3] = value

    def _add(self, word, text, label=None):
        i = self.n
        self.n += 1
        if self.pass_ == 1:
            if label is not None:
                if label not in self.p.labels:
                    raise PIOASMError("unknown label %s" % label)
                word |= self.p.labels[label]
            self.parts.append([word, text, 0, None])
        return _Instr(self, i)

    def finish(self):
        p = self.p
        bits = self._bits()
        names = {}
        for k, v in p.labels.items():
            names.setdefault(v, []).append(k)
        for i, (word, text, delay, side) in enumerate(self.parts):
            field = delay
            if side is not None:
                if p.sideset_opt:
                    field |= 1 << 4
                field |= side << (5 - bits)
            p.words.append(word | field << 8)
            if i == p.wrap_target:
                p.lines.append(".wrap_target")
            for k in names.get(i, ()):
                p.lines.append(k + ":")
            if side is not None:
                text += " side %d" % side
            if delay:
                text += " [%d]" % delay
            p.lines.append(text)
            if i == p.wrap:
                p.lines.append(".wrap")

    # directives
    def wrap_target(self):
        self.p.wrap_target = self.n

    def wrap(self):
        if not self.n:
            raise PIOASMError("wrap before any instruction")
        self.p.wrap = self.n - 1
        self.wrap_set = True

    def label(self, name):
        if self.pass_ == 0:
            if name in self.p.labels:
                raise PIOASMError("duplicate label %s" % name)
            self.p.labels[name] = self.n

    # instructions (RP2040 datasheet 3.4)
    def word(self, instr, label=None):
        return self._add(instr, ".word %d" % instr, label)

    def nop(self):
        return self._add(0xA042, "nop")

    def jmp(self, cond, label=None):
        if label is None:
            label, cond = cond, 0
        text = "jmp " + (_COND[cond] + ", " if cond else "") + label
        return self._add(cond << 5, text, label)

    def wait(self, polarity, src, index):
        names = {0: "gpio", 6: "pin"}
        s = 0 if src == 0 else (1 if src == 6 else 2)
        text = "wait %d %s %d" % (polarity, names.get(src, "irq"), index)
        return self._add(0x2000 | polarity << 7 | s << 5 | index, text)

    def in_(self, src, count):
        if not 0 < count <= 32:
            raise PIOASMError("bad bit count %d" % count)
        return self._add(0x4000 | src << 5 | count & 31, "in %s, %d" % (_IN_SRC[src], count))

    def out(self, dest, count):
        d = 7 if dest == 8 else dest
        if not 0 < count <= 32:
            raise PIOASMError("bad bit count %d" % count)
        return self._add(0x6000 | d << 5 | count & 31, "out %s, %d" % (_OUT_DST[d], count))

    def push(self, value=0, value2=0):
        value |= value2
        if not value & 1:
            value |= 0x20
        text = "push" + (" iffull" if value & 0x40 else "") + (" block" if value & 0x20 else
                                                               " noblock")
        return self._add(0x8000 | value & 0x60, text)

    def pull(self, value=0, value2=0):
        value |= value2
        if not value & 1:
            value |= 0x20
        text = "pull" + (" ifempty" if value & 0x40 else "") + (" block" if value & 0x20 else
                                                                " noblock")
        return self._add(0x8080 | value & 0x60, text)

    def mov(self, dest, src):
        d = 4 if dest == 8 else dest
        op = (src >> 3) & 3
        s = src & 7
        text = "mov %s, %s%s" % (_MOV_DST[d], ("", "!", "::")[op], _MOV_SRC[s])
        return self._add(0xA000 | d << 5 | op << 3 | s, text)

    def irq(self, mod, index=None):
        if index is None:
            index, mod = mod, 0
        text = "irq " + ("clear " if mod & 0x40 else ("wait " if mod & 0x20 else "")) + \
            "%d" % (index & 7) + (" rel" if index & 0x10 else "")
        return self._add(0xC000 | mod & 0x60 | index, text)

    def set(self, dest, data):
        if not 0 <= data < 32:
            raise PIOASMError("set data out of range")
        return self._add(0xE000 | dest << 5 | data, "set %s, %d" % (_SET_DST[dest], data))


_DIRECTIVES = ("wrap_target", "wrap", "label")
_INSTRUCTIONS = ("word", "nop", "jmp", "wait", "in_", "out", "push", "pull", "mov", "irq", "set")


def _names(emit):
    gl = dict(_NAMES)
    for name in _DIRECTIVES + _INSTRUCTIONS:
        gl[name] = getattr(emit, name)
    return gl


def asm_pio(**kw):
    prog = Program(kw)
    emit = _Emit(prog)

    def dec(f):
        gl = f.__globals__
        saved = dict(gl)
        gl.clear()
        gl.update(_names(emit))
        try:
            emit.begin(0)
            f()
            emit.begin(1)
            f()
        finally:
            gl.clear()
            gl.update(saved)
        emit.finish()
        if len(prog.words) > 32:
            raise PIOASMError("program longer than 32 instructions")
        prog.name = f.__name__
        return prog

    return dec


def asm_pio_encode(instr, sideset_count, sideset_opt=False):
    prog = Program({})
    prog.sideset_count = sideset_count
    prog.sideset_opt = bool(sideset_opt)
    emit = _Emit(prog)
    emit.pass_ = 1
    gl = _names(emit)
    gl["jmp"] = None  # as on the board: no labels here
    exec(instr, gl)
    emit.finish()
    if len(prog.words) != 1:
        raise PIOASMError("expecting exactly 1 instruction")
    return prog.words[0]


# -------------------------------------------------------------------- state machines

class StateMachine:
    def __init__(self, id, program=None, freq=-1, *, in_base=None, out_base=None, set_base=None,
                 jmp_pin=None, sideset_base=None, in_shiftdir=None, out_shiftdir=None,
                 push_thresh=None, pull_thresh=None):
        if not (0 <= id < 8):
            raise ValueError("StateMachine id 0..7")
        self.id = id
        self.program = None
        self._active = False
        self.tx = []
        self.rx = []
        self.execs = []
        self.puts = []        # the last words put (for the tests)
        self.halves = set()   # every half-period the model ran
        self.steps = 0        # rising edges made
        self.inits = 0
        self.seg = None       # [steps left, half, next rise ns, token ns]
        self.t_free = 0       # when the program is back at its pull
        self.paused = None
        for sm in list(machine.board.sms):
            if sm.id == id:
                machine.board.sms.remove(sm)
        machine.board.sms.append(self)
        if program is not None:
            self.init(program, freq, set_base=set_base, sideset_base=sideset_base,
                      out_base=out_base, in_base=in_base, jmp_pin=jmp_pin)

    def init(self, program, freq=-1, *, in_base=None, out_base=None, set_base=None, jmp_pin=None,
             sideset_base=None, in_shiftdir=None, out_shiftdir=None, push_thresh=None,
             pull_thresh=None):
        sysclk = machine.freq()
        if freq == -1:
            freq = sysclk
        if not (sysclk // 65536 < freq <= sysclk):
            raise ValueError("freq out of range")
        if program.set_count() and set_base is None:
            raise ValueError("the program sets pins: set_base needed")
        self.program = program
        self.freq = freq
        self.cyc_ns = 1000000000 // freq
        self.set_base = set_base.id if set_base is not None else None
        self.join = program.fifo_join
        self.tx = []
        self.rx = []
        self.seg = None
        self.t_free = machine.board.ns
        self._active = False
        self.paused = None
        self.inits += 1
        if self.set_base is not None:  # set_init=OUT_LOW: the pin an output, low
            machine.board.outputs[self.set_base] = 1 if program.set_init == PIO.OUT_HIGH else 0

    def active(self, value=None):
        if value is None:
            return self._active
        value = bool(value)
        now = machine.board.ns
        if value and not self._active and self.paused is not None:
            shift = now - self.paused
            if self.seg is not None:
                self.seg[2] += shift
                self.seg[3] += shift
            self.t_free += shift
            self.paused = None
        elif not value and self._active:
            self.paused = now
        self._active = value
        return value

    def restart(self):
        self.execs.append("restart")

    def exec(self, instr):
        self.execs.append(instr)

    def _depth(self, which):
        if self.join == PIO.JOIN_TX:
            return 8 if which == "tx" else 0
        if self.join == PIO.JOIN_RX:
            return 0 if which == "tx" else 8
        return 4

    def put(self, value, shift=0):
        if len(self.tx) >= self._depth("tx"):
            raise AssertionError("StateMachine.put() would block: the TX FIFO is full")
        v = (value << shift) & 0xFFFFFFFF
        self.puts.append(v)
        if len(self.puts) > 64:
            self.puts.pop(0)
        if getattr(self.program, "name", "") == "ws2812":
            return  # the LED's program takes a word in 30 us: nothing waits in its FIFO
        self.tx.append(v)

    def get(self, buf=None, shift=0):
        if not self.rx:
            raise AssertionError("StateMachine.get() would block: the RX FIFO is empty")
        return self.rx.pop(0) >> shift

    def tx_fifo(self):
        return len(self.tx)

    def rx_fifo(self):
        return len(self.rx)

    def irq(self, handler=None, trigger=0, hard=False):
        return None

    # the timing model of hal/stepper_pio.step_pulses
    def _push_blocks(self):
        """The program's `push` waits while the RX FIFO is full (its Block bit, RP2040
        datasheet 3.4.6: PUSH is 0b100, bit 7 clear, Block bit 5), else drops the word."""
        return any(w >> 13 == 0b100 and not w & 0x80 and w & 0x20 for w in self.program.words)

    def _next_ns(self):
        if not self._active or self.program is None:
            return None
        s = self.seg
        if s is not None:
            if s[0] > 0:
                return s[2]
            if len(self.rx) >= self._depth("rx") and self._push_blocks():
                return None  # stalled at the push until the CPU reads a token
            return s[3]
        if self.tx:
            return max(self.t_free, machine.board.ns)
        return None

    def _fire(self):
        b = machine.board
        s = self.seg
        c = self.cyc_ns
        if s is None:  # pull
            w = self.tx.pop(0)
            steps = (w & 0xFFFF) + 1
            half = (w >> 16) + 4
            self.halves.add(half)
            t0 = b.ns
            self.seg = [steps, half, t0 + 2 * c, t0 + (2 + 2 * steps * half) * c]
        elif s[0] > 0:  # a rising edge of STEP
            s[0] -= 1
            s[2] += 2 * s[1] * c
            self.steps += 1
            b.step(self, self.set_base)
        else:  # the push: the token (push(noblock) drops it if the RX FIFO is full; a
            if len(self.rx) < self._depth("rx"):  # blocking push is only fired with room)
                self.rx.append(0)
            self.t_free = b.ns + c  # (later than s[3] + c when the push waited for room)
            self.seg = None


# -------------------------------------------------------------------- flash

class PowerCut(BaseException):
    """The power went during a flash operation (a BaseException: no `except Exception` in the
    firmware or in littlefs's caller swallows it). What reached the chip stays."""


class _Chip:
    """The 2 MB flash chip's storage region, sparse: sectors never written read as erased."""

    def __init__(self):
        self.sectors = {}
        self.programs = 0
        self.erases = 0
        self.ops = 0           # programs (a page each) + erases
        self.cut_after = 0     # 0: never; n: the power goes at the n-th operation from now
        self.partial = False   # that operation is torn (half done)
        self.dead = False
        self.off = False       # no power at all: nothing reaches the chip (power_off)

    def sector(self, addr):
        s = self.sectors.get(addr // SECTOR)
        if s is None:
            s = self.sectors[addr // SECTOR] = bytearray(b"\xff" * SECTOR)
        return s

    def arm(self, after, partial=False):
        """Cut the power at the after-th program (page) or erase from now (1: the next)."""
        self.cut_after = after
        self.partial = partial

    def revive(self):
        """Power back on: the chip keeps what reached it."""
        self.dead = False
        self.off = False
        self.cut_after = 0

    def op(self):
        """Count one operation; True if it is the one the power cut tears (do half of it,
        then call die()); raises PowerCut if it never happens."""
        if self.dead:
            raise PowerCut()
        self.ops += 1
        if self.cut_after:
            self.cut_after -= 1
            if self.cut_after == 0:
                if self.partial:
                    return True
                self.die()
        return False

    def die(self):
        self.dead = True
        raise PowerCut()

    def snapshot(self):
        return {k: bytes(v) for k, v in self.sectors.items()}

    def restore(self, snap):
        self.sectors = {k: bytearray(v) for k, v in snap.items()}
        self.revive()


chip = _Chip()
ERASED = b"\xff" * PAGE


class Flash:
    def __init__(self, *, start=-1, len=-1):
        if start == -1 and len == -1:
            start, len = 0, STORAGE_BYTES
        if start == -1:
            start = 0
        elif not (0 <= start < STORAGE_BYTES and start % SECTOR == 0):
            raise ValueError()
        if len == -1:
            len = STORAGE_BYTES - start
        elif not (0 < len and start + len <= STORAGE_BYTES and len % SECTOR == 0):
            raise ValueError()
        self.start = start
        self.len = len

    def _range(self, offset, n):
        if offset < 0 or offset + n > self.len:
            raise ValueError("outside the partition")
        return self.start + offset

    def readblocks(self, block, buf, offset=0):
        if chip.off:  # (a finaliser of the mount the power took: nothing to do)
            return
        addr = self._range(block * SECTOR + offset, len(buf))
        i = 0
        n = len(buf)
        while i < n:
            a = addr + i
            o = a % SECTOR
            k = min(n - i, SECTOR - o)
            s = chip.sectors.get(a // SECTOR)
            if s is None:
                buf[i:i + k] = ERASED_SECTOR[:k]
            else:
                buf[i:i + k] = s[o:o + k]
            i += k

    def writeblocks(self, block, buf, offset=None):
        if chip.off:
            return
        n = len(buf)
        if offset is None:
            for k in range((n + SECTOR - 1) // SECTOR):
                self.ioctl(6, block + k)
            offset = 0
        addr = self._range(block * SECTOR + offset, n)
        if addr % PAGE or n % PAGE:
            raise ValueError("flash_range_program needs whole 256-byte pages")
        data = memoryview(buf)
        for p in range(0, n, PAGE):  # page by page, as flash_range_program goes
            torn = chip.op()
            a = addr + p
            s = chip.sector(a)
            o = a % SECTOR
            k = PAGE // 2 if torn else PAGE
            new = data[p:p + k]
            if s[o:o + k] == ERASED[:k]:
                s[o:o + k] = new
            else:  # NOR: a program only clears bits
                old = int.from_bytes(bytes(s[o:o + k]), "big")
                s[o:o + k] = (old & int.from_bytes(bytes(new), "big")).to_bytes(k, "big")
            chip.programs += 1
            if torn:
                chip.die()

    def ioctl(self, op, arg=0):
        if chip.off:
            return 0
        if op in (1, 2, 3):
            return 0
        if op == 4:
            return self.len // SECTOR
        if op == 5:
            return SECTOR
        if op == 6:
            addr = self._range(arg * SECTOR, SECTOR)
            torn = chip.op()
            if torn:  # half the sector erased
                chip.sector(addr)[:SECTOR // 2] = ERASED_SECTOR[:SECTOR // 2]
                chip.die()
            chip.sectors.pop(addr // SECTOR, None)
            chip.erases += 1
            return 0
        return None


ERASED_SECTOR = b"\xff" * SECTOR


def bootsel_button():
    return 0


class DMA:
    def __init__(self):
        raise OSError("no DMA in the fake")
