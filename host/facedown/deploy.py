"""Firmware on a shoe: `facedown deploy`, `facedown verify` and `facedown image`.

A shoe's serial line (the Pico's USB CDC; a virtual shoe's pty) carries both protocol v1 and the
MicroPython REPL. The `maintenance` command ends the firmware's main loop, main.py returns and
the REPL has the line; mpremote (`connect PORT resume ...`, no reset) then copies and hashes the
files, and a soft reset (Ctrl-D at the REPL) boots the new firmware: a Pico reboots, a virtual
shoe's unix-port process ends and its owner starts it again.

    facedown --port PORT deploy      build the image (mpy-cross -march=armv6m for a Pico, the
                                     host's bytecode for a virtual shoe: CAP_SIM), write its
                                     manifest.json, maintenance, copy, verify, reset
    facedown --port PORT verify      hash the shoe's files against a release manifest (default:
                                     one built from this checkout); non-zero on any difference
    facedown image --out DIR         build an image and its manifest (a release) without a shoe

Maintenance is not authenticated in protocol v1: a later version requires an authenticated
maintenance session (CAP_AUTH and the shoe's maintenance key switch)."""

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import serial

from .build import ROOT, build_image, mpy_cross
from .firmware import load, version
from .client import Client, LinkDown
from .engine import wire
from .errors import UserError

W = wire()
MANIFEST = "manifest.json"
MANIFEST_MAC = "manifest.mac"
ROM_PREFIX = "/rom/"  # manifest paths in the ROMFS partition (firmware/integrity.py)
ROMFS_IMAGE = "program.romfs"  # the ROMFS image, built beside the image's files (not copied)
PICO_MARCH = "armv6m"
# Files a shoe's filesystem holds that are not firmware (its key, boot counter, audit log and the
# manifest's MAC; the simulator's flash folder also keeps its device id, journal file, output
# tray and log there): never hashed, compared or pruned.
DATA_FILES = ("device_id", "shoe.log", "flash.bin", "world.txt", "device.key", "auth.fail",
              "boots", "counters", "audit.log", "audit.old", "manifest.mac", "manifest.seen",
              "maint.actor", "keyswitch", "floorkey", "panel", "romfs.bin", "pico_boot", "lfs.bin")
PROMPT = b">>> "
PROBE = b"\r\x03\x02"  # Enter, Ctrl-C, Ctrl-B: a REPL (friendly or raw) answers with a prompt;
#                        to a shoe in its protocol it is noise before a SYNC, and ignored
MPREMOTE_TIMEOUT = 300
# folders of the shoe's data: the journal's blocks (hal/reserve.py DIR; OLD_DIR, firmware
# 0.3.0's name, until the shoe's next boot moves it)
_RESERVE = load("hal.reserve")
DATA_DIRS = (_RESERVE.DIR, _RESERVE.OLD_DIR)


# ---------------------------------------------------------------------------------------------
# the image and its manifest

def firmware_version(root=ROOT):
    return version(os.path.join(root, "firmware"))


