# The reference shoe's pin map. hardware/pinmap.json is the single source of truth for every GPIO
# and for the mechanism's figures (steppers, reader UART, card path, timing windows, debounce,
# watchdog); it is deployed next to main.py and read here. This module loads it, checks it
# against the RP2040/Pico rules and the card path's geometry, and works out the timing budget.
# Pure Python: no `machine` import, no f-strings, no dataclasses; the same code runs on CPython,
# the MicroPython unix port and the Pico.
import json

from hal.motion import move_ms
from hal.pinview import Node, PinMap as _PinMap  # noqa: F401  (pins.Node, as before)

SCHEMA = 1

KINDS = ("digital_out", "digital_in", "pwm", "uart_tx", "uart_rx", "pio", "adc")
LEVELS = ("high", "low")
PULLS = ("up", "down", None)
OUTPUT_KINDS = ("digital_out", "pwm", "uart_tx", "pio")

# GPIOs a plain Pico brings out. 23 (regulator mode), 24 (VBUS sense), 25 (on-board LED) and
# 29 (VSYS/3 on ADC3) are wired on the board itself.
USABLE = tuple(range(0, 23)) + (26, 27, 28)
INTERNAL = {23: "the regulator's power-save pin", 24: "VBUS sense", 25: "the on-board LED",
            29: "VSYS/3 on ADC3"}
ADC_PINS = (26, 27, 28)  # ADC0..ADC2
# RP2040 function table (datasheet 1.4.3), limited to the pins a Pico brings out
UART_TX = {0: (0, 12, 16, 28), 1: (4, 8, 20)}
UART_RX = {0: (1, 13, 17), 1: (5, 9, 21)}
PIO_SMS = 8  # rp2.StateMachine ids: 0-3 on PIO0, 4-7 on PIO1
WDT_MAX_MS = 8388  # the RP2040 watchdog's longest period
MICROSTEPS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
BAUDS = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600)
ROUTES = ("output", "burn", "reject", "shuffle")  # the diverter's positions (shuffle: the carousel)
PI = 3.141592653589793

SIGNAL_KEYS = ("name", "gpio", "kind", "active", "pull", "description", "connector")

# Every signal the firmware relies on, with its kind.
REQUIRED = (
    ("feed_step", "pio"), ("feed_dir", "digital_out"), ("feed_en", "digital_out"),
    ("pick_home", "digital_in"), ("magazine_beam", "digital_in"), ("double_beam", "digital_in"),
    ("throat_beam", "digital_in"), ("reader_tx", "uart_tx"), ("reader_rx", "uart_rx"),
    ("diverter_pwm", "pwm"), ("lid_open", "digital_in"), ("led_data", "pio"), ("buzzer_pwm", "pwm"),
    ("btn_deal", "digital_in"), ("btn_burn", "digital_in"), ("btn_exposed", "digital_in"),
    ("btn_premature", "digital_in"), ("btn_misdeal", "digital_in"), ("floor_key", "digital_in"),
    ("maint_key", "digital_in"), ("carousel_step", "pio"), ("carousel_dir", "digital_out"),
    ("carousel_en", "digital_out"), ("carousel_index", "digital_in"), ("carousel_gate", "pwm"),
    ("vmotor_sense", "adc"),
)

SECTIONS = ("board", "feed_stepper", "carousel_stepper", "reader", "diverter", "buzzer",
            "status_led", "motor_supply", "path", "timing", "debounce", "watchdog")

# Names a signal may not take: they are sections or PinMap's own attributes.
RESERVED = SECTIONS + ("schema", "name", "revision", "signals", "spare", "data", "gpio", "level",
                       "asserted", "names", "signal", "section", "budget", "get", "keys", "items")


class PinMapError(ValueError):
    """The pin map has problems; .problems lists them, one sentence each."""

    def __init__(self, problems):
        ValueError.__init__(self, "pin map: " + "; ".join(problems))
        self.problems = problems


class PinMap(_PinMap):
    """The whole map (hal.pinview.PinMap), its timing budget worked out from it."""

    def budget(self):
        return budget(self.data)


def load(path="pinmap.json", check=True, text=True):
    """Read the pin map. check: raise PinMapError unless validate() finds nothing. text=False
    drops the descriptions once checked (saves a few KB of heap on the Pico)."""
    with open(path) as f:
        data = json.load(f)
    if check:
        problems = validate(data)
        if problems:
            raise PinMapError(problems)
    if not text:
        _strip(data)
    return PinMap(data)


def _strip(node):
    if isinstance(node, dict):
        if "description" in node:
            del node["description"]
        for v in node.values():
            _strip(v)
    elif isinstance(node, list):
        for v in node:
            _strip(v)


# --- checks ----------------------------------------------------------------------------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return (isinstance(v, int) or isinstance(v, float)) and not isinstance(v, bool)


