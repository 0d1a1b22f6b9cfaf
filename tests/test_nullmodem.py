"""The virtual null-modem: transparent raw relay, fault injection with honest counters, survival
of an end closing and reopening, baud pacing, and throughput."""

import os
import random
import threading
import time

import pytest
import serial
from hypothesis import given, settings
from hypothesis import strategies as st

from facedown.nullmodem import COUNTERS, NullModem, _Direction

ALL_BYTES = bytes(range(256))


@pytest.fixture
def modem():
    nm = NullModem()
    yield nm
    nm.close()


def port(path, timeout=1.0):
    return serial.Serial(path, baudrate=115200, timeout=timeout)


def read_exactly(ser, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while len(buf) < n and time.monotonic() < deadline:
        buf += ser.read(n - len(buf))
    return bytes(buf)


def transfer(nm, src, dst, data, quiet=0.3, timeout=20.0):
    """Write data on src while reading dst; return everything that arrived once the cable is idle."""
    done = threading.Event()

    def send():
        for i in range(0, len(data), 4096):
            src.write(data[i:i + 4096])
        src.flush()
        done.set()

    t = threading.Thread(target=send, daemon=True)
    t.start()
    got = bytearray()
    deadline = time.monotonic() + timeout
    dst.timeout = 0.05
    last = time.monotonic()
    while time.monotonic() < deadline:
        chunk = dst.read(65536)
        if chunk:
            got += chunk
            last = time.monotonic()
        elif done.is_set() and nm.pending() == 0 and time.monotonic() - last > quiet:
            break
    t.join(5)
    return bytes(got)


def test_every_byte_value_passes_unchanged_both_ways(modem):
    with port(modem.a_path) as a, port(modem.b_path) as b:
        data = ALL_BYTES * 8 + b"\x03\x0a\x0d\x7e\x00\xff\x11\x13\x1a\x04\x1c\x7f"
        a.write(data)
        assert read_exactly(b, len(data)) == data
        b.write(data[::-1])
        assert read_exactly(a, len(data)) == data[::-1]
        # raw: nothing echoed back to the writer, nothing extra on the reader
        time.sleep(0.05)
        assert a.in_waiting == 0 and b.in_waiting == 0
    s = modem.stats()
    assert s["ab"]["received"] == s["ab"]["relayed"] == len(data)
    assert s["ba"]["received"] == s["ba"]["relayed"] == len(data)
    assert set(s["ab"]) == set(COUNTERS) | {"queued"}


def test_raw_even_with_plain_os_open(modem):
    """An end that opens the path itself (as the MicroPython unix port does) sets no tty mode."""
    fd = os.open(modem.a_path, os.O_RDWR | os.O_NOCTTY)
    try:
        with port(modem.b_path) as b:
            os.write(fd, b"line\n\x03\r")
            assert read_exactly(b, 7) == b"line\n\x03\r"
            b.write(b"\r\n\x03\x04")
            got = b""
            deadline = time.monotonic() + 2
            while len(got) < 4 and time.monotonic() < deadline:
                got += os.read(fd, 4 - len(got))
            assert got == b"\r\n\x03\x04"
    finally:
        os.close(fd)


def test_drop_counts_and_keeps_order():
    data = random.Random(1).randbytes(100_000)
    with NullModem(drop=0.01, seed=7) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        got = transfer(nm, a, b, data)
        s = nm.stats()["ab"]
    assert len(data) - len(got) == s["dropped"]
    assert 700 <= s["dropped"] <= 1300  # 1 % of 100 000, sigma ~31
    assert s["relayed"] == len(got) and s["corrupted"] == s["duplicated"] == 0
    it = iter(data)
    assert all(byte in it for byte in got), "received bytes are not an in-order subsequence of the sent ones"


def test_corrupt_flips_exactly_one_bit_per_counted_byte():
    data = random.Random(2).randbytes(100_000)
    with NullModem(corrupt=0.01, seed=8) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        got = transfer(nm, a, b, data)
        s = nm.stats()["ab"]
    assert len(got) == len(data)
    diffs = [x ^ y for x, y in zip(data, got) if x != y]
    assert len(diffs) == s["corrupted"]
    assert 700 <= s["corrupted"] <= 1300
    assert all(bin(d).count("1") == 1 for d in diffs)


def test_duplicate_adds_repeats_only():
    data = random.Random(3).randbytes(100_000)
    with NullModem(duplicate=0.01, seed=9) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        got = transfer(nm, a, b, data)
        s = nm.stats()["ab"]
    assert len(got) - len(data) == s["duplicated"]
    assert 700 <= s["duplicated"] <= 1300
    i = extra = 0
    for j, byte in enumerate(got):
        if i < len(data) and byte == data[i]:
            i += 1
        else:
            assert j > 0 and byte == got[j - 1], "byte %d is neither the next one sent nor a repeat" % j
            extra += 1
    assert i == len(data) and extra == s["duplicated"]


def test_delay_keeps_order_and_holds_bytes():
    data = random.Random(4).randbytes(20_000)
    with NullModem(delay=0.01, delay_ms=5, seed=10) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        got = transfer(nm, a, b, data)
        s = nm.stats()["ab"]
        assert got == data
        assert 120 <= s["delayed"] <= 280
        # every byte held back 1..40 ms: even one byte takes at least 1 ms to cross
        nm.configure(delay=1.0, delay_ms=40)
        t = time.monotonic()
        b.timeout = 2
        a.write(b"Z")
        assert b.read(1) == b"Z"
        assert time.monotonic() - t >= 0.0009
        burst = bytes(range(50))
        a.write(burst)
        assert read_exactly(b, 50) == burst  # nothing overtakes a held byte


def test_all_faults_both_ways_balance_and_reproduce():
    data = random.Random(5).randbytes(50_000)
    outs = []
    for _ in range(2):
        with NullModem(drop=0.01, corrupt=0.01, duplicate=0.01, delay=0.002, delay_ms=3, seed=42) as nm, \
                port(nm.a_path) as a, port(nm.b_path) as b:
            ab = transfer(nm, a, b, data)
            ba = transfer(nm, b, a, data)
            s = nm.stats()
        for d, got in (("ab", ab), ("ba", ba)):
            c = s[d]
            assert c["received"] == len(data)
            assert c["relayed"] == len(got) == len(data) - c["dropped"] + c["duplicated"]
            for k in ("dropped", "corrupted", "duplicated"):
                assert 300 <= c[k] <= 700, (d, k, c)
        assert ab != ba  # independent random streams per direction
        outs.append((ab, ba))
    assert outs[0] == outs[1]  # same seed, same bytes in: same bytes out


def test_options_change_at_run_time(modem):
    with port(modem.a_path) as a, port(modem.b_path) as b:
        modem.drop = 1.0
        a.write(b"lost")
        time.sleep(0.1)
        assert b.in_waiting == 0 and modem.stats()["ab"]["dropped"] == 4
        modem.drop = 0.0
        a.write(b"kept")
        assert read_exactly(b, 4) == b"kept"
    with pytest.raises(ValueError):
        modem.corrupt = 1.5
    with pytest.raises(TypeError):
        modem.configure(noise=0.1)
    with pytest.raises(ValueError):
        modem.baud = -1
    modem.reset_stats()
    assert modem.stats()["ab"]["dropped"] == 0


@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=0, max_size=3000), cuts=st.lists(st.integers(0, 3000), max_size=12),
       p=st.tuples(*[st.sampled_from([0.0, 0.05, 0.3, 1.0])] * 4), seed=st.integers(0, 2 ** 32))
