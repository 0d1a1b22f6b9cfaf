# The rp2 HAL under the MicroPython unix port, on fakes of `machine` and `rp2` (tests/fakes):
#   micropython -X heapsize=256K tests/mp_rp2_test.py   (run by tests/test_rp2.py)
# Rp2Hal is built from hardware/pinmap.json exactly as on the Pico, in the world of
# tests/mp_rp2_world.py: the card path, the reader, the watchdog, the flash, the ring
# oscillator. Prints "OK" at the end; any failure raises.
import io
import sys

if sys.implementation.name != "micropython" and __name__ == "mp_rp2_test" and \
        "pytest" in sys.modules:
    import pytest  # collected by pytest under CPython: not a pytest module, leave sys.path alone

    pytest.skip("a MicroPython script, run by tests/test_rp2.py", allow_module_level=True)

from mp_rp2_world import *  # noqa: E402,F401,F403  (the fakes, the firmware, the card path)
from mp_rp2_world import PINS, main  # noqa: E402


def case_wiring():
    world, hal = fresh()
    assert hal.simulated is False and hal.deck is None
    assert hal.caps == 2
    assert hal.device_id.startswith("pico-")
    sm = hal.sm
    assert sm.program is SP.step_pulses and sm.freq == SP.STEP_HZ
    assert sm.set_base == world.g_step
    assert world.route() == ROUTE_REJECT, "the diverter powers up at reject"
    assert board.outputs[world.g_en] != world.en_level, "the driver powers up off"
    uart = board.uarts[0]
    assert uart.baudrate == 115200 and uart.tx.id == 0 and uart.rx.id == 1
    assert hal.flash.ioctl(4, 0) == STAND_IN and hal.flash.ioctl(5, 0) == 4096


