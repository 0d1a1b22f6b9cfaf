# The reader board wired: the camera, the UART to the Pico, the parts of J16, the templates,
# from OpenMV's modules passed in (reader/main.py passes the real sensor, image and machine;
# the tests their fakes, tests/fakes/openmv/). The pins and addresses are the ones
# hardware/WIRING.md gives for J4 and J16 (the pin map's gather_tray and loader describe them).
import layout
from answer import Answerer
from hal.readerline import CAMERA, LIGHT, READY
from index import IndexReader
from parts import BackSensor, Beam, Clutches, Expander, PocketCounter

UART = 3                 # P4 TX, P5 RX (J4)
BAUD = 115200            # pinmap.json reader.baud
I2C = 4                  # P7 SCL, P8 SDA (J16)
I2C_HZ = 100000
TCS34725 = 0x29          # the back sensor (pinmap.json gather_tray.back_sensor)
PCF8574 = 0x20           # the escrows' beams (revision D)
RANKS = "23456789TJQKA"
SUITS = "cdhs"
TEMPLATES = "/templates/"  # rank_<r>.pgm, suit_<s>.pgm, rank_Jk.pgm, back.pgm


def templates(image, root=TEMPLATES):
    """The house deck's templates from the board's flash: (ranks, suits, back); a missing one
    is left out (a rank with no template is never read: the card is unreadable)."""
    def load(name):
        try:
            return image.Image(root + name + ".pgm").binary(layout.PAPER)
        except OSError:
            return None

    ranks, suits = {}, {}
    for r in list(RANKS) + ["Jk"]:
        t = load("rank_" + r)
        if t is not None:
            ranks[r] = t
    for s in SUITS:
        t = load("suit_" + s)
        if t is not None:
            suits[s] = t
    return ranks, suits, load("back")


class Camera:
    """The camera set up for the reads (grayscale QVGA); ok False when it did not start."""

    def __init__(self, sensor):
        self.sensor = sensor
        try:
            sensor.reset()
            sensor.set_pixformat(sensor.GRAYSCALE)
            sensor.set_framesize(sensor.QVGA)
            sensor.skip_frames(time=500)
            self.ok = True
        except (OSError, RuntimeError):
            self.ok = False

    def snapshot(self):
        return self.sensor.snapshot()


def wire(sensor, image, machine, time, root=TEMPLATES):
    """The Answerer of a reader board, its power-up status already worked out."""
    Pin = machine.Pin
    lamp = Pin("P6", Pin.OUT, value=1)  # the illumination's 2N7000 (WIRING.md, J4): on
    cam = Camera(sensor)
    ranks, suits, back = templates(image, root)
    index = IndexReader(cam.snapshot, ranks, suits, back)
    i2c = machine.I2C(I2C, freq=I2C_HZ)
    parts = {
        "clutches": Clutches(Pin("P0", Pin.OUT, value=0), Pin("P1", Pin.OUT, value=0)),
        "gather_beam": Beam(Pin("P2", Pin.IN), 0),   # Adafruit 2168: low = beam broken
        "pockets": PocketCounter(Pin("P3", Pin.IN), Pin.IRQ_RISING, time.ticks_us,
                                 time.ticks_diff, layout.POCKET_GAP_US),
        "escrows": Expander(i2c, PCF8574),
        "back": BackSensor(i2c, TCS34725),
    }
    state = [READY]
    if not cam.ok:
        state[0] = CAMERA
    else:
        try:
            grey = index.light()
            if not layout.LIGHT_MIN <= grey <= layout.LIGHT_MAX:
                state[0] = LIGHT
        except (OSError, RuntimeError):
            state[0] = CAMERA
    uart = machine.UART(UART, BAUD, timeout=0)
    board = Answerer(uart, index, lambda: state[0], parts)
    board.lamp = lamp
    return board
