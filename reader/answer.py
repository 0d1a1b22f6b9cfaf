# The reader board's end of the line to the Pico (hal/readerline.py: the frame and every
# message, the Pico's declaration, not a copy): bytes in from the UART, one answer out for
# each line. A line it cannot take (not a frame, a bad CRC, too long, no such message, a
# field wrong) is answered $ER,<reason> and changes nothing: the clutches stay as they are,
# the count goes on. Nothing here touches the hardware but through the objects it is given.
from hal.readerline import (BAD_FIELD, BAD_FRAME, CAMERA, CD, DEAL, EB, END, ER, GATHER,
                            MAX_LEN, MG, NO_SUCH, PK, RD, REPLY, ST, START, TOO_LONG, UNKNOWN,
                            frame, parse_frame)

HEX = "0123456789ABCDEF"


class Answerer:
    """uart: read(n), any(), write(b); index: reader/index.py's IndexReader (or anything with
    read() -> (card, face_up, confidence)); status: () -> the $ST code; parts: a dict of
    reader/parts.py's objects, each optional: 'clutches', 'gather_beam', 'pockets',
    'escrows', 'back'. A part that is not fitted makes its message a $ER,FIELD."""

    def __init__(self, uart, index, status, parts):
        self.uart = uart
        self.index = index
        self.status = status
        self.parts = parts
        self.buf = bytearray()
        self.skipping = False      # a line too long: its bytes dropped until its end
        self.bad = 0               # lines answered $ER
        self.answered = 0
        self.fault = None          # CAMERA once a read failed: the Pico stops feeding
        self.handlers = {RD: self._rd, ST: self._st, MG: self._mg, PK: self._pk, EB: self._eb}

    def hello(self):
        """After power-up: the status, unasked (the Pico's Reader takes it)."""
        self._send(ST + "," + self._status())

    def poll(self):
        """Take what the UART has; answer every complete line."""
        n = self.uart.any()
        if not n:
            return
        data = self.uart.read(n)
        if not data:
            return
        for b in data:
            if b == 0x0A:
                line = self.buf
                self.buf = bytearray()
                if self.skipping:
                    self.skipping = False
                    continue
                if line and line[-1] == 0x0D:
                    line = line[:-1]
                if line:
                    self._send(self.answer(line))
            elif not self.skipping:
                self.buf.append(b)
                if len(self.buf) > MAX_LEN:
                    self.buf = bytearray()
                    self.skipping = True
                    self._send(self._er(TOO_LONG))

    def answer(self, line):
        """One line (without its newline) -> the body of its answer."""
        if len(line) > MAX_LEN:
            return self._er(TOO_LONG)
        f = parse_frame(line)
        if f is None:
            return self._er(BAD_FRAME)
        h = self.handlers.get(f[0])
        if h is None:
            return self._er(NO_SUCH)
        if len(f) != REPLY[f[0]][0]:
            return self._er(BAD_FIELD)
        body = h(f)
        if body is None:
            return self._er(BAD_FIELD)
        self.answered += 1
        return body

    def _er(self, reason):
        self.bad += 1
        return ER + "," + reason

    def _send(self, body):
        self.uart.write(frame(body))

    # ------------------------------------------------------------ the messages

    def _rd(self, f):
        seq = f[1]
        if len(seq) != 2 or seq[0] not in HEX or seq[1] not in HEX:
            return None
        try:
            card, up, conf = self.index.read()
        except (OSError, RuntimeError):  # the camera stopped giving frames: CAMERA from now
            self.fault = CAMERA
            card, up, conf = "??", 0, 0
        body = "%s,%s,%s,%d,%d" % (CD, seq, card, up, conf)
        back = self.parts.get("back")
        if back is not None and back.present:
            body += "," + back.back()
        return body

    def _st(self, f):
        return ST + "," + self._status()

    def _status(self):
        return self.fault or self.status()

    def _mg(self, f):
        clutches = self.parts.get("clutches")
        beam = self.parts.get("gather_beam")
        mag = f[1]
        if clutches is None or mag not in (DEAL, GATHER):
            return None
        clutches.select(mag)
        seen = UNKNOWN if beam is None else ("1" if beam.blocked() else "0")
        return "%s,%s,%s" % (MG, mag, seen)

    def _pk(self, f):
        pockets = self.parts.get("pockets")
        if pockets is None:
            return None
        if f[1] == START:
            return "%s,%s,%d" % (PK, START, pockets.start())
        if f[1] == END:
            return "%s,%s,%d" % (PK, END, pockets.stop())
        return None

    def _eb(self, f):
        escrows = self.parts.get("escrows")
        if escrows is None or f[1] not in ("0", "1"):
            return None
        return "%s,%s,%s" % (EB, f[1], escrows.beam(int(f[1])))