def source_commit(root=ROOT):
    """The checkout's commit (with "-dirty" when the firmware's sources differ from it); None
    outside a checkout (an installed wheel's copy, facedown/_repo/)."""
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root,
                              capture_output=True, text=True, timeout=10)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "firmware", "protocol",
                                "hardware/pinmap.json"], cwd=root, capture_output=True,
                               text=True, timeout=10)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def mpy_cross_version():
    try:
        out = subprocess.run([mpy_cross(), "--version"], capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def hash_file(path):
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65536), b""):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def make_manifest(image, march, root=ROOT, files=None, rom=()):
    """The manifest of an image folder: every file's sha256 and size, the firmware version, the
    target, when and from what it was built. Written into the image as manifest.json. Files in
    rom go to the shoe's ROMFS partition: they are listed as "/rom/<path>"."""
    if files is None:
        files = sorted(os.path.relpath(os.path.join(d, n), image).replace(os.sep, "/")
                       for d, _, names in os.walk(image) for n in names)
    entries = {}
    for rel in files:
        if rel == MANIFEST:
            continue
        digest, size = hash_file(os.path.join(image, rel))
        entries[ROM_PREFIX + rel if rel in rom else rel] = {"sha256": digest, "size": size}
    manifest = {
        "firmware": firmware_version(root),
        "protocol": W.PROTOCOL_VERSION,
        "target": "rp2040" if march == PICO_MARCH else "unix",
        "march": march,
        "mpy_cross": mpy_cross_version(),
        "commit": source_commit(root),
        "built": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": entries,
    }
    with open(os.path.join(image, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


def build(dest, march, root=ROOT, romfs=False):
    """Build the image in dest and write its manifest; returns the manifest. romfs: the modules
    (.mpy) go to the shoe's ROMFS partition: their image is ROMFS_IMAGE in dest."""
    files = build_image(dest, march, root)
    rom = [f for f in files if f.endswith(".mpy")] if romfs else []
    if romfs:
        romfs_image(dest, rom)
    return make_manifest(dest, march, root, files, rom)


def romfs_image(image, rom):
    """ROMFS_IMAGE in the image folder: its files rom as a ROMFS image (mpremote's builder; an
    empty list gives an empty ROMFS, which clears a partition). Returns its path."""
    import contextlib
    import io

    from mpremote.romfs import make_romfs

    with tempfile.TemporaryDirectory(prefix="facedown-romfs-") as stage:
        for rel in rom:
            os.makedirs(os.path.dirname(os.path.join(stage, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(image, rel), os.path.join(stage, rel))
        with contextlib.redirect_stdout(io.StringIO()):
            data = make_romfs(stage, mpy_cross=False)
    path = os.path.join(image, ROMFS_IMAGE)
    with open(path, "wb") as f:
        f.write(data)
    return path


def load_manifest(path):
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise UserError("cannot read the manifest %s: %s" % (path, e))
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise UserError("%s is not a firmware manifest (no \"files\")" % path)
    return manifest


def march_for(capabilities):
    """mpy-cross's -march for a shoe: none (the host's bytecode) for a simulator, armv6m (the
    RP2040's Cortex-M0+) otherwise."""
    return None if "CAP_SIM" in capabilities else PICO_MARCH


def compare(manifest, device_files):
    """(matches, mismatches, missing, extra): file paths; device_files maps path -> (size,
    sha256 or None). Data files and the manifest itself are not compared."""
    want = manifest["files"]
    matches, mismatches, missing = [], [], []
    for rel in sorted(want):
        got = device_files.get(rel)
        if got is None:
            missing.append(rel)
        elif got[1] == want[rel]["sha256"] and got[0] == want[rel]["size"]:
            matches.append(rel)
        else:
            mismatches.append(rel)
    extra = sorted(rel for rel in device_files if rel not in want and not _data(rel))
    return matches, mismatches, missing, extra


def _data(rel):
    return rel == MANIFEST or rel in DATA_FILES or rel.endswith(".tmp") or \
        rel.split("/", 1)[0] in DATA_DIRS


# ---------------------------------------------------------------------------------------------
# littlefs's blocks (lib/littlefs/lfs2.c in MicroPython), for the fit check before a copy

def lfs_inline_max(block=4096):
    """The largest file littlefs keeps inline in its folder's metadata, taking no block of its
    own: lfs2_init's default, min(cache_size, attr_max, block_size / 8), with the cache rp2's
    VfsLfs2(progsize=256) gets (extmod/vfs_lfsx.c: 4 x max(readsize, progsize) = 1024) and
    LFS2_ATTR_MAX 1022."""
    return min(1024, 1022, block // 8)


def lfs_blocks(size, block=4096):
    """The blocks littlefs gives a file of `size` bytes: none inline, else its CTZ skip-list,
    whose block i > 0 begins with ctz(i) + 1 pointers of 4 bytes (lfs2_ctz_index)."""
    if size <= lfs_inline_max(block):
        return 0
    n, room = 1, block
    while room < size:
        room += block - 4 * (((n & -n).bit_length() - 1) + 1)
        n += 1
    return n


LFS_DIR_BLOCKS = 4  # a new folder (its metadata pair, and the parent's growth: measured on
#                     VfsLfs2 by benchmarks/memory.py, which checks this estimate each run)
LFS_MARGIN = 2      # a metadata compaction's copy while the files go in


def fit(image, sizes, blocks_free, block=4096):
    """(blocks the copy needs, blocks it has) on a shoe's littlefs: image {path: size} of the
    files it writes; sizes {path: size} of the shoe's files now, of which it replaces those at
    the same paths and removes main.py and every module not in the image (prepare); blocks_free
    from statvfs. A file is written before the one it replaces is released (copy-on-write):
    room for the largest one more."""
    new = [lfs_blocks(n, block) for n in image.values()]
    dirs = {rel.rsplit("/", 1)[0] for rel in image if "/" in rel}
    have_dirs = {rel.rsplit("/", 1)[0] for rel in sizes if "/" in rel}
    need = sum(new) + LFS_DIR_BLOCKS * len(dirs - have_dirs) + max(new or [0]) + LFS_MARGIN
    gone = sum(lfs_blocks(n, block) for rel, n in sizes.items()
               if rel in image or rel == "main.py" or (rel.endswith((".py", ".mpy")) and
                                                       not _data(rel)))
    return need, blocks_free + gone


# ---------------------------------------------------------------------------------------------
# scripts run on the shoe (MicroPython; paths relative to its working folder: / on a Pico)

# (walks never go into a mount point: on a Pico the ROMFS is mounted at /rom inside the littlefs
# root, and os.ilistdir("/") lists it among the root's folders (extmod/vfs.c, mp_vfs_ilistdir);
# nor into DATA_DIRS, the shoe's data, which is neither firmware nor hashed)
_WALK = """
import os
try:
    import vfs
    _fd_m = [_fd_x[1] for _fd_x in vfs.mount() if _fd_x[1] != "/"]
except Exception:
    _fd_m = []
_fd_dirs = []
def _fd_walk(d, b, out):
    for e in os.ilistdir(d):
        p = (d if d != "/" else "") + "/" + e[0]
        if e[1] & 0x4000:
            if p not in _fd_m and p[len(b):] not in %r:
                _fd_dirs.append(p[len(b):])
                _fd_walk(p, b, out)
        else:
            out.append(p[len(b):])
    return out
_fd_b = os.getcwd()
_fd_files = _fd_walk(_fd_b, _fd_b.rstrip("/") + "/", [])
""" % (DATA_DIRS,)

# the ROMFS partition, when the shoe's MicroPython has one: mounted at /rom if it is not (mpremote
# romfs deploy leaves it unmounted until the next boot); _fd_rom: it is
_ROMMOUNT = """
_fd_rom = False
try:
    import os, vfs
    try:
        os.stat("/rom")
    except OSError:
        vfs.mount(vfs.VfsRom(vfs.rom_ioctl(2, 0)), "/rom")
    _fd_rom = True
except Exception:
    pass
"""

# its files, listed as /rom/<path>
_ROMWALK = _ROMMOUNT + """
if _fd_rom:
    _fd_files += ["/rom" + _fd_p for _fd_p in _fd_walk("/rom", "/rom", [])]
"""

# the partition's size (-1: none) and how many entries its root holds. vfs.rom_ioctl as the
# port has it: rp2 (ports/rp2/rp2_flash.c, mp_vfs_rom_ioctl) has it only in a build with a
# partition, rom_ioctl(1) -> 1 and rom_ioctl(2, 0) -> the partition's rp2.Flash object, a
# block device (its size: ioctl 4 x ioctl 5; it has no len()); ports whose segment is a
# memoryview give its len(); a negative int is an error (as mpremote's romfs query reads it)
_ROMINFO = """
try:
    import vfs
    _fd_n = vfs.rom_ioctl(1) if hasattr(vfs, "rom_ioctl") else 0
    _fd_d = vfs.rom_ioctl(2, 0) if isinstance(_fd_n, int) and _fd_n > 0 else None
    if _fd_d is None or isinstance(_fd_d, int):
        _fd_z = -1
    elif hasattr(_fd_d, "ioctl"):
        _fd_z = _fd_d.ioctl(4, 0) * _fd_d.ioctl(5, 0)
    else:
        _fd_z = len(_fd_d)
except Exception:
    _fd_z = -1
""" + _ROMMOUNT + """
print("R", _fd_z, len(list(os.ilistdir("/rom"))) if _fd_rom else 0)
"""

# the filesystem's blocks (statvfs: block size, blocks, free blocks) and every file's size
_SPACE = _WALK + """
_fd_s = os.statvfs(_fd_b)
print("S", _fd_s[0], _fd_s[2], _fd_s[3])
for _fd_r in _fd_files:
    print("F", os.stat(_fd_r)[6], _fd_r)
"""

_HASH = _WALK + _ROMWALK + """
import hashlib, binascii
_fd_buf = bytearray(512)
_fd_mv = memoryview(_fd_buf)
for _fd_r in _fd_files:
    _fd_h = "-"
    if _fd_r not in %(skip)r and not _fd_r.endswith(".tmp"):
        _fd_s = hashlib.sha256()
        with open(_fd_r, "rb") as _fd_f:
            while True:
                _fd_k = _fd_f.readinto(_fd_buf)
                if not _fd_k:
                    break
                _fd_s.update(_fd_mv[:_fd_k])
        _fd_h = binascii.hexlify(_fd_s.digest()).decode()
    print("F", os.stat(_fd_r)[6], _fd_h, _fd_r)
if %(manifest)r in _fd_files:
    print("M ", end="")
    with open(%(manifest)r) as _fd_f:  # in pieces: a shoe full of old firmware has no 4 KB block
        while True:
            _fd_k = _fd_f.read(256)
            if not _fd_k:
                break
            print(_fd_k.replace("\\n", " "), end="")
    print()
"""

_PREPARE = _WALK + """
for _fd_d in %(dirs)r:
    try:
        os.mkdir(_fd_d)
    except OSError:
        pass
for _fd_r in _fd_files:
    if _fd_r == "main.py" or ((_fd_r.endswith(".py") or _fd_r.endswith(".mpy")) and
                              _fd_r not in %(keep)r):
        os.remove(_fd_r)
        print("R", _fd_r)
# a folder the image has not, left empty: removed (an empty hal/ on the filesystem would be
# found on sys.path before the ROMFS's hal package: "" comes first, /rom after it)
for _fd_d in sorted(_fd_dirs, key=lambda d: -d.count("/")):
    if _fd_d not in %(dirs)r and not list(os.ilistdir(_fd_d)):
        os.rmdir(_fd_d)
"""


_DEVICE = """
import os, sys
try:
    import machine
    _fd_i = "pico-" + "".join("%02x" % b for b in machine.unique_id())
except (ImportError, AttributeError):
    try:  # a virtual shoe: its id, made at its first boot
        with open("device_id") as _fd_f:
            _fd_i = _fd_f.read().strip()
    except OSError:
        _fd_i = "-"  # (no firmware has booted yet)
try:
    os.stat("device.key")
    _fd_k = 1
except OSError:
    _fd_k = 0
print("D", _fd_i, _fd_k)
"""

# a file's bytes in hex, 128 at a time (after a maintenance a Pico's heap has no block of a
# manifest's size to spare: one hexlify of it needed 5 KB in one piece)
_READ = """
import binascii
try:
    with open(%(path)r, "rb") as _fd_f:
        _fd_c = bytearray(128)
        while True:
            _fd_k = _fd_f.readinto(_fd_c)
            if not _fd_k:
                break
            print("X", binascii.hexlify(memoryview(_fd_c)[:_fd_k]).decode())
    print("Z")
except OSError:
    pass
"""

_REMOVE = """
import os
try:
    os.remove(%(path)r)
except OSError:
    pass
"""

# a small file's SHA-256 (the shoe confirms what it was given)
_SUM = """
import hashlib, binascii
try:
    with open(%(path)r, "rb") as _fd_f:
        print("H", binascii.hexlify(hashlib.sha256(_fd_f.read()).digest()).decode())
except OSError:
    print("H -")
"""

_WRITE = """
import os
with open(%(path)r + ".tmp", "w") as _fd_f:
    _fd_f.write(%(text)r)
os.rename(%(path)r + ".tmp", %(path)r)
"""


# ---------------------------------------------------------------------------------------------
# a maintenance session

def mpremote_command():
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    if os.path.exists(exe):
        return [exe]
    found = shutil.which("mpremote")
    if found:
        return [found]
    return [sys.executable, "-m", "mpremote"]


class Maintenance:
    """The shoe on `port`, taken out of its protocol to its REPL (or found there already)."""

    def __init__(self, port, timeout=10.0, key=None):
        self.port = port
        self.timeout = timeout
        self.key = key          # keys.Key to open the maintenance session with (None: find one)
        self.info = None        # identify's answer (None: the shoe was at its REPL already)
        self.platform = None    # sys.platform on the shoe, when asked
        from . import portlock

        self.lock = portlock.hold(port)  # the port is this process's until this is dropped

    # -- the line ---------------------------------------------------------------------------------

    def _serial(self):
        try:
            return serial.Serial(self.port, W.BAUD, timeout=0.05, write_timeout=2)
        except (serial.SerialException, OSError) as e:
            raise UserError("cannot open %s: %s" % (self.port, e),
                            hint="check the port (facedown sim prints a virtual shoe's port)")

    def _read_until(self, ser, marker, timeout):
        end = time.monotonic() + timeout
        buf = b""
        while time.monotonic() < end:
            buf += ser.read(256)
            if marker in buf:
                return True
        return False

    def at_repl(self, wait=0.5):
        """True if the REPL (not the protocol) has the line."""
        with self._serial() as ser:
            ser.reset_input_buffer()
            ser.write(PROBE)
            return self._read_until(ser, PROMPT, wait)

    def enter(self):
        """Protocol -> REPL: identify, then maintenance; waits for the REPL's prompt. A shoe
        already at its REPL is taken as it is. Returns identify's info (or None)."""
        if self.at_repl():
            return None
        client = Client(self.port, timeout=self.timeout).open()
        try:
            try:
                self.info = client.identify(check=False)  # (deploy brings the match)
            except LinkDown:  # no protocol: a REPL slow to answer the probe?
                client.close()
                if self.at_repl(2.0):
                    return None
                raise
            client.call("ping", 0, seq=0)  # a numbering of our own; events are left to the host
            if "CAP_AUTH" in self.info["capabilities"]:
                self._login(client)
            client.call("maintenance")
        finally:
            client.close()
        # the shoe hands over once the line has been quiet for a moment; the REPL then prompts
        with self._serial() as ser:
            if self._read_until(ser, PROMPT, 5.0):
                return self.info
        if not self.at_repl(2.0):
            raise UserError("the shoe on %s answered maintenance, but no REPL prompt followed"
                            % self.port, hint="power-cycle the shoe and try again")
        return self.info

    def _login(self, client):
        """A maintenance session: the one `facedown login --role maintenance` opened for this
        port, or a new one with the key."""
        from . import keys

        device = self.info["device_id"]
        session = keys.load_session(self.port)
        if self.key is None and session is not None and session.device == device and \
                session.role == "maintenance":
            client.session = session
            client.on_session = lambda s: keys.save_session(self.port, s)
            return
        key = self.key or keys.find_key(device)
        if key is None:
            raise UserError("maintenance on %s needs a maintenance session" % device,
                            hint="facedown --port PORT login --role maintenance, or give "
                                 "--key-file")
        client.login(key, "maintenance", keep=False)

    def device(self):
        """(device id, has a key) asked at the REPL."""
        out = self.exec(_DEVICE)
        for line in out.splitlines():
            if line.startswith("D "):
                _, ident, has = line.split(" ")
                return ident, has == "1"
        raise UserError("the shoe on %s did not say who it is" % self.port)

    def read_bytes(self, rel):
        """A file's bytes from the shoe (None if there is none)."""
        lines = self.exec(_READ % {"path": rel}).splitlines()
        if "Z" not in (line.strip() for line in lines):
            return None
        return b"".join(bytes.fromhex(line[2:].strip()) for line in lines if line.startswith("X "))

    def sha256(self, rel):
        """The SHA-256 (hex) of a file on the shoe, or None if there is none."""
        out = self.exec(_SUM % {"path": rel})
        for line in out.splitlines():
            if line.startswith("H "):
                digest = line[2:].strip()
                return None if digest == "-" else digest
        return None

    def space(self):
        """(block size, blocks, free blocks) of the shoe's filesystem (statvfs) and
        {path: size} of its files."""
        out = self.exec(_SPACE)
        st, sizes = None, {}
        for line in out.splitlines():
            if line.startswith("S "):
                st = tuple(int(v) for v in line.split()[1:4])
            elif line.startswith("F "):
                _, size, rel = line.split(" ", 2)
                sizes[rel] = int(size)
        if st is None:
            raise UserError("the shoe on %s did not say how much room it has" % self.port)
        return st, sizes

    def write_text(self, rel, text):
        """Write a small file on the shoe (atomically: a new file renamed over the old)."""
        self.exec(_WRITE % {"path": rel, "text": text})

    def reset(self):
        """Soft reset at the friendly REPL (Ctrl-D): a Pico reboots into main.py; the unix port
        ends (the virtual shoe's owner starts it again)."""
        with self._serial() as ser:
            ser.write(PROBE)
            self._read_until(ser, PROMPT, 1.0)
            ser.write(b"\x04")
            ser.flush()
            time.sleep(0.05)

    # -- mpremote ---------------------------------------------------------------------------------

    def mpremote(self, *args, stream=None, timeout=MPREMOTE_TIMEOUT):
        """Run `mpremote connect PORT resume ARGS...`; returns its stdout. stream(line) sees each
        line as it comes."""
        cmd = mpremote_command() + ["connect", self.port, "resume"] + list(args)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        errf = tempfile.TemporaryFile(mode="w+")
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, env=env)
        except OSError as e:
            errf.close()
            raise UserError("cannot run mpremote: %s" % e, hint="run `make setup`")
        lines = []
        timer = threading.Timer(timeout, proc.kill)  # a shoe that stops answering
        timer.start()
        try:
            for line in proc.stdout:
                lines.append(line)
                if stream is not None:
                    stream(line.rstrip("\n"))
            proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        errf.seek(0)
        err = errf.read()
        errf.close()
        if proc.returncode == -9:
            raise UserError("mpremote on %s did not finish in %d s" % (self.port, timeout))
        out = "".join(lines)
        if proc.returncode:
            tail = (err.strip() or out.strip()).splitlines()[-3:]
            raise UserError("mpremote failed on %s: %s" % (self.port, " / ".join(tail)),
                            hint="is the shoe at its REPL? (facedown deploy sends maintenance)")
        return out

    def exec(self, code):
        return self.mpremote("exec", code)

    def ask_platform(self):
        out = self.exec("import sys; print('P', sys.platform)")
        for line in out.splitlines():
            if line.startswith("P "):
                self.platform = line[2:].strip()
        return self.platform

    def files(self):
        """{path: (size, sha256 or None)} of every file on the shoe, and its manifest.json
        (parsed; None if it has none or it is unreadable)."""
        out = self.exec(_HASH % {"skip": DATA_FILES, "manifest": MANIFEST})
        files = {}
        manifest = None
        for line in out.splitlines():
            if line.startswith("F "):
                _, size, digest, rel = line.split(" ", 3)
                files[rel] = (int(size), None if digest == "-" else digest)
            elif line.startswith("M "):
                try:
                    manifest = json.loads(line[2:])
                except ValueError:
                    manifest = None
        return files, manifest

    def romfs(self):
        """(the ROMFS partition's size in bytes, or -1 when the shoe's MicroPython has none; how
        many entries its root holds)."""
        out = self.exec(_ROMINFO)
        for line in out.splitlines():
            if line.startswith("R "):
                _, size, count = line.split()
                return int(size), int(count)
        return -1, 0

    def write_romfs(self, path):
        """Write a ROMFS image to the shoe's partition (mpremote romfs deploy)."""
        self.mpremote("romfs", "deploy", path)

    def prepare(self, manifest):
        """Make the image's folders; remove main.py (a shoe cut off mid-copy then boots to its
        REPL, never into a mix of old and new modules) and every module the image does not have
        (a stale foo.py would shadow foo.mpy). Returns the removed paths."""
        files = [rel for rel in manifest["files"] if not rel.startswith(ROM_PREFIX)]
        dirs = sorted({rel.rsplit("/", 1)[0] for rel in files if "/" in rel},
                      key=lambda d: d.count("/"))
        out = self.exec(_PREPARE % {"dirs": dirs, "keep": set(files)})
        return [line[2:] for line in out.splitlines() if line.startswith("R ") and
                line[2:] not in files]  # main.py comes back

    def copy(self, image, files, on_file=None):
        """Copy the image's files (in this order) with one mpremote run; on_file(path, skipped)
        after each. Returns how many were already up to date."""
        args = []
        for rel in files:
            if args:
                args.append("+")
            args += ["fs", "cp", os.path.join(image, rel), ":" + rel]
        pending = []
        skipped = [0]

        def line(text):
            if text.startswith("cp "):
                if pending and on_file is not None:
                    on_file(pending.pop(), False)
                pending[:] = [text.split(" :", 1)[-1]]
            elif text.startswith("Up to date:"):
                skipped[0] += 1
                if pending and on_file is not None:
                    on_file(pending.pop(), True)

        self.mpremote(*args, stream=line)
        if pending and on_file is not None:
            on_file(pending.pop(), False)
        return skipped[0]


# ---------------------------------------------------------------------------------------------
# deploy and verify

def _progress(total, description):
    """A rich progress bar on a terminal (stderr); a no-op object otherwise."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[file]}"), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)
    bar.start()
    bar.task = bar.add_task(description, total=total, file="")
    return bar


def _target(session, march):
    """The -march to build for: given, from identify's capabilities, or from sys.platform when
    the shoe was found at its REPL."""
    if march != "auto":
        return None if march == "host" else march
    if session.info is not None:
        return march_for(session.info["capabilities"])
    return PICO_MARCH if session.ask_platform() == "rp2" else None


def deploy(port, march="auto", out=None, reset=True, timeout=10.0, say=print, key=None,
           romfs=None):
    """Build, copy, verify and reset. Returns a result dict (raises UserError on failure). A
    provisioned shoe gets the manifest signed with its key (manifest.mac): it checks it at every
    boot and locks if anything differs. romfs: True, the modules go to the ROMFS partition of
    the shoe's MicroPython (they run in place from flash: half the heap), the rest to its
    filesystem; False, everything to the filesystem, and a ROMFS that holds modules is cleared
    (they would come first on sys.path); None (auto), the ROMFS when the shoe has one."""
    from . import keys

    t0 = time.monotonic()
    session = Maintenance(port, timeout, key)
    session.enter()
    device, provisioned = session.device()
    if provisioned:
        key = key or keys.find_key(device)
        if key is None:
            raise UserError("%s has a key: deploying needs it to sign the manifest" % device,
                            hint="give --key-file (the device or maintenance key file)")
        if key.device and key.device != device:
            raise UserError("the key is for %s, but this shoe is %s" % (key.device, device))
    target = _target(session, march)
    rom_size, rom_entries = session.romfs()
    if romfs is None:
        romfs = rom_size > 0
    if romfs and rom_size < 0:
        raise UserError("the MicroPython on %s has no ROMFS partition" % port,
                        hint="flash a MicroPython built with MICROPY_HW_ROMFS_BYTES "
                             "(docs/deploy.md), or deploy without --romfs")
    tmp = tempfile.mkdtemp(prefix="facedown-image-")  # (--out gets it once it is verified)
    image = os.path.join(tmp, "image")
    try:
        manifest = build(image, target, romfs=romfs)
        files = sorted(f for f in manifest["files"] if not f.startswith(ROM_PREFIX))
        rom_bytes = os.path.getsize(os.path.join(image, ROMFS_IMAGE)) if romfs else 0
        if romfs and rom_bytes > rom_size:
            raise UserError("the modules' ROMFS image (%d bytes) does not fit the %d-byte "
                            "partition on %s" % (rom_bytes, rom_size, port))
        signed = []
        if provisioned:
            with open(os.path.join(image, MANIFEST), "rb") as f:
                mac = key.manifest_mac(f.read())
            with open(os.path.join(image, MANIFEST_MAC), "w") as f:
                f.write(mac)
            signed = [MANIFEST_MAC]
        # modules first, then the manifest (and its MAC), main.py last: a shoe boots the new
        # firmware only once every module it imports is there
        order = [f for f in files if f != "main.py"] + [MANIFEST] + signed + \
                (["main.py"] if "main.py" in files else [])
        # before anything changes on the shoe: does the image fit its filesystem, in blocks?
        (bsize, total, bfree), sizes = session.space()
        need, have = fit({rel: os.path.getsize(os.path.join(image, rel)) for rel in order},
                         sizes, bfree, bsize)
        if need > have:
            raise UserError(
                "the firmware does not fit the filesystem on %s: it needs %d blocks of %d "
                "bytes, the shoe has %d (%d free of %d, and those of the files it replaces)"
                % (port, need, bsize, have, bfree, total),
                hint="flash the stock MicroPython image (littlefs over all of the storage), "
                     "or one with a ROMFS partition for the modules (docs/deploy.md)")
        removed = session.prepare(manifest)
        cleared = False
        if romfs:
            session.write_romfs(os.path.join(image, ROMFS_IMAGE))
        elif rom_entries > 0:  # another deploy's modules: they would shadow these
            session.write_romfs(romfs_image(image, []))
            cleared = True
        bar = _progress(len(order), "deploying")

        def on_file(rel, skipped):
            if bar is not None:
                bar.update(bar.task, advance=1, file=rel)

        try:
            skipped = session.copy(image, order, on_file)
        finally:
            if bar is not None:
                bar.stop()
        device_files, _installed = session.files()
        matches, mismatches, missing, extra = compare(manifest, device_files)
        if out is not None and not (mismatches or missing or extra):
            dest = os.path.abspath(out)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(image, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {"firmware": manifest["firmware"], "march": target,
              "files": len(manifest["files"]), "romfs": rom_bytes if romfs else None,
              "romfs_cleared": cleared, "signed": bool(signed),
              "bytes": sum(e["size"] for e in manifest["files"].values()),
              "removed": removed, "up_to_date": skipped, "matches": matches,
              "mismatches": mismatches, "missing": missing, "extra": extra,
              "seconds": time.monotonic() - t0, "reset": False}
    if mismatches or missing or extra:
        report(result, say)
        raise UserError("deploy to %s failed verification: the shoe stays at its REPL" % port,
                        hint="run facedown deploy again")
    if reset:
        session.reset()
        result["reset"] = True
    result["seconds"] = time.monotonic() - t0
    return result


def verify(port, manifest=None, march="auto", reset=True, timeout=10.0, key=None):
    """Hash the shoe's files and compare them with the manifest (a dict; None: build one from
    this checkout for the shoe's target); with the shoe's key at hand, check the MAC of the
    manifest it boots with too ("authentic": True/False; None without a key or on a shoe that
    has none). Returns a result dict."""
    from . import keys

    session = Maintenance(port, timeout, key)
    session.enter()
    authentic = None
    try:
        device, provisioned = session.device()
        key = key or (keys.find_key(device) if provisioned else None)
        if key is not None:
            data = session.read_bytes(MANIFEST)
            mac = session.read_bytes(MANIFEST_MAC)
            authentic = data is not None and mac is not None and \
                key.manifest_mac(data) == mac.decode(errors="replace").strip()
        device_files, installed = session.files()
        if manifest is None:  # this checkout's, laid out as the installed one (ROMFS or not)
            target = _target(session, march)
            romfs = installed is not None and any(
                rel.startswith(ROM_PREFIX) for rel in installed.get("files", {}))
            with tempfile.TemporaryDirectory(prefix="facedown-image-") as tmp:
                manifest = build(os.path.join(tmp, "image"), target, romfs=romfs)
    finally:
        if reset:
            session.reset()
    matches, mismatches, missing, extra = compare(manifest, device_files)
    return {"firmware": manifest.get("firmware"), "installed": installed,
            "authentic": authentic,
            "matches": matches, "mismatches": mismatches, "missing": missing, "extra": extra,
            "reset": reset}


def report(result, say=print):
    for what in ("mismatches", "missing", "extra"):
        label = {"mismatches": "MISMATCH", "missing": "MISSING", "extra": "EXTRA"}[what]
        for rel in result[what]:
            say("%-8s %s" % (label, rel))


def _summary(result):
    return "%d match, %d mismatch, %d missing, %d extra" % (
        len(result["matches"]), len(result["mismatches"]), len(result["missing"]),
        len(result["extra"]))


# ---------------------------------------------------------------------------------------------
# the commands

def add_command(sub):
    p = sub.add_parser("deploy", help="build the firmware and install it on the shoe (mpremote)")
    p.add_argument("--march", default="auto", choices=("auto", PICO_MARCH, "host"),
                   help="bytecode target: auto (identify: a simulator gets the host's, a shoe "
                        "armv6m), or force one")
    p.add_argument("--out", metavar="DIR", help="keep the built image (and its manifest) here")
    p.add_argument("--no-reset", action="store_true",
                   help="leave the shoe at its REPL afterwards")
    p.add_argument("--romfs", choices=("auto", "yes", "no"), default="auto",
                   help="the modules in the ROMFS partition of the shoe's MicroPython, where "
                        "they run from flash (docs/deploy.md): auto (default) when it has one")
    p.add_argument("--key-file", metavar="FILE",
                   help="the shoe's key file (device or maintenance key; default: "
                        "$FACEDOWN_KEY_FILE, $FACEDOWN_KEY, the key store): signs the manifest")
    p.set_defaults(func=run_deploy)

    p = sub.add_parser("provision", help="installation: give a new shoe its own key (once)")
    p.add_argument("--key-out", metavar="FILE",
                   help="also write the key file here (it always goes to the key store)")
    p.set_defaults(func=run_provision)

    p = sub.add_parser("verify", help="compare the shoe's files with a release manifest")
    p.add_argument("--manifest", metavar="FILE",
                   help="a release's manifest.json (default: build one from this checkout)")
    p.add_argument("--march", default="auto", choices=("auto", PICO_MARCH, "host"),
                   help="target of the manifest built from the checkout (default: auto)")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    p.add_argument("--no-reset", action="store_true",
                   help="leave the shoe at its REPL afterwards")
    p.add_argument("--key-file", metavar="FILE",
                   help="the shoe's key file, to check the manifest's MAC too")
    p.set_defaults(func=run_verify)

    p = sub.add_parser("image", help="build the firmware image and its manifest (no shoe)")
    p.add_argument("--out", metavar="DIR", required=True, help="the image folder (replaced)")
    p.add_argument("--march", default=PICO_MARCH, choices=(PICO_MARCH, "host"),
                   help="armv6m (a Pico, default) or host (the unix port)")
    p.add_argument("--romfs", action="store_true",
                   help="the modules as a ROMFS image (%s), listed as /rom/<path>" % ROMFS_IMAGE)
    p.set_defaults(func=run_image)


def _port(args):
    if not args.port:
        raise UserError("this command talks to a shoe: give --port PORT",
                        hint="`facedown sim` starts a virtual shoe and prints its port")
    return args.port


def _key(args):
    from . import keys

    return keys.Key.load(args.key_file) if getattr(args, "key_file", None) else None


def run_deploy(args):
    port = _port(args)
    r = deploy(port, args.march, args.out, reset=not args.no_reset, key=_key(args),
               romfs={"auto": None, "yes": True, "no": False}[args.romfs])
    extra = []
    if r["romfs"]:
        extra.append("modules in the ROMFS (%d bytes)" % r["romfs"])
    if r["romfs_cleared"]:
        extra.append("the ROMFS cleared")
    if r["removed"]:
        extra.append("%d stale removed" % len(r["removed"]))
    if r["up_to_date"]:
        extra.append("%d already up to date" % r["up_to_date"])
    print("deployed firmware %s to %s: %d files, %d bytes (%s), verified%s%s; %s (%.1f s)" % (
        r["firmware"], port, r["files"], r["bytes"], r["march"] or "host bytecode",
        ", manifest signed" if r["signed"] else "",
        (", " + ", ".join(extra)) if extra else "",
        "reset: the shoe boots it now" if r["reset"] else "the shoe is at its REPL",
        r["seconds"]))
    return 0


def run_verify(args):
    port = _port(args)
    manifest = load_manifest(args.manifest) if args.manifest else None
    r = verify(port, manifest, args.march, reset=not args.no_reset, key=_key(args))
    ok = not (r["mismatches"] or r["missing"] or r["extra"]) and r["authentic"] is not False
    if args.json:
        print(json.dumps(r, indent=1))
        return 0 if ok else 1
    for rel in r["matches"]:
        print("%-8s %s" % ("ok", rel))
    report(r)
    inst = r["installed"]
    where = "" if not inst else " (installed: firmware %s, built %s%s)" % (
        inst.get("firmware"), inst.get("built"),
        ", " + inst["commit"] if inst.get("commit") else "")
    sig = {None: "", True: "; manifest authentic",
           False: "; the manifest's MAC is WRONG (the shoe locks at boot)"}[r["authentic"]]
    print("verify %s against firmware %s: %s: %s%s%s" % (
        port, r["firmware"], "OK" if ok else "FAILED", _summary(r), sig, where))
    return 0 if ok else 1


def provision(port, key_out=None, reset=True, timeout=10.0):
    """Installation: a new key for the shoe on port (which must have none), written to the
    shoe over its REPL (the only time a key crosses the cable) and to the key store (and
    key_out); the firmware on the shoe is checked against its manifest, which is then signed.
    Returns (keys.Key, key store path)."""
    from . import keys

    session = Maintenance(port, timeout)
    session.enter()
    try:
        device, has = session.device()
        if has:
            raise UserError("%s already has its key: a shoe is provisioned once" % device,
                            hint="its key file is in the key store of the host that "
                                 "provisioned it")
        device_files, installed = session.files()
        if installed is None:
            raise UserError("%s has no firmware manifest: deploy first" % device)
        _m, mismatches, missing, extra = compare(installed, device_files)
        if mismatches or missing or extra:
            raise UserError("the firmware on %s does not match its manifest (%d mismatch, %d "
                            "missing, %d extra): deploy first" % (device, len(mismatches),
                                                                  len(missing), len(extra)))
        key = keys.Key.generate(device)  # in memory only until the shoe has it
        path = keys.keystore_path(device)
        if os.path.exists(path):
            raise UserError("the key store already has a key for %s (%s)" % (device, path),
                            hint="move it away if that shoe was wiped")
        data = session.read_bytes(MANIFEST)
        if data is None:
            raise UserError("%s has no firmware manifest: deploy first" % device)
        session.write_text(MANIFEST_MAC, key.manifest_mac(data))
        session.write_text("device.key", key.key.hex())
        # the shoe confirms what it holds; only then does the host keep the key
        if session.sha256("device.key") != hashlib.sha256(key.key.hex().encode()).hexdigest():
            session.exec(_REMOVE % {"path": "device.key"})  # back to the factory state
            raise UserError("%s did not keep the key it was given: nothing was saved on this "
                            "host" % device, hint="run facedown provision again")
        key.save(path)
        if key_out:
            key.save(key_out)
    finally:
        if reset:
            session.reset()
    return key, path


def run_provision(args):
    port = _port(args)
    key, path = provision(port, args.key_out)
    print("provisioned %s: its key is in %s%s. Keep a copy somewhere safe: without it no "
          "session opens on this shoe." % (key.device, path,
                                          " and " + args.key_out if args.key_out else ""))
    return 0


def run_image(args):
    march = None if args.march == "host" else args.march
    m = build(os.path.abspath(args.out), march, romfs=args.romfs)
    print("image %s: firmware %s, %d files, %d bytes (%s); manifest %s%s" % (
        args.out, m["firmware"], len(m["files"]), sum(e["size"] for e in m["files"].values()),
        march or "host bytecode", os.path.join(args.out, MANIFEST),
        "; ROMFS image %s" % os.path.join(args.out, ROMFS_IMAGE) if args.romfs else ""))
    return 0
