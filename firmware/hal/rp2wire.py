# The Pico's hardware layer wired from the pin map (hal/rp2.py's Rp2Hal, at power-up): every
# pin, the PIO state machines, the UART, the PWMs and the ADC. Run once, then let go with the
# pin map's loader (Rp2Hal.__init__): a Pico holds an imported module's bytecode in its heap.
# Nothing made here may keep a reference to this module's functions: the closures the objects
# keep (the motor's voltage, a stepper's restart) are the Hal's (Rp2Hal.volts, .restarter),
# reached through the hal it wires: this module does not import hal/rp2.py (no cycle).
import machine
import rp2

try:
    from typing import TYPE_CHECKING  # type: ignore
except ImportError:  # MicroPython
    TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any  # noqa: F401  (type comments)

from hal.base import BUTTONS
from hal.rp2mech import Beam, Beams, Diverter, Mechanism, Reader, Timing
from shoe.faults import ROUTE_NAMES, ROUTE_REJECT
from hal.stepper_pio import STEP_HZ, Stepper, step_pulses
from hal.led_pio import LED_HZ, StatusLed, ws2812
from hal.pinview import PinMap
from shoe.compat import release


def wire(hal, pinmap=None):
    """Every pin, the state machine, the UART, the PWM and the ADC, from the pin map: pinmap a
    function that returns a hal.pinview.PinMap (the tests: hal.pins.load of a map file; called
    here, so that nothing but this frame and hal.pm holds the map), or None for the board
    module the image carries (board.py, generated from hardware/pinmap.json when the image was built: the
    map checked and its budget worked out on the host, descriptions dropped). The Pico never
    parses the pin map (its checker alone took 24 KB of the heap at power-up, and the parse
    scattered the hardware layer's objects over the top of the heap)."""
    if pinmap is None:
        import board  # type: ignore  (made by facedown.build: no source in the checkout)

        pm = PinMap(board.MAP, board.BUDGET)  # type: Any
        board = None
        release("board")
    else:
        pm = pinmap()
    hal.pm = pm
    t = Timing(pm)
    hal.timing = t
    Pin = machine.Pin
    hal.maint_pin = input_pin(hal, "maint_key")
    hal.maint_level = pm.level("maint_key")
    hal.debug = hal.maintenance_switch()
    # the feed stepper
    fs = pm.feed_stepper
    stepper, hal.sm = make_stepper(hal, fs, t.cruise, t.accel)
    # the reader on its UART; reads never wait (timeout=0): the mechanism polls
    r = pm.reader
    uart = machine.UART(r.uart, baudrate=r.baud, bits=r.bits, parity=None, stop=r.stop,
                        tx=Pin(pm.gpio(r.tx)), rx=Pin(pm.gpio(r.rx)), timeout=0, rxbuf=256)
    reader = Reader(uart, hal.clock, t.timeout_ms, t.retries, t.min_confidence, t.max_len)
    # the diverter servo, at reject from power-up: a card nobody read never reaches the table
    dv = pm.diverter
    # (the fourth, shuffle, is hal.carousel_rp2.ROUTE_SHUFFLE: into the carousel)
    pulses = [dv.pulse_us[name] for name in ROUTE_NAMES + ("shuffle",)]
    pwm = machine.PWM(Pin(pm.gpio(dv.signal)), freq=dv.freq_hz,
                      duty_ns=pulses[ROUTE_REJECT] * 1000)
    diverter = Diverter(pwm, pulses, t.settle_ms, hal.clock)
    diverter.set(ROUTE_REJECT)
    # beams, flags and the lid
    beams = Beams(beam(hal, "double_beam", t.beam_us), beam(hal, "throat_beam", t.beam_us),
                  beam(hal, "magazine_beam", t.beam_us), beam(hal, fs.home, t.beam_us),
                  beam(hal, "lid_open", t.lid_us))
    ms = pm.motor_supply
    adc = machine.ADC(pm.gpio(ms.sense))
    k = 3.3 * (ms.divider_top_ohm + ms.divider_bottom_ohm) / ms.divider_bottom_ohm / 65535
    args = (stepper, beams, reader, diverter, hal.clock, t, hal.tick, hal.volts(adc, k), ms.min_v)
    cs = pm.carousel_stepper
    hal.carousel = None
    if cs.fitted:  # the shuffler: its own state machine, the index flag, the gate servo
        from hal.carousel_rp2 import Carousel, CarouselTiming, ShufflingMechanism

        if "loader" in pm and pm.loader.fitted:  # revision D: the escrows, on demand
            from hal.loader_rp2 import fit as fit_loader

            hal.carousel = fit_loader(hal, beam(hal, cs.index, t.beam_us), beams.lid,
                                      make_stepper, reader)
        else:
            ct = CarouselTiming(pm)
            cst, hal.carousel_sm = make_stepper(hal, cs, ct.cruise, ct.accel)
            g = cs.gate
            gate = machine.PWM(Pin(pm.gpio(g.signal)), freq=g.freq_hz, duty_ns=ct.closed_ns)
            hal.carousel = Carousel(cst, beam(hal, cs.index, t.beam_us), beams.lid, gate,
                                    hal.clock, ct, hal.tick)
        if "gather_tray" in pm and pm.gather_tray.fitted:  # two decks (revision C), on demand
            if "loader" in pm and pm.loader.fitted:  # ... on revision D's loader
                from hal.decks_d_rp2 import fit
            else:
                from hal.decks_rp2 import fit

            hal.mech = fit(hal, args)
        elif "loader" in pm and pm.loader.fitted:
            from hal.loader_rp2 import LoaderMechanism

            hal.mech = LoaderMechanism(hal.carousel, *args)
        else:
            hal.mech = ShufflingMechanism(hal.carousel, *args)
    else:
        hal.mech = Mechanism(*args)
    hal.wdt_ms = pm.watchdog.timeout_ms
    # the front panel (panel.py): the dealer buttons and the floor key, debounced from the
    # main loop's polls; the buzzer, silent until a press is answered
    hal.buttons = [(name, beam(hal, "btn_" + name, t.button_us)) for name in BUTTONS]
    hal.key = beam(hal, "floor_key", t.key_us)
    bz = pm.buzzer
    hal.buzzer = machine.PWM(Pin(pm.gpio(bz.signal)), freq=bz.freq_hz, duty_u16=0)
    hal.beep_until = None
    # the status LED (WS2812B) on its own state machine
    sl = pm.status_led
    hal.led_sm = rp2.StateMachine(sl.pio_sm, ws2812, freq=LED_HZ,
                                  sideset_base=Pin(pm.gpio(sl.signal), Pin.OUT))
    hal.led_sm.active(1)
    hal.led = StatusLed(hal.led_sm, hal.clock)


