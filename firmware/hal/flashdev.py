# Block devices with the Pico's flash geometry (4096-byte erase blocks, 256-byte program pages)
# and MicroPython's extended block-device protocol (readblocks/writeblocks with an offset,
# ioctl 4 count, 5 size, 6 erase), so the journal runs on rp2.Flash on the Pico and on these in
# the simulator and the tests. NOR semantics: erase sets every byte to 0xFF; programming can only
# clear bits (new = old & data). They count operations, and can cut the power after the Nth
# program or erase, optionally in the middle of a page (littlefs's own test method).
from hal.base import BLOCK, PAGE

ERASED = 0xFF
ERASED_PAGE = b"\xff" * PAGE


class PowerCut(BaseException):
    """The power went at this instant: nothing more reaches the flash. (A BaseException, so no
    `except Exception` in the firmware can swallow it.)"""


class RamFlash:
    """A flash partition in RAM (or over a given bytearray image)."""

    def __init__(self, blocks=64, image=None):
        self.blocks = blocks
        self.mem = image if image is not None else bytearray(b"\xff" * (blocks * BLOCK))
        self.programs = 0        # page programs
        self.bytes_programmed = 0
        self.erases = 0
        self.erase_counts = [0] * blocks
        self.ops = 0             # programs + erases
        self.cut_after = 0       # 0: never; N: the power goes at the Nth operation from now
        self.cut_partial = False # the Nth operation is torn: half a page, or half a block
        self.dead = False

    # --- storage primitives (RAM here; a file in FileFlash)
    def _get(self, start, n):
        return self.mem[start:start + n]

    def _put(self, start, data):
        self.mem[start:start + len(data)] = data

    # --- the block-device protocol (MicroPython's extended interface)
    def readblocks(self, block, buf, offset=0):
        buf[:] = self._get(block * BLOCK + offset, len(buf))

    def writeblocks(self, block, buf, offset=None):
        if offset is None:  # the simple interface: erase, then program the whole block
            self.ioctl(6, block)
            offset = 0
        start = block * BLOCK + offset
        n = len(buf)
        if start // PAGE != (start + n - 1) // PAGE and (start % PAGE or n % PAGE):
            raise ValueError("a program must stay within one page or cover whole pages")
        pages = max(1, (n + PAGE - 1) // PAGE)
        for p in range(pages):
            lo = p * PAGE
            hi = min(n, lo + PAGE)
            self._op()
            torn = self._torn()
            if torn:
                hi = lo + max(1, (hi - lo) // 2)
            n = hi - lo
            old = int.from_bytes(bytes(self._get(start + lo, n)), "big")
            new = int.from_bytes(bytes(buf[lo:hi]), "big")
            self._put(start + lo, (old & new).to_bytes(n, "big"))  # NOR: only clears bits
            self.programs += 1
            self.bytes_programmed += hi - lo
            if torn:
                self._die()

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return BLOCK
        if op == 6:
            self._op()
            torn = self._torn()
            for k in range((BLOCK // 2 if torn else BLOCK) // PAGE):
                self._put(arg * BLOCK + k * PAGE, ERASED_PAGE)
            self.erases += 1
            self.erase_counts[arg] += 1
            if torn:
                self._die()
            return 0
        return 0

    # --- power cuts
    def _op(self):
        if self.dead:
            raise PowerCut()
        self.ops += 1
        if self.cut_after and not self.cut_partial:
            self.cut_after -= 1
            if self.cut_after == 0:
                self._die()

    def _torn(self):
        if self.cut_after and self.cut_partial:
            self.cut_after -= 1
            return self.cut_after == 0
        return False

    def _die(self):
        self.dead = True
        raise PowerCut()

    def arm(self, after, partial=False):
        """Cut the power at the `after`-th program/erase from now (1 = the next one)."""
        self.cut_after = after
        self.cut_partial = partial

    def revive(self):
        """Power back on: the flash keeps what reached it."""
        self.dead = False
        self.cut_after = 0


class FileFlash(RamFlash):
    """A flash partition kept in a file (the virtual shoe's flash chip), read and written in
    place (no image in RAM): every operation reaches the file at once, so killing the process
    is a power cut."""

    def __init__(self, path, blocks=256):
        RamFlash.__init__(self, blocks, bytearray(0))
        self.path = path
        size = -1
        try:
            import os

            size = os.stat(path)[6]
        except OSError:
            pass
        if size != blocks * BLOCK:
            f = open(path, "wb")
            chunk = b"\xff" * BLOCK
            for _ in range(blocks):
                f.write(chunk)
            f.close()
        self.f = open(path, "r+b")

    def _get(self, start, n):
        self.f.seek(start)
        return bytearray(self.f.read(n))

    def readblocks(self, block, buf, offset=0):
        self.f.seek(block * BLOCK + offset)
        self.f.readinto(buf)

    def _put(self, start, data):
        self.f.seek(start)
        self.f.write(data)
        self.f.flush()
