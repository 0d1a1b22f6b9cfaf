"""Memory benchmark: what the deployable firmware takes of a Pico's flash and RAM.

* Flash: the image `facedown deploy` installs on a shoe (every module compiled with
  `mpy-cross -march=armv6m`, main.py as source, pinmap.json), per file and in total, in bytes
  and in littlefs blocks: copied into a real littlefs (vfs.VfsLfs2 of the unix port, over the
  tests' fake rp2.Flash() with the Pico's geometry, formatted as rp2's _boot.py formats it:
  progsize=256) on the stock RPI_PICO storage region (1408 KB) and on a 192 KB one, against
  deploy's estimate (facedown.deploy.fit); then the journal's blocks the firmware reserves in
  what is left (firmware/hal/reserve.py).
* RAM: the firmware as deployed (.mpy bytecode) booted under the MicroPython unix port with
  `-X heapsize=192K` and `256K`: the heap after boot (modules, Device, Link) and its peak while
  three 10-seat hold'em hands are dealt to the river through Link.command / Device.run with
  encoded protocol commands (identify, config, hand, deal, 40 actions, streets, status, end,
  history), the events sent and acknowledged as a host would; the smallest heap the session
  runs in; against the Pico's GC heap (PICO_HEAP: the pool the real RPI_PICO image reports,
  tests/fakes/machine.py).
* Per module: each module's own import cost on the Pico's face (a hook on
  __import__: its heap, less the imports inside it), converted to 32 bits, largest first: what
  to attack first. And the free heap after boot and at a hand's peak (the most the largest
  free block can be), with the largest block in the unix port's layout scaled to the Pico's
  (not in --quick).
* The unix port is a 64-bit build: every pointer, object header and list/tuple/dict slot takes
  8 bytes instead of 4 and a GC block 32 bytes instead of 16; byte data (bytearray, bytes,
  bytecode) does not grow. The ratio is measured on known structures (gc.mem_alloc) and on the
  loaded modules (heap taken by imports vs the .mpy bytes they hold), and the Pico's figures are
  estimated with it.

    .venv/bin/python benchmarks/memory.py [--json] [--quick]

--quick (run by `make test`, tests/test_memory_bench.py): the flash figures and one session at
the virtual shoe's heap, no bisection of the smallest heap.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from facedown.build import PICO, SIM, build_image
from facedown.deploy import ROMFS_IMAGE, fit, lfs_blocks, romfs_image
from facedown.firmware import ROOT
from facedown.virtualshoe import HEAP as VIRTUAL_SHOE_HEAP, find_micropython


def _fake_board_figure(name):
    """A figure of the port that the fake board (tests/fakes/machine.py) states, read from
    its source (a literal: the fake is not imported into this process)."""
    import ast

    with open(os.path.join(ROOT, "tests", "fakes", "machine.py"), encoding="utf-8") as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return ast.literal_eval(node.value)
    raise LookupError(name)


PICO_HEAP = _fake_board_figure("HEAP_POOL")
PICO_BASE = PICO_HEAP - _fake_board_figure("HEAP_FREE_AT_REPL")  # the bare REPL's share
UNIX_BLOCK = 32          # a GC block of the 64-bit unix port (4 words; the Pico's is 16 B)
STOCK_BLOCKS = 352       # the stock RPI_PICO storage region: 1408 KB of 4 KB blocks
SMALL_BLOCKS = 48        # the 192 KB filesystem the old docs' _boot.py made
# the session's heaps; the last is what the virtual shoe runs with (host/facedown/virtualshoe.py,
# HEAP: the unix port's edge is ragged with the heap's fragmentation, so the session is held to
# work at the virtual shoe's own heap, and the smaller ones are figures)
HEAPS = ("192K", "256K", "320K", VIRTUAL_SHOE_HEAP)
DATA = ("flash.bin", "device_id", "world.txt", "shoe.log", "auth.fail", "boots", "counters",
        "audit.log", "audit.old", "manifest.seen", "maint.actor")

# Runs under MicroPython in the host image's folder (the firmware as a virtual shoe holds it).
MP_SCRIPT = r'''
import gc
import sys
gc.collect()
H0 = gc.mem_alloc()
TOTAL = gc.mem_alloc() + gc.mem_free()
OUT = {"heap_total": TOTAL}
QUICK = len(sys.argv) > 1 and sys.argv[1] == "quick"


def live():
    gc.collect()
    return gc.mem_alloc() - H0


def structures():
    """Known structures: bytes on this (64-bit) heap, and on a 32-bit one from MicroPython's
    object layouts (a word is 4 bytes there, a GC block 16; here 8 and 32)."""
    def size(make):
        gc.collect()
        a = gc.mem_alloc()
        obj = make()
        gc.collect()
        b = gc.mem_alloc()
        return obj, b - a

    def blocks(n, block):
        return (n + block - 1) // block * block

    def model(word, block, kind, n):
        if kind == "list":      # list object (4 words) + n item slots
            return blocks(4 * word, block) + blocks(n * word, block)
        if kind == "tuples":    # tuple of n tuples of 3 small ints: (2 + len) words each
            return blocks((2 + n) * word, block) + n * blocks(5 * word, block)
        if kind == "bytearray":  # array object (4 words) + n bytes
            return blocks(4 * word, block) + blocks(n, block)
        if kind == "objects":   # n instances of a class with 4 attributes: object (3 words) +
            #                     a 4-slot member table (2 words a slot)
            return blocks(3 * word, block) * n + blocks(8 * word, block) * n + \
                blocks(n * word, block) + blocks(4 * word, block)
        return 0

    def fill(items, cls):
        for i in range(len(items)):
            items[i] = cls(i)
        return items

    class Four:
        def __init__(self, i):
            self.a = i
            self.b = i
            self.c = i
            self.d = i

    rows = []
    for kind, n, make in (
            ("list", 1000, lambda: [0] * 1000),
            ("tuples", 100, lambda: tuple([(i, i, i) for i in range(100)])),
            ("bytearray", 4096, lambda: bytearray(4096)),
            ("objects", 100, lambda: fill([None] * 100, Four))):
        obj, got = size(make)
        rows.append([kind, n, got, model(8, 32, kind, n), model(4, 16, kind, n)])
        del obj
    return rows


if not QUICK:  # on the empty heap, before the firmware (they need 10 KB blocks)
    OUT["structures"] = structures()
    gc.collect()
    H0 = gc.mem_alloc()
KEY = bytes.fromhex("KEY_HEX")
try:
    import wire
    import device
    import link
    from hal.sim import SimHal
    OUT["imports"] = live()
    OUT["modules"] = [m for m in sys.modules]

    class Port:
        """The host's end: counts what the shoe sends, keeps the last reply's status."""
        def __init__(self):
            self.sent = 0
            self.status = 0

        def read_into(self, buf):
            return 0

        def write(self, data):
            self.sent += len(data)
            if data[2] == wire.REPLY:
                self.status = data[5]
                self.message = bytes(data[7:7 + data[6]]) if self.status else b""
                self.body = bytes(data[5:len(data) - 2])

    hal = SimHal()
    dev = device.Device(hal)
    port = Port()
    lk = link.Link(port, dev, hal.clock, hal.caps)
    PEAK = [0]

    def idle():  # a card is moving: the link's work, and a sample of the live heap
        lk.idle()
        if not QUICK:
            PEAK[0] = max(PEAK[0], live())

    hal.mech.idle = idle
    OUT["boot"] = live()
    SEQ = [0]
    ERR = []

    SESSION = [None, 0]  # the session key (an HMAC), the counter

    def cmd(name, *args):
        SEQ[0] = SEQ[0] % 0xFFFF + 1
        body = wire.encode_command(name, args)
        if SESSION[0] is not None:  # as the host's client sends it in a session: an ACMD
            SESSION[1] += 1
            body = wire.encode_acmd(SESSION[1], SESSION[0].mac(
                wire.acmd_message(SEQ[0], SESSION[1], body)), body)
            lk.command(SEQ[0], body, wire.ACMD)
        else:
            lk.command(SEQ[0], body)
        if port.status and len(ERR) < 5:
            ERR.append("%s: %s" % (name, port.message.decode()))
        while lk.send_events(now=True):
            pass
        lk.acked(dev.event_next - 1)  # the host's ACK
        if not QUICK:
            PEAK[0] = max(PEAK[0], live())

    seats = list(range(1, 11))
    mask = 0
    for s in seats:
        mask |= 1 << s
    cmd("identify", 0)
    cmd("ping", 0)
    # a maintenance session, opened as the host's client does (the key: device.key here)
    from shoe.drbg import hmac_sha256, _Hmac
    rk = hmac_sha256(KEY, wire.role_message(2))
    cmd("challenge", 2)
    nd = wire.decode_reply(port.body, "y")[1][0]
    nh = bytes(16)
    cmd("login", nh, hmac_sha256(rk, wire.login_message(2, hal.device_id, nd, nh, 0)), 0)
    SESSION[0] = _Hmac(hmac_sha256(rk, wire.session_message(nd, nh)))
    cmd("resume", 0xFFFFFFFF)
    cmd("config", "holdem", mask, 10, "tda2024", "")
    hands = []
    for k in range(3):
        PEAK[0] = 0
        cmd("hand", 0)
        cmd("deal", 0)
        for s in seats:
            cmd("action", s, 1)  # call
        for street in range(3):
            cmd("street")
            for s in seats:
                cmd("action", s, 0)  # check
        off = 0
        while True:  # the table snapshot, in chunks, as the host reads it
            cmd("status", off)
            if dev.status_cache is None or off >= len(dev.status_cache):
                break
            off += 160
        cmd("end")
        cmd("history", 0, 0)
        cmd("history", dev.hand_no, 0)
        hands.append(PEAK[0])
    OUT["hand_peaks"] = hands
    # the modules the hands loaded and kept (the engine's table loads with the first hand)
    OUT["hand_modules"] = [m for m in sys.modules if m not in OUT["modules"]]
    OUT["after"] = live()
    OUT["events"] = dev.event_next - 1
    OUT["bytes_sent"] = port.sent
    OUT["errors"] = ERR
    OUT["ok"] = not ERR
except MemoryError as e:
    OUT["ok"] = False
    OUT["error"] = "MemoryError"
    import io
    buf = io.StringIO()
    sys.print_exception(e, buf)
    OUT["where"] = buf.getvalue()[-600:]
import json
print(json.dumps(OUT))
'''

# The Pico's face (same folder): the firmware booted as main.py boots it on a Pico, over the
# tests' fakes of machine and rp2 (built into the Pico's firmware: imported first, outside the
# figures): Rp2Hal built from the image's board module (board.py, the pin map checked and its
# budget worked out when the image was built; released after the wiring, as on a shoe),
# the boot check, then Device and Link. One process, in boot order, so that the qstr pools
# grow where they would (a pool's allocation is a step of several KB in whichever import
# crosses its end).
MP_PICO = r'''
import gc
import json
import sys
sys.path.insert(0, "fakes")
import machine
import rp2
JOURNAL_AT = 1024 * 1024  # the journal's partition in the storage (board.py)
ROM = "rom" in sys.argv
MODULES = "modules" in sys.argv  # each module's own import cost (a hook on __import__)
LARGEST = "largest" in sys.argv  # the largest free block after boot (the GC's own count: largest_free)
if ROM:  # the modules from a ROMFS image, executed in place (its bytes are flash on a Pico)
    import vfs
    with open("ROMFS_IMAGE", "rb") as f:
        IMAGE = f.read()
if "service" in sys.argv:  # a shoe in service: its journal partition holds finished hands
    # (the host face's session's flash.bin, written into the fake chip before the figures)
    with open("service.bin", "rb") as f:
        k = 0
        while True:
            data = f.read(rp2.SECTOR)
            if not data:
                break
            if data != b"\xff" * len(data):
                rp2.chip.sector(JOURNAL_AT + k * rp2.SECTOR)[:] = data
            k += 1
    data = None
gc.collect()
H0 = gc.mem_alloc()
OUT = {}
if ROM:
    vfs.mount(vfs.VfsRom(memoryview(IMAGE)), "/rom")
    sys.path[:] = ["/rom"] + [p for p in sys.path if p == "fakes" or p.startswith(".")]


def live():
    gc.collect()
    return gc.mem_alloc() - H0


if MODULES:  # (its own lists cost a little: the other runs give the totals)
    import builtins
    _import = builtins.__import__
    OWN = {}
    STACK = []

    def _measured(name, *args):
        known = set(sys.modules)
        gc.collect()
        STACK.append([gc.mem_alloc(), 0, known])
        try:
            return _import(name, *args)
        finally:
            start, inner, known = STACK.pop()
            new = [m for m in sys.modules if m not in known and m not in OWN]
            known = None
            gc.collect()
            took = gc.mem_alloc() - start
            if new:  # the module(s) this import brought in, less the imports inside it
                held = gc.mem_alloc()
                OWN[",".join(sorted(new))] = took - inner
                gc.collect()
                # this table's own growth (its key, a resize) is the benchmark's: the import
                # around this one does not pay it (it was charged to whichever module's import
                # made OWN resize, and the modules' sum came out above the total)
                took += gc.mem_alloc() - held
            if STACK:
                STACK[-1][1] += took

    builtins.__import__ = _measured


def largest_free():
    """The GC's own count of its longest run of free blocks (gc_info's max_free, what
    micropython.mem_info() prints as "max free sz"; run_pico reads it): nothing is allocated to
    measure it (a bisection by bytearray can keep its own block alive through a stale reference
    and split the very heap it measures, as it did on the rp2 port in rp2040js)."""
    import micropython

    gc.collect()
    micropython.mem_info()


try:
    from hal.rp2 import Rp2Hal
    hal = Rp2Hal(clock=machine.Clock(), journal=rp2.Flash(start=JOURNAL_AT))  # board.py
    OUT["hal"] = live()
    OUT["carousel"] = hal.carousel is not None
    from integrity import boot
    checked = boot(hal.store)
    del sys.modules["integrity"]
    OUT["locked"] = checked[0]
    import device
    from device import Device
    from link import Link
    OUT["imports"] = live()
    OUT["modules"] = [m for m in sys.modules if m not in ("machine", "rp2")]
    OUT["from_rom"] = ROM and device.__file__.startswith("/rom")

    class Port:
        def read_into(self, buf):
            return 0

        def write(self, data):
            return len(data)

    dev = Device(hal, checked)
    lk = Link(Port(), dev, hal.clock, hal.caps)
    OUT["boot"] = live()
    OUT["booted"] = [m for m in sys.modules if m not in ("machine", "rp2")]  # (the restore's too)
    if MODULES:
        builtins.__import__ = _import
        OUT["own"] = OWN
    OUT["total"] = gc.mem_alloc() + gc.mem_free()
    OUT["h0"] = H0
    if LARGEST:
        OUT["free"] = gc.mem_free()
        largest_free()
except Exception as e:
    OUT["error"] = repr(e)
print(json.dumps(OUT))
'''


# Runs under MicroPython beside the Pico image (the folder "image"): the image copied into a real
# littlefs over the fake rp2.Flash() of BLOCKS blocks, formatted as rp2's _boot.py does, file
# by file in the order deploy copies them; what littlefs says it uses (statvfs) after each, or
# where it filled up; then the journal's reservation in what is left.
MP_LFS = r'''
import json
import os
import sys
import vfs
IMAGE = sys.argv[3]
sys.path[:0] = ["fakes", IMAGE]
import rp2
from hal import reserve
from hal.store import DirStore
rp2.STORAGE_BYTES = int(sys.argv[1]) * 4096
with open(sys.argv[2]) as f:
    order = json.load(f)
bdev = rp2.Flash()
vfs.VfsLfs2.mkfs(bdev, progsize=256)
vfs.mount(vfs.VfsLfs2(bdev, progsize=256), "/pico")
st = os.statvfs("/pico")
OUT = {"blocks": st[2], "free0": st[3], "files": {}, "full_after": None}


def used():
    s = os.statvfs("/pico")
    return s[2] - s[3]


for rel in order:
    try:
        if "/" in rel:
            d = "/pico/" + rel.rsplit("/", 1)[0]
            try:
                os.mkdir(d)
            except OSError:
                pass
        before = used()
        with open(IMAGE + "/" + rel, "rb") as f:
            data = f.read()
        with open("/pico/" + rel, "wb") as f:
            f.write(data)
        data = None
        OUT["files"][rel] = used() - before
    except OSError:
        OUT["full_after"] = len(OUT["files"])
        break
OUT["used"] = used() if OUT["full_after"] is None else OUT["blocks"]  # (statvfs, when full,
#                                                                       counts past the end)
if OUT["full_after"] is None:
    dev, why, note = reserve.journal_flash(DirStore("/pico"), rp2.Flash(), 304)
    OUT["journal"] = dev.ioctl(4, 0) if dev is not None else why
    OUT["free_after_journal"] = os.statvfs("/pico")[3]
print(json.dumps(OUT))
'''


def run_lfs(pico, order, blocks):
    """The image in a real littlefs of `blocks` 4 KB blocks (MP_LFS)."""
    with open(os.path.join(os.path.dirname(pico), "memory_lfs.py"), "w") as f:
        f.write(MP_LFS)
    with open(os.path.join(os.path.dirname(pico), "memory_lfs.json"), "w") as f:
        json.dump(order, f)  # (a long argv crashes the unix port: FATAL: uncaught NLR)
    proc = subprocess.run([find_micropython(), "-X", "heapsize=%dK" % (blocks * 4 + 1024),
                           "memory_lfs.py", str(blocks), "memory_lfs.json",
                           os.path.basename(pico)],
                          cwd=os.path.dirname(pico), capture_output=True, text=True, timeout=300)
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (proc.stderr or proc.stdout).strip()[-300:]}


def flash_figures(pico, files):
    """The image's blocks in littlefs, measured (stock and 192 KB) and estimated."""
    shutil.copytree(os.path.join(ROOT, "tests", "fakes"),
                    os.path.join(os.path.dirname(pico), "fakes"), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    order = [f for f in files if f != "main.py"] + ["main.py"]  # as deploy copies them
    sizes = {f: os.path.getsize(os.path.join(pico, f)) for f in order}
    need, have = fit(sizes, {}, STOCK_BLOCKS - 2)
    out = {"estimate": sum(lfs_blocks(n) for n in sizes.values()) +
           4 * len({f.rsplit("/", 1)[0] for f in sizes if "/" in f}),
           "fit_needs": need}
    out["stock"] = run_lfs(pico, order, STOCK_BLOCKS)
    out["small"] = run_lfs(pico, order, SMALL_BLOCKS)
    return out


def add_fakes(folder):
    """The tests' fakes of machine and rp2, and the script booting the Pico's face over them."""
    shutil.copytree(os.path.join(ROOT, "tests", "fakes"), os.path.join(folder, "fakes"),
                    dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(folder, "memory_pico.py"), "w") as f:
        f.write(MP_PICO.replace("ROMFS_IMAGE", ROMFS_IMAGE))


def run_pico(folder, rom=False, mode=None, heap="1M"):
    """The Pico's face booted (MP_PICO); mode "modules" or "largest" (the heap's size: heap)."""
    clean(folder)
    proc = subprocess.run([find_micropython(), "-X", "heapsize=" + heap, "memory_pico.py"] +
                          (["rom"] if rom else []) + ([mode] if mode else []),
                          cwd=folder, capture_output=True, text=True, timeout=300)
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            out = json.loads(line)
            blocks = re.search(r"max free sz: (\d+)", proc.stdout)  # (largest_free)
            if mode == "largest" and "error" not in out and blocks:
                out["largest"] = int(blocks.group(1)) * UNIX_BLOCK
            return out
    return {"error": (proc.stderr or proc.stdout).strip()[-300:]}


KEY = bytes(range(32))  # the benchmark shoe's key (a provisioned shoe runs hands)


def provision(folder):
    """The shoe's key and its firmware manifest signed with it, as provision and deploy leave
    them (the session then runs through the boot check and a login as on a shoe)."""
    from facedown.deploy import make_manifest
    from facedown.keys import Key

    key = Key("bench", "device", KEY)
    files = sorted(os.path.relpath(os.path.join(d, n), folder) for d, _, ns in os.walk(folder)
                   for n in ns)
    make_manifest(folder, None, files=files)
    with open(os.path.join(folder, "manifest.json"), "rb") as f:
        mac = key.manifest_mac(f.read())
    with open(os.path.join(folder, "manifest.mac"), "w") as f:
        f.write(mac)
    with open(os.path.join(folder, "device.key"), "w") as f:
        f.write(KEY.hex())


def clean(folder):
    """What a run left (the journal, the audit log, counters): each run boots a fresh shoe."""
    for name in DATA:
        try:
            os.remove(os.path.join(folder, name))
        except FileNotFoundError:
            pass


def run_mp(folder, heapsize, quick=False):
    clean(folder)
    proc = subprocess.run([find_micropython(), "-X", "heapsize=" + heapsize, "memory_mp.py"] +
                          (["quick"] if quick else []), cwd=folder, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, FACEDOWN_SIM="seed=1"))
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    return {"ok": False, "error": (proc.stderr or proc.stdout).strip()[-300:]}


