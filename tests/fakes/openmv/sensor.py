# A fake of OpenMV's `sensor` module (openmv/openmv at cbbb877, modules/py_csi.c: the csi module
# registered as `sensor` too, with reset, set_pixformat, set_framesize, skip_frames, snapshot
# and the GRAYSCALE / QVGA constants) for the reader board's tests: snapshot() returns the
# synthetic frame the test put in `frame` (an image.Image); dead: reset() fails as a camera
# that does not answer does (a RuntimeError from the driver).
GRAYSCALE = 1
QVGA = 5
frame = None
dead = False
calls = []


def reset():
    calls.append("reset")
    if dead:
        raise RuntimeError("Sensor Timeout!")


def set_pixformat(f):
    calls.append(("pixformat", f))


def set_framesize(f):
    calls.append(("framesize", f))


def skip_frames(time=0):
    calls.append(("skip", time))


def snapshot():
    if dead or frame is None:
        raise RuntimeError("Sensor Timeout!")
    return frame