def make_stepper(hal, sec, cruise, accel, en=None):
    """A stepper of the pin map (feed_stepper, carousel_stepper): STEP from the step_pulses
    program on its PIO state machine, DIR and EN plain outputs, the driver off at first (en:
    another output for EN, with Pin's value(): revision D's on the servo driver). Returns
    (hal.stepper_pio.Stepper, the state machine)."""
    pm = hal.pm
    Pin = machine.Pin
    if en is None:
        en = Pin(pm.gpio(sec.enable), Pin.OUT, value=1 - pm.level(sec.enable))
    dirp = Pin(pm.gpio(sec.dir), Pin.OUT, value=pm.level(sec.dir))
    step = Pin(pm.gpio(sec.step), Pin.OUT, value=0)
    sm = rp2.StateMachine(sec.pio_sm, step_pulses, freq=STEP_HZ, set_base=step)
    sm.active(1)
    stepper = Stepper(sm, dirp, en, hal.clock, cruise, accel, sec.max_steps_per_s,
                      hal.restarter(sm, step),
                      forward_level=pm.level(sec.dir), enable_level=pm.level(sec.enable))
    return stepper, sm


def input_pin(hal, name):
    s = hal.pm.signal(name)
    Pin = machine.Pin
    if s.pull == "up":
        return Pin(s.gpio, Pin.IN, Pin.PULL_UP)
    if s.pull == "down":
        return Pin(s.gpio, Pin.IN, Pin.PULL_DOWN)
    return Pin(s.gpio, Pin.IN)


def beam(hal, name, hold_us):
    return Beam(input_pin(hal, name), hal.pm.level(name), hold_us, hal.clock)
