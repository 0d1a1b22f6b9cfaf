# The reader board's script (reader/) on fakes of OpenMV's modules (tests/fakes/openmv/:
# sensor and image give synthetic frames, machine the pins, the I2C devices and the UART to
# the Pico), under the MicroPython unix port and CPython (tests/test_reader.py runs both):
#   micropython tests/mp_reader_test.py [--image DIR] [case ...]
# The templates are synthetic glyphs, the frames a held card's index corner drawn from them
# with the card's play and some noise. Prints "OK" at the end; any failure raises.
import sys

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
# --image DIR: the reader board's flash laid out as reader/manifest.json says (its files only)
IMAGE = sys.argv.pop(2) if sys.argv[1:2] == ["--image"] else None
if IMAGE:
    sys.argv.pop(1)
FROM = [IMAGE] if IMAGE else [HERE + "/../" + d for d in ("reader", "firmware", "protocol")]
sys.path[:0] = [HERE + "/fakes/openmv"] + FROM

import image  # noqa: E402  (the fakes)
import machine  # noqa: E402
import sensor  # noqa: E402

import layout  # noqa: E402
from hal.readerline import frame, parse_frame  # noqa: E402
from wiring import wire  # noqa: E402

RANKS = "23456789TJQKA"
SUITS = "cdhs"


class Time:
    """time's ticks for the pocket counter (MicroPython's time.ticks_us, ticks_diff)."""

    def __init__(self):
        self.us = 1000000

    def ticks_us(self):
        return self.us

    def ticks_diff(self, a, b):
        return a - b


def lcg(seed):
    x = seed
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        yield x >> 16


