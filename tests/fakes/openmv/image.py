# A fake of OpenMV's `image` module for the reader board's tests (tests/mp_reader_test.py), on
# CPython and the MicroPython unix port: grayscale images only, what reader/ uses.
# After openmv/openmv (fetched at cbbb877): modules/py_image.c (Image(path) loads a PGM;
# binary(thresholds) works in place and returns the image; get_similarity(image, x, y)
# returns an attrtuple (mean, stdev, min, max); get_statistics(roi=) an attrtuple whose .mean
# is the mean grey) and lib/imlib/stats.c (imlib_get_similarity: the
# other image drawn at (x, y) over this one, SSIM over 8 x 8 blocks of the overlap, partial
# blocks at its edges, the variances left multiplied by the block's size, c1 = (255 x 0.01)^2,
# c2 = (255 x 0.03)^2, the mean over the blocks).
GRAYSCALE = 1
FILES = {}   # path -> bytes: the board's flash as the tests lay it out (else the real file)


class Similarity:
    def __init__(self, mean, stdev, lo, hi):
        self.mean = mean
        self.stdev = stdev
        self.min = lo
        self.max = hi


class Statistics:
    def __init__(self, mean):
        self.mean = mean


def _pgm(data):
    """A binary PGM (P5, maxval 255) -> (w, h, pixels)."""
    fields = []
    i = 0
    while len(fields) < 4:
        while data[i] in b" \t\r\n":
            i += 1
        if data[i] == 0x23:  # a comment
            while data[i] != 0x0A:
                i += 1
            continue
        j = i
        while data[j] not in b" \t\r\n":
            j += 1
        fields.append(bytes(data[i:j]))
        i = j
    if fields[0] != b"P5" or int(fields[3]) != 255:
        raise OSError("not a P5 PGM")
    w, h = int(fields[1]), int(fields[2])
    return w, h, bytearray(data[i + 1:i + 1 + w * h])


def pgm_bytes(w, h, pixels):
    return b"P5\n%d %d\n255\n" % (w, h) + bytes(pixels)


class Image:
    def __init__(self, arg, h=None, pixels=None):
        if h is not None:
            self.w, self.h = arg, h
            self.px = bytearray(pixels) if pixels is not None else bytearray(arg * h)
            return
        data = FILES.get(arg)
        if data is None:
            try:
                with open(arg, "rb") as f:
                    data = f.read()
            except OSError:
                raise OSError("Could not find the file")  # (ENOENT, as the board's VFS)
        self.w, self.h, self.px = _pgm(data)

    def width(self):
        return self.w

    def height(self):
        return self.h

    def get_pixel(self, x, y):
        return self.px[y * self.w + x]

    def binary(self, thresholds, invert=False):
        """In place: a pixel within one of the (lo, hi) thresholds white, else black."""
        px = self.px
        for i in range(len(px)):
            v = px[i]
            inside = False
            for lo, hi in thresholds:
                if lo <= v <= hi:
                    inside = True
            px[i] = 255 if inside != invert else 0
        return self

    def get_statistics(self, roi=None):
        x, y, w, h = roi if roi is not None else (0, 0, self.w, self.h)
        s = 0
        for j in range(y, y + h):
            row = j * self.w
            for i in range(x, x + w):
                s += self.px[row + i]
        return Statistics(s // (w * h))

    def get_similarity(self, other, x=0, y=0):
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(self.w, x + other.w), min(self.h, y + other.h)
        c1 = (255 * 0.01) ** 2
        c2 = (255 * 0.03) ** 2
        out = []
        for by in range(y0, y1, 8):
            for bx in range(x0, x1, 8):
                sx = sy = sxx = syy = sxy = 0
                n = 0
                for j in range(by, min(by + 8, y1)):
                    row = j * self.w
                    orow = (j - y) * other.w - x
                    for i in range(bx, min(bx + 8, x1)):
                        p = self.px[row + i]
                        q = other.px[orow + i]
                        sx += p
                        sy += q
                        sxx += p * p
                        syy += q * q
                        sxy += p * q
                        n += 1
                mx, my = sx / n, sy / n
                vx, vy, vxy = sxx - n * mx * mx, syy - n * my * my, sxy - n * mx * my
                out.append(((2 * mx * my + c1) * (2 * vxy + c2)) /
                           ((mx * mx + my * my + c1) * (vx + vy + c2)))
        if not out:
            return Similarity(0.0, 0.0, 0.0, 0.0)
        mean = sum(out) / len(out)
        sd = (sum((v - mean) ** 2 for v in out) / len(out)) ** 0.5
        return Similarity(mean, sd, min(out), max(out))
