"""Run the real firmware as a virtual shoe: the MicroPython unix port on one end of a NullModem.

A "flash" folder plays the Pico's flash: the firmware tree (firmware/*), the wire protocol
(protocol/wire.py) and the pin map (hardware/pinmap.json) are copied into its root, and
``micropython -X heapsize=512K -i main.py`` runs with that folder as its working directory and
``FACEDOWN_PORT`` naming the device end of the null-modem.  The host talks to the other end,
``shoe.port``, with pyserial.

As on a Pico, whose USB CDC carries both the protocol and the REPL, the process's stdin and
stdout are the device end of the cable: when main.py returns (the ``maintenance`` command), the
REPL takes the line and mpremote reaches it (``mpremote connect PORT resume ...``; see
facedown.deploy).  A soft reset (Ctrl-D) there ends the process: ``alive()`` turns False,
``wait_exit()`` waits for it, and ``start()`` boots the new firmware (a Pico reboots by itself).
A stand-in ``main`` script keeps stdin/stdout off the cable (``repl=False``, its prints go to
the log) unless ``repl=True`` is given.

Power is what the process is: ``stop()`` kills it (a power cut: nothing is flushed, and every
byte still on its way to the device is lost), ``start()`` boots it again on the same flash and
the same cable, so the host's port path stays valid across ``restart()``.  The process's
stderr (tracebacks) and the firmware's log (hal.log appends to it) go to ``shoe.log`` in the
flash folder (appended across boots, one marker line per boot).

    with VirtualShoe(main="tests/data/echo_main.py", ready_line="ready") as shoe:
        with serial.Serial(shoe.port, timeout=1) as s:
            s.write(b"hi"); assert s.read(2) == b"hi"
        shoe.restart()
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref

from .build import SIM, compile_folder, lay_out
from .engine import find_micropython  # noqa: F401  (the name the tests and benchmarks use)
from .nullmodem import NullModem
from .errors import UserError

__all__ = ["VirtualShoe", "find_micropython"]

LOG_NAME = "shoe.log"
# The unix port is a 64-bit build: every pointer and object header takes twice a Pico's
# (32-bit) room, so the whole firmware needs more here than on a Pico. The virtual shoe gets
# 320K: with sessions, the audit log and the stopping faults, 256K no longer held the largest
# scenarios; 384K since a table that bets loads the betting engine (shoe.betting, shoe.bets:
# ~32 KB here; a 10-seat hand's session failed at 336K, and every bundled scenario in a row
# at 352K; docs/betting.md); 512K since the rare commands (rare.py, config among them) and the
# irregularities (shoe/irregular.py) load on demand: every bundled scenario in a row on one
# shoe then failed at 384K and 416K and passed at 400K and 448K, the edge ragged with the
# heap's fragmentation (the Pico's own problem: docs/deploy.md, "The memory budget"). Whether
# it fits a Pico is benchmarks/memory.py's figure and the real port's (its estimate, not this
# heap); the engine alone is held to 192K in its own tests.
HEAP = "512K"
PICO_BOOT_FILE = "pico_boot"  # no .py: not a program file of the shoe (firmware/integrity.py)
# What a Pico does before main.py, on the unix port, for a virtual shoe with a ROMFS partition
# or a littlefs root (VirtualShoe(romfs=, littlefs=)); each step after the port's source:
#  * the ROMFS partition (FACEDOWN_ROMFS_BYTES, the file romfs.bin): vfs.rom_ioctl as
#    ports/rp2/rp2_flash.c's mp_vfs_rom_ioctl: (1) -> 1 partition; (2, id) -> the partition's
#    rp2.Flash object (rp2_flash_romfs_obj: readable as a buffer, readblocks/writeblocks/
#    ioctl, and no len()); any other op -> -EINVAL (rp2 leaves writing to the object:
#    mpremote romfs deploy then erases with dev.ioctl(6) and writes with dev.writeblocks).
#    Mounted at /rom at power-up when it holds a ROMFS, "/rom" and "/rom/lib" appended to
#    sys.path (py/runtime.c mp_init -> extmod/vfs.c mp_vfs_mount_romfs_protected).
#  * the littlefs root (FACEDOWN_LITTLEFS_BLOCKS, the file lfs.bin: the storage region):
#    rp2's frozen _boot.py (ports/rp2/modules/_boot.py): VfsLfs2(bdev, progsize=256), and on
#    any failure mkfs over all of it; mounted at / (the unix port's own root unmounted, its
#    /dev and the flash folder mounted back at /dev and /host for the serial line and the
#    simulator's outside world: FACEDOWN_SIM outside=/host), the working folder /, sys.path
#    as rp2's ("", ".frozen", then /rom, /rom/lib, then /lib: ports/rp2/main.c); then main.py
#    from littlefs if it is there (shared/runtime/pyexec.c, pyexec_file_if_exists), else the
#    REPL, as on a Pico fresh from its UF2.
PICO_BOOT = """import os
import sys
import vfs