def smallest_heap(folder, lo=16, hi=int(VIRTUAL_SHOE_HEAP[:-1]), step=4):
    """The smallest -X heapsize (KB, a multiple of step) the session completes in."""
    if not run_mp(folder, "%dK" % hi, quick=True).get("ok"):
        return None
    while hi - lo > step:
        mid = (lo + hi) // 2 // step * step
        if run_mp(folder, "%dK" % mid, quick=True).get("ok"):
            hi = mid
        else:
            lo = mid
    return hi


def kb(n):
    return "%.1f KB" % (n / 1024.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    ap.add_argument("--quick", action="store_true",
                    help="the flash figures and one session at the virtual shoe's heap")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="facedown-memory-")
    try:
        pico = os.path.join(tmp, "pico")
        files = build_image(pico, "armv6m")
        sizes = {f: os.path.getsize(os.path.join(pico, f)) for f in files}
        lfs = flash_figures(pico, files)
        host = os.path.join(tmp, "host")  # the virtual shoe's image (its manifest: sim)
        face = os.path.join(tmp, "face")  # the Pico's, in the host's bytecode (over the fakes)
        for folder, target in ((host, SIM), (face, PICO)):
            build_files = build_image(folder, None, target=target)
            if folder == host:  # the session's host end (MP_SCRIPT) sends commands and reads
                # replies with the codec's host half, which no image carries: loaded at the
                # first command, its bytes count in the session's figures, not in the boot's
                shutil.copy(os.path.join(ROOT, "protocol", "wirehost.py"), folder)
            with open(os.path.join(folder, "memory_mp.py"), "w") as f:
                f.write(MP_SCRIPT.replace("KEY_HEX", KEY.hex()))
            add_fakes(folder)
            romfs_image(folder, [f for f in build_files if f.endswith(".mpy")])  # as deploy
            provision(folder)
        runs = {h: run_mp(host, h, quick=args.quick) for h in
                (HEAPS[-1:] if args.quick else HEAPS)}
        # a shoe restarted between hands: the last session's journal (3 hands, ended)
        shutil.copy(os.path.join(host, "flash.bin"), os.path.join(face, "service.bin"))
        minimum = None if args.quick else smallest_heap(host)
        hal = run_pico(face)
        rom = run_pico(face, rom=True)
        service = run_pico(face, mode="service")
        ref = runs[HEAPS[-1]]
        est = estimate(ref, sizes, hal, minimum, rom)
        own = per_module(run_pico(face, mode="modules"), sizes)
        if est and not args.quick:
            est["largest32"] = largest_block(face, hal, est)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    mpy = sum(v for f, v in sizes.items() if f.endswith(".mpy"))
    total = sum(sizes.values())
    out = {"flash": {"files": sizes, "mpy_bytes": mpy, "total_bytes": total, "littlefs": lfs},
           "runs": runs, "smallest_heap_kb": minimum, "hal": hal, "romfs": rom, "estimate": est,
           "in_service": service,
           "modules32": own,
           "pico_heap_bytes": PICO_HEAP}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0

    print("Flash: the deployable image (mpy-cross -march=armv6m), %d files; in littlefs "
          "(vfs.VfsLfs2, progsize=256, 4 KB blocks), blocks measured" % len(sizes))
    measured = lfs["stock"].get("files", {})
    for f in sorted(sizes):
        print("  %-24s %8d B %4s blocks" % (f, sizes[f], measured.get(f, "?")))
    print("  %-24s %8d B  (%d .mpy modules)" % (".mpy total", mpy,
                                              sum(1 for f in sizes if f.endswith(".mpy"))))
    print("  %-24s %8d B  = %s" % ("image total", total, kb(total)))
    st, sm = lfs["stock"], lfs["small"]
    if "used" in st:
        print("  littlefs, stock RPI_PICO storage (%d blocks): the image takes %d blocks (%d with "
              "the superblock; estimate %d; deploy's fit check asks for %d); the journal "
              "reserves %s blocks of what is left, %d stay free" % (
                  st["blocks"], st["used"] - 2, st["used"], lfs["estimate"], lfs["fit_needs"],
                  st.get("journal"), st.get("free_after_journal", -1)))
    else:
        print("  littlefs, stock storage: not measured (%s)" % st.get("error"))
    if "blocks" in sm:
        print("  littlefs of 192 KB (%d blocks, %d free): %s" % (
            sm["blocks"], sm["free0"], "full after %d of %d files" % (sm["full_after"], len(sizes))
            if sm["full_after"] is not None else "the image fits"))
    print()
    print("RAM: the firmware as deployed, 3 ten-seat hold'em hands to the river over the protocol")
    print("  (MicroPython unix port, 64-bit; live heap = gc.mem_alloc() after gc.collect(), "
          "above the bare interpreter)")
    for h in runs:
        r = runs[h]
        line = "  heapsize=%-5s heap %s" % (h, kb(r["heap_total"])) if "heap_total" in r else \
            "  heapsize=%-5s" % h
        if "boot" in r:
            line += "; modules %s, after boot %s" % (kb(r["imports"]), kb(r["boot"]))
        if r.get("ok"):
            line += ", hand peaks %s; after %d events %s" % (
                "not sampled (--quick)" if args.quick else
                " / ".join(kb(p) for p in r["hand_peaks"]), r["events"], kb(r["after"]))
        else:
            line += ": FAILED (%s)" % (r.get("error") or "; ".join(r.get("errors", [])))
        print(line)
    if not args.quick:
        print("  smallest heap the session runs in: %s" % ("%d KB" % minimum if minimum else
                                                            "over %s" % VIRTUAL_SHOE_HEAP))
    if est:
        print()
        print("64-bit vs the Pico's 32-bit heap (measured here / MicroPython's layout on 32 bits):")
        for kind, n, got, m64, m32 in est["structures"]:
            print("  %-10s n=%-5d %7d B here (layout model %7d) vs %7d B on 32 bits: x%.2f" % (
                kind, n, got, m64, m32, float(got) / m32))
        print("  the simulator's face: modules %s here, %s of it their .mpy bytes (bytecode, "
              "strings: the same on 32 bits), the rest halves -> ~%s: x%.2f" % (
                  kb(est["sim_imports64"]), kb(est["sim_mpy"]), kb(est["sim_imports32"]),
                  est["sim_imports64"] / est["sim_imports32"]))
        print("  the shoe's state (Device, Link, journal buffers, the hand): x%.1f .. x%.1f" % (
            est["state_ratio"][1], est["state_ratio"][0]))
        if "boot" in hal:
            print("  the Pico's face, booted as main.py boots it over the fakes of machine and "
                  "rp2: hardware layer%s %s here, modules with it %s (%s .mpy) -> ~%s, after "
                  "boot %s here%s" % (
                      " (with the carousel)" if hal.get("carousel") else "", kb(hal["hal"]),
                      kb(hal["imports"]), kb(est["imported_mpy"]), kb(est["imports32"]),
                      kb(hal["boot"]), " (the boot check LOCKED it)" if hal.get("locked")
                      else ""))
        else:
            print("  the Pico's face could not be booted: %s" % hal.get("error"))
        if "boot" in service:
            extra = [m for m in service["booted"] if m not in hal.get("booted", ())]
            print("  a shoe in service (restarted with the session's 3 finished hands in its "
                  "journal): after boot %s here (%+d B), modules it adds: %s" % (
                      kb(service["boot"]), service["boot"] - hal.get("boot", 0),
                      ", ".join(extra) or "none"))
        else:
            print("  a shoe in service could not be booted: %s" % service.get("error"))
        print()
        print("Pico estimate (the Pico's face at boot, modules x%.2f and state x%.1f .. x%.1f; "
              "a hand adds what it adds here: the modules it loads ~%s, the rest x%.1f .. x%.1f):"
              % (est["imports64"] / est["imports32"], est["state_ratio"][1],
                 est["state_ratio"][0], kb(est["hand_modules32"]), est["state_ratio"][1],
                 est["state_ratio"][0]))
        rows = [("after boot", est["boot32"]), ("hand peak", est["peak32"])]
        if "smallest32" in est:
            rows.append(("needs (heap)", est["smallest32"]))
        budget_rows(rows)
        big = est.get("largest32")
        if big:
            print("  free heap (the most the largest free block can be): after boot ~%s, at a "
                  "hand's peak ~%s%s" % (kb(big["free32"]), kb(big["peak_free32"]), (
                      "; the largest block in the unix port's layout, scaled: ~%s (%.0f%% of "
                      "the free heap; the real port's layout differs: docs/deploy.md)" % (
                          kb(big["unix_layout"]), 100 * big["share"])) if "share" in big else
                      " (the largest block not measured: %s)" % big.get("error")))
        if own:
            print("  the modules by their own import cost on the Pico (32-bit estimate, their "
                  ".mpy bytes; 'gone': let go after boot):")
            live = set(hal.get("modules", ()))
            for b32, name, b64, mpy in own:
                if b32 >= 512:
                    print("    %-26s ~%8s  (%6d B of .mpy)%s" % (
                        name, kb(b32), mpy, "" if set(name.split(",")) & live else "  gone"))
        r = est.get("romfs")
        print()
        if r:
            print("With a ROMFS partition (a MicroPython build for the shoe with "
                  "MICROPY_HW_ROMFS_BYTES; the modules run in place from flash, measured here "
                  "booted from a ROMFS image: modules %s here -> ~%s):" % (
                      kb(r["imports64"]), kb(r["imports32"])))
            rows = [("after boot", r["boot32"]), ("hand peak", r["peak32"])]
            if "smallest32" in r:
                rows.append(("needs (heap)", r["smallest32"]))
            budget_rows(rows)
        else:
            print("With a ROMFS partition: not measured (%s)" % rom.get("error", "no image"))
    return 0