def test_fault_model_independent_of_chunking(data, cuts, p, seed):
    """The faults hit the same bytes however the stream is split into reads (reproducible runs)."""
    def run(chunks):
        d = _Direction("ab", -1, -1, random.Random(seed))
        d.set_probs(dict(zip(("drop", "corrupt", "duplicate", "delay"), p)))
        for ch in chunks:
            d.take(ch, 0.0, 1 << 30, 5)
        return b"".join(bytes(buf) for _, buf in d.queue), d.counters

    whole, c = run([data])
    bounds = sorted({0, len(data), *[x for x in cuts if x <= len(data)]})
    split, c2 = run([data[i:j] for i, j in zip(bounds, bounds[1:])])
    assert split == whole and c == c2
    assert len(whole) == len(data) - c["dropped"] + c["duplicated"]


def test_end_closed_and_reopened_keeps_working(modem):
    with port(modem.a_path) as a:
        for round_ in range(3):
            with port(modem.b_path) as b:  # host connects, talks, disconnects
                msg = b"round %d \x03\n" % round_
                a.write(msg)
                assert read_exactly(b, len(msg)) == msg
                b.write(msg[::-1])
                assert read_exactly(a, len(msg)) == msg[::-1]
            a.write(b"nobody listening")  # into a closed end: must not hang anything
            time.sleep(0.02)
    # the device end goes away and comes back too (plain open, like the unix port)
    with port(modem.b_path) as b:
        for _ in range(3):
            fd = os.open(modem.a_path, os.O_RDWR | os.O_NOCTTY)
            os.write(fd, b"hello")
            assert read_exactly(b, 5) == b"hello"
            os.close(fd)
    assert modem.alive() and modem.error is None