_HOST = os.getcwd()
_ERASED = b"\\xff" * 4096  # (made once: an erase on the port allocates nothing)


def _area(name, size):
    # a flash area in a file of the flash folder, written in place: killing the process is a
    # power cut, and what reached the file stays
    try:
        f = open(_HOST + "/" + name, "r+b")
        if f.seek(0, 2) == size:
            return f
        f.close()
    except OSError:
        pass
    f = open(_HOST + "/" + name, "wb")
    for _ in range(size // 4096):
        f.write(_ERASED)
    f.close()
    return open(_HOST + "/" + name, "r+b")


def _put(f, at, data):
    f.seek(at)
    f.write(data)
    f.flush()


_ROM_BYTES = int(os.getenv("FACEDOWN_ROMFS_BYTES") or "0")
if _ROM_BYTES:
    class Flash(bytearray):
        # rp2_flash_romfs_obj: the ROMFS partition (rp2_flash_type: buffer, readblocks,
        # writeblocks, ioctl; no len())
        def __len__(self):
            raise TypeError("object of type 'Flash' has no len()")

        def readblocks(self, block, buf, offset=0):
            at = block * 4096 + offset
            buf[:] = memoryview(self)[at:at + len(buf)]

        def writeblocks(self, block, buf, offset=None):
            if offset is None:
                self.ioctl(6, block)
                offset = 0
            at = block * 4096 + offset
            memoryview(self)[at:at + len(buf)] = buf
            _put(_romf, at, buf)

        def ioctl(self, op, arg):
            if op in (1, 2, 3):
                return 0
            if op == 4:
                return _ROM_BYTES // 4096
            if op == 5:
                return 4096
            if op == 6:
                at = arg * 4096
                memoryview(self)[at:at + 4096] = _ERASED
                _put(_romf, at, _ERASED)
                return 0
            return None

    _romf = _area("romfs.bin", _ROM_BYTES)
    _rom = Flash(_ROM_BYTES)
    _romf.seek(0)
    _romf.readinto(_rom)

    def _rom_ioctl(op, *args):
        if op == 1:
            return 1
        if op == 2:
            return _rom
        return -22  # -EINVAL: rp2 has no other

    class _Vfs:
        pass

    _shim = _Vfs()
    for _n in dir(vfs):
        if not _n.startswith("__"):
            setattr(_shim, _n, getattr(vfs, _n))
    _shim.rom_ioctl = _rom_ioctl
    sys.modules["vfs"] = _shim
    del _n


class _Storage:
    # rp2.Flash(): the storage region, as littlefs sees it (4096-byte blocks, programs and
    # erases reaching the file at once)
    def __init__(self, blocks):
        self.blocks = blocks
        self.f = _area("lfs.bin", blocks * 4096)

    def readblocks(self, block, buf, offset=0):
        self.f.seek(block * 4096 + offset)
        self.f.readinto(buf)

    def writeblocks(self, block, buf, offset=None):
        if offset is None:
            self.ioctl(6, block)
            offset = 0
        _put(self.f, block * 4096 + offset, buf)

    def ioctl(self, op, arg):
        if op in (1, 2, 3):
            return 0
        if op == 4:
            return self.blocks
        if op == 5:
            return 4096
        if op == 6:
            _put(self.f, arg * 4096, _ERASED)
            return 0
        return None


_LFS = int(os.getenv("FACEDOWN_LITTLEFS_BLOCKS") or "0")
if _LFS:
    bdev = _Storage(_LFS)
    try:
        fs = vfs.VfsLfs2(bdev, progsize=256)
    except:
        vfs.VfsLfs2.mkfs(bdev, progsize=256)
        fs = vfs.VfsLfs2(bdev, progsize=256)
    vfs.umount("/")
    vfs.mount(vfs.VfsPosix("/dev"), "/dev")
    vfs.mount(vfs.VfsPosix(_HOST), "/host")
    vfs.mount(fs, "/")
    os.chdir("/")
    sys.path[:] = ["", ".frozen"]
    del bdev, fs
if _ROM_BYTES:
    try:
        vfs.mount(vfs.VfsRom(_rom), "/rom")
        sys.path.append("/rom")
        sys.path.append("/rom/lib")
    except OSError:
        pass  # an empty or erased partition
if _LFS:
    sys.path.append("/lib")
try:
    os.stat("main.py")
    _main = True
except OSError:
    _main = False
if _main:
    del _main
    exec(open("main.py").read())
"""
BOOT_MARK = b"=== virtualshoe: power on ===\n"
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.mpy", ".*")


def _kb(heapsize):
    """A -X heapsize ("320K", "1M", "327680") in KB."""
    text = str(heapsize).upper()
    if text.endswith("K"):
        return int(text[:-1])
    if text.endswith("M"):
        return int(text[:-1]) * 1024
    return int(text) // 1024


def _kill_group(proc):
    """SIGKILL the process and its group (it runs in a session of its own); reap it."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def _finalize(state):
    _kill_group(state.get("proc"))
    modem = state.get("modem_owned")
    if modem is not None:
        modem.close()
    lock = state.pop("flash_lock", None)
    if lock is not None:
        lock.release()
    tmp = state.get("tmpdir")
    if tmp:
        _remove_throwaway(tmp)


THROWAWAY = ".throwaway"  # in a temporary flash folder: removed with its shoe


def _remove_throwaway(folder):
    """A throwaway shoe's leftovers: its folder, the copy of its key in the key store (if the
    key there is this shoe's own) and its flash lock file."""
    from . import keys
    from .portlock import lock_path

    try:
        with open(os.path.join(folder, "device_id")) as f:
            device = f.read().strip()
        with open(os.path.join(folder, "device.key")) as f:
            own = f.read().strip()
        stored = keys.keystore_path(device)
        if os.path.exists(stored) and keys.Key.load(stored).key == bytes.fromhex(own):
            os.remove(stored)
    except (OSError, ValueError, UserError):
        pass  # nothing of its own in the key store
    else:  # and the sessions opened on it (`facedown login` keeps one per port)
        sessions = os.path.join(keys.home(), "sessions")
        for name in os.listdir(sessions) if os.path.isdir(sessions) else ():
            try:
                with open(os.path.join(sessions, name)) as f:
                    if json.load(f).get("device") == device:
                        os.remove(os.path.join(sessions, name))
            except (OSError, ValueError, AttributeError):
                pass
    shutil.rmtree(folder, ignore_errors=True)
    try:
        os.remove(lock_path(folder))
    except OSError:
        pass


def sweep_throwaways():
    """Remove what throwaway shoes killed outright (a SIGKILL, a power cut of the whole sim)
    could not: temporary flash folders no process holds any more, and their keys."""
    import fcntl
    import glob

    from .portlock import lock_path

    for folder in glob.glob(os.path.join(tempfile.gettempdir(), "facedown-flash-*")):
        if not os.path.isfile(os.path.join(folder, THROWAWAY)):
            continue  # kept on purpose (keep=True)
        try:
            fd = os.open(lock_path(folder), os.O_RDWR)
        except OSError:
            continue  # never locked: not one of these
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its shoe still runs
        finally:
            os.close(fd)
        _remove_throwaway(folder)


class VirtualShoe:
    """The firmware under the MicroPython unix port, wired to a NullModem.

    VirtualShoe(flash=None, sources=None, main=None, env=None, nullmodem=None,
                heapsize="320K", micropython=None, ready_line=None, ready_timeout=10.0,
                keep=False, args=())

    flash       folder playing the Pico's flash; None: a fresh temporary folder, removed by
                close() unless keep=True.  A given folder is used as it is (files copied in over
                what it holds) and never removed.
    sources     what to copy into flash: paths or (path, dest) pairs; a folder's contents go
                under dest ("" = the flash root), a file becomes dest (default: its name).
                Default: the image facedown.build lays out (firmware/* at the root, wire.py as
                the image's, pinmap.json), so its files hash as `facedown image` builds them.
    install     False: install nothing, boot what the flash folder holds (what `facedown
                deploy` left there; its device.key is the shoe's key), as a shoe powered on.
    main        a script to install as main.py (overrides the firmware's).
    env         extra environment for the process (e.g. {"FACEDOWN_SIM": "..."}).
    nullmodem   a NullModem to use (not closed by close()), or a dict of NullModem kwargs.
    ready_line  text that shoe.log shows once the firmware is up; start() waits for it.
    compile     install modules as .mpy bytecode (mpy-cross), as on a deployed shoe.
    repl        the process's stdin/stdout are the device end of the cable and the REPL follows
                main.py (``-i``), as on a Pico; default: True for the firmware's own main.py,
                False with a stand-in ``main`` (whose stdout then goes to shoe.log).
    romfs       the size in bytes of a ROMFS partition, as a MicroPython built with one has
                (``MICROPY_HW_ROMFS_BYTES``): the file romfs.bin in the flash folder plays it,
                through ``vfs.rom_ioctl`` as rp2's (``mpremote romfs deploy``, ``facedown
                deploy --romfs``), and at power-on it is mounted at /rom, /rom appended to
                sys.path, before main.py runs (PICO_BOOT). The heap grows by the partition's
                size (the unix port holds it in RAM).
    littlefs    the shoe's filesystem is littlefs, as a Pico's: a storage region of this many
                4 KB blocks (the file lfs.bin in the flash folder; 352 as the stock RPI_PICO
                image, 304 with a 192 KB ROMFS) formatted and mounted at / by rp2's _boot.py
                (PICO_BOOT). It starts empty, as a Pico fresh from its UF2: nothing is
                installed or provisioned into it (``facedown deploy`` and ``provision`` do
                that over the REPL); the simulator's own files (its journal flash.bin, shoe.log,
                world.txt, the panel's) stay in the flash folder, outside the shoe.
    provision   give the shoe a device id and its own key (kept in flash as device.key; the
                host's copy is ``self.key``), and sign the installed firmware's manifest with
                it, as `facedown provision` and `facedown deploy` do for a real shoe. A flash
                folder that holds a key keeps it. False: a shoe fresh from the factory.
    """

    def __init__(self, flash=None, sources=None, main=None, env=None, nullmodem=None, heapsize=HEAP,
                 micropython=None, ready_line=None, ready_timeout=10.0, keep=False, args=(),
                 compile=True, repl=None, provision=True, romfs=None, littlefs=None,
                 install=True):
        self.micropython = micropython or find_micropython()
        self.romfs = romfs
        self.littlefs = littlefs
        if littlefs:
            provision = False
        if romfs:
            heapsize = "%dK" % (_kb(heapsize) + (romfs + 1023) // 1024)
        self.compile = compile
        self.repl = (main is None) if repl is None else bool(repl)
        self.heapsize = heapsize
        self.env = dict(env or {})
        self.ready_line = ready_line
        self.ready_timeout = ready_timeout
        self.args = list(args)
        self._state = {}
        self._proc = None
        self._boot_offset = 0
        self._closed = False
        self.boots = 0
        self.provision = provision
        self.key = None
        if flash is None:
            from .portlock import hold

            if not keep:
                sweep_throwaways()
            self.flash = tempfile.mkdtemp(prefix="facedown-flash-")
            if not keep:
                self._state["tmpdir"] = self.flash
                self._state["flash_lock"] = hold(self.flash, "flash")  # held while it runs
                open(os.path.join(self.flash, THROWAWAY), "w").close()
        else:
            self.flash = os.path.abspath(flash)
            if os.path.exists(self.flash) and not os.path.isdir(self.flash):
                raise NotADirectoryError("the flash folder %s is a file" % self.flash)
            os.makedirs(self.flash, exist_ok=True)
            from .portlock import hold

            # one shoe per flash folder: a second would share its device id and journal
            self._state["flash_lock"] = hold(self.flash, "flash")
        self._finalizer = weakref.finalize(self, _finalize, self._state)
        try:
            if littlefs:  # a fresh Pico: only the boot stub, outside its filesystem
                self._stub()
            elif not install:
                if self.provision:
                    self._load_key()
            else:
                self._install(sources, main)
            if isinstance(nullmodem, NullModem):
                self.modem = nullmodem
            else:
                self.modem = NullModem(**(nullmodem or {}))
                self._state["modem_owned"] = self.modem
        except BaseException:
            self._finalizer()
            raise

    # -- flash ------------------------------------------------------------------------------------

    def _install(self, sources, main):
        if sources is None:
            lay_out(self.flash, target=SIM)  # its manifest: firmware/targets/sim.py
            sources = ()
        for item in sources:
            required = True
            if isinstance(item, (str, os.PathLike)):
                src, dest = os.fspath(item), None
            elif len(item) == 2:
                src, dest = item
            else:
                src, dest, required = item
            src = os.fspath(src)
            if not os.path.exists(src):
                if required:
                    raise FileNotFoundError("flash source missing: %s" % src)
                continue
            if os.path.isdir(src):
                target = os.path.join(self.flash, dest or "")
                shutil.copytree(src, target, ignore=_IGNORE, dirs_exist_ok=True)
            else:
                target = os.path.join(self.flash, dest or os.path.basename(src))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(src, target)
        if main is not None:
            shutil.copyfile(os.fspath(main), os.path.join(self.flash, "main.py"))
        self._stub()
        if self.compile:
            compile_folder(self.flash)  # as deployed: bytecode, not source compiled at boot
        if self.provision:
            self._provision()

    def _stub(self):
        if self.romfs or self.littlefs:
            with open(os.path.join(self.flash, PICO_BOOT_FILE), "w") as f:
                f.write(PICO_BOOT)

    def _provision(self):
        """The device id and key (made once), and the manifest of what was installed, signed
        with the key: what `facedown provision` and `facedown deploy` leave on a shoe."""
        from . import keys
        from .deploy import DATA_FILES, MANIFEST, make_manifest

        id_path = os.path.join(self.flash, "device_id")
        if not os.path.exists(id_path):
            with open(id_path, "w") as f:
                f.write("sim-" + os.urandom(4).hex())
        with open(id_path) as f:
            device = f.read().strip()
        if not self._load_key():
            self.key = keys.Key.generate(device)
            with open(os.path.join(self.flash, "device.key"), "w") as f:
                f.write(self.key.key.hex())
        files = sorted(os.path.relpath(os.path.join(d, n), self.flash).replace(os.sep, "/")
                       for d, _, names in os.walk(self.flash) for n in names)
        files = [f for f in files if f not in DATA_FILES and f != MANIFEST and
                 not f.endswith(".tmp")]
        make_manifest(self.flash, None, files=files)
        with open(os.path.join(self.flash, MANIFEST), "rb") as f:
            data = f.read()
        with open(os.path.join(self.flash, "manifest.mac"), "w") as f:
            f.write(self.key.manifest_mac(data))

    def _load_key(self):
        """The shoe's own key from its flash folder (device_id, device.key) into self.key;
        False if it has none."""
        from . import keys

        try:
            with open(os.path.join(self.flash, "device_id")) as f:
                device = f.read().strip()
            with open(os.path.join(self.flash, "device.key")) as f:
                self.key = keys.Key(device, "device", bytes.fromhex(f.read().strip()))
        except (OSError, ValueError):
            return False
        return True

    def connect(self, role="maintenance", **kwargs):
        """A client.Client on this shoe, logged in with its key (role maintenance: everything
        the tests and the demo do, stacked decks included) and attached."""
        from .client import connect

        return connect(self.port, self.key if self.provision else None, role, **kwargs)

    def press(self, *buttons):
        """Press the front panel's buttons (hal.base.BUTTONS: deal, burn, exposed, premature,
        misdeal), in order: the simulator reads them at its next poll (hal/sim.py)."""
        path = os.path.join(self.flash, "panel")
        with open(path + ".new", "a") as f:
            f.write("".join(b + "\n" for b in buttons))
        os.replace(path + ".new", path)

    def floor_key(self, turned=True):
        """Turn the front panel's floor key (or back)."""
        path = os.path.join(self.flash, "floorkey")
        if turned:
            open(path, "w").close()
        elif os.path.exists(path):
            os.remove(path)

    @property
    def log_path(self):
        return os.path.join(self.flash, LOG_NAME)

    # -- the cable --------------------------------------------------------------------------------

    @property
    def port(self):
        """Host-side tty path for pyserial (stays the same across restarts)."""
        return self.modem.b_path

    @property
    def device_port(self):
        """Device-side tty path (what FACEDOWN_PORT names)."""
        return self.modem.a_path

    # -- power ------------------------------------------------------------------------------------

    def alive(self):
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self):
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self):
        """Exit status of the last boot (None while running or never started; -9 after stop())."""
        return self._proc.poll() if self._proc is not None else None

    def start(self, ready_line=None, timeout=None):
        """Power on.  Returns once the process runs, or, with a ready line (argument or the
        constructor's), once shoe.log shows it after this boot; raises RuntimeError if the
        process exits first and TimeoutError if it does not appear in time."""
        if self._closed:
            raise RuntimeError("VirtualShoe is closed")
        if self.alive():
            return self
        if not self.littlefs and not os.path.isfile(os.path.join(self.flash, "main.py")):
            raise FileNotFoundError("no main.py in flash folder %s" % self.flash)
        # A fresh boot: the device's UART is reset and whatever was sent while it was off is gone.
        self.modem.set_raw("a")
        self.modem.discard_pending("a")
        env = dict(os.environ)
        env.update(self.env)
        env["FACEDOWN_PORT"] = self.modem.a_path
        if self.romfs:
            env["FACEDOWN_ROMFS_BYTES"] = str(self.romfs)
        if self.littlefs:
            env["FACEDOWN_LITTLEFS_BLOCKS"] = str(self.littlefs)
            env["FACEDOWN_SIM"] = ",".join(o for o in (env.get("FACEDOWN_SIM"), "outside=/host")
                                           if o)
        cmd = [self.micropython, "-X", "heapsize=%s" % self.heapsize] + self.args
        tty = None
        if self.repl:  # the cable is the console: the REPL follows main.py on it
            cmd.append("-i")
            tty = os.open(self.modem.a_path, os.O_RDWR | os.O_NOCTTY)
        cmd.append(PICO_BOOT_FILE if self.romfs or self.littlefs else "main.py")
        try:
            with open(self.log_path, "ab") as log:
                log.write(BOOT_MARK)
                log.flush()
                self._boot_offset = log.tell()
                self._proc = subprocess.Popen(
                    cmd, cwd=self.flash, env=env,
                    stdin=subprocess.DEVNULL if tty is None else tty,
                    stdout=log if tty is None else tty,
                    stderr=subprocess.STDOUT if tty is None else log, start_new_session=True)
        finally:
            if tty is not None:
                os.close(tty)
        self._state["proc"] = self._proc
        self.boots += 1
        line = ready_line if ready_line is not None else self.ready_line
        if line:
            self.wait_for(line, self.ready_timeout if timeout is None else timeout)
        return self

    def stop(self):
        """Power cut: SIGKILL the process (no cleanup runs on the device side) and lose every byte
        still on its way to the device.  Returns the exit status (None if it was not started)."""
        proc = self._proc
        if proc is None:
            return None
        _kill_group(proc)
        if not self.modem.closed:
            self.modem.discard_pending("a")
        return proc.returncode

    def wait_exit(self, timeout=10.0):
        """Wait for the process to end by itself (a soft reset in the REPL ends the unix port,
        where a Pico would reboot); returns its exit status. TimeoutError if it runs on."""
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError("virtual shoe still running after %.1f s" % timeout)

    def restart(self, ready_line=None, timeout=None):
        """Power cycle: stop(), then start() on the same flash folder and the same cable."""
        self.stop()
        return self.start(ready_line=ready_line, timeout=timeout)

    # -- log --------------------------------------------------------------------------------------

    def log(self, this_boot=True):
        """shoe.log as text (by default only what the current/last boot wrote)."""
        try:
            with open(self.log_path, "rb") as f:
                if this_boot:
                    f.seek(self._boot_offset)
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, n=20):
        """The last n lines of shoe.log (all boots), as one string."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - max(4096, 200 * n)))
                data = f.read()
        except FileNotFoundError:
            return ""
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-n:])

    def wait_for(self, text, timeout=10.0):
        """Wait until ``text`` appears in what this boot wrote to shoe.log."""
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            log = self.log()
            if text in log:
                return True
            if "Traceback (most recent call last)" in log:
                # with -i a crashed main.py leaves the process in the REPL: it will not exit
                time.sleep(0.1)  # the rest of the traceback
                raise RuntimeError("virtual shoe failed before %r; log tail:\n%s"
                                   % (text, self.log_tail(30)))
            if not self.alive():
                if text in self.log():
                    return True
                raise RuntimeError("virtual shoe exited (status %s) before %r; log tail:\n%s"
                                   % (self.returncode, text, self.log_tail(30)))
            if time.monotonic() >= deadline:
                raise TimeoutError("virtual shoe: no %r in %s after %.1f s; log tail:\n%s"
                                   % (text, LOG_NAME, timeout, self.log_tail(30)))
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    # -- life cycle -------------------------------------------------------------------------------

    def close(self):
        """Stop the process, close the cable (if this shoe made it) and remove a temporary flash."""
        if self._closed:
            return
        self._closed = True
        self.stop()
        self._finalizer()

    def __enter__(self):
        if not self.alive():
            try:
                self.start()
            except BaseException:
                self.close()
                raise
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<VirtualShoe flash=%s port=%s %s>" % (self.flash, self.port,
                                                      "running pid %d" % self.pid if self.alive() else "off")