def case_stock_layout_keeps_the_journal():
    """The stock RPI_PICO image: littlefs over the whole 1408 KB storage region (rp2's _boot.py
    formats a fresh chip), the firmware's image installed on it. The HAL reserves the journal's
    blocks in littlefs (journal/b000 ...), the journal runs on them raw, littlefs files are
    written in between, and after a power cycle _boot.py mounts littlefs again (nothing is
    formatted), the reservation is found as it was, and the journal has everything."""
    import os
    from journal import Journal

    rp2.chip.sectors.clear()
    assert boot_storage(), "a fresh chip: _boot.py formats it"
    if IMAGE:
        install(IMAGE)
    used0 = os.statvfs(MOUNT)
    world, hal = fresh(stock=True)
    n = hal.flash.ioctl(4, 0)
    assert hal.caps == 2 and hal.journal_fault is None, hal.logs
    assert "reserved (%d blocks for the journal)" % n in hal.logs[-1], hal.logs
    st = os.statvfs(MOUNT)
    assert st[2] == 352 and used0[3] - st[3] >= n, (used0, st, n)
    assert n == min(304, (used0[3] - 42) * 14 // 15) and 40 <= st[3] <= 48, (n, used0, st)
    print("stock layout: %d blocks used before, %d journal blocks, %d left free" % (
        used0[2] - used0[3], n, st[3]))
    phys = list(hal.flash.phys)
    assert len(set(phys)) == n
    j = Journal(hal.flash)
    assert not j.problems, j.problems  # the reservation marks read as erased
    j.set_config('{"game":"holdem"}')
    hal.store.write("counters", '{"cards": 1}')
    j.begin_hand(1, '{"game":"holdem","seats":[1,2]}')
    for k in range(40):  # past a block: the ring moves on
        j.commit(bytes([k, 1, 2, 3] * 20), bytes([0, k]), feeding=0)
        hal.store.append("audit.log", b"record %d\n" % k)
    # the power goes
    j = hal = None
    power_off()
    assert not boot_storage(), "the storage was formatted at power-up"
    world, hal = fresh(stock=True)
    assert hal.caps == 2 and list(hal.flash.phys) == phys
    assert not [m for m in hal.logs if "reserved" in m], hal.logs
    j2 = Journal(hal.flash)
    assert not j2.problems, j2.problems
    assert j2.config == '{"game":"holdem"}' and j2.hand is not None and j2.hand.number == 1
    assert len(j2.hand.entries) == 40 * 80
    assert hal.store.read("counters") == '{"cards": 1}'
    assert hal.store.read("audit.log").count("record") == 40
    power_off()


def case_romfs_build_layout():
    """A build with a 192 KB ROMFS partition has a 1216 KB storage region, littlefs over all of
    it (the stock _boot.py): the journal is reserved the same way, from what is free."""
    import os

    try:
        rp2.STORAGE_BYTES = 1216 * 1024
        rp2.chip.sectors.clear()
        assert boot_storage()
        free = os.statvfs(MOUNT)[3]
        world, hal = fresh(stock=True)
        assert hal.caps == 2 and hal.flash.ioctl(4, 0) == min(304, (free - 42) * 14 // 15)
        assert os.statvfs(MOUNT)[3] >= 40
        assert max(hal.flash.phys) < 304
        power_off()
    finally:
        rp2.STORAGE_BYTES = 1408 * 1024


def case_a_full_filesystem_keeps_no_journal():
    """A filesystem without room for the journal (under 64 blocks once the firmware's files
    have theirs): no journal, and why; nothing is reserved, littlefs is left as it was."""
    import os

    try:
        rp2.STORAGE_BYTES = 110 * 4096
        rp2.chip.sectors.clear()
        boot_storage()
        world, hal = fresh(stock=True)
        assert hal.flash is None and hal.caps == 0
        assert "no flash for the journal: the filesystem has 108 free blocks" in \
            hal.journal_fault, hal.journal_fault
        assert "stock MicroPython" in hal.journal_fault
        assert "journal" not in os.listdir(MOUNT)
        power_off()
    finally:
        rp2.STORAGE_BYTES = 1408 * 1024


def _small_storage(blocks):
    """A storage region of `blocks` (the sweeps' littlefs: the same code, fewer blocks to
    reserve and to fill), formatted by _boot.py, with one file of the shoe's on it."""
    from hal import reserve

    rp2.STORAGE_BYTES = blocks * 4096
    rp2.chip.sectors.clear()
    reserve.MIN_BLOCKS, reserve.ROOM = 8, 8
    assert boot_storage()
    with open(MOUNT + "/device.key", "w") as f:
        f.write("k" * 64)
    power_off()
    return rp2.chip.snapshot()


def _files_survive(store):
    assert store.read("device.key") == "k" * 64, "a littlefs file was damaged"


def _sweep(what, base, work, check, runs):
    """Cut the power at the flash operations of work(ctx, start) (counted from its call of
    start()), on the storage snapshot base: every one with FACEDOWN_SWEEP=1, else about `runs`
    spread over all, each clean and torn. After each cut the next power-up must mount littlefs
    (_boot.py formats nothing); then check(ctx, k, partial)."""
    import os

    rp2.chip.restore(base)
    boot_storage()
    mark = []
    work({}, lambda: mark.append(rp2.chip.ops))
    total = rp2.chip.ops - mark[0]
    power_off()
    stride = 1 if os.getenv("FACEDOWN_SWEEP") else max(1, total // runs)
    cuts = 0
    for k in range(1, total + 1, stride):
        for partial in (False, True):
            rp2.chip.restore(base)
            boot_storage()
            ctx = {}
            try:
                work(ctx, lambda: rp2.chip.arm(k, partial))
                raise AssertionError("the power never went (op %d of %d)" % (k, total))
            except rp2.PowerCut:
                pass
            power_off()
            assert not boot_storage(), "formatted after a cut at op %d" % k
            check(ctx, k, partial)
            power_off()
        cuts += 1
    print("%s: %d flash operations, cut at %d of them (clean and torn)" % (what, total, cuts))


def case_reservation_power_cuts():
    """The power goes at any flash operation while the journal's blocks are being reserved
    (clean, or torn mid-page / mid-sector): at the next power-up littlefs mounts (_boot.py
    formats nothing), the reservation starts again and ends, and its blocks are the journal's
    alone: the journal fills every one of them, littlefs is then filled with files to the
    last block, and after another power cycle both read back whole."""
    from hal import reserve
    from hal.store import DirStore

    store = DirStore(MOUNT)

    def work(ctx, start):
        start()
        reserve.journal_flash(store, rp2.Flash(), 16)

    def check(ctx, k, partial):
        _files_survive(store)
        dev, why, note = reserve.journal_flash(store, rp2.Flash(), 16)
        assert dev is not None, why
        n = dev.ioctl(4, 0)
        assert n == 16 and len(set(dev.phys)) == n
        for b in range(n):  # the journal writes every block of its own
            dev.ioctl(6, b)
            dev.writeblocks(b, bytes([b]) * 4096, 0)
        filled = 0
        try:  # littlefs takes every block it has left
            while True:
                with open(MOUNT + "/fill%d" % filled, "wb") as f:
                    f.write(bytes([filled & 0xFF]) * 8192)
                filled += 1
        except OSError:
            pass
        power_off()
        assert not boot_storage()
        _files_survive(store)
        for i in range(filled):
            with open(MOUNT + "/fill%d" % i, "rb") as f:
                assert f.read() == bytes([i & 0xFF]) * 8192, "fill%d damaged" % i
        dev, why, note = reserve.journal_flash(store, rp2.Flash(), 16)
        assert note is None, note  # the same reservation, found again
        buf = bytearray(4096)
        for b in range(n):
            dev.readblocks(b, buf, 0)
            assert buf == bytes([b]) * 4096, "journal block %d damaged" % b

    try:
        _sweep("reservation", _small_storage(96), work, check, 24)
    finally:
        rp2.STORAGE_BYTES = 1408 * 1024


def case_session_power_cuts():
    """A session that writes the journal (its records on the reserved blocks, raw) and
    littlefs (the audit log appended, the counters rewritten) in turn, the power cut at every
    flash operation of it, clean or torn: littlefs always mounts (nothing is formatted), the
    reservation is found as it was, the journal holds exactly the commits done (or the one in
    flight), the audit log the lines appended (or the one in flight), the counters the last
    value written (or the one in flight), and no problem is reported."""
    from hal import reserve
    from hal.store import DirStore
    from journal import Journal

    steps = 40  # past a journal block: its erase, at a new place in the ring
    store = DirStore(MOUNT)

    def work(done, start):
        done.update(commits=0, audit=0, counters=None, pending=None)
        dev = reserve.journal_flash(store, rp2.Flash(), 16)[0]
        start()
        j = Journal(dev)
        j.set_config('{"game":"holdem"}')
        j.begin_hand(1, '{"game":"holdem","seats":[1,2]}')
        for k in range(steps):
            done["pending"] = ("commit", k + 1)
            j.commit(bytes([k, 1, 2, 3] * 30), bytes([0, k]), feeding=0)
            done["commits"] = k + 1
            done["pending"] = ("audit", k + 1)
            store.append("audit.log", b"record %d\n" % k)
            done["audit"] = k + 1
            if k % 3 == 2:
                done["pending"] = ("counters", k)
                store.write("counters", str(k))
                done["counters"] = k
        done["pending"] = None

    def check(done, k, partial):
        _files_survive(store)
        dev, why, note = reserve.journal_flash(store, rp2.Flash(), 16)
        assert note is None and list(dev.phys) == phys, (note, why)
        j = Journal(dev)
        assert not j.problems, (k, partial, j.problems)
        pend = done["pending"]
        commits = len(j.hand.entries) // 120 if j.hand is not None else 0
        assert commits == done["commits"] or pend == ("commit", commits), \
            (k, partial, commits, done)
        lines = (store.read("audit.log") or "").splitlines()
        assert lines == ["record %d" % i for i in range(len(lines))], lines
        assert len(lines) == done["audit"] or pend == ("audit", len(lines)), \
            (k, partial, len(lines), done)
        c = store.read("counters")
        c = None if c is None else int(c)
        assert c == done["counters"] or pend == ("counters", c), (k, partial, c, done)

    try:
        _small_storage(96)
        boot_storage()
        dev, why, note = reserve.journal_flash(store, rp2.Flash(), 16)
        assert dev is not None, why
        phys = list(dev.phys)
        power_off()
        _sweep("session", rp2.chip.snapshot(), work, check, 80)
    finally:
        rp2.STORAGE_BYTES = 1408 * 1024


def case_the_boot_check_walks_each_file_once():
    """The Pico's VFS as a MicroPython build with a ROMFS partition has it: littlefs at /, the
    ROMFS mounted at /rom inside it (py/runtime.c, mp_vfs_mount_romfs_protected), the working
    folder / (nothing changes it: rp2's _boot.py does not chdir). os.ilistdir("/") lists the
    mount point among the root's folders (extmod/vfs.c, mp_vfs_ilistdir), so a walk of the
    store that follows it finds every module twice, as /rom/x and rom/x, and the boot check
    locked the shoe ("rom/audit.mpy is not in the manifest"). Here the unix port's own root
    is unmounted to make room, once every module the check needs is loaded (the ROMFS image:
    program.romfs beside the image)."""
    import os
    import vfs
    from binascii import hexlify
    import integrity
    import session  # noqa: F401  (integrity loads it: before the host's files go)
    from hal.store import DirStore

    with open(IMAGE + "/../program.romfs", "rb") as f:
        rom = f.read()
    rp2.chip.sectors.clear()
    boot_storage()
    store = DirStore(MOUNT)
    with open(MOUNT + "/main.py", "w") as f:
        f.write("print('facedown')\n")
    store.write("device.key", "ab" * 32)
    vfs.mount(vfs.VfsRom(memoryview(rom)), "/rom")
    buf = bytearray(512)
    listed = {"main.py": {"sha256": integrity.file_hash(store, "main.py", buf)}}
    for rel in DirStore("/rom").files():
        listed["/rom/" + rel] = {"sha256": integrity.file_hash(DirStore("/rom"), rel, buf)}
    assert "/rom/audit.mpy" in listed and len(listed) > 20, sorted(listed)
    data = ('{"files": {%s}}' % ", ".join('"%s": {"sha256": "%s"}' % (k, v["sha256"])
                                          for k, v in listed.items())).encode()
    store.write("manifest.json", data)
    mac = integrity._hmac(integrity.maintenance_key(store), (b"facedown manifest", data))
    store.write("manifest.mac", hexlify(mac).decode())
    vfs.umount("/rom")
    vfs.umount(MOUNT)
    # the Pico's mount table: littlefs at /, the ROMFS at /rom; the working folder /
    vfs.umount("/")
    vfs.mount(vfs.VfsLfs2(rp2.Flash(), progsize=256), "/")
    vfs.mount(vfs.VfsRom(memoryview(rom)), "/rom")
    os.chdir("/")
    assert "rom" in os.listdir("/") and "main.py" in os.listdir("")
    store = DirStore("")
    assert sorted(store.files()) == ["device.key", "main.py", "manifest.json",
                                     "manifest.mac"], sorted(store.files())
    assert integrity.check(store) is None, integrity.check(store)
    # the check still sees code in the ROMFS, and on the filesystem, that it does not list
    with open("stray.py", "w") as f:
        f.write("x = 1\n")
    assert integrity.check(store) == "stray.py is not in the manifest"


class Halted(BaseException):
    """main.py's halt() ran (the stand-in of hal.sim.power_off ends the case there)."""


class Unplugged(BaseException):
    """Something no `except Exception` catches, raised into the main loop."""


def _run_main(cdc, switch=False, end_s=3.0):
    """main.py as a Pico runs it: its source in a fresh __main__, after pyexec turned Ctrl-C on,
    with the USB line of tests/fakes/usb.py. main.py picks the simulator's HAL off rp2: the
    stand-in of hal.sim builds the Pico's (Rp2Hal over the fakes, its port on the fake line,
    its store a fresh folder holding a key: a shoe in production), and its power_off raises
    Halted. switch: the maintenance key switch turned at power-up. end_s: Unplugged is raised
    into the running code then (board time). Returns (the HAL, how main.py ended)."""
    import os
    import machine as M
    import usb

    made = []
    root = "shoe-" + "".join("%02x" % b for b in os.urandom(4))  # (a fresh one)

    class Hal(Rp2Hal):
        def open_port(self, inp=None, out=None):
            return Rp2Hal.open_port(self, cdc.stdin, cdc.stdout)

    class Sim:
        @staticmethod
        def SimHal():
            if PINS:
                sys.modules["hal.pins"] = PINS[0]
            hal = Hal(PINMAP, clock=M.Clock(), root=root, journal=journal_stand_in())
            made.append(hal)
            World(hal.timing)
            return hal

        @staticmethod
        def power_off(exc=None):
            raise Halted()

    try:
        os.mkdir(root)
    except OSError:
        pass
    from hal.store import DirStore

    DirStore(root).write("device.key", "ab" * 32)
    if switch:
        import json

        with open(PINMAP) as f:
            gpio, level = signal_maps(json.load(f))
        board.inputs[gpio["maint_key"]] = lambda: level["maint_key"]
    sys.modules["hal.sim"] = Sim
    usb.install(cdc)

    def unplug():
        raise Unplugged()

    board.later(end_s * 1000000, unplug)
    with open((IMAGE or ROOT + "/firmware") + "/main.py") as f:
        code = compile(f.read(), "main.py", "exec")
    cdc.pyexec_main()
    how = "returned"
    try:
        exec(code, {"__name__": "__main__"})
    except Halted:
        how = "halted"
    except BaseException as e:  # out of main.py: the REPL would have the line
        how = "raised " + type(e).__name__
    finally:
        usb.uninstall()
        sys.modules.pop("hal.sim", None)
    return made[0] if made else None, how


def _boot_world():
    import usb

    board.reset()
    board.ns = ((1 << 30) - 1500000) * 1000
    return usb.Cdc(board)


def case_ctrl_c_at_boot():
    """A 0x03 on the USB line while main.py boots (a host's probe, before the protocol has
    the line): on a Pico it raised KeyboardInterrupt, main.py re-raised it, and the REPL came up
    on a shoe in production. Now Ctrl-C is off from main.py's first line: the byte is data, the
    shoe boots and serves the protocol; and whatever later ends the loop (here a BaseException)
    ends in halt(), with the port closed and the watchdog stopped."""
    import wire

    cdc = _boot_world()
    cdc.send(b"\x03", 1)  # during the boot's first steps
    cdc.send(wire.encode(wire.CMD, 5, wire.encode_command("ping", (77,))), 1500000)
    hal, how = _run_main(cdc)
    assert how == "halted", how
    assert cdc.interrupts == 0, "Ctrl-C was on while the shoe booted"
    assert [m for m in hal.logs if " ready: " in m], hal.logs
    replies = [f for f in wire.Decoder().feed(cdc.received()) if f[0] == wire.REPLY]
    assert [(q, b[0]) for _t, q, b in replies] == [(5, 0)], replies  # the protocol had the line
    assert hal.wdt is None and not board.wdt_enabled, "the watchdog runs on in halt()"


def case_ctrl_c_with_the_key_switch():
    """The maintenance key switch turned at power-up: a developer's Ctrl-C works in the main
    loop (KeyboardInterrupt) and the REPL takes the line; the port is closed and the watchdog
    stopped first (it reset the Pico 2 s into the REPL)."""
    cdc = _boot_world()
    cdc.send(b"\x03", 1500000)  # the loop runs by then
    hal, how = _run_main(cdc, switch=True, end_s=5.0)
    assert cdc.interrupts == 1 and how == "returned", (cdc.interrupts, how)
    assert [m for m in hal.logs if " ready: " in m], hal.logs
    assert hal.wdt is None and not board.wdt_enabled, "the watchdog runs on at the REPL"
    board.advance_us(3 * 1000000)
    assert not board.wdt_expired


def case_idle_loop_allocates_nothing():
    """The main loop with nothing to do (Link.run under asyncio over Device and Rp2Hal, the
    line quiet): gc.mem_alloc() does not move between two instants of it, over a thousand
    rounds (the fakes allocate nothing on that path: what moves is the firmware's). It moved
    by 128 B a round: select.poll's poll(0) list, and a method bound at each call."""
    import asyncio
    import gc
    import usb

    world, hal = fresh()
    del PINS[:]
    gc.collect()
    from device import Device
    from link import Link

    cdc = usb.Cdc(board)
    dev = Device(hal)
    port = hal.open_port(cdc.stdin, cdc.stdout)
    lk = Link(port, dev, hal.clock, hal.caps)
    hal.mech.idle = lk.idle
    rounds = [0]
    service = lk.service

    def counted():
        rounds[0] += 1
        return service()

    lk.service = counted
    marks = [0, 0, 0, 0]

    def first():
        marks[0] = gc.mem_alloc()
        marks[1] = rounds[0]

    def last():
        marks[2] = gc.mem_alloc()
        marks[3] = rounds[0]
        dev.maintenance = True  # the loop ends

    t0 = board.ns // 1000
    board.later(100000, first)   # 0.1 s in: the boot's work is done, the line quiet
    board.later(350000, last)
    gc.collect()
    gc.disable()
    try:
        asyncio.run(lk.run())
    finally:
        gc.enable()
    n = marks[3] - marks[1]
    print("idle loop: %d B in %d rounds (%.2f s of the shoe's time)" % (
        marks[2] - marks[0], n, (board.ns // 1000 - t0) / 1e6))
    assert n >= 500, n
    assert marks[2] - marks[0] == 0, (marks, n)
    port.close()


def case_frames():
    f = frame("RD,07")
    assert f == b"$RD,07*%04X\n" % crc_ccitt(b"RD,07"), f
    assert crc_ccitt(b"123456789") == 0x29B1  # the CRC-16/CCITT-FALSE check value
    line = b"$CD,07,Td,0,97*%04X" % crc_ccitt(b"CD,07,Td,0,97")
    assert parse_frame(line) == ["CD", "07", "Td", "0", "97"]
    assert parse_frame(line[:-1] + b"0" if line[-1:] != b"0" else line[:-1] + b"1") is None
    assert parse_frame(b"CD,07*0000") is None
    assert parse_frame(b"$" + b"x" * 60 + b"*0000") is None


def case_normal_feed():
    world, hal = fresh()
    mech = hal.mech
    load(world, hal, ["2c", "3d", "4h", "5s", "6c", "7d"])
    committed = []
    mech.before = lambda route: committed.append((route, len(world.flight), world.motor))
    got = mech.feed(ROUTE_OUT)
    assert got == [C.parse("7d")], got
    assert [c.code for c in world.out[ROUTE_OUT]] == [C.parse("7d")]
    assert committed == [(ROUTE_OUT, 0, 0)], "before() must run before any card moves"
    check_idle_state(world, hal)
    assert world.motor == world.spc, "one card, one pick-roller turn (%d)" % world.motor
    # the hold position: T + hold_after_throat steps, the card's lead at hold_mm
    # read at the hold position: a fixed count after the throat beam, the lead at hold_mm
    assert len(world.read_at) == 1 and abs(world.read_at[0][0] - world.H) < 1, world.read_at
    got = mech.feed(ROUTE_BURN)
    assert got == [C.parse("6c")] and [c.code for c in world.out[ROUTE_BURN]] == [C.parse("6c")]
    assert mech.feeds == 2 and mech.retries == 0
    h = mech.last
    assert not h.double and not h.short and h.spells == 1
    # D measured the card: one card length in steps at cruise (2264), within 2 %
    assert abs(h.lengths[0] - hal.timing.card_steps) < hal.timing.card_steps // 50, h.lengths
    assert mech.expect == set(C.parse(n) for n in ("2c", "3d", "4h", "5s"))
    # step rate: never above max_steps_per_s, cruise as the pin map says
    halves = hal.sm.halves
    assert min(halves) >= SP.half_for(hal.timing.max_rate)
    assert SP.half_for(hal.timing.cruise) in halves
    assert SP.rate_of(SP.half_for(hal.timing.cruise)) == hal.timing.cruise


def case_engine_deal_and_jam_exhausted():
    """Through the engine: a deal card by card; a jam that stays exhausts the retries, the
    engine's state is what it was, and after the operator clears it the same deal goes on."""
    import gc

    world, hal = fresh()
    del PINS[:]   # the pin map's loader goes: the engine is the biggest import
    gc.collect()
    from shoe.hand import Hand  # after the HAL (which gave the pin map's loader back)
    from shoe.rng import SeededRandom

    mech = hal.mech
    deck = list(range(52))
    hand = Hand("holdem", [1, 2, 3], 3, "tda2024", {}, SeededRandom(1), mech, deck)
    world.magazine = [Card(c) for c in hand.z.stub]  # the physical magazine in the stub's order
    hand.deal(2)
    assert [c.code for c in world.out[ROUTE_OUT]] == [deck[0], deck[1]]
    before = (list(hand.z.stub), bytes(hand.z.where), hand.initial_done)
    world.jam_at = 95.0  # sticks before the throat, every time
    world.jam_times = 99
    e = expect_fault("jam", hand.deal, 1)
    assert "throat" in e.message and mech.retries == hal.timing.jam_retries + 1, e
    assert (list(hand.z.stub), bytes(hand.z.where), hand.initial_done) == before, \
        "the engine's state changed"
    assert board.outputs[world.g_en] != world.en_level, "the motor is off after the fault"
    assert world.route() == ROUTE_REJECT
    # the shoe refuses while the card is in the path
    e = expect_fault("jam", mech.feed, ROUTE_OUT)
    assert "in the path" in e.message
    # the operator: lid open, card back under the stack, lid closed
    world.lid = True
    expect_fault("lid_open", hand.deal)
    card = world.flight.pop()[0]
    world.magazine.append(card)
    world.jam_at = None
    world.lid = False
    hand.deal()  # the interrupted deal(1) finishes: the same feed, retried
    assert [c.code for c in world.out[ROUTE_OUT]] == deck[:3]
    assert hand.initial_done == 3 and hand.z.where[deck[2]] != before[1][deck[2]]
    hand.deal()
    assert [c.code for c in world.out[ROUTE_OUT]] == deck[:6]
    assert hand.initial_complete()
    check_idle_state(world, hal)


def case_jam_retried_then_succeeds():
    world, hal = fresh()
    mech = hal.mech
    load(world, hal, ["2c", "3d", "4h", "5s", "9h"])
    world.jam_at = 90.0
    world.jam_times = 1  # the first reverse frees it
    got = mech.feed(ROUTE_OUT)
    assert got == [C.parse("9h")], got
    assert mech.retries == 1 and mech.notes[-1][0] == "jam", mech.notes
    assert not mech.last.double, mech.last.lengths
    check_idle_state(world, hal)
    # a jam in the throat during the eject: reversed, retried
    world.jam_at = 160.0
    world.jam_times = 1
    got = mech.feed(ROUTE_OUT)
    assert got == [C.parse("5s")] and mech.retries == 1, (got, mech.notes)
    assert [c.code for c in world.out[ROUTE_OUT]] == [C.parse("9h"), C.parse("5s")]
    check_idle_state(world, hal)
    # a misfeed (the pick slips): back home, picked again
    world.misfeeds = 1
    assert mech.feed(ROUTE_OUT) == [C.parse("4h")] and mech.retries == 1
    check_idle_state(world, hal)


def case_double_feed():
    world, hal = fresh()
    mech = hal.mech
    load(world, hal, ["2c", "3d", "4h", "5s", "8c", "Ks"])
    world.double = 20.0  # the card above comes along, 20 mm behind
    got = mech.feed(ROUTE_OUT)
    assert got == [C.parse("Ks"), C.parse("8c")], got
    assert mech.last.double and mech.last.lengths[0] > hal.timing.double_steps, mech.last.lengths
    assert [c.code for c in world.out[ROUTE_REJECT]] == [C.parse("Ks"), C.parse("8c")]
    assert mech.last_route == ROUTE_REJECT
    check_idle_state(world, hal)
    # the next card is a single one again, to the output
    assert mech.feed(ROUTE_OUT) == [C.parse("5s")]
    assert not mech.last.double
    assert [c.code for c in world.out[ROUTE_OUT]] == [C.parse("5s")]
    # two cards with a gap between them (two spells at D): both read, both rejected
    world.magazine[:0] = cards("9c", "9d", "9h")
    world.double = 100.0
    assert mech.feed(ROUTE_OUT) == [C.parse("4h"), C.parse("3d")]
    assert mech.last.spells == 2 and mech.last.double
    assert [c.code for c in world.out[ROUTE_REJECT]][-2:] == [C.parse("4h"), C.parse("3d")]
    check_idle_state(world, hal)
    assert mech.feed(ROUTE_OUT) == [C.parse("2c")]


def case_face_up_unreadable_foreign():
    world, hal = fresh()
    mech = hal.mech
    load(world, hal, ["Ac", "Ad", "2c", "3d", "4h", "5s", "6h", "7h"])
    world.magazine[-1].up = True
    got = mech.feed(ROUTE_OUT)
    assert got == [C.parse("7h") | UP], got
    assert [c.code for c in world.out[ROUTE_REJECT]] == [C.parse("7h")]
    assert mech.rejected[-1] == ("face_up", C.parse("7h"))
    # unreadable (the reader says ??): reject, nothing reported
    world.magazine[-1].unreadable = True
    assert mech.feed(ROUTE_OUT) == []
    assert [c.code for c in world.out[ROUTE_REJECT]][-1] == C.parse("6h")
    assert mech.rejected[-1] == ("unreadable", None)
    # low confidence counts as unreadable
    world.magazine[-1].conf = 50
    assert mech.feed(ROUTE_OUT) == []
    # a bad CRC is dropped and the request repeated
    world.garble = 1
    n = len(world.requests)
    assert mech.feed(ROUTE_OUT) == [C.parse("4h")]
    assert len(world.requests) == n + 2 and hal.mech.reader.frames_bad == 1
    assert [c.code for c in world.out[ROUTE_OUT]] == [C.parse("4h")]
    # a card that is not in the stub: reject, reported as read (the engine's procedure)
    world.magazine.append(Card(C.JOKER))
    assert mech.feed(ROUTE_OUT) == [C.JOKER]
    assert world.out[ROUTE_REJECT][-1].code == C.JOKER
    check_idle_state(world, hal)


def case_empty_lid_reader():
    world, hal = fresh()
    mech = hal.mech
    load(world, hal, ["2c", "3d", "4h", "5s", "6s"])
    # lid open: before anything moves
    world.lid = True
    moved = world.motor
    expect_fault("lid_open", mech.feed, ROUTE_OUT)
    assert world.motor == moved and not world.flight
    world.lid = False
    assert mech.feed(ROUTE_OUT) == [C.parse("6s")]
    # lid opened mid-card: stop; the card goes back under the stack and is fed again
    board.later(300000, lambda: setattr(world, "lid", True))
    e = expect_fault("lid_open", mech.feed, ROUTE_OUT)
    assert "moving" in e.message and mech.st.moving() is False
    assert world.flight, "the card stopped in the path"
    card = world.flight.pop()[0]
    world.magazine.append(card)
    world.lid = False
    assert mech.feed(ROUTE_OUT) == [card.code]
    check_idle_state(world, hal)
    # the reader stops answering: no card moves
    world.reader_on = False
    mech.reader.alive = False
    motor = world.motor
    expect_fault("reader_silent", mech.feed, ROUTE_OUT)
    assert world.motor == motor and not world.flight
    world.reader_on = True
    # it dies while a card waits at the reader: the card stays there, read by the next feed
    board.later(200000, lambda: setattr(world, "reader_on", False))
    e = expect_fault("reader_silent", mech.feed, ROUTE_OUT)
    assert len(world.flight) == 1 and abs(world.flight[0][1] - world.H) < 3, world.flight
    assert "waits at the reader" in e.message
    world.reader_on = True
    assert mech.feed(ROUTE_OUT) == [C.parse("4h")]
    assert [c.code for c in world.out[ROUTE_OUT]] == [C.parse(n) for n in ("6s", "5s", "4h")]
    check_idle_state(world, hal)
    # empty magazine with a stub still expected: refused before a card moves
    world.magazine = []
    hal.mech.load([C.parse(n) for n in ("2c", "9d", "Tc", "Jc", "Qc")])
    motor = world.motor
    expect_fault("empty", mech.feed, ROUTE_OUT)
    assert world.motor == motor
    # the last card or two (the beam reads clear): tried; nothing comes -> empty, roller home
    hal.mech.load([C.parse("2c")])
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert world.home() and not world.flight, e
    world.magazine = cards("2c")
    assert mech.feed(ROUTE_OUT) == [C.parse("2c")]
    # motor supply missing
    world.volts = 12.0
    expect_fault("motor_power", mech.feed, ROUTE_OUT)


def case_watchdog():
    world, hal = fresh()
    sent = []

    class Out:
        def write(self, b):
            sent.append(bytes(b))
            return len(b)

    class In:
        def __init__(self):
            self.data = bytearray(b"\x7e\x03hello")

        def read(self, n):
            d = bytes(self.data[:n])
            self.data = self.data[n:]
            return d

    inp = In()

    class Poll:
        def ipoll(self, t):  # (select.poll's, which UsbPort uses: poll(0) makes a list)
            return [1] if inp.data else []

    port = UsbPort(inp, Out(), Poll(), hal.tick)
    hal.start_watchdog()
    assert board.wdt.timeout == 2000
    buf = bytearray(4)
    assert port.read_into(buf) == 4 and buf == bytearray(b"\x7e\x03he")
    assert port.read_into(buf) == 3 and port.read_into(buf) == 0
    port.write(b"\x7eabc")
    assert sent == [b"\x7eabc"]
    feeds = board.wdt_feeds
    assert feeds >= 3
    # the mechanism feeds it all through a card (well inside the 2 s timeout)
    load(world, hal, ["2c", "3d", "4h", "5s", "6c"])
    board.wdt_max_gap_ms = 0
    hal.mech.feed(ROUTE_OUT)
    assert board.wdt_feeds > feeds + 100 and board.wdt_max_gap_ms < 50, board.wdt_max_gap_ms
    assert not board.wdt_expired
    # a loop that stops feeding it resets the Pico
    board.advance_us(2100000)
    assert board.wdt_expired
    # open_port on the unix port's stdin (kbd_intr exists there too); maintenance: close()
    # stops the watchdog, which machine.WDT cannot
    world = hal = None
    world, h2 = fresh()
    p = h2.open_port()
    assert board.wdt is not None and board.wdt_enabled and isinstance(p, UsbPort)
    p.read_into(bytearray(8))
    p.close()
    assert not board.wdt_enabled and h2.wdt is None
    assert board.mem[0x4005B000] == 1 << 30
    board.advance_us(10 * 1000000)  # the REPL copies files for a while: no reset
    assert not board.wdt_expired
    h2.tick()  # a feed after the stop does nothing


def rosc_bits(seed):
    """A stand-in for the ring oscillator: the top bit of a xorshift32 stream (independent,
    unbiased bits); the stream goes on across boots, as physical noise does."""
    s = [seed or 1]

    def bit():
        x = s[0]
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        s[0] = x
        return 0xFFFFFFFE | (x >> 31)  # the register's other bits are set: only bit 0 counts

    return bit


def pattern_bits(bits):
    """A ROSC that repeats `bits` (a str of 0/1) for ever."""
    i = [0]
    n = len(bits)
    vals = [int(c) for c in bits]

    def bit():
        v = vals[i[0] % n]
        i[0] += 1
        return v

    return bit


def ones(data):
    n = 0
    for b in data:
        while b:
            n += b & 1
            b >>= 1
    return n


def first_shuffle(hal):
    from shoe import shuffler

    return shuffler.shuffle(list(range(52)), hal.rng(None))


def case_rng_drbg():
    """The hand's random source is the HMAC-DRBG, fed raw (unwhitened) ROSC bits through the
    health tests; its output passes a quick statistical check."""
    from shoe.drbg import HmacDrbg

    world, hal = fresh()
    # raw: entropy(n) is the register's bit 0, 8 samples a byte, first sample the MSB
    board.mem[ROSC_RANDOMBIT] = pattern_bits("1100101000111010")
    assert hal.entropy(4) == b"\xca\x3a\xca\x3a", hal.entropy(4)
    assert hal.rosc.tests.samples == 1024 + 32  # the start-up test's 1024 samples first
    board.mem[ROSC_RANDOMBIT] = rosc_bits(88172645)
    d = hal.rng(None)
    assert isinstance(d, HmacDrbg) and hal.drbg is d
    before = hal.rosc.tests.samples
    assert before == 1024 + 32 + 768, before  # instantiate: 96 raw bytes (>= 384 bits of entropy)
    try:
        hal.rng(7)
    except ValueError:
        pass
    else:
        raise AssertionError("a shoe dealt from a seed")
    assert hal.rng(None) is d and d.reseeds == 1
    assert hal.rosc.tests.samples == before + 512, "every hand reseeds with 512 raw bits"
    # output: 32,000 bits; monobit within 4 sigma, runs within 4 sigma, bytes all seen
    n = 32000
    k = 0
    runs = 1
    prev = -1
    seen = bytearray(256)
    for _ in range(16):
        out = d.generate(250)
        k += ones(out)
        for b in out:
            seen[b] = 1
            for sh in (7, 6, 5, 4, 3, 2, 1, 0):
                v = (b >> sh) & 1
                if v != prev:
                    runs += prev >= 0
                    prev = v
    assert abs(k - n // 2) < 4 * 90, k  # sigma = sqrt(n) / 2 = 89.4
    assert abs(runs - n // 2) < 4 * 90, runs
    assert sum(seen) == 256
    # below() stays in range, every value of a small range comes up
    counts = [0] * 52
    for _ in range(2600):
        counts[d.below(52)] += 1
    assert min(counts) > 20 and max(counts) < 85, counts


def _fault_on(rosc, test):
    from shoe.health import EntropyFault

    world, hal = fresh()
    board.mem[ROSC_RANDOMBIT] = rosc
    try:
        hal.rng(None)
    except EntropyFault as e:
        assert e.test == test, (e.test, test)
    else:
        raise AssertionError("the %s test let a bad source through" % test)
    # latched: the source recovers, the shoe still refuses (until a service reset)
    board.mem[ROSC_RANDOMBIT] = rosc_bits(77)
    for fn, arg in ((hal.rng, None), (hal.entropy, 8)):
        try:
            fn(arg)
        except EntropyFault:
            pass
        else:
            raise AssertionError("the fault did not latch")
    assert hal.drbg is None


def case_rng_health_faults():
    """Stuck at 0, stuck at 1, biased: EntropyFault from rng(), latched; never a fallback."""
    from shoe.health import EntropyFault

    _fault_on(pattern_bits("0"), "repetition count")
    _fault_on(pattern_bits("1"), "repetition count")
    # 85 % ones, never more than 17 in a row: only the adaptive proportion test sees it
    _fault_on(pattern_bits("11111111111111111000"), "adaptive proportion")
    # a source that dies after the first hand: the next hand's reseed finds it
    world, hal = fresh()
    board.mem[ROSC_RANDOMBIT] = rosc_bits(9)
    d = hal.rng(None)
    d.below(52)
    board.mem[ROSC_RANDOMBIT] = 0xFFFFFFFE  # bit 0 stuck low
    try:
        hal.rng(None)
    except EntropyFault as e:
        assert e.test == "repetition count"
    else:
        raise AssertionError("a dead source was reseeded from")


def case_rng_boots():
    """A power cut and a reboot never replay a stream: two boots at the same time with the
    same device id deal different first shuffles; only the ROSC's bits differ. (With the very
    same raw bits and timer the DRBG repeats itself: nothing else seeds it.)"""
    noise = rosc_bits(123456789)
    firsts = []
    for boot in range(3):
        world, hal = fresh()  # the board's clock starts where it did at every boot
        board.mem[ROSC_RANDOMBIT] = noise
        firsts.append(first_shuffle(hal))
        for f in firsts[:-1]:
            assert f != firsts[-1], "boot %d repeated an earlier shuffle" % boot
    world, hal = fresh()
    board.mem[ROSC_RANDOMBIT] = rosc_bits(123456789)  # the first boot's bits, replayed
    assert first_shuffle(hal) == firsts[0]


def case_power_cut_inspect():
    world, hal = fresh()
    mech = hal.mech
    assert mech.inspect() is None  # path clear: cannot tell whether a card left
    world.flight.append([Card(C.parse("Ah")), 150.0, None, False])
    assert mech.inspect() == []    # a card in the path: nothing was delivered
    # a card the operator found at the output is placed first, nothing moves
    world.flight = []
    mech.deliver([C.parse("Ah")], [C.parse("Ah"), C.parse("2c")])
    motor = world.motor
    assert mech.feed(ROUTE_OUT) == [C.parse("Ah")] and world.motor == motor


class CdcIn(io.IOBase):
    """The host's end of the USB CDC, as a stream the unix port's select.poll can poll (its
    ioctl answers MP_STREAM_POLL; -1 to MP_STREAM_GET_FILENO: it has no descriptor)."""

    def __init__(self, data=b""):
        self.data = bytearray(data)
        self.reads = 0

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL
            return arg & 1 if self.data else 0
        return -1 if req == 10 else 0

    def read(self, n):
        self.reads += 1
        d = bytes(self.data[:n])
        self.data = self.data[n:]
        return d


def case_maintenance():
    """The maintenance command on the Pico, as main.py runs it: the device replies, the
    protocol loop ends once the line is quiet, and UsbPort.close() gives the line to the REPL:
    the watchdog stopped (through WATCHDOG_CTRL, machine.WDT cannot), the poller released, Ctrl-C
    back; bytes after that are the REPL's (the port never reads them)."""
    import asyncio
    import gc

    world, hal = fresh()
    del PINS[:]
    gc.collect()
    import wire
    from device import Device
    from link import Link

    sent = []

    class Out:
        def write(self, b):
            sent.append(bytes(b))
            return len(b)

    rp2.chip.sectors.clear()
    dev = Device(hal)
    inp = CdcIn(wire.encode(wire.CMD, 0, wire.encode_command("ping", (7,))) +
             wire.encode(wire.CMD, 1, wire.encode_command("maintenance")))
    port = hal.open_port(inp, Out())
    assert board.wdt is not None and board.wdt_enabled
    link = Link(port, dev, hal.clock, hal.caps)
    hal.mech.idle = link.idle
    asyncio.run(link.run())  # returns only after maintenance
    dec = wire.Decoder()
    replies = [f for f in dec.feed(b"".join(sent)) if f[0] == wire.REPLY]
    assert [(seq, body[0]) for _t, seq, body in replies] == [(0, 0), (1, 0)], replies
    assert dev.maintenance and not inp.data
    port.close()  # main.py, as the loop ends
    assert not board.wdt_enabled and hal.wdt is None and port.tick is None
    assert board.mem[0x4005B000] == 1 << 30  # WATCHDOG_CTRL's atomic clear of ENABLE
    board.advance_us(5 * 1000000)  # mpremote copies files for a while: no reset
    assert not board.wdt_expired
    # the REPL's bytes (a raw-REPL request): the poller was released, so nothing of the
    # protocol sees them; they stay for the REPL
    inp.data.extend(b"\x03\x01import os\r")
    assert port.poller.poll(0) == [] and bytes(inp.data) == b"\x03\x01import os\r"
    port.close()  # twice: nothing more happens
    assert hal.wdt is None and not board.wdt_enabled


def case_panel():
    """The front panel over the pins: a button held past the pin map's debounce (button_ms) is
    one press, contact bounce shorter than it none, a release none; the floor key follows its
    pin once it held key_ms; the buzzer answers a press that ran with a 60 ms beep and a
    refused one with 400 ms, ended by the polls."""
    import json

    world, hal = fresh()
    with open(PINMAP) as f:
        pm = json.load(f)
    gpio, level = signal_maps(pm)
    hold = pm["debounce"]["button_ms"]
    held = {}

    def wire_input(name):
        board.inputs[gpio[name]] = lambda: level[name] if held.get(name) else 1 - level[name]

    for name in ("btn_deal", "btn_burn", "floor_key"):
        wire_input(name)

    def poll(ms):
        got = []
        for k in range(ms):
            board.advance_us(1000)
            for p in hal.presses():
                got.append((p, k))
        return got

    assert poll(5) == [] and not hal.floor_key()
    held["btn_deal"] = True  # bounce: closed for less than the debounce time
    assert poll(hold // 3) == []
    held["btn_deal"] = False
    assert poll(2 * hold) == []
    held["btn_deal"] = True  # a press
    got = poll(3 * hold)
    assert [p for p, _ in got] == ["deal"] and hold - 2 <= got[0][1] <= hold + 2, got
    held["btn_deal"] = False  # the release is no press
    assert poll(3 * hold) == []
    held["btn_burn"] = True
    held["btn_deal"] = True  # two at once: both, in panel order
    assert sorted(p for p, _ in poll(3 * hold)) == ["burn", "deal"]
    held["btn_burn"] = held["btn_deal"] = False
    poll(3 * hold)
    key_ms = pm["debounce"]["key_ms"]
    held["floor_key"] = True
    poll(key_ms // 2)
    assert not hal.floor_key()
    poll(key_ms)
    assert hal.floor_key()
    held["floor_key"] = False
    poll(2 * key_ms)
    assert not hal.floor_key()
    # the buzzer: silent at power-up, 4 kHz at 50 % while it beeps
    bz = board.pwms[gpio["buzzer_pwm"]]
    assert bz.freq() == pm["buzzer"]["freq_hz"] and bz.duty_u16() == 0
    for ok, ms in ((True, 60), (False, 400)):
        hal.signal(ok)
        t0 = board.now_us()
        assert 32000 < bz.duty_u16() < 33500
        while bz.duty_u16() and board.now_us() - t0 < 1000000:
            poll(1)
        took = (board.now_us() - t0) / 1000
        assert ms <= took <= ms + 3, (ok, took)
    from hal.rp2 import BUTTONS

    assert tuple(n for n, _ in hal.buttons) == BUTTONS  # (= panel.BUTTONS: test_panel.py)


def case_status_led():
    """The status LED on its PIO state machine (the pin map's pio_sm, at LED_HZ, the WS2812
    program): each state's colour as a GRB word; attention blinks every BLINK_MS from the main
    loop's polls and sounds the alarm once; the other states stay lit."""
    import json

    from hal import led_pio as L

    world, hal = fresh()
    with open(PINMAP) as f:
        pm = json.load(f)
    gpio, level = signal_maps(pm)
    sm = hal.led_sm
    assert sm.program is L.ws2812 and sm.freq == L.LED_HZ and sm.id == pm["status_led"]["pio_sm"]
    bz = board.pwms[gpio["buzzer_pwm"]]

    def polls(ms):
        t0 = board.now_us()
        while board.now_us() - t0 < ms * 1000:
            board.advance_us(1000)
            hal.presses()

    hal.show("idle")
    assert sm.puts[-1] == L.grb(L.COLORS["idle"][0]) and bz.duty_u16() == 0
    hal.show("dealing")
    assert sm.puts[-1] == L.grb(L.COLORS["dealing"][0])
    polls(600)
    assert sm.puts[-1] == L.grb(L.COLORS["dealing"][0]), "steady"
    red = L.grb(L.COLORS["attention"][0])
    n = len(sm.puts)
    hal.show("attention")
    assert sm.puts[-1] == red and bz.duty_u16() > 0, "red, and the alarm"
    polls(3 * L.BLINK_MS + 50)
    assert sm.puts[n:] == [red, 0, red, 0], sm.puts[n:]
    polls(1000)
    assert bz.duty_u16() == 0, "the alarm sounds once"
    hal.show("attention")
    assert bz.duty_u16() == 0, "no second alarm for the same stop"
    hal.show("locked")
    n = len(sm.puts)
    polls(600)
    assert sm.puts[n - 1] == L.grb(L.COLORS["locked"][0]) and len(sm.puts) == n


TESTS = [case_wiring, case_stock_layout_keeps_the_journal, case_romfs_build_layout,
         case_a_full_filesystem_keeps_no_journal, case_reservation_power_cuts,
         case_session_power_cuts, case_the_boot_check_walks_each_file_once,
         case_ctrl_c_at_boot, case_ctrl_c_with_the_key_switch,
         case_idle_loop_allocates_nothing,
         case_frames, case_normal_feed,
         case_engine_deal_and_jam_exhausted, case_jam_retried_then_succeeds, case_double_feed,
         case_face_up_unreadable_foreign, case_empty_lid_reader, case_watchdog, case_rng_drbg,
         case_rng_health_faults, case_rng_boots, case_power_cut_inspect,
         case_maintenance, case_panel, case_status_led]
# The whole firmware (device, link, engine, journal) with this harness (the fakes, the card
# path model) beside it needs more than the other cases.
HEAPS = {"case_maintenance": "384K", "case_engine_deal_and_jam_exhausted": "320K",
         # the fake flash chip's sectors live in this heap: 1.4 MB for the stock layout
         "case_stock_layout_keeps_the_journal": "3M", "case_romfs_build_layout": "3M",
         "case_a_full_filesystem_keeps_no_journal": "1M",
         "case_reservation_power_cuts": "2M", "case_session_power_cuts": "2M",
         "case_the_boot_check_walks_each_file_once": "2M",
         # main.py's boot: the whole firmware with the harness
         "case_ctrl_c_at_boot": "512K", "case_ctrl_c_with_the_key_switch": "512K",
         "case_idle_loop_allocates_nothing": "512K"}


if __name__ == "__main__":
    main(TESTS, __file__, HEAPS)
