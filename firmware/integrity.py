# The firmware's check of itself at every boot (25 CFR 547.13 style): every file the manifest
# lists is there with its SHA-256, no program file is there that it does not list, and the
# manifest is authentic: manifest.mac holds HMAC-SHA256(maintenance key, "facedown manifest" |
# manifest.json), written by `facedown deploy` (the key that signs is this shoe's own: no
# other shoe's manifest passes). A shoe without a key (not yet provisioned) has nothing to
# check against and says so. The answer is None (all good) or the reason the shoe locks.
# A shoe whose MicroPython has a ROMFS partition keeps its modules there (`facedown deploy`;
# MicroPython mounts it at /rom, inside the littlefs root, and puts /rom on sys.path): the
# manifest lists them as "/rom/<path>" (the walk of the store does not go into /rom),
# they are hashed the same way, and code in the ROMFS that the manifest does not list locks
# the shoe as it would on the filesystem.
import hashlib
import json
from binascii import hexlify

from hal.store import KEY_FILE  # (loaded already: boot(store) has its DirStore)

MANIFEST = "manifest.json"
MAC = "manifest.mac"
CODE = (".py", ".mpy")
CHUNK = 512


SEEN = "manifest.seen"
ROM = "/rom"  # where the ROMFS is mounted (a test points it elsewhere)
ROM_PREFIX = "/rom/"  # manifest paths in the ROMFS


def _hmac(key, parts):
    """HMAC-SHA256 over the concatenation of parts, without building it (a manifest is KBs and
    this runs first at boot, before the heap holds anything else)."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    k = key + bytes(64 - len(key))
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in k))
    for p in parts:
        inner.update(p)
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in k))
    outer.update(inner.digest())
    return outer.digest()


def maintenance_key(store):
    """The key a manifest's MAC is made with (the maintenance role's, derived from the device
    key as session.py and the host's keys.py do), or None when the shoe has no key."""
    from session import parse_key

    key = parse_key(store.read(KEY_FILE))
    return None if key is None else _hmac(key, (b"facedown role maintenance",))


def _path(store, rel):
    return ROM + rel[4:] if rel.startswith(ROM_PREFIX) else store.path(rel)


def rom_files():
    """The files in the mounted ROMFS as manifest paths ("/rom/..."); none when there is none."""
    from hal.store import DirStore

    try:
        for rel in DirStore(ROM).files():
            yield ROM_PREFIX + rel
    except OSError:  # no ROMFS mounted
        return


def file_hash(store, rel, buf):
    h = hashlib.sha256()
    with open(_path(store, rel), "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(buf if n == len(buf) else memoryview(buf)[:n])
    return hexlify(h.digest()).decode()


def check(store):
    """None if the firmware on the store is what an authentic manifest lists (or the shoe has
    no key to check with), else the reason it locks."""
    from session import equal

    mac_key = maintenance_key(store)
    if mac_key is None:
        return None
    data = store.read(MANIFEST, "rb")
    if data is None:
        return "no firmware manifest: deploy with facedown deploy"
    mac = store.read(MAC)
    if mac is None or not equal(hexlify(_hmac(mac_key, (b"facedown manifest", data))),
                                mac.strip().encode()):
        return "the firmware manifest is not authentic (manifest.mac)"
    try:
        files = json.loads(data)["files"]
    except (ValueError, KeyError, TypeError):
        return "the firmware manifest is unreadable"
    buf = bytearray(CHUNK)
    for rel in sorted(files):
        want = files[rel]
        try:
            got = file_hash(store, rel, buf)
        except OSError:
            return "%s is missing" % rel
        if not isinstance(want, dict) or got != want.get("sha256"):
            return "%s does not match the manifest" % rel
    for rel in store.files():  # (not into /rom: a mount point, listed below as /rom/...)
        if rel not in files and rel.endswith(CODE):
            return "%s is not in the manifest" % rel
    for rel in rom_files():
        if rel not in files and rel.endswith(CODE):
            return "%s is not in the manifest" % rel
    return None


def boot(store):
    """At power-up, before anything else is loaded: (why the shoe locks or None, what was
    deployed since the last boot or None). A manifest not seen at the last boot is a software
    download, which the audit log records with the check's result (25 CFR 547.12)."""
    locked = check(store)
    data = store.read(MANIFEST, "rb")
    if data is None:
        return locked, None
    seen = hexlify(hashlib.sha256(data).digest()).decode()
    if seen == store.read(SEEN):
        return locked, None
    version = "?"
    try:
        version = json.loads(data).get("firmware", "?")
    except (ValueError, AttributeError):
        pass
    store.write(SEEN, seen)
    return locked, "firmware %s, manifest %s: %s" % (version, seen[:16], "LOCKED, " + locked
                                                     if locked else "verified")