def test_slow_reader_gets_flow_control_not_loss():
    data = random.Random(6).randbytes(1 << 20)
    with NullModem(max_queue=4096, stall_timeout=2.0) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        got = bytearray()

        def slow_reader():
            b.timeout = 0.5
            while len(got) < len(data):
                chunk = b.read(8192)
                if not chunk:
                    break
                got.extend(chunk)
                time.sleep(0.001)

        t = threading.Thread(target=slow_reader, daemon=True)
        t.start()
        a.write(data)  # blocks while the reader lags: that is the point
        t.join(20)
        assert bytes(got) == data
        assert nm.stats()["ab"]["overflow"] == 0


def test_silent_end_overflows_instead_of_blocking_and_discard():
    with NullModem(max_queue=32 * 1024, stall_timeout=0.2) as nm, port(nm.a_path) as a:
        blob = os.urandom(64 * 1024)
        t = time.monotonic()
        for _ in range(8):  # 512 KiB towards an end nobody reads: held 0.2 s, then dropped
            a.write(blob)
        assert time.monotonic() - t < 5
        deadline = time.monotonic() + 5
        while nm.stats()["ab"]["received"] < 8 * len(blob) and time.monotonic() < deadline:
            time.sleep(0.01)
        s = nm.stats()["ab"]
        assert s["received"] == 8 * len(blob) and s["overflow"] > 0 and s["queued"] <= 32 * 1024
        assert nm.discard_pending("b") == s["queued"]
        fd = os.open(nm.b_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            with pytest.raises(BlockingIOError):
                os.read(fd, 100)  # the pty's own buffer was emptied too
            a.write(b"fresh")
            time.sleep(0.1)
            assert os.read(fd, 100) == b"fresh"
        finally:
            os.close(fd)


def test_baud_pacing_115200():
    data = os.urandom(11520)  # 115 200 bit at 10 bit per byte: one second
    with NullModem(baud=115200) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        t = time.monotonic()
        a.write(data)
        got = read_exactly(b, len(data), timeout=5)
        elapsed = time.monotonic() - t
    assert got == data
    assert 0.7 <= elapsed <= 1.3, elapsed


def test_baud_pacing_does_not_bank_idle_time():
    with NullModem(baud=9600) as nm, port(nm.a_path) as a, port(nm.b_path) as b:
        time.sleep(0.3)  # idle line: no credit for a burst afterwards
        t = time.monotonic()
        a.write(b"x" * 96)  # 0.1 s at 9600
        assert read_exactly(b, 96) == b"x" * 96
        assert 0.07 <= time.monotonic() - t <= 0.2


def test_unlimited_throughput_over_1_mb_per_s(modem):
    size = 8 * 1024 * 1024
    with port(modem.a_path) as a, port(modem.b_path) as b:
        blob = os.urandom(65536)
        got = [0]

        def reader():
            while got[0] < size:
                chunk = b.read(65536)
                if not chunk:
                    break
                got[0] += len(chunk)

        b.timeout = 1
        t = threading.Thread(target=reader, daemon=True)
        start = time.monotonic()
        t.start()
        for _ in range(size // len(blob)):
            a.write(blob)
        t.join(20)
        rate = size / (time.monotonic() - start)
        assert not t.is_alive()
    assert got[0] == size
    assert rate > 1e6, "%.2f MB/s" % (rate / 1e6)


def test_close_stops_thread_and_is_idempotent():
    nm = NullModem()
    path = nm.a_path
    assert nm.alive() and os.path.exists(path)
    nm.close()
    nm.close()
    assert not nm.alive() and nm.closed
    with NullModem() as nm2:
        assert nm2.alive()
    assert not nm2.alive()
