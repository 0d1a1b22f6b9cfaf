# Small files on the shoe's filesystem (littlefs on the Pico, the flash folder in the simulator):
# the device id and key, the boot counter, the audit log. Not the journal: that has its own
# flash area (journal.py). write() is atomic: a new file is renamed over the old one.
import os


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
        """Every file under folder (relative paths, "/"-separated), walking subfolders."""
        out = []
        base = self.path(folder) if folder else self.folder
        for n in sorted(os.listdir(base) if base else os.listdir()):  # "": the working folder
            rel = folder + "/" + n if folder else n
            if os.stat(self.path(rel))[0] & 0xF000 == 0x4000:
                out.extend(self.files(rel))
            else:
                out.append(rel)
        return out