def _f(v):
    """A number for a message: floats to one decimal, so CPython and MicroPython print alike."""
    if isinstance(v, float):
        return "%.1f" % v
    return str(v)


def _snake(name):
    if not isinstance(name, str) or not name or not ("a" <= name[0] <= "z"):
        return False
    if name[-1] == "_" or "__" in name:
        return False
    for c in name:
        if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "_"):
            return False
    return True


def _num(sec, key, lo, hi, where, p, integer=False):
    """sec[key] if it is a number in [lo, hi]; else records a problem and returns None."""
    if not isinstance(sec, dict) or key not in sec:
        p.append("%s.%s is missing" % (where, key))
        return None
    v = sec[key]
    if not (_is_int(v) if integer else _is_num(v)):
        p.append("%s.%s must be %s, not %r" % (where, key, "an integer" if integer else "a number", v))
        return None
    if v < lo or v > hi:
        p.append("%s.%s = %s is out of range [%s, %s]" % (where, key, _f(v), _f(lo), _f(hi)))
        return None
    return v


def _ref(sec, key, sigs, kind, where, p):
    """The signal named by sec[key], checked to exist with this kind; None if not."""
    name = sec.get(key) if isinstance(sec, dict) else None
    if name not in sigs:
        p.append("%s.%s names no signal (%r)" % (where, key, name))
        return None
    s = sigs[name]
    if s["kind"] != kind:
        p.append("%s.%s: signal %s is %s, must be %s" % (where, key, name, s["kind"], kind))
        return None
    return s


def _signals(data, p):
    """Checks each signal on its own and the GPIOs they share. Returns {name: signal} of the
    well-formed ones."""
    raw = data.get("signals")
    if not isinstance(raw, list) or not raw:
        p.append("signals must be a non-empty list")
        return {}
    sigs = {}
    used = {}
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            p.append("signals[%d] is not an object" % i)
            continue
        name = s.get("name")
        label = name if isinstance(name, str) else "signals[%d]" % i
        ok = True
        for k in s:
            if k not in SIGNAL_KEYS:
                p.append("%s: unknown key %r" % (label, k))
        for k in ("name", "gpio", "kind", "active", "pull", "description"):
            if k not in s:
                p.append("%s: %s is missing" % (label, k))
                ok = False
        if not ok:
            continue
        if not _snake(name):
            p.append("%s: the name must be snake_case (a-z, 0-9, single underscores)" % label)
            ok = False
        elif name in RESERVED:
            p.append("%s: the name is reserved (a section or a PinMap attribute)" % name)
            ok = False
        elif name in sigs:
            p.append("%s: the name is used twice" % name)
            ok = False
        gpio = s["gpio"]
        kind = s["kind"]
        pin_ok = False  # a bad gpio is reported here; the signal still counts for references
        if not _is_int(gpio):
            p.append("%s: gpio must be an integer, not %r" % (label, gpio))
        elif gpio in INTERNAL:
            p.append("%s: GP%d is not brought out on a Pico (%s)" % (label, gpio, INTERNAL[gpio]))
        elif gpio not in USABLE:
            p.append("%s: GP%s does not exist on a Pico (usable: GP0-GP22, GP26-GP28)" % (label, gpio))
        elif gpio in used:
            p.append("GP%d is used twice: %s and %s" % (gpio, used[gpio], label))
            pin_ok = True
        else:
            used[gpio] = label
            pin_ok = True
        if kind not in KINDS:
            p.append("%s: kind %r is not one of %s" % (label, kind, ", ".join(KINDS)))
            ok = False
        if s["active"] not in LEVELS:
            p.append("%s: active must be \"high\" or \"low\", not %r" % (label, s["active"]))
            ok = False
        if s["pull"] not in PULLS:
            p.append("%s: pull must be \"up\", \"down\" or null, not %r" % (label, s["pull"]))
            ok = False
        if not isinstance(s["description"], str) or not s["description"].strip():
            p.append("%s: the description is empty" % label)
        if "connector" in s and not isinstance(s["connector"], str):
            p.append("%s: connector must be a string" % label)
        if not ok:
            continue
        sigs[name] = s
        if not pin_ok:
            continue
        if kind == "adc" and gpio not in ADC_PINS:
            p.append("%s: GP%d has no ADC input (ADC only on GP26, GP27, GP28)" % (name, gpio))
        if kind == "uart_tx" and _uart_of(gpio, UART_TX) is None:
            p.append("%s: GP%d is not a UART TX pin (UART0 TX: GP0/12/16/28, UART1 TX: GP4/8/20)"
                     % (name, gpio))
        if kind == "uart_rx" and _uart_of(gpio, UART_RX) is None:
            p.append("%s: GP%d is not a UART RX pin (UART0 RX: GP1/13/17, UART1 RX: GP5/9/21)"
                     % (name, gpio))
        if s["pull"] is not None and (kind in OUTPUT_KINDS or kind == "adc"):
            p.append("%s: a %s pin takes no pull (pull must be null)" % (name, kind))
        if kind in ("uart_tx", "uart_rx", "pwm", "adc") and s["active"] != "high":
            p.append("%s: a %s signal is active high" % (name, kind))
    spare = data.get("spare", [])
    if not isinstance(spare, list):
        p.append("spare must be a list")
        spare = []
    for sp in spare:
        g = sp.get("gpio") if isinstance(sp, dict) else None
        if not _is_int(g) or g not in USABLE:
            p.append("spare: GP%s is not a usable Pico pin" % (g,))
        elif g in used:
            p.append("spare: GP%d is also used by %s" % (g, used[g]))
        else:
            used[g] = "spare"
    for name, kind in REQUIRED:
        if name not in sigs:
            if not any(isinstance(s, dict) and s.get("name") == name for s in raw):
                p.append("required signal %s (%s) is missing" % (name, kind))
        elif sigs[name]["kind"] != kind:
            p.append("%s must be %s, not %s" % (name, kind, sigs[name]["kind"]))
    return sigs