def per_module(run, sizes):
    """Each module's own import cost on the Pico's face (its bytes here, less what the imports
    inside it took), converted to 32 bits as the modules are (to32), largest first."""
    rows = []
    for name, took in (run.get("own") or {}).items():
        rows.append((to32(took, mpy_bytes(name.split(","), sizes)), name, took,
                     mpy_bytes(name.split(","), sizes)))
    rows.sort(reverse=True)
    return rows


def largest_block(face, hal, est):
    """The free heap on the Pico after boot and at a hand's peak (the pool, less the bare
    REPL's share and the estimated live heap): the most the largest free block can be. And the
    largest block the unix port's layout leaves: the Pico's face booted again in a heap whose
    free part after boot is the Pico's (x the 64-bit/32-bit ratio of the live heap), the
    largest block found there by bisection taken as the same share of the Pico's free heap.
    The real port's layout differs either way (docs/deploy.md: 72% of the free heap at 0.3.1,
    12% after issue 13's on-demand modules, where this gave 31% and 24%): only the port's
    figures decide."""
    lo, hi = est["boot32"]
    boot32 = (lo + hi) / 2.0
    free32 = PICO_HEAP - PICO_BASE - boot32
    peak_free32 = free32 - ((est["peak32"][0] + est["peak32"][1]) / 2.0 - boot32)
    out = {"free32": free32, "peak_free32": peak_free32}
    ratio = hal["boot"] / boot32
    want = hal["h0"] + hal["boot"] + ratio * free32  # the unix heap's usable part
    heap = int(want * 1048576.0 / hal["total"]) // 1024 + 1  # (-X heapsize counts its tables)
    run = run_pico(face, mode="largest", heap="%dK" % heap)
    if "largest" not in run:
        out["error"] = run.get("error", "no figure")
        return out
    share = float(run["largest"]) / run["free"]
    out.update({"heap_kb": heap, "free64": run["free"], "largest64": run["largest"],
                "share": share, "unix_layout": share * free32})
    return out


