# Runs under the MicroPython unix port for benchmarks/flash.py. Prints one JSON line.
#
#   micropython flash_mp.py lfs STREAM MODE BLOCKS ROTATE
#       Store the journal's record stream (each record framed as the journal appends it, after
#       u16 length, u8 1 if it ends a hand) with littlefs (vfs.VfsLfs2, as the rp2 port formats
#       its flash: progsize=256, the other arguments at their defaults) on a counting block
#       device with the Pico's geometry. Every record is written and flushed (lfs_file_sync)
#       before the next one: each commit must be durable before the next card moves. MODE
#       "hand": one file per hand, closed at the hand's end; "rotate": one ever-growing file, a
#       new one every ROTATE hands. The oldest files are removed when the partition runs low.
#   micropython flash_mp.py boot IMAGE BLOCKS RUNS
#       Boot-to-ready on a journal image: Journal(FileFlash) + recorder.rebuild(open hand), and a
#       full journal.verify(), RUNS times each (on a fresh copy of the image every time).
#   micropython -X heapsize=192K flash_mp.py small IMAGE BLOCKS MPYDIR
#       The same boot and verify() on the device's heap, the firmware imported from .mpy files:
#       do they fit?
import gc
import json
import sys
import time

_here = sys.argv[0].rsplit("/", 1)[0] if "/" in sys.argv[0] else "."
sys.path.insert(0, _here + "/../firmware")
sys.path.append(_here + "/../protocol")  # crc.py: at the image's root on a shoe

BLOCK = 4096
PAGE = 256
RESERVE = 8  # free blocks kept for littlefs's copy-on-write (a new data block, a compaction)


def now_us():
    return time.ticks_us()


def since_us(t0):
    return time.ticks_diff(time.ticks_us(), t0)


class CountingFlash:
    """NOR flash with the Pico's geometry behind MicroPython's extended block-device protocol
    (what littlefs calls: readblocks/writeblocks with an offset, ioctl 6 to erase), counting
    page programs, bytes programmed and erases per block like hal.flashdev.RamFlash (which is
    too slow here: it programs byte by byte in Python). A program over bytes that were not
    erased is applied NOR-style (AND) and counted in `reprograms`: littlefs never does it."""

    def __init__(self, blocks):
        self.blocks = blocks
        self.mem = bytearray(blocks * BLOCK)
        for b in range(blocks):
            self.mem[b * BLOCK:(b + 1) * BLOCK] = ERASED
        self.reset()

    def reset(self):
        self.programs = 0
        self.bytes_programmed = 0
        self.erases = 0
        self.erase_counts = [0] * self.blocks
        self.reprograms = 0
        self.unaligned = 0

    def readblocks(self, block, buf, offset=0):
        start = block * BLOCK + offset
        buf[:] = self.mem[start:start + len(buf)]

    def writeblocks(self, block, buf, offset=None):
        if offset is None:
            self.ioctl(6, block)
            offset = 0
        start = block * BLOCK + offset
        n = len(buf)
        if offset % PAGE or n % PAGE:
            self.unaligned += 1
        old = self.mem[start:start + n]
        if old == ERASED[:n]:
            self.mem[start:start + n] = buf
        else:
            self.reprograms += 1
            for i in range(n):
                old[i] &= buf[i]
            self.mem[start:start + n] = old
        self.programs += (n + PAGE - 1) // PAGE
        self.bytes_programmed += n

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return BLOCK
        if op == 6:
            self.mem[arg * BLOCK:(arg + 1) * BLOCK] = ERASED
            self.erases += 1
            self.erase_counts[arg] += 1
            return 0
        return 0


ERASED = b"\xff" * BLOCK


def hands(path):
    """The stream, one hand (a list of framed records) at a time."""
    f = open(path, "rb")
    cur = []
    while True:
        hdr = f.read(3)  # u16 length, u8 1 if the record ends a hand
        if len(hdr) < 3:
            break
        cur.append(f.read(hdr[0] | hdr[1] << 8))
        if hdr[2]:
            yield cur
            cur = []
    f.close()
    if cur:
        yield cur


def free_blocks(fs):
    return fs.statvfs("/")[3]