def glyph(seed, w, h):
    """A glyph: 4 x 4 px cells, dark or white, from a seed (each template its own)."""
    r = lcg(seed)
    cells = [(30 if next(r) & 1 else 235) for _ in range((w // 4) * (h // 4))]
    px = bytearray(w * h)
    for y in range(h):
        for x in range(w):
            px[y * w + x] = cells[(y // 4) * (w // 4) + x // 4]
    return px


def back_pattern(w, h):
    """The back's corner: a fine diagonal lattice on grey."""
    px = bytearray(w * h)
    for y in range(h):
        for x in range(w):
            px[y * w + x] = 60 if (x + y) % 6 < 2 else 150
    return px


SIZES = {"rank": (16, 24), "suit": (16, 16)}


def templates():
    """The house deck's templates on the board's flash (image.FILES)."""
    image.FILES.clear()
    for i, r in enumerate(list(RANKS) + ["Jk"]):
        w, h = SIZES["rank"]
        image.FILES["/templates/rank_%s.pgm" % r] = image.pgm_bytes(w, h, glyph(101 + 7 * i, w, h))
    for i, s in enumerate(SUITS):
        w, h = SIZES["suit"]
        image.FILES["/templates/suit_%s.pgm" % s] = image.pgm_bytes(w, h, glyph(907 + 13 * i, w, h))
    w, h = layout.CORNER[2], layout.CORNER[3]
    image.FILES["/templates/back.pgm"] = image.pgm_bytes(w, h, back_pattern(w, h))


def paste(px, at, name):
    img = image.Image(name)
    x0, y0 = at
    for y in range(img.h):
        for x in range(img.w):
            px[(y0 + y) * layout.WIDTH + x0 + x] = img.px[y * img.w + x]


def card_frame(card=None, play=(1, -1), back=False, light=200, noise=6):
    """A frame of the window: dark where no card is, the white reference patch at `light`;
    card ('As', 'Jk'): its index corner, moved by `play` px; back: a reversed card's back."""
    W, H = layout.WIDTH, layout.HEIGHT
    px = bytearray(b"\x14" * (W * H))  # (MicroPython: no bytearray * int)
    lx, ly, lw, lh = layout.LIGHT_ROI
    for y in range(ly, ly + lh):
        for x in range(lx, lx + lw):
            px[y * W + x] = light
    cx, cy, cw, ch = layout.CORNER
    dx, dy = play
    if card is not None or back:
        for y in range(cy - 4, cy + ch + 4):
            for x in range(cx - 4, cx + cw + 4):
                px[(y + dy) * W + x + dx] = 235
    if back:
        paste(px, (layout.BACK_AT[0] + dx, layout.BACK_AT[1] + dy), "/templates/back.pgm")
    elif card is not None:
        rank, suit = (card, None) if card == "Jk" else (card[0], card[1])
        paste(px, (layout.RANK_AT[0] + dx, layout.RANK_AT[1] + dy),
              "/templates/rank_%s.pgm" % rank)
        if suit is not None:
            paste(px, (layout.SUIT_AT[0] + dx, layout.SUIT_AT[1] + dy),
                  "/templates/suit_%s.pgm" % suit)
    r = lcg(5)
    for y in range(cy - 8, cy + ch + 8):  # the sensor's noise over the corner
        for x in range(cx - 8, cx + cw + 8):
            i = y * W + x
            px[i] = max(0, min(255, px[i] + next(r) % (2 * noise + 1) - noise))
    return image.Image(W, H, px)


class Expander:
    """A PCF8574 (NXP datasheet: a byte written sets the quasi-bidirectional port, a byte
    read is the pins' levels): `port` the escrows' receivers."""

    def __init__(self):
        self.port = 0
        self.written = []
        self.dead = False

    def write(self, data):
        self.written.append(data)

    def read(self, n):
        return bytes([self.port])


class TCS34725:
    """The colour sensor (ams TCS3472 datasheet): ID 0x44 at 0x12, the four colour words at
    0x14 (clear, red, green, blue), little-endian; the command bit and auto-increment in the
    address byte."""

    def __init__(self, rgb=(0, 0, 0)):
        self.rgb = rgb
        self.regs = {}
        self.dead = False

    def write_mem(self, reg, data):
        assert reg & 0x80, "the command bit"
        self.regs[reg & 0x1F] = data[0]

    def read_mem(self, reg, n):
        assert reg & 0x80, "the command bit"
        reg &= 0x1F
        if reg == 0x12:
            return bytes([0x44])
        if reg == 0x14:
            assert n == 8 and self.regs.get(0) == 0x03, "read before it was enabled"
            r, g, b = self.rgb
            out = bytearray()
            for v in (r + g + b, r, g, b):
                out.extend(bytes([v & 0xFF, v >> 8]))
            return bytes(out)
        return bytes(n)


def board(cam=True, light=200, back=None, expander=True):
    """A reader board wired on the fakes: (the Answerer, its UART, the time, the expander,
    the colour sensor)."""
    machine.reset()
    templates()
    sensor.dead = not cam
    sensor.frame = card_frame(None, light=light)
    bus = machine.BUSES.setdefault(4, {})
    exp = Expander() if expander else None
    if exp is not None:
        bus[0x20] = exp
    tcs = TCS34725(back) if back is not None else None
    if tcs is not None:
        bus[0x29] = tcs
    t = Time()
    b = wire(sensor, image, machine, t)
    return b, machine.UARTS[3], t, exp, tcs


def ask(b, uart, body, raw=None):
    """The Pico's line in (a frame of body, or raw bytes); the answers out, as field lists
    (None for a line that is not a good frame)."""
    uart.sent = bytearray()
    uart.feed(raw if raw is not None else frame(body))
    b.poll()
    out = []
    for line in bytes(uart.sent).split(b"\n"):
        if line:
            out.append(parse_frame(line))
    return out


# ------------------------------------------------------------------------------ the cases

def case_reads_the_index_corner():
    """Each card held at the window is named with its confidence, wherever the card's play put
    it (within the slack); a joker has no suit; the seq is echoed."""
    b, uart, t, exp, tcs = board()
    for i, (card, play) in enumerate((("As", (0, 0)), ("Td", (1, -1)), ("7h", (-2, 2)),
                                      ("2c", (2, 1)), ("Qs", (-1, 0)), ("Jk", (0, 1)))):
        sensor.frame = card_frame(card, play)
        seq = "%02X" % (i + 1)
        got = ask(b, uart, "RD," + seq)
        assert len(got) == 1 and got[0][:4] == ["CD", seq, card, "0"], (card, got)
        assert int(got[0][4]) >= 90, (card, got)   # the Pico's min_confidence


def case_reversed_card_and_empty_window():
    """A card that shows its back is reported face up (its face unseen: '??'); an empty window
    is unreadable, with no confidence."""
    b, uart, t, exp, tcs = board()
    sensor.frame = card_frame(back=True)
    got = ask(b, uart, "RD,10")
    assert got[0][:4] == ["CD", "10", "??", "1"] and int(got[0][4]) >= 90, got
    sensor.frame = card_frame(None)
    assert ask(b, uart, "RD,11") == [["CD", "11", "??", "0", "0"]]


def case_a_corner_unlike_every_template():
    """A card whose index is none of the house deck's (another deck's print, a smudge): its
    best template scores under the Pico's min_confidence (90), so the card is rejected as
    unreadable; heavy noise over a good card lowers the confidence, never the name."""
    b, uart, t, exp, tcs = board()
    W = layout.WIDTH
    img = card_frame("5d")
    w, h = SIZES["rank"]
    other = glyph(4242, w, h)
    x0, y0 = layout.RANK_AT
    for y in range(h):
        for x in range(w):
            img.px[(y0 + y) * W + x0 + x] = other[y * w + x]
    sensor.frame = img
    got = ask(b, uart, "RD,30")[0]
    assert got[:2] == ["CD", "30"] and int(got[4]) < 90, got
    sensor.frame = card_frame("5d", noise=120)
    got = ask(b, uart, "RD,31")[0]
    assert int(got[4]) < 100 and (got[2] == "5d" or int(got[4]) < 90), got


def case_status():
    """The status after power-up, unasked and on request: READY; the reference patch dark or
    blinding: LIGHT; a camera that does not start: CAMERA; one that stops giving frames:
    the read unreadable and CAMERA from then on."""
    b, uart, t, exp, tcs = board()
    uart.sent = bytearray()
    b.hello()
    assert parse_frame(bytes(uart.sent).rstrip(b"\n")) == ["ST", "READY"], uart.sent
    assert ask(b, uart, "ST") == [["ST", "READY"]]
    assert machine.PINS["P6"].level == 1, "the illumination is off"
    for light in (40, 255):
        b, uart, t, exp, tcs = board(light=light)
        assert ask(b, uart, "ST") == [["ST", "LIGHT"]], light
    b, uart, t, exp, tcs = board(cam=False)
    assert ask(b, uart, "ST") == [["ST", "CAMERA"]]
    b, uart, t, exp, tcs = board()
    sensor.dead = True
    assert ask(b, uart, "RD,01") == [["CD", "01", "??", "0", "0"]]
    assert ask(b, uart, "ST") == [["ST", "CAMERA"]]


def case_clutches_and_gather_beam():
    """$MG: the other clutch released before the asked one is engaged (the dealing magazine's
    from power-up), answered with the gather tray's beam (low = cards)."""
    b, uart, t, exp, tcs = board()
    p0, p1, p2 = machine.PINS["P0"], machine.PINS["P1"], machine.PINS["P2"]
    assert (p0.level, p1.level) == (1, 0)
    p2.drive(0)
    assert ask(b, uart, "MG,B") == [["MG", "B", "1"]]
    assert (p0.level, p1.level) == (0, 1) and p0.history[-1] == 0
    p2.drive(1)
    assert ask(b, uart, "MG,A") == [["MG", "A", "0"]]
    assert (p0.level, p1.level) == (1, 0)


def case_pocket_count():
    """$PK,S zeroes the count and counts; each card the pocket sensor sees is one rising edge
    (one within 1 ms of the last counted is a glitch); $PK,E stops and gives the count;
    edges outside S..E are not counted."""
    b, uart, t, exp, tcs = board()
    p3 = machine.PINS["P3"]
    p3.drive(1)
    p3.drive(0)                      # before the homing turn: not counted
    assert ask(b, uart, "PK,S") == [["PK", "S", "0"]]
    for k in range(3):
        t.us += 6400 * 5
        p3.drive(1)
        t.us += 300
        p3.drive(0)
        t.us += 200                  # a glitch on the card's trailing edge
        p3.drive(1)
        p3.drive(0)
    assert ask(b, uart, "PK,E") == [["PK", "E", "3"]]
    t.us += 10000
    p3.drive(1)
    p3.drive(0)
    assert ask(b, uart, "PK,E") == [["PK", "E", "3"]]
    assert ask(b, uart, "PK,S") == [["PK", "S", "0"]] and \
        ask(b, uart, "PK,E") == [["PK", "E", "0"]]


def case_escrow_beams():
    """$EB,<j>: escrow j's beam on the expander's bit j (1 a card); an expander that does not
    answer: '?'."""
    b, uart, t, exp, tcs = board()
    assert exp.written and exp.written[0] == b"\xff", "the port not set to inputs"
    exp.port = 0b10
    assert ask(b, uart, "EB,0") == [["EB", "0", "0"]]
    assert ask(b, uart, "EB,1") == [["EB", "1", "1"]]
    exp.dead = True
    assert ask(b, uart, "EB,1") == [["EB", "1", "?"]]


def case_back_field():
    """With the back sensor (TCS34725) answering at power-up, each card report carries the
    back: 0 red, 1 blue, ? neither; without it, five fields."""
    for rgb, want in (((900, 200, 150), "0"), ((150, 250, 900), "1"), ((400, 400, 400), "?")):
        b, uart, t, exp, tcs = board(back=rgb)
        sensor.frame = card_frame("Kh")
        got = ask(b, uart, "RD,20")
        assert got[0][:4] == ["CD", "20", "Kh", "0"] and got[0][5:] == [want], (rgb, got)
    b, uart, t, exp, tcs = board()
    sensor.frame = card_frame("Kh")
    assert len(ask(b, uart, "RD,21")[0]) == 5


def case_malformed_lines():
    """Every line the board cannot take gets one $ER with its reason and changes nothing: a bad
    CRC, not a frame, noise, a line far too long (one answer for it), no such message, a
    field count or value wrong; the next good request is answered as ever."""
    b, uart, t, exp, tcs = board()
    p0, p1 = machine.PINS["P0"], machine.PINS["P1"]
    good = frame("MG,B")
    bad_crc = good[:-3] + (b"0" if good[-3:-2] != b"0" else b"1") + good[-2:]
    cases = [(bad_crc, "FRAME"), (b"MG,B\n", "FRAME"), (b"\x00\xff\x13$$**\n", "FRAME"),
             (b"$" + b"A" * 300 + b"\n", "LONG"), (frame("ZZ,1"), "UNKNOWN"),
             (frame("MG,C"), "FIELD"), (frame("MG"), "FIELD"), (frame("MG,A,1"), "FIELD"),
             (frame("RD,XYZ"), "FIELD"), (frame("RD,0g"), "FIELD"), (frame("PK,Q"), "FIELD"),
             (frame("EB,2"), "FIELD"), (frame("ST,1"), "FIELD")]
    for raw, reason in cases:
        got = ask(b, uart, None, raw)
        assert got == [["ER", reason]], (raw, got)
        assert (p0.level, p1.level) == (1, 0), raw
    assert b.bad == len(cases)
    sensor.frame = card_frame("9c")
    got = ask(b, uart, None, b"\n\r\n" + frame("RD,7F"))
    assert got[-1][:3] == ["CD", "7F", "9c"], got


class Loop:
    """The Pico's UART (hal.rp2mech.Reader's face: any, read, write) wired to the reader
    board's: what the Pico writes reaches the board, which answers at once."""

    def __init__(self, board, uart):
        self.board = board
        self.uart = uart

    def write(self, data):
        self.uart.feed(data)
        self.board.poll()
        return len(data)

    def any(self):
        return len(self.uart.sent)

    def read(self, n):
        out = bytes(self.uart.sent[:n])
        self.uart.sent = self.uart.sent[n:]
        return out


class Clock:
    """The Pico's clock: time goes on 250 us at each look, and in sleeps."""

    def __init__(self):
        self.us = 0

    def ticks_ms(self):
        self.us += 250
        return self.us // 1000

    def ticks_diff(self, a, b):
        return a - b

    def sleep_ms(self, ms):
        self.us += ms * 1000


def case_the_picos_side_and_the_board_agree():
    """The Pico's own code (hal/rp2mech.py's Reader, hal/decks_rp2.py's select,
    hal/loader_board.py's PocketSensor and EscrowBeams) against the board's answers: one
    declaration (hal/readerline.py), so both ends read each other."""
    from hal.rp2mech import Reader
    from hal.decks_rp2 import select
    from hal.loader_board import EscrowBeams, PocketSensor
    from shoe import cards as C
    from shoe.faults import MechanismFault

    b, uart, t, exp, tcs = board(back=(150, 250, 900))
    clock = Clock()
    r = Reader(Loop(b, uart), clock, 150, 1, 90)

    def wait():
        clock.sleep_ms(1)
    assert r.ping(wait) == "READY"
    sensor.frame = card_frame("Ad")
    code, up, conf = r.read_card(wait)
    assert code == C.parse("Ad") and not up and conf >= 90 and r.back == "1"
    machine.PINS["P2"].drive(0)
    assert select(r, "B", wait) is True and machine.PINS["P1"].level == 1
    ps = PocketSensor(r, wait)
    ps.start()
    p3 = machine.PINS["P3"]
    for _ in range(2):
        t.us += 6400
        p3.drive(1)
        p3.drive(0)
    assert ps.seen() == 2
    eb = EscrowBeams(r, wait)
    exp.port = 0b01
    assert eb.clear(1) is True and eb.clear(0) is False
    exp.dead = True
    try:
        eb.clear(0)
        raise AssertionError("no fault")
    except MechanismFault as e:
        assert e.kind == "reader_fault" and "escrow 0" in e.message, e.message
    assert r.frames_bad == 0


TESTS = [case_reads_the_index_corner, case_reversed_card_and_empty_window,
         case_a_corner_unlike_every_template, case_status,
         case_clutches_and_gather_beam, case_pocket_count, case_escrow_beams, case_back_field,
         case_malformed_lines, case_the_picos_side_and_the_board_agree]


PICO_SIDE = [case_the_picos_side_and_the_board_agree]  # the Pico's code: not on the board's flash

if __name__ == "__main__":
    names = sys.argv[1:]
    for case in TESTS:
        if IMAGE and case in PICO_SIDE:
            continue
        if not names or case.__name__ in names:
            case()
            print("passed", case.__name__)
    print("OK")
