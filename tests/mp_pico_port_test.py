# The firmware on the rp2 port's own terms, under the MicroPython unix port (run by
# tests/test_rp2.py; the fakes and the world of tests/mp_rp2_world.py):
#   micropython -X heapsize=3M tests/mp_pico_port_test.py --image DIR [case]
# the storage as rp2's _boot.py mounts it (the unix port's real littlefs over the fake
# rp2.Flash()) and the journal's blocks reserved in it, power cuts swept over both; the boot
# check's walk on the Pico's mount table (the ROMFS at /rom inside /); main.py's boot over a fake
# of the USB line's Ctrl-C; the idle loop's allocations. Its own script, with heaps of its own:
# the fake chip's sectors live in the heap (1.4 MB for the stock layout), and the other
# scripts' cases keep their 256 KB margins. Prints "OK" at the end; any failure raises.
import sys

from mp_rp2_world import *  # noqa: E402,F401,F403  (the fakes, the firmware, the card path)
from mp_rp2_world import PINS, main, pin_map  # noqa: E402


def boot_storage(mount=MOUNT):
    """Power-up: rp2's frozen _boot.py (ports/rp2/modules/_boot.py) line for line, over the fake
    rp2.Flash() with the unix port's real littlefs, but mounted at `mount` (the unix port's /
    is the host's). Returns True if the mount failed and the storage was formatted (all of
    it, as _boot.py does: everything on it is gone)."""
    import vfs

    bdev = rp2.Flash()
    formatted = False
    try:
        fs = vfs.VfsLfs2(bdev, progsize=256)
    except:  # noqa: E722  (as _boot.py: any failure formats)
        vfs.VfsLfs2.mkfs(bdev, progsize=256)
        fs = vfs.VfsLfs2(bdev, progsize=256)
        formatted = True
    vfs.mount(fs, mount)
    return formatted


def power_off(mount=MOUNT):
    """The power goes (or went, in the middle of an operation): littlefs's state in RAM is
    dropped with the mount (the finalisers of the files a cut left open run now, with no
    power: nothing reaches the chip); the chip keeps what reached it, and powers up again."""
    import gc
    import vfs

    rp2.chip.off = True
    gc.collect()

    try:
        vfs.umount(mount)
    except OSError:
        pass
    gc.collect()
    rp2.chip.revive()


def install(src, mount=MOUNT, sub=""):
    """Copy a built image (a folder) into the mounted littlefs, as facedown deploy does."""
    import os

    for e in os.ilistdir(src + sub):
        rel = sub + "/" + e[0]
        if e[1] & 0x4000:
            try:
                os.mkdir(mount + rel)
            except OSError:
                pass
            install(src, mount, rel)
        else:
            with open(src + rel, "rb") as f:
                data = f.read()
            with open(mount + rel, "wb") as f:
                f.write(data)
            data = None


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
            hal = Hal(lambda: pin_map(PINMAP), clock=M.Clock(), root=root, journal=journal_stand_in())
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
    from mp_asyncio_board import asyncio_on_the_board

    asyncio_on_the_board()  # main.py's loop waits in the board's time
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
    marks = [0, 0, 0, 0]
    phase = [0]  # 1: take the first mark at the next round's start, 2: the last

    def counted():
        # the marks are taken between two rounds, not inside a board event: asyncio's wait
        # (the board's events run inside it, tests/mp_asyncio_board.py) held 224 B for a while
        # in about one run in eight, freed again before the next round
        rounds[0] += 1
        if phase[0] == 1:
            marks[0] = gc.mem_alloc()
            marks[1] = rounds[0]
            phase[0] = 0
        elif phase[0] == 2:
            marks[2] = gc.mem_alloc()
            marks[3] = rounds[0]
            phase[0] = 3
            dev.maintenance = True  # the loop ends
        return service()

    lk.service = counted

    def first():
        phase[0] = 1

    def last():
        phase[0] = 2

    t0 = board.ns // 1000
    board.later(100000, first)   # 0.1 s in: the boot's work is done, the line quiet
    board.later(1400000, last)  # 1.3 s of idle rounds (asyncio.sleep_ms(1) each)
    from mp_asyncio_board import asyncio_on_the_board

    asyncio_on_the_board()
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