def budget_rows(rows):
    for label, (lo, hi) in rows:
        print("  %-11s %s .. %s  of ~%d KB (%.0f%% .. %.0f%%)" % (
            label, kb(lo), kb(hi), PICO_HEAP // 1024, 100.0 * lo / PICO_HEAP,
            100.0 * hi / PICO_HEAP))


def mpy_bytes(modules, sizes):
    out = 0
    for name in modules:
        path = name.replace(".", "/")
        out += sizes.get(path + ".mpy", sizes.get(path + "/__init__.mpy", 0))
    return out


def to32(imports64, mpy):
    """Modules on 32 bits: their .mpy bytes (bytecode, strings) the same, the rest halved."""
    return min(imports64, mpy) + max(0, imports64 - mpy) / 2.0


def estimate(ref, sizes, pico, minimum, rom=None):
    """The Pico's heap. At boot: the Pico's face measured here (pico: hal.rp2 over the fakes,
    the boot check, Device, Link), its modules' .mpy bytes the same on 32 bits and the rest of
    their heap halved, the state (Device, Link, buffers) x1.5 .. x2 smaller (pointer structures
    measure x2.0, byte buffers x1.0). A hand adds what it adds to the simulator's face here
    (ref: the engine, journal and link are the same code; the hardware layer's state per card
    is a few integers), at the state's ratio, but for the modules it loads (the engine's
    table loads with the first hand: firmware/play.py), whose heap here is taken as the
    simulator face's per .mpy byte and converted as modules; so does the headroom the smallest
    heap needed, at the state's ratio."""
    if "boot" not in ref or "structures" not in ref or "boot" not in pico:
        return None
    hi, lo = 2.0, 1.5
    imported = mpy_bytes(pico["modules"], sizes)
    imports32 = to32(pico["imports"], imported)
    boot32 = (imports32 + (pico["boot"] - pico["imports"]) / hi,
              imports32 + (pico["boot"] - pico["imports"]) / lo)
    peak = max(ref["hand_peaks"]) if ref.get("ok") else ref["boot"]
    hand = peak - ref["boot"]
    sim_mpy = mpy_bytes(ref.get("modules", []), sizes)
    hand_mpy = mpy_bytes(ref.get("hand_modules", []), sizes)
    hand_mods64 = min(hand, hand_mpy * ref["imports"] / sim_mpy) if sim_mpy else 0
    hand_mods32 = to32(hand_mods64, hand_mpy)
    rest = hand - hand_mods64
    out = {"structures": ref["structures"], "imported_mpy": imported,
           "imports64": pico["imports"], "imports32": imports32, "sim_mpy": sim_mpy,
           "sim_imports64": ref["imports"], "sim_imports32": to32(ref["imports"], sim_mpy),
           "state_ratio": (hi, lo), "boot32": boot32,
           "hand_modules64": hand_mods64, "hand_modules32": hand_mods32,
           "peak32": (boot32[0] + hand_mods32 + rest / hi, boot32[1] + hand_mods32 + rest / lo)}
    room = minimum * 1024 - peak if minimum else None  # the headroom it needed above it here
    if room is not None:
        out["smallest32"] = (out["peak32"][0] + room / hi, out["peak32"][1] + room / lo)
    if rom and rom.get("from_rom") and "boot" in rom:
        # modules executed in place: what they leave on the heap (module and function objects,
        # qstr pools) is pointers and halves; their bytecode stays in flash
        r32 = rom["imports"] / 2.0
        rom_hand = max(0, hand_mods64 - hand_mpy) / 2.0  # the hand's modules, run in place
        state = rom["boot"] - rom["imports"]
        boot = (r32 + state / hi, r32 + state / lo)
        out["romfs"] = {"imports64": rom["imports"], "imports32": r32, "boot32": boot,
                        "peak32": (boot[0] + rom_hand + rest / hi, boot[1] + rom_hand + rest / lo)}
        if room is not None:
            out["romfs"]["smallest32"] = (out["romfs"]["peak32"][0] + room / hi,
                                          out["romfs"]["peak32"][1] + room / lo)
    return out


if __name__ == "__main__":
    sys.exit(main())
