# The journal's flash on the Pico, inside littlefs. rp2's frozen _boot.py mounts littlefs over
# the whole storage region (rp2.Flash(): 1408 KB on the stock RPI_PICO image, less on a build
# with a ROMFS partition) and formats all of it when that mount fails (ports/rp2/modules/
# _boot.py); littlefs refuses to mount a filesystem whose block count is not the device's
# (lib/littlefs/lfs2.c, lfs2_mount_: "Invalid block count"), so a smaller littlefs would be
# formatted over at the next boot. No part of the region can be kept from littlefs: the
# journal's blocks are littlefs's own. DIR holds N files of exactly one block (BLOCK bytes)
# each. Such a file is a CTZ skip-list of a single block, which carries no pointers
# (lfs2_ctz_index: index 0), which littlefs never reads to traverse the filesystem
# (lfs2_ctz_traverse stops at index 0 before any read) and never erases, moves or gives to
# another file while the file exists (a file's data blocks change only when the file is
# written; block_cycles relocates metadata pairs only). Nobody writes these files: the journal
# programs and erases their blocks raw, through rp2.Flash(), by the map (MAP) of file to block,
# found once by a marker written into each file. littlefs counts the blocks as used (statvfs),
# checks nothing inside them (no CRC over file data), and mounts whatever the journal wrote.
#
#   journal_flash(store, dev, want)  -> (the block device for journal.Journal, None, note) or
#                                       (None, why the shoe cannot keep its journal, None);
#                                       note: None, or what happened to the reservation
#
# Power cuts: the map is written (atomically: a new file renamed over) only once every file is
# there and found; until then the journal writes nothing, so a cut while reserving leaves files
# that the next boot removes before it starts again (a new nonce, so that a marker left in a
# freed block is never taken). tests/mp_rp2_test.py cuts the power at every flash operation of
# the reservation and of a session that writes the journal and littlefs in turn.
import os
from array import array

from hal.base import BLOCK
# The folder's name must be no module's: on the Pico the firmware's modules and this folder share
# littlefs's root, which is on sys.path (""), and an import takes a folder before name.py or
# name.mpy (py/builtinimport.c, stat_dir_or_file: a namespace package). Firmware 0.3.0 named it
# "journal": from the second boot on, `import journal` found the folder and the firmware could
# not start (ImportError: no module named 'journal.crc16'; seen on the rp2 port in rp2040js).
DIR = "journal.blocks"
OLD_DIR = "journal"         # 0.3.0's name, moved once by move_old_folder() before any import
MAP = DIR + "/map"          # MAGIC, nonce (8), n (u16), then n u16: each file's block
MAGIC = b"FDJmap1\x00"
MARK = b"FDJ-rsv\x00"       # a reserved block until the journal first erases it: MARK, nonce, index
HEAD = 18
MIN_BLOCKS = 64             # a journal under this keeps too few hands (~220) to be worth having
ROOM = 40                   # blocks left free for the firmware's files (audit log, a redeploy)
PER_PAIR = 14               # journal files per metadata pair of DIR's listing: littlefs takes
#                             about a block per 15 entries (measured: 16 blocks for 243)


def move_old_folder(root=""):
    """A shoe that booted 0.3.0 keeps its journal's blocks in OLD_DIR, which hides the journal
    module: renamed to DIR (the same files and blocks: littlefs renames the entry only). main.py
    calls it on the Pico before anything imports journal."""
    try:
        if os.stat(root + OLD_DIR)[0] & 0x4000:
            os.rename(root + OLD_DIR, root + DIR)
    except OSError:  # none (the usual case), or DIR is there already: left as it is
        pass


def name(i):
    return "%s/b%03d" % (DIR, i)


class Blocks:
    """The journal's partition: block i is physical block phys[i] of dev (rp2.Flash(), the
    storage region littlefs is mounted on). A block still holding its reservation mark reads
    as erased (fresh): the journal erases every block before it programs it (journal.py,
    _new_block), so the mark is never programmed over."""

    def __init__(self, dev, phys, fresh):
        self.dev = dev
        self.phys = phys
        self.fresh = fresh  # bytearray: 1 while block i holds its mark

    def readblocks(self, block, buf, offset=0):
        if self.fresh[block]:
            for i in range(len(buf)):
                buf[i] = 0xFF
            return
        self.dev.readblocks(self.phys[block], buf, offset)

    def writeblocks(self, block, buf, offset=None):
        if offset is None:
            self.ioctl(6, block)
            offset = 0
        if self.fresh[block]:
            raise ValueError("journal block %d programmed before it was erased" % block)
        self.dev.writeblocks(self.phys[block], buf, offset)

    def ioctl(self, op, arg):
        if op == 4:
            return len(self.phys)
        if op == 5:
            return BLOCK
        if op == 6:
            self.dev.ioctl(6, self.phys[arg])
            self.fresh[arg] = 0
            return 0
        return self.dev.ioctl(op, arg)


