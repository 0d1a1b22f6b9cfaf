# Small files on the shoe's filesystem (littlefs on the Pico, the flash folder in the simulator):
# the device id and key, the boot counter, the audit log. Not the journal: that has its own
# flash area (journal.py). write() is atomic: a new file is renamed over the old one.
import os

KEY_FILE = "device.key"  # the shoe's key (session.py; integrity.py checks the manifest with it)


class DirStore:
    def __init__(self, folder="."):
        self.folder = folder

    def path(self, name):
        return self.folder + "/" + name if self.folder else name

    def read(self, name, mode="r"):
        """The file's text (bytes with mode "rb"), or None if there is none."""
        try:
            with open(self.path(name), mode) as f:
                return f.read()
        except OSError:
            return None

    def lines(self, name):
        """The file's lines (with their newlines), one at a time; none if there is no file."""
        try:
            f = open(self.path(name))
        except OSError:
            return
        with f:
            while True:
                line = f.readline()
                if not line:
                    return
                yield line

    def write(self, name, text):
        tmp = self.path(name + ".tmp")
        with open(tmp, "wb" if isinstance(text, (bytes, bytearray)) else "w") as f:
            f.write(text)
        os.rename(tmp, self.path(name))

    def append(self, name, data):
        with open(self.path(name), "ab") as f:
            f.write(data)

    def size(self, name):
        try:
            return os.stat(self.path(name))[6]
        except OSError:
            return -1

    def rename(self, old, new):
        try:
            os.remove(self.path(new))
        except OSError:
            pass
        os.rename(self.path(old), self.path(new))

    def files(self, folder=""):
        """Every file under folder (relative paths, "/"-separated), one at a time, walking
        subfolders but never into a mount point: on a Pico the ROMFS is mounted at /rom inside
        the littlefs root, and os.ilistdir("/") lists it among the root's folders (extmod/
        vfs.c, mp_vfs_ilistdir: the mount points first, then the root filesystem's entries);
        its files are the ROMFS's, not this store's (integrity.py walks them as /rom/...)."""
        mounts = _mounts()
        base = self.path(folder) if folder else self.folder
        for name, kind in _entries(base):
            rel = folder + "/" + name if folder else name
            if kind == 0x4000:
                if _absolute(self.path(rel)) not in mounts:
                    yield from self.files(rel)
            else:
                yield rel


def _entries(base):
    """(name, 0x4000 for a folder) of a folder's entries ("": the working folder)."""
    if hasattr(os, "ilistdir"):  # MicroPython: no list of the folder in the heap
        for e in os.ilistdir(base) if base else os.ilistdir():
            yield e[0], e[1] & 0xF000
    else:  # CPython
        for name in sorted(os.listdir(base or ".")):
            path = base + "/" + name if base else name
            yield name, os.stat(path)[0] & 0xF000


def _mounts():
    """The paths something is mounted at, but / (vfs.mount() lists the mount table)."""
    try:
        import vfs

        return [m[1] for m in vfs.mount() if m[1] != "/"]
    except (ImportError, AttributeError, TypeError):  # CPython: no VFS mounts
        return []


def _absolute(path):
    if path.startswith("/"):
        return path
    cwd = os.getcwd()
    return (cwd if cwd.endswith("/") else cwd + "/") + path