def case_no_data_folder_hides_a_module():
    """On the Pico the firmware's modules and the shoe's data share littlefs's root, and the
    root is on sys.path (""). An import takes a folder before name.py or name.mpy
    (py/builtinimport.c, stat_dir_or_file: a folder is a namespace package): the journal's
    folder was journal/, so from the second boot on `import journal` found the folder and the
    firmware stopped at `from journal import crc16` (ImportError: no module named
    'journal.crc16'; seen on the real rp2 port in rp2040js, never here: the fakes imported the
    firmware from another folder). Now, with the image installed and the journal reserved at
    the mount, as on a shoe: every folder there is one of the image's packages or a name no
    import can ask for, and `import journal` from the mount is the journal; and a shoe that
    booted 0.3.0 has its folder moved (same blocks) before the next import."""
    import os
    from hal import reserve

    rp2.chip.sectors.clear()
    boot_storage()
    if IMAGE:
        install(IMAGE)
    world, hal = fresh(stock=True)
    assert hal.journal_fault is None, hal.logs
    phys = list(hal.flash.phys)
    hal = None
    for e in os.ilistdir(MOUNT):
        if e[1] & 0x4000:
            inside = os.listdir(MOUNT + "/" + e[0])
            package = "__init__.py" in inside or "__init__.mpy" in inside
            assert package or not e[0].replace("_", "a").isalpha(), \
                "folder %s/ is found by `import %s`" % (e[0], e[0])

    def import_journal():
        saved = sys.modules.pop("journal", None)
        sys.path.insert(0, MOUNT)  # the Pico's "" (rp2's _boot.py leaves the cwd at /)
        try:
            import journal

            return journal
        finally:
            sys.path.pop(0)
            del sys.modules["journal"]
            if saved is not None:
                sys.modules["journal"] = saved

    assert hasattr(import_journal(), "Journal"), "the journal's folder hid the journal module"
    # a shoe that booted 0.3.0: its folder under the old name; main.py moves it at power-up
    os.rename(MOUNT + "/" + reserve.DIR, MOUNT + "/" + reserve.OLD_DIR)
    assert not hasattr(import_journal(), "Journal")  # the old name hides it (the bug)
    reserve.move_old_folder(MOUNT + "/")
    assert hasattr(import_journal(), "Journal")
    world, hal = fresh(stock=True)
    assert list(hal.flash.phys) == phys, "the reservation was not found after the move"
    assert not [m for m in hal.logs if "reserved" in m], hal.logs
    power_off()


TESTS = [case_stock_layout_keeps_the_journal, case_romfs_build_layout,
         case_a_full_filesystem_keeps_no_journal, case_reservation_power_cuts,
         case_session_power_cuts, case_the_boot_check_walks_each_file_once, case_ctrl_c_at_boot,
         case_ctrl_c_with_the_key_switch, case_idle_loop_allocates_nothing,
         case_no_data_folder_hides_a_module]
HEAPS = {
         # the fake flash chip's sectors live in this heap: 1.4 MB for the stock layout
         "case_stock_layout_keeps_the_journal": "3M", "case_romfs_build_layout": "3M",
         "case_a_full_filesystem_keeps_no_journal": "1M",
         "case_reservation_power_cuts": "2M", "case_session_power_cuts": "2M",
         "case_the_boot_check_walks_each_file_once": "2M",
         # main.py's boot: the whole firmware with the harness
         "case_ctrl_c_at_boot": "512K", "case_ctrl_c_with_the_key_switch": "512K",
         "case_idle_loop_allocates_nothing": "512K",
         "case_no_data_folder_hides_a_module": "3M"}


if __name__ == "__main__":
    main(TESTS, __file__, HEAPS)