def _u16(b, i):
    return b[i] | (b[i + 1] << 8)


def _read_map(store, dev):
    """(nonce, phys) from MAP if it is whole and consistent with the files, else None."""
    data = store.read(MAP, "rb")
    if data is None or len(data) < 18 or data[:8] != MAGIC:
        return None
    n = _u16(data, 16)
    if len(data) != 18 + 2 * n or n < 1:
        return None
    total = dev.ioctl(4, 0)
    seen = bytearray((total + 7) // 8)
    phys = array("H", [_u16(data, 18 + 2 * i) for i in range(n)])
    for p in phys:
        if p >= total or seen[p >> 3] & (1 << (p & 7)):
            return None
        seen[p >> 3] |= 1 << (p & 7)
    # every file of the reservation is there, one block long (a missing one has given its
    # block back to littlefs: the map no longer tells which blocks are the journal's)
    got = bytearray(n)
    try:
        for e in os.ilistdir(store.path(DIR)):
            nm = e[0]
            if nm == "map":
                continue
            if len(nm) != 4 or nm[0] != "b" or (len(e) > 3 and e[3] != BLOCK):
                return None
            i = int(nm[1:])
            if i >= n:
                return None
            got[i] = 1
    except (OSError, ValueError):
        return None
    for g in got:
        if not g:
            return None
    return bytes(data[8:16]), phys


def _clear(store):
    """Remove what a reservation left (its map first: from then on nothing is taken)."""
    folder = store.path(DIR)
    try:
        names = [e[0] for e in os.ilistdir(folder)]
    except OSError:
        return
    if "map" in names:
        os.remove(store.path(MAP))
    for nm in names:
        if nm != "map":
            os.remove(folder + "/" + nm)
    os.rmdir(folder)


def reserve(store, dev, want):
    """Reserve the journal's blocks: (nonce, phys) or raise OSError with why it cannot."""
    _clear(store)
    st = os.statvfs(store.folder or "/")
    if st[0] != BLOCK:
        raise OSError("the filesystem's blocks are %d bytes, not %d" % (st[0], BLOCK))
    n = min(want, (st[3] - ROOM - 2) * PER_PAIR // (PER_PAIR + 1))
    if n < MIN_BLOCKS:
        raise OSError("the filesystem has %d free blocks of 4 KB: the journal needs %d and "
                      "the firmware's files %d more" % (st[3], MIN_BLOCKS, ROOM))
    nonce = os.urandom(8)  # (rp2: MICROPY_PY_OS_URANDOM, from the ring oscillator)
    buf = bytearray(b"\xff" * BLOCK)
    buf[0:8] = MARK
    buf[8:16] = nonce
    os.mkdir(store.path(DIR))
    for i in range(n):
        buf[16] = i & 0xFF
        buf[17] = i >> 8
        with open(store.path(name(i)), "wb") as f:
            f.write(buf)
    phys = array("H", [0xFFFF] * n)
    head = bytearray(HEAD)
    for p in range(dev.ioctl(4, 0)):
        dev.readblocks(p, head, 0)
        if head[:16] == buf[:16]:
            i = _u16(head, 16)
            if i >= n or phys[i] != 0xFFFF:
                raise OSError("block %d: a second mark of journal block %d" % (p, i))
            phys[i] = p
    for i in range(n):
        if phys[i] == 0xFFFF:
            raise OSError("journal block %d was not found on the flash" % i)
    store.write(MAP, MAGIC + nonce + bytes((n & 0xFF, n >> 8)) + bytes(phys))
    return nonce, phys


def journal_flash(store, dev, want):
    """The journal's block device on littlefs (reserving its blocks the first time), or None
    and why not. store: the littlefs root (hal.store.DirStore); dev: the whole storage region
    littlefs is mounted on (rp2.Flash()); want: the most blocks to reserve."""
    found = _read_map(store, dev)
    note = None
    if found is None:
        try:
            note = "reserved" if store.read(MAP, "rb") is None else \
                "the journal's reservation was damaged: reserved again, its hands are lost"
            found = reserve(store, dev, want)
        except OSError as e:
            return None, "no flash for the journal: %s" % (e.args[0] if e.args else e), None
    nonce, phys = found
    fresh = bytearray(len(phys))
    head = bytearray(HEAD)
    for i in range(len(phys)):
        dev.readblocks(phys[i], head, 0)
        fresh[i] = head[:8] == MARK and head[8:16] == nonce and _u16(head, 16) == i
    return Blocks(dev, phys, fresh), None, note