def run_lfs(stream, mode, blocks, rotate):
    import vfs

    dev = CountingFlash(blocks)
    vfs.VfsLfs2.mkfs(dev, progsize=256)
    fs = vfs.VfsLfs2(dev, progsize=256)
    dev.reset()  # formatting is not part of the workload
    files = []   # [name, hands], oldest first
    n = 0
    records = 0
    appended = 0
    removed = 0
    early = 0    # rotations forced by a full partition before ROTATE hands
    cur = None
    t0 = now_us()
    for hand in hands(stream):
        n += 1
        # room for the next hand: remove the oldest files (never the one being written)
        while free_blocks(fs) < RESERVE:
            if len(files) > 1 or (files and cur is None):
                fs.remove(files.pop(0)[0])
                removed += 1
            elif cur is not None:  # the one file fills the partition: rotate now (it is
                cur.close()        # removed at the next hand if room is still short)
                cur = None
                early += 1
                break
            else:
                break
        if mode == "hand":
            name = "h%05d" % n
            cur = fs.open(name, "wb")
            files.append([name, 1])
        elif cur is None or files[-1][1] >= rotate:
            if cur is not None:
                cur.close()
            name = "log%04d" % n
            cur = fs.open(name, "ab")
            files.append([name, 1])
        else:
            files[-1][1] += 1
        for rec in hand:
            cur.write(rec)
            cur.flush()  # durable before the next card moves
            records += 1
            appended += len(rec)
        if mode == "hand":
            cur.close()
            cur = None
    elapsed = since_us(t0)
    if cur is not None:
        cur.close()
    held = 0
    for name, k in files:
        held += k
    counts = dev.erase_counts
    return {"hands": n, "records": records, "appended": appended, "programs": dev.programs,
            "bytes_programmed": dev.bytes_programmed, "erases": dev.erases,
            "max_erase": max(counts), "min_erase": min(counts),
            "hottest": sorted([(counts[b], b) for b in range(blocks)])[-3:],
            "reprograms": dev.reprograms,
            "unaligned": dev.unaligned, "files_removed": removed, "early_rotations": early,
            "hands_held": held, "files": len(files), "free_blocks": free_blocks(fs),
            "seconds": elapsed / 1e6}


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def copy(src, dst):
    f = open(src, "rb")
    w = open(dst, "wb")
    buf = bytearray(BLOCK)
    while True:
        n = f.readinto(buf)
        if not n:
            break
        w.write(buf if n == BLOCK else buf[:n])
    f.close()
    w.close()


def remove(path):
    try:
        import os

        os.remove(path)
    except (ImportError, OSError):
        pass


def run_boot(image, blocks, runs):
    from hal.flashdev import FileFlash, RamFlash
    from journal import Journal
    from recorder import rebuild
    from shoe.rng import SeededRandom

    f = open(image, "rb")
    img = f.read()
    f.close()
    work = image + ".work"
    boot, rebuild_ms, total, verify, ram = [], [], [], [], []
    problems = None
    hands_live = None
    held = 0
    hand_no = None
    cards = 0
    for _ in range(runs):
        copy(image, work)
        gc.collect()
        dev = FileFlash(work, blocks)
        t0 = now_us()
        j = Journal(dev)
        t1 = now_us()
        hand = rebuild(j.hand, SeededRandom(1), None)
        t2 = now_us()
        del hand  # (held until here, as a booted shoe holds it)
        boot.append(time.ticks_diff(t1, t0) / 1000)
        rebuild_ms.append(time.ticks_diff(t2, t1) / 1000)
        total.append(time.ticks_diff(t2, t0) / 1000)
        hand_no = j.hand.number
        cards = len(j.hand.entries) // 4
        t0 = now_us()
        problems = j.verify()
        verify.append(since_us(t0) / 1000)
        problems = len(problems)
        if hands_live is None:  # the heap a history keeps: every hand still in the journal
            gc.collect()
            base = gc.mem_alloc()
            got = j.hands()[0]
            gc.collect()
            hands_live = gc.mem_alloc() - base
            held = len(got)
            got = None
        j = None
        dev.f.close()
        gc.collect()
        # the same boot with the image in RAM: what the file's I/O costs
        mem = RamFlash(blocks, image=bytearray(img))
        t0 = now_us()
        j = Journal(mem)
        rebuild(j.hand, SeededRandom(1), None)
        ram.append(since_us(t0) / 1000)
    remove(work)
    return {"journal_ms": median(boot), "rebuild_ms": median(rebuild_ms),
            "ready_ms": median(total), "ready_all": total, "verify_ms": median(verify),
            "ready_ram_ms": median(ram), "problems": problems, "open_hand": hand_no,
            "open_entries": cards, "hands_live": hands_live, "hands": held}


def _where(e):
    """'MemoryError in f()' for the innermost function of e's traceback."""
    import io

    buf = io.StringIO()
    sys.print_exception(e, buf)
    where = ""
    for line in buf.getvalue().split("\n"):
        if ", in " in line:
            where = line.split(", in ")[-1].strip()
    return "MemoryError in %s()" % where


def run_small(image, blocks, mpy):
    """On the device's heap (run with -X heapsize=192K): do boot and verify() fit? The firmware
    is imported from its .mpy files in mpy, as on the device."""
    sys.path.insert(0, mpy)
    from hal.flashdev import FileFlash
    from journal import Journal
    from recorder import rebuild
    from shoe.rng import SeededRandom

    work = image + ".small"
    copy(image, work)
    out = {"boot": "ok", "verify": "ok"}
    gc.collect()
    out["imported"] = gc.mem_alloc()
    base = gc.mem_alloc()
    dev = FileFlash(work, blocks)
    try:
        j = Journal(dev)
        hand = rebuild(j.hand, SeededRandom(1), None)
        gc.collect()
        out["boot_live"] = gc.mem_alloc() - base
        del hand
        try:
            j.verify()
        except MemoryError as e:
            out["verify"] = _where(e)
    except MemoryError as e:
        out["boot"] = _where(e)
        out["verify"] = "not run"
    out["heap"] = gc.mem_alloc() + gc.mem_free()
    dev.f.close()
    remove(work)
    return out


def main():
    what = sys.argv[1]
    if what == "lfs":
        out = run_lfs(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif what == "boot":
        out = run_boot(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif what == "small":
        out = run_small(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        raise SystemExit("usage: flash_mp.py lfs STREAM MODE BLOCKS ROTATE | "
                         "boot IMAGE BLOCKS RUNS | small IMAGE BLOCKS MPY")
    print(json.dumps(out))


main()
