# A stand-in firmware main.py for the virtual shoe tests (MicroPython unix port):
# open the device end of the null-modem named by FACEDOWN_PORT, say "ready" on stdout,
# then echo every byte back unchanged.
#
# MicroPython pty notes: FileIO.read(n) on a blocking tty loops until it has all n
# bytes, so the tty is put in VMIN=0/VTIME=0 mode (read returns what is there, b"" if
# nothing) and select.poll waits for data; flush() on a tty raises EINVAL.
import os
import select
import sys

path = os.getenv("FACEDOWN_PORT")
if not path:
    print("FACEDOWN_PORT not set")
    sys.exit(2)

port = open(path, "r+b")
try:
    import termios

    attrs = termios.tcgetattr(port.fileno())
    attrs[6][6] = 0  # VMIN (Linux index; MicroPython's termios has no constant for it)
    attrs[6][5] = 0  # VTIME
    termios.tcsetattr(port.fileno(), termios.TCSANOW, attrs)
    chunk = 256
except (ImportError, OSError):
    chunk = 1  # blocking tty: read(1) is the only size that returns without waiting for more

poller = select.poll()
poller.register(port, select.POLLIN)
print("ready", path)

while True:
    for obj, ev in poller.poll(1000):
        if ev & (select.POLLHUP | select.POLLERR):
            print("hangup")
            sys.exit(1)
        data = port.read(chunk)
        if data:
            port.write(data)