def _uart_of(gpio, table):
    for u in table:
        if gpio in table[u]:
            return u
    return None


def _pwm_freqs(data):
    """{signal: Hz} for the PWM signals the sections give a frequency."""
    out = {}
    for sec in (data.get("diverter"), data.get("buzzer"), (data.get("carousel_stepper") or {}).get("gate")):
        if isinstance(sec, dict) and isinstance(sec.get("signal"), str):
            out[sec["signal"]] = sec.get("freq_hz")
    return out


def _check_pwm(data, sigs, p):
    # a slice's two channels share one counter, so one frequency: 50 Hz for a servo and 4 kHz
    # for the sounder cannot share a slice, two servos can; two pins on the same channel are
    # one output
    freqs = _pwm_freqs(data)
    seen = {}
    for name in sorted(sigs):
        s = sigs[name]
        if s["kind"] != "pwm" or not _is_int(s["gpio"]):
            continue
        sl = (s["gpio"] >> 1) & 7
        ch = s["gpio"] & 1
        for other, och in seen.get(sl, ()):
            f, g = freqs.get(other), freqs.get(name)
            if och == ch:
                p.append("%s and %s are both PWM slice %d channel %s: one output"
                         % (other, name, sl, "AB"[ch]))
            elif f is None or f != g:
                p.append("%s and %s share PWM slice %d at different frequencies (%s Hz, %s Hz): "
                         "one frequency per slice" % (other, name, sl, f, g))
        seen.setdefault(sl, []).append((name, ch))


def _check_reader(data, sigs, p):
    r = data.get("reader")
    if not isinstance(r, dict):
        return
    uart = r.get("uart")
    if uart not in (0, 1):
        p.append("reader.uart must be 0 or 1, not %r" % (uart,))
        uart = None
    tx = _ref(r, "tx", sigs, "uart_tx", "reader", p)
    rx = _ref(r, "rx", sigs, "uart_rx", "reader", p)
    # a pin that is no UART pin at all is reported with the signal; here only the wrong UART
    if tx is not None and _uart_of(tx["gpio"], UART_TX) is None:
        tx = None
    if rx is not None and _uart_of(rx["gpio"], UART_RX) is None:
        rx = None
    if uart is not None:
        if tx is not None and tx["gpio"] not in UART_TX[uart]:
            p.append("reader: %s on GP%d is not a UART%d TX pin (UART%d TX: %s)" % (
                tx["name"], tx["gpio"], uart, uart, "/".join(["GP%d" % g for g in UART_TX[uart]])))
        if rx is not None and rx["gpio"] not in UART_RX[uart]:
            p.append("reader: %s on GP%d is not a UART%d RX pin (UART%d RX: %s)" % (
                rx["name"], rx["gpio"], uart, uart, "/".join(["GP%d" % g for g in UART_RX[uart]])))
    if r.get("baud") not in BAUDS:
        p.append("reader.baud %r is not a standard rate" % (r.get("baud"),))
    if r.get("bits") not in (7, 8):
        p.append("reader.bits must be 7 or 8")
    if r.get("parity") not in (None, "even", "odd"):
        p.append("reader.parity must be null, \"even\" or \"odd\"")
    if r.get("stop") not in (1, 2):
        p.append("reader.stop must be 1 or 2")
    read = _num(r, "read_ms", 1, 1000, "reader", p, True)
    tmo = _num(r, "timeout_ms", 1, 2000, "reader", p, True)
    if read is not None and tmo is not None and tmo <= read:
        p.append("reader.timeout_ms (%d) must exceed reader.read_ms (%d)" % (tmo, read))
    _num(r, "retries", 0, 5, "reader", p, True)
    _num(r, "min_confidence", 1, 100, "reader", p, True)
    fr = r.get("frame")
    if not isinstance(fr, dict):
        p.append("reader.frame is missing")
    else:
        for k in ("request", "report", "checksum"):
            if not isinstance(fr.get(k), str):
                p.append("reader.frame.%s is missing" % k)
        _num(fr, "max_len", 8, 255, "reader.frame", p, True)


def _check_stepper(sec, where, sigs, p):
    if not isinstance(sec, dict):
        return
    _ref(sec, "step", sigs, "pio", where, p)
    _ref(sec, "dir", sigs, "digital_out", where, p)
    _ref(sec, "enable", sigs, "digital_out", where, p)
    full = _num(sec, "full_steps_per_rev", 48, 400, where, p, True)
    micro = sec.get("microsteps")
    if micro not in MICROSTEPS:
        p.append("%s.microsteps must be a power of two 1-256, not %r" % (where, micro))
    mx = _num(sec, "max_steps_per_s", 100, 100000, where, p, True)
    _num(sec, "run_current_ma", 100, 2000, where, p, True)  # the TMC2209 module: 2 A RMS
    _num(sec, "pio_sm", 0, PIO_SMS - 1, where, p, True)
    return full, micro, mx


def _check_carousel(cs, sigs, micro, mx, sps, p):
    w = "carousel_stepper"
    cruise = _num(cs, "cruise_steps_per_s", 100, 100000, w, p, True)
    if cruise is not None and mx is not None and cruise > mx:
        p.append("%s.cruise_steps_per_s (%d) exceeds max_steps_per_s (%d)" % (w, cruise, mx))
    _num(cs, "accel_steps_per_s2", 1000, 1000000, w, p, True)
    home = _num(cs, "home_steps_per_s", 100, 100000, w, p, True)
    if home is not None and cruise is not None and home > cruise:
        p.append("%s.home_steps_per_s (%d) exceeds the cruise (%d)" % (w, home, cruise))
    tab = _num(cs, "tab_steps", 2, 100000, w, p, True)
    index = _num(cs, "index_tab_steps", 2, 100000, w, p, True)
    tol = _num(cs, "index_tolerance_steps", 1, 100000, w, p, True)
    if None not in (tab, index, tol):
        if index - tab <= 2 * tol:
            p.append("%s: index_tab_steps (%d) must exceed tab_steps (%d) by more than twice "
                     "the tolerance (%d): the index is told by its width" % (w, index, tab, tol))
        if sps is not None and index // 2 + tol >= sps // 2:
            p.append("%s: half the index tab plus the tolerance (%d) must stay under half a slot "
                     "(%d steps): every edge belongs to its nearest pocket" % (w, index // 2 + tol,
                                                                              sps // 2))
    if tol is not None and micro in MICROSTEPS and tol >= 4 * micro:
        # a stepper that stalls slips by whole electrical cycles, 4 full steps at a time
        p.append("%s.index_tolerance_steps (%d) must be under one slip of a stalled motor "
                 "(4 full steps = %d steps)" % (w, tol, 4 * micro))
    _num(cs, "settle_ms", 0, 1000, w, p, True)
    _num(cs, "drop_ms", 20, 1000, w, p, True)
    _num(cs, "index_every_cards", 1, 200, w, p, True)
    g = cs.get("gate")
    if not isinstance(g, dict):
        p.append("%s.gate is missing" % w)
        return
    _ref(g, "signal", sigs, "pwm", w + ".gate", p)
    _num(g, "freq_hz", 40, 400, w + ".gate", p, True)
    shut = _num(g, "closed_us", 400, 2600, w + ".gate", p, True)
    opened = _num(g, "open_us", 400, 2600, w + ".gate", p, True)
    if shut is not None and opened is not None and abs(shut - opened) < 300:
        p.append("%s.gate: closed_us and open_us must be 300 us apart or more" % w)
    _num(g, "settle_ms", 20, 1000, w + ".gate", p, True)


def _check_loader(data, sigs, p):
    """The optional `loader` (revision D's pipelined loader: SHUFFLER.md): its servo driver on
    the Pico's I2C, on GPIOs the rp2 port accepts for that bus (ports/rp2/machine_i2c.c: SDA
    on an even GPIO, SCL on an odd one, bit 1 of the GPIO the bus's number)."""
    ld = data.get("loader")
    if ld is None:
        return
    if not isinstance(ld, dict) or ld.get("fitted") not in (True, False):
        p.append("loader.fitted must be true or false")
        return
    cs = data.get("carousel_stepper")
    if ld["fitted"] and not (isinstance(cs, dict) and cs.get("fitted") is True):
        p.append("loader.fitted needs carousel_stepper.fitted: revision D loads the carousel")
    i2c = ld.get("i2c")
    if not isinstance(i2c, dict) or i2c.get("id") not in (0, 1):
        p.append("loader.i2c.id must be 0 or 1 (the RP2040's I2C0 or I2C1)")
        return
    for end, odd in (("sda", 0), ("scl", 1)):
        s = sigs.get(i2c.get(end))
        if s is None:
            p.append("loader.i2c.%s must name a signal (the GPIO revision D takes for I2C)" % end)
        elif s["gpio"] & 1 != odd or (s["gpio"] & 2) >> 1 != i2c["id"]:
            p.append("loader.i2c.%s: GP%d is not an %s pin of I2C%d (the RP2040's function "
                     "table)" % (end, s["gpio"], end.upper(), i2c["id"]))
    sd = ld.get("servo_driver")
    if not isinstance(sd, dict) or not 0 < sd.get("address", 0) < 128:
        p.append("loader.servo_driver.address must be a 7-bit I2C address")
    _num(sd if isinstance(sd, dict) else {}, "freq_hz", 24, 1526, "loader.servo_driver", p, True)
    ch = ld.get("channels")
    vals = list(ch.values()) if isinstance(ch, dict) else []
    if not vals or len(set(vals)) != len(vals) or [v for v in vals if v not in range(16)]:
        p.append("loader.channels must be distinct PCA9685 channels, 0-15")
    widths = list(ld.get("flipper_us") or []) + list((ld.get("latch_us") or {}).values())
    if len(widths) != 4 or [w for w in widths if not 500 <= w <= 2500]:
        p.append("loader.flipper_us (two stations) and latch_us (hold, release) must be servo "
                 "pulses of 500-2500 us")


def _check_sections(data, sigs, p):
    for name in SECTIONS:
        if not isinstance(data.get(name), dict):
            p.append("section %s is missing" % name)
    gt = data.get("gather_tray")  # optional: revision C's two decks (SHUFFLER.md)
    if gt is not None and (not isinstance(gt, dict) or gt.get("fitted") not in (True, False)):
        p.append("gather_tray.fitted must be true or false")
    _check_loader(data, sigs, p)
    fs = data.get("feed_stepper")
    if isinstance(fs, dict):
        full, micro, mx = _check_stepper(fs, "feed_stepper", sigs, p)
        cruise = _num(fs, "cruise_steps_per_s", 100, 100000, "feed_stepper", p, True)
        if cruise is not None and mx is not None and cruise > mx:
            p.append("feed_stepper.cruise_steps_per_s (%d) exceeds max_steps_per_s (%d)" % (cruise, mx))
        _num(fs, "accel_steps_per_s2", 1000, 1000000, "feed_stepper", p, True)
        _num(fs, "shuffle_accel_steps_per_s2", 1000, 1000000, "feed_stepper", p, True)
        fast = _num(fs, "shuffle_steps_per_s", 100, 100000, "feed_stepper", p, True)
        if fast is not None and mx is not None and fast > mx:
            p.append("feed_stepper.shuffle_steps_per_s (%d) exceeds max_steps_per_s (%d)"
                     % (fast, mx))
        _num(fs, "roller_diameter_mm", 5, 100, "feed_stepper", p)
        _num(fs, "pick_roller_diameter_mm", 5, 100, "feed_stepper", p)
        red = _num(fs, "pick_reduction", 1, 16, "feed_stepper", p, True)
        spc = _num(fs, "steps_per_card", 100, 1000000, "feed_stepper", p, True)
        if None not in (full, red, spc) and micro in MICROSTEPS and spc != full * micro * red:
            p.append("feed_stepper.steps_per_card (%d) must be one pick-roller turn: "
                     "full_steps_per_rev x microsteps x pick_reduction = %d" % (spc, full * micro * red))
        _ref(fs, "home", sigs, "digital_in", "feed_stepper", p)
    cs = data.get("carousel_stepper")
    if isinstance(cs, dict):
        full, micro, mx = _check_stepper(cs, "carousel_stepper", sigs, p)
        _ref(cs, "index", sigs, "digital_in", "carousel_stepper", p)
        red = _num(cs, "reduction", 1, 16, "carousel_stepper", p, True)
        slots = _num(cs, "slots", 2, 200, "carousel_stepper", p, True)
        sps = _num(cs, "steps_per_slot", 1, 100000, "carousel_stepper", p, True)
        if None not in (full, red, slots, sps) and micro in MICROSTEPS and sps * slots != full * micro * red:
            p.append("carousel_stepper: steps_per_slot x slots (%d) must be one carousel turn (%d)"
                     % (sps * slots, full * micro * red))
        if not isinstance(cs.get("fitted"), bool):
            p.append("carousel_stepper.fitted must be true or false")
        _check_carousel(cs, sigs, micro, mx, sps, p)
    # the PIO state machines: one per program, 0-7
    sms = {}
    for name in ("feed_stepper", "carousel_stepper", "status_led"):
        sec = data.get(name)
        if isinstance(sec, dict) and _is_int(sec.get("pio_sm")):
            sm = sec["pio_sm"]
            if sm in sms:
                p.append("PIO state machine %d is used twice: %s and %s" % (sm, sms[sm], name))
            sms[sm] = name
    driven = []
    for name in ("feed_stepper", "carousel_stepper"):
        sec = data.get(name)
        if isinstance(sec, dict):
            driven.append(sec.get("step"))
    led = data.get("status_led")
    if isinstance(led, dict):
        _ref(led, "signal", sigs, "pio", "status_led", p)
        _num(led, "count", 1, 64, "status_led", p, True)
        _num(led, "pio_sm", 0, PIO_SMS - 1, "status_led", p, True)
        driven.append(led.get("signal"))
    for name in sorted(sigs):
        if sigs[name]["kind"] == "pio" and name not in driven:
            p.append("%s is a pio signal but no section gives it a state machine" % name)
    dv = data.get("diverter")
    if isinstance(dv, dict):
        _ref(dv, "signal", sigs, "pwm", "diverter", p)
        _num(dv, "freq_hz", 40, 400, "diverter", p, True)
        lo = _num(dv, "min_pulse_us", 400, 2600, "diverter", p, True)
        hi = _num(dv, "max_pulse_us", 400, 2600, "diverter", p, True)
        pulses = dv.get("pulse_us")
        if not isinstance(pulses, dict) or sorted(pulses) != sorted(ROUTES):
            p.append("diverter.pulse_us must give exactly the routes %s" % ", ".join(ROUTES))
        else:
            vals = []
            for route in ROUTES:
                v = pulses[route]
                if not _is_int(v) or lo is None or hi is None or not lo <= v <= hi:
                    p.append("diverter.pulse_us.%s = %r is outside [min_pulse_us, max_pulse_us]" % (route, v))
                elif v in vals:
                    p.append("diverter.pulse_us.%s: two routes with one position" % route)
                vals.append(v)
        if dv.get("power_on_route") not in ROUTES:
            p.append("diverter.power_on_route must be one of %s" % ", ".join(ROUTES))
    bz = data.get("buzzer")
    if isinstance(bz, dict):
        _ref(bz, "signal", sigs, "pwm", "buzzer", p)
        _num(bz, "freq_hz", 100, 10000, "buzzer", p, True)
    ms = data.get("motor_supply")
    if isinstance(ms, dict):
        _ref(ms, "sense", sigs, "adc", "motor_supply", p)
        top = _num(ms, "divider_top_ohm", 1000, 10000000, "motor_supply", p)
        bot = _num(ms, "divider_bottom_ohm", 100, 10000000, "motor_supply", p)
        vmin = _num(ms, "min_v", 1, 60, "motor_supply", p)
        vnom = _num(ms, "nominal_v", 1, 60, "motor_supply", p)
        vmax = _num(ms, "max_v", 1, 60, "motor_supply", p)
        if None not in (vmin, vnom, vmax) and not vmin < vnom < vmax:
            p.append("motor_supply: min_v < nominal_v < max_v does not hold")
        if None not in (top, bot, vmax) and vmax * bot / (top + bot) >= 3.3:
            p.append("motor_supply: max_v through the divider reaches %.2f V, over the ADC's 3.3 V"
                     % (vmax * bot / (top + bot)))
    _check_reader(data, sigs, p)


def _check_timing(data, p):
    t = data.get("timing")
    if not isinstance(t, dict):
        return
    w = "timing"
    names = ("feed_ms", "double_reach_ms", "throat_reach_ms", "throat_clear_ms", "double_feed_ms",
             "card_min_ms", "diverter_settle_ms")
    vals = {}
    for k in names:
        vals[k] = _num(t, k, 1, 10000, w, p, True)
    _num(t, "jam_retries", 0, 5, w, p, True)
    rev = _num(t, "jam_reverse_steps", 1, 100000, w, p, True)
    if vals["diverter_settle_ms"] is not None and not 20 <= vals["diverter_settle_ms"] <= 1000:
        p.append("timing.diverter_settle_ms = %d: a hobby servo needs 20-1000 ms"
                 % vals["diverter_settle_ms"])
    d = data.get("debounce")
    if isinstance(d, dict):
        _num(d, "button_ms", 5, 100, "debounce", p, True)
        _num(d, "key_ms", 5, 200, "debounce", p, True)
        _num(d, "lid_ms", 1, 100, "debounce", p, True)
        _num(d, "beam_us", 0, 2000, "debounce", p, True)
    wd = data.get("watchdog")
    if isinstance(wd, dict):
        # a littlefs block erase stalls the CPU for tens to hundreds of ms: under 500 ms the
        # watchdog would bite during an ordinary flash write
        _num(wd, "timeout_ms", 500, WDT_MAX_MS, "watchdog", p, True)
    before = len(p)
    try:
        b = budget(data)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError):
        if len(p) == before:
            p.append("timing: the card path or the feed stepper is incomplete, no budget")
        return
    _check_path(data, b, p)
    fs = data["feed_stepper"]
    if rev is not None and rev > fs["steps_per_card"] // 4:
        p.append("timing.jam_reverse_steps (%d) is more than a quarter of a card cycle (%d)"
                 % (rev, fs["steps_per_card"] // 4))
    single = b["single_card_ms"]
    z = vals["double_feed_ms"]
    if z is not None and not 1.05 * single <= z <= 1.5 * single:
        p.append("timing.double_feed_ms = %d: one card blocks the beam %.0f ms at cruise; the "
                 "threshold must lie in [%.0f, %.0f] ms (5%% speed margin; at most half a card of "
                 "overlap missed)" % (z, single, 1.05 * single, 1.5 * single))
    m = vals["card_min_ms"]
    if m is not None and not 0.5 * single <= m <= 0.95 * single:
        p.append("timing.card_min_ms = %d must lie in [%.0f, %.0f] ms (50-95%% of one card's %.0f ms)"
                 % (m, 0.5 * single, 0.95 * single, single))
    for k, nominal in (("double_reach_ms", b["double_reach_ms"]), ("throat_reach_ms", b["throat_reach_ms"]),
                       ("throat_clear_ms", b["throat_clear_ms"])):
        v = vals[k]
        if v is not None and not 1.2 * nominal <= v <= 4 * nominal:
            p.append("timing.%s = %d: the nominal time is %.0f ms; the window must be 1.2-4 times "
                     "that (%.0f-%.0f ms)" % (k, v, nominal, 1.2 * nominal, 4 * nominal))
    f = vals["feed_ms"]
    if f is not None and not 0.95 * b["motion_ms"] <= f <= 2 * b["motion_ms"]:
        p.append("timing.feed_ms = %d: one card cycle's motion takes %.0f ms at these stepper "
                 "figures" % (f, b["motion_ms"]))


def _check_path(data, b, p):
    path = data["path"]
    L = path["card_length_mm"]
    take = path["takeaway_nip_mm"]
    dbl = path["double_beam_mm"]
    thr = path["throat_beam_mm"]
    ex = path["exit_nip_mm"]
    hold = path["hold_mm"]
    div = path["diverter_mm"]
    if not 0 < take < dbl < thr < ex < hold < div:
        p.append("path: the order gate < takeaway_nip < double_beam < throat_beam < exit_nip < "
                 "hold < diverter does not hold")
        return
    if take >= L:
        p.append("path: the take-away nip (%s mm) must be less than a card length from the gate" % _f(take))
    if ex - take >= L:
        p.append("path: the exit nip is %s mm after the take-away nip, a card (%s mm) would fall "
                 "between them" % (_f(ex - take), _f(L)))
    if thr - dbl >= L:
        p.append("path: the throat beam must be less than a card length after the double-feed "
                 "beam (%s mm >= %s mm): a card must still block the first when it reaches the "
                 "second" % (_f(thr - dbl), _f(L)))
    if hold - L <= dbl:
        p.append("path: at the hold position the card's tail (%s mm) has not cleared the "
                 "double-feed beam (%s mm)" % (_f(hold - L), _f(dbl)))
    if not hold - L < ex:
        p.append("path: at the hold position the card is no longer in the exit nip")
    win = path.get("reader_window_mm")
    if (not isinstance(win, list) or len(win) != 2 or not _is_num(win[0]) or not _is_num(win[1])
            or not hold - L <= win[0] < win[1] <= hold):
        p.append("path.reader_window_mm must be [from, to] inside the held card (%s-%s mm)"
                 % (_f(hold - L), _f(hold)))
    if b["ramp_steps"] > b["double_steps"]:
        p.append("path: the card reaches the double-feed beam before the end of the acceleration "
                 "ramp; it must pass the beam at cruise speed")
    if b["double_tail_steps"] > b["hold_steps"] - b["ramp_steps"]:
        p.append("path: the card's tail clears the double-feed beam during the deceleration to "
                 "the hold position; it must pass the beam at cruise speed")
    if b["tail_end_mm"] < ex + 5:
        p.append("path: at the end of a card cycle the card's tail is at %.1f mm, not 5 mm past "
                 "the exit nip (%s mm): steps_per_card is too short" % (b["tail_end_mm"], _f(ex)))
    if b["pick_ratio"] >= 1:
        p.append("feed_stepper: the pick roller's surface must run slower than the take-away "
                 "rollers (ratio %.2f)" % b["pick_ratio"])


def validate(data):
    """Every problem with the pin map, one sentence each; [] when it is sound."""
    if not isinstance(data, dict):
        return ["the pin map is not a JSON object"]
    p = []
    if data.get("schema") != SCHEMA:
        p.append("schema must be %d, not %r" % (SCHEMA, data.get("schema")))
    sigs = _signals(data, p)
    _check_pwm(data, sigs, p)
    _check_sections(data, sigs, p)
    _check_timing(data, p)
    return p


# --- the timing budget -----------------------------------------------------------------------

def _reach_s(steps, v, a):
    """Seconds from rest until `steps` steps are made, accelerating at a up to cruise v."""
    ramp = v * v / (2.0 * a)
    if steps <= ramp:
        return (2.0 * steps / a) ** 0.5
    return v / a + (steps - ramp) / v


def budget(data):
    """The nominal figures of one card cycle worked out from the feed stepper and the card path
    (card lead positions in mm from the separation gate; steps from the start of the cycle):
    the card is picked at the pick roller's surface speed up to the take-away nip, then moves at
    the take-away rollers' speed; it stops at the hold position to be read, then is ejected."""
    fs = data["feed_stepper"]
    path = data["path"]
    full = fs["full_steps_per_rev"]
    micro = fs["microsteps"]
    v = float(fs["cruise_steps_per_s"])
    a = float(fs["accel_steps_per_s2"])
    spm = full * micro / (PI * fs["roller_diameter_mm"])  # steps per mm of card travel
    ratio = fs["pick_roller_diameter_mm"] / float(fs["pick_reduction"] * fs["roller_diameter_mm"])
    L = path["card_length_mm"]
    take = path["takeaway_nip_mm"]

    def steps_at(x):  # steps from the cycle start until the card's lead is at x mm
        if x <= take:
            return x / ratio * spm
        return (take / ratio + (x - take)) * spm

    def lead_at(s):
        x = s / spm * ratio
        if x <= take:
            return x
        return take + (s - take / ratio * spm) / spm

    spc = fs["steps_per_card"]
    hold = steps_at(path["hold_mm"])
    ramp = v * v / (2 * a)
    lead_end = lead_at(spc)
    tail_throat = steps_at(path["throat_beam_mm"] + L)
    reader = data.get("reader", {})
    read_ms = reader.get("read_ms", 0)
    settle = data.get("timing", {}).get("diverter_settle_ms", 0)
    hold_ms = move_ms(hold, v, a)
    eject_ms = move_ms(spc - hold, v, a)
    mm_s = v / spm
    single = 1000.0 * L / mm_s
    z = data.get("timing", {}).get("double_feed_ms")
    if not _is_num(z):
        z = None
    if not _is_num(read_ms):
        read_ms = 0
    if not _is_num(settle):
        settle = 0
    return {
        "steps_per_mm": spm,
        "mm_per_s": mm_s,
        "pick_ratio": ratio,
        "ramp_steps": ramp,
        "ramp_ms": 1000 * v / a,
        "double_steps": steps_at(path["double_beam_mm"]),
        "double_tail_steps": steps_at(path["double_beam_mm"] + L),
        "throat_steps": steps_at(path["throat_beam_mm"]),
        "hold_steps": hold,
        "hold_after_throat_steps": hold - steps_at(path["throat_beam_mm"]),
        "eject_steps": spc - hold,
        "lead_end_mm": lead_end,
        "tail_end_mm": lead_end - L,
        "double_reach_ms": 1000 * _reach_s(steps_at(path["double_beam_mm"]), v, a),
        "throat_reach_ms": 1000 * _reach_s(steps_at(path["throat_beam_mm"]), v, a),
        "throat_clear_ms": 1000 * _reach_s(tail_throat - hold, v, a),
        "single_card_ms": single,
        "overlap_detected_mm": (z * mm_s / 1000.0 - L) if z else None,
        "hold_ms": hold_ms,
        "eject_ms": eject_ms,
        "motion_ms": hold_ms + eject_ms,
        "read_ms": read_ms,
        "cycle_ms": hold_ms + eject_ms + read_ms,
        "cycle_route_change_ms": hold_ms + eject_ms + max(read_ms, settle),
        "cards_per_min": 60000.0 / (hold_ms + eject_ms + read_ms),
    }


def carousel_budget(data):
    """The carousel's motion figures (ms) from carousel_stepper: a move of one slot, of the mean
    shortest distance between two random slots (a quarter turn), of half a turn; a whole turn
    at cruise; the unloading turn for `cards` pockets (the gate opening and closing, a step to
    each pocket and drop_ms over the gate)."""
    cs = data["carousel_stepper"]
    sps = cs["steps_per_slot"]
    n = cs["slots"]
    v = float(cs["cruise_steps_per_s"])
    a = float(cs["accel_steps_per_s2"])
    rev = sps * n
    cards = 52 if n >= 52 else n
    gate = cs["gate"]["settle_ms"]
    step = n * sps // cards  # the mean gap between pockets, unloading a deck
    return {
        "rev_steps": rev,
        "slot_ms": move_ms(sps, v, a),
        "mean_move_slots": n / 4.0,
        "mean_move_ms": move_ms(sps * n / 4.0, v, a),
        "half_turn_ms": move_ms(rev / 2.0, v, a),
        "rev_ms": 1000.0 * rev / v,
        "unload_cards": cards,
        "unload_ms": 2 * gate + cards * (move_ms(step, v, a) + cs["drop_ms"]),
    }

