"""Trust (issue 7): roles and sessions, the secrecy of the deck, the firmware check at boot, the
audit log. In this process on the device's own code (tests/pyhal.py), then through the real
protocol, firmware and command line on a virtual shoe."""

import json
import os
import re
import shutil

import pytest

import wire as W
from device import Device
from facedown import keys
from facedown.audit import parse as parse_audit
from pyhal import PyHal
from sessions import InProcess, provision

SEATS = 0b1111111110  # seats 1..9


def reply(body, name):
    return W.decode_reply(body, W.COMMAND_REPLY[W.COMMAND_IDS[name]])


@pytest.fixture
def shoe(tmp_path):
    """A provisioned shoe in this process: (device, key, hal)."""
    hal = PyHal(str(tmp_path))
    key = provision(str(tmp_path), hal.device_id)
    return Device(hal), key, hal


def dealt(shoe_, role="maintenance"):
    """A configured shoe with a hand dealt (flop out) by a host now logged in as role: (device,
    host)."""
    dev, key, hal = shoe_
    host = InProcess(dev, W, key, "maintenance")
    host.call("config", "holdem", SEATS, 9, "tda2024", "")
    if role != "maintenance":
        host.login(key, role)  # a new session replaces the maintenance one
    host.call("hand", 0)
    host.call("deal", 0)
    host.call("street")
    return dev, host


# ---------------------------------------------------------------------------------- roles

@pytest.mark.parametrize("name,args,role", [
    ("config", ("holdem", SEATS, 9, "tda2024", ""), "maintenance"),
    ("history", (0, 0), "maintenance"),
    ("audit", (0, 0), "maintenance"),
    ("maintenance", (), "maintenance"),
    ("sim_deck", (b"", 0, 0), "maintenance"),
    ("hand", (0,), "table"),
    ("deal", (0,), "table"),
    ("report", (3, 0, 0), "table"),
])
def test_privileged_commands_need_their_role(shoe, name, args, role):
    dev, key, _ = shoe
    anyone = InProcess(dev, W)
    code, msg = reply(anyone.raw(name, *args), name)
    assert code == W.DENIED and "needs a %s session" % role in msg
    if role == "maintenance":
        table = InProcess(dev, W, key, "table")
        code, msg = reply(table.raw(name, *args), name)
        assert code == W.DENIED and "needs a maintenance session" in msg


def test_every_command_has_a_role_and_the_table_says_which():
    assert set(W.COMMAND_ROLE) == set(W.COMMAND_NAMES)
    public = sorted(W.COMMAND_NAMES[c] for c, r in W.COMMAND_ROLE.items() if r == 0)
    assert public == ["challenge", "identify", "login", "ping", "resume", "status", "telemetry"]


def test_anyone_sees_what_the_table_sees_and_the_table_session_the_down_cards(shoe):
    dev, tech = dealt(shoe, "table")
    anyone = InProcess(dev, W)

    def table(who):
        code, (hand, _n, chunk) = reply(who.raw("status", 0), "status")
        doc = bytearray(chunk)
        while len(chunk):
            code, (hand, _n, chunk) = reply(who.raw("status", len(doc)), "status")
            doc += chunk
        return json.loads(bytes(doc))["table"]

    public, full = table(anyone), table(tech)
    assert public["board"] == full["board"] and len(full["board"]) == 3
    for seat, held in public["seats"].items():
        assert [c["card"] for c in held] == ["??", "??"]
        assert all(re.fullmatch(r"[2-9TJQKA][cdhs]", c["card"]) for c in full["seats"][seat])
    assert public["burns"] == ["??"] and full["burns"] != ["??"]
    assert public["stub"] == full["stub"] == 52 - 18 - 1 - 3


def test_events_hide_down_cards_from_anyone_but_a_table_session(shoe):
    dev, tech = dealt(shoe, "table")
    first, hand, entries = dev.events_from(1, 48)
    moves = [entries[i:i + 4] for i in range(0, len(entries), 4) if entries[i] == 1]
    assert all(m[1] != W.HIDDEN for m in moves)  # the table session sees every card
    dev.sessions.logout()
    first, hand, entries = dev.events_from(1, 48)
    moves = [entries[i:i + 4] for i in range(0, len(entries), 4) if entries[i] == 1]
    hidden = [m for m in moves if m[1] == W.HIDDEN]
    shown = [m for m in moves if m[1] != W.HIDDEN]
    assert len(hidden) == 18 + 1 and len(shown) == 3  # hole cards and burn; the flop
    assert all(m[3] & 0x7F == 1 for m in shown)  # the board


def test_telemetry_carries_counters_and_never_a_card(shoe):
    dev, tech = dealt(shoe, "table")
    anyone = InProcess(dev, W)
    raw = bytearray()
    while True:
        code, (size, chunk) = reply(anyone.raw("telemetry", len(raw)), "telemetry")
        assert code == 0
        raw += chunk
        if len(raw) >= size:
            break
    doc = json.loads(bytes(raw))
    assert doc["cards_dealt"] == 22 and doc["hands"] == 1 and doc["shuffles"] >= 0
    assert not re.search(r'"[2-9TJQKA][cdhs]"', json.dumps(doc))


# ---------------------------------------------------------------------------------- logins

def test_a_wrong_key_is_refused_logged_and_makes_the_next_try_wait(shoe, tmp_path):
    dev, key, hal = shoe
    wrong = keys.Key(key.device, "device", os.urandom(32))
    host = InProcess(dev, W)
    with pytest.raises(AssertionError, match="login failed"):
        host.login(wrong)
    code, msg = reply(host.raw("challenge", 2), "challenge")
    assert code == W.BUSY and "1 failed logins: wait 1 s" in msg
    # the count survives a power cycle: the wait starts again from boot
    dev2 = Device(PyHal(str(tmp_path), flash=hal.flash))
    code, msg = reply(InProcess(dev2, W).raw("challenge", 2), "challenge")
    assert code == W.BUSY
    dev2.sessions.wait_from -= 1000  # a second later
    with pytest.raises(AssertionError, match="login failed"):
        InProcess(dev2, W).login(wrong)
    code, msg = reply(InProcess(dev2, W).raw("challenge", 2), "challenge")
    assert "2 failed logins: wait 2 s" in msg  # doubled
    dev2.sessions.wait_from -= 2000
    InProcess(dev2, W, key)  # the right key still opens a session, and clears the count
    assert dev2.sessions.failures == 0
    log = hal.store.read("audit.log")
    assert log.count('"login-failed"') == 2 and '"what": "login"' in log


def test_a_login_proof_cannot_be_replayed_and_a_challenge_serves_once(shoe):
    dev, key, _ = shoe
    host = InProcess(dev, W)
    rk = key.for_role(W.ROLE_TABLE)
    code, (dn,) = reply(host.raw("challenge", 1), "challenge")
    hn = os.urandom(16)
    proof = keys.login_proof(rk, 1, key.device, dn, hn, 0)
    assert reply(host.raw("login", hn, proof, 0), "login")[0] == W.OK
    # the same proof again: no challenge is open
    code, msg = reply(host.raw("login", hn, proof, 0), "login")
    assert code == W.WRONG_STATE
    # and against a new challenge it is wrong (the nonce changed)
    reply(host.raw("challenge", 1), "challenge")
    code, msg = reply(host.raw("login", hn, proof, 0), "login")
    assert code == W.DENIED
    # a table key cannot open a maintenance session
    table_key = key.derive("table")
    with pytest.raises(Exception, match="opens table sessions only"):
        table_key.for_role(W.ROLE_MAINTENANCE)


def test_forged_and_replayed_commands_are_refused_and_a_retry_gets_its_reply(shoe):
    dev, tech = dealt(shoe, "table")
    s = tech.session
    # forged: a tag under another key
    body = W.encode_command("street", ())
    bad = W.encode_acmd(s.counter + 1, os.urandom(32), body)
    code, msg = reply(dev.run(900, bad, W.ACMD), "street")
    assert code == W.DENIED and "tag is wrong" in msg
    # a frame captured on the line, sent again under another seq: replayed
    frame = s.frame_body(901, body)
    assert reply(dev.run(901, frame, W.ACMD), "street")[0] == W.OK
    board = list(dev.hand.z.board)
    again = dev.run(901, frame, W.ACMD)  # the same seq: a retry gets its reply, nothing runs
    assert reply(again, "street")[0] == W.OK and list(dev.hand.z.board) == board
    counter = s.counter
    mac = keys.mac(s.skey, W.acmd_message(902, counter, body))
    code, msg = reply(dev.run(902, W.encode_acmd(counter, mac, body), W.ACMD), "street")
    assert code == W.DENIED and "replayed" in msg and list(dev.hand.z.board) == board
    # a plain CMD with the seq of an authenticated one does not get that reply
    code, msg = reply(dev.run(901, body, W.CMD), "street")
    assert code == W.DENIED


def test_a_resent_seq_0_command_gets_its_reply_not_a_replay_refusal(shoe):
    """Found by the frames fuzzer: SEQ 0 starts a host's numbering and clears the reply cache,
    so a SEQ 0 ACMD whose reply was lost, sent again (the same frame: the same counter), was
    refused as a replay, and the host's attach() could never get past it. The shoe keeps the
    last SEQ 0 ACMD's reply for its resend; any other SEQ 0 ACMD runs; a new session's first
    one is not taken for the old session's."""
    dev, tech = dealt(shoe, "table")
    s = tech.session
    ping = W.encode_command("ping", (77,))
    frame = s.frame_body(0, ping)
    first = dev.run(0, frame, W.ACMD)
    assert reply(first, "ping") == (W.OK, [77])
    assert dev.run(0, frame, W.ACMD) == first  # resent: its reply, not "replayed"
    street = W.encode_command("street", ())
    board = list(dev.hand.z.board)
    frame2 = s.frame_body(0, street)
    assert reply(dev.run(0, frame2, W.ACMD), "street")[0] == W.OK
    assert len(dev.hand.z.board) == len(board) + 1
    board = list(dev.hand.z.board)
    assert reply(dev.run(0, frame2, W.ACMD), "street")[0] == W.OK
    assert list(dev.hand.z.board) == board, "a resend runs nothing"
    # the first frame, now old: a replay
    code, msg = reply(dev.run(0, frame, W.ACMD), "ping")
    assert code == W.DENIED and "replayed" in msg
    # a new session starts its counter again: its first SEQ 0 frame runs
    dev2, key, hal = shoe
    s2 = tech.login(key, "table")
    assert s2.number != s.number
    r = dev.run(0, s2.frame_body(0, W.encode_command("ping", (5,))), W.ACMD)
    assert reply(r, "ping") == (W.OK, [5])


def test_no_key_ever_leaves_the_shoe(shoe):
    dev, tech = dealt(shoe, "maintenance")
    dev2, key, hal = shoe
    secrets_ = [key.key, key.for_role(1), key.for_role(2), tech.session.skey]
    seen = bytearray()
    for name, args in (("status", (0,)), ("telemetry", (0,)), ("audit", (0, 0)),
                       ("history", (0, 0)), ("history", (1, 0))):
        seen += tech.raw(name, *args)
    for f in os.listdir(hal.folder):
        if f not in ("device.key",):
            with open(os.path.join(hal.folder, f), "rb") as fh:
                seen += fh.read()
    seen += "\n".join(hal.logs).encode()
    for k in secrets_:
        assert k not in seen and k.hex().encode() not in seen


def test_maintenance_needs_a_session_or_the_key_switch(shoe):
    dev, key, hal = shoe
    code, msg = reply(InProcess(dev, W).raw("maintenance"), "maintenance")
    assert code == W.DENIED
    hal.switch = True
    assert reply(InProcess(dev, W).raw("maintenance"), "maintenance")[0] == W.OK
    assert '"actor": "key-switch", "what": "maintenance"' in hal.store.read("audit.log")


def test_a_shoe_without_a_key_deals_nothing(tmp_path):
    dev = Device(PyHal(str(tmp_path)))
    code, msg = reply(InProcess(dev, W).raw("hand", 0), "hand")
    assert code == W.DENIED and "no key" in msg
    code, msg = reply(InProcess(dev, W).raw("challenge", 1), "challenge")
    assert code == W.DENIED and "provision" in msg


# ---------------------------------------------------------------------------------- firmware

def _image(tmp_path):
    folder = tmp_path / "fs"
    (folder / "shoe").mkdir(parents=True)
    (folder / "main.py").write_text("print(1)\n")
    (folder / "shoe" / "cards.mpy").write_bytes(b"M\x06bytecode")
    (folder / "pinmap.json").write_text("{}")
    return str(folder), ["main.py", "shoe/cards.mpy", "pinmap.json"]


@pytest.mark.parametrize("tamper,reason", [
    (None, None),
    (lambda f: open(os.path.join(f, "shoe/cards.mpy"), "ab").write(b"x"),
     "shoe/cards.mpy does not match"),
    (lambda f: os.remove(os.path.join(f, "pinmap.json")), "pinmap.json is missing"),
    (lambda f: open(os.path.join(f, "shoe/evil.py"), "w").write("x=1"),
     "shoe/evil.py is not in the manifest"),
    (lambda f: open(os.path.join(f, "manifest.json"), "a").write(" "),
     "manifest is not authentic"),
    (lambda f: open(os.path.join(f, "manifest.mac"), "w").write("0" * 64),
     "manifest is not authentic"),
    (lambda f: os.remove(os.path.join(f, "manifest.mac")), "manifest is not authentic"),
    (lambda f: os.remove(os.path.join(f, "manifest.json")), "no firmware manifest"),
])
def test_the_boot_check_locks_on_any_change(tmp_path, tamper, reason):
    from hal.store import DirStore
    from integrity import check

    folder, files = _image(tmp_path)
    provision(folder, "sim-x", files)
    if tamper is not None:
        tamper(folder)
    got = check(DirStore(folder))
    assert (got is None) if reason is None else (reason in got), got


@pytest.mark.parametrize("tamper,reason", [
    (None, None),
    (lambda rom: open(os.path.join(rom, "shoe/hand.mpy"), "ab").write(b"x"),
     "/rom/shoe/hand.mpy does not match"),
    (lambda rom: open(os.path.join(rom, "evil.mpy"), "wb").write(b"M"),
     "/rom/evil.mpy is not in the manifest"),
    (lambda rom: shutil.rmtree(rom), "/rom/device.mpy is missing"),
])
def test_the_boot_check_covers_the_romfs_partition(tmp_path, monkeypatch, tamper, reason):
    """Modules in a ROMFS partition (deploy --romfs) are listed as /rom/<path>: hashed, and
    code there that the manifest does not list locks the shoe."""
    import integrity
    from hal.store import DirStore

    folder, files = _image(tmp_path)
    rom = tmp_path / "rom"
    (rom / "shoe").mkdir(parents=True)
    (rom / "device.mpy").write_bytes(b"M\x06device")
    (rom / "shoe" / "hand.mpy").write_bytes(b"M\x06hand")
    monkeypatch.setattr(integrity, "ROM", str(rom))
    provision(folder, "sim-x", files + ["/rom/device.mpy", "/rom/shoe/hand.mpy"], rom=str(rom))
    if tamper is not None:
        tamper(str(rom))
    got = integrity.check(DirStore(folder))
    assert (got is None) if reason is None else (reason in got), got


def test_a_manifest_signed_for_another_shoe_does_not_pass(tmp_path):
    from hal.store import DirStore
    from integrity import check

    folder, files = _image(tmp_path)
    provision(folder, "sim-x", files)
    other = keys.Key.generate("sim-y")
    with open(os.path.join(folder, "manifest.json"), "rb") as f:
        mac = other.manifest_mac(f.read())
    with open(os.path.join(folder, "manifest.mac"), "w") as f:
        f.write(mac)
    assert "not authentic" in check(DirStore(folder))


def test_a_locked_shoe_runs_no_hand_but_maintenance(shoe, tmp_path):
    dev, key, hal = shoe
    with open(os.path.join(hal.folder, "evil.py"), "w") as f:
        f.write("x = 1\n")
    dev = Device(PyHal(hal.folder, flash=hal.flash))
    assert "evil.py" in dev.locked
    tech = InProcess(dev, W, key, "maintenance")
    code, msg = reply(tech.raw("config", "holdem", SEATS, 9, "tda2024", ""), "config")
    assert code == W.DENIED and "locked" in msg
    assert reply(tech.raw("audit", 0, 0), "audit")[0] == W.OK
    assert reply(tech.raw("maintenance"), "maintenance")[0] == W.OK
    assert '"what": "locked"' in hal.store.read("audit.log")


# ---------------------------------------------------------------------------------- audit log

def _audit_lines(dev, host):
    out = bytearray()
    while True:
        code, (size, chunk) = reply(host.raw("audit", 0, len(out)), "audit")
        out += chunk
        if not chunk or len(out) >= size:
            return out.decode().splitlines()


def test_the_audit_log_chains_and_shows_any_change(shoe):
    dev, tech = dealt(shoe, "maintenance")
    tech.call("end")
    tech.call("hand", 0)
    tech.call("deal", 3)
    tech.call("report", 3, 0, 0)  # the floor calls a misdeal
    lines = _audit_lines(dev, tech)
    records, problems = parse_audit(lines)
    assert problems == []
    what = [r["what"] for r in records]
    assert what[:1] == ["boot"] and "login" in what and "config" in what and "misdeal" in what
    assert all(r["actor"] for r in records)
    assert [r for r in records if r["what"] == "config"][0]["actor"].startswith("maintenance#")
    assert records[-1]["time"] == 1700000000 or records[-1]["time"] >= 1700000000
    # altered, removed, reordered: each shows
    changed = list(lines)
    changed[1] = re.sub(r'"ms": (\d+)', lambda m: '"ms": %d' % (int(m.group(1)) + 1),
                        changed[1])
    assert "altered" in parse_audit(changed)[1][0]
    assert "missing" in " ".join(parse_audit(lines[:1] + lines[2:])[1])
    assert parse_audit([lines[1], lines[0]] + lines[2:])[1]


def test_a_torn_audit_record_is_dropped_at_boot(shoe):
    dev, key, hal = shoe
    path = os.path.join(hal.folder, "audit.log")
    with open(path, "ab") as f:
        f.write(b'{"n": 99, "time": 0, "boot": 1, "ms": 5, "act')  # the power went
    dev2 = Device(PyHal(hal.folder, flash=hal.flash))
    lines = _audit_lines(dev2, InProcess(dev2, W, key))
    records, problems = parse_audit(lines)
    assert problems == [] and "audit-torn" in [r["what"] for r in records]


def test_the_audit_log_rolls_over_and_the_chain_goes_on(shoe):
    import audit

    dev, key, hal = shoe
    for k in range(400):
        dev.audit.add("device", "test", "record %d with some words to fill the file" % k)
    assert os.path.exists(os.path.join(hal.folder, audit.OLD))
    host = InProcess(dev, W, key)
    lines = []
    first = 0
    while True:
        out = bytearray()
        while True:
            code, (size, chunk) = reply(host.raw("audit", first, len(out)), "audit")
            out += chunk
            if not chunk or len(out) >= size:
                break
        got = out.decode().splitlines()
        if not got:
            break
        lines += got
        first = json.loads(got[-1])["n"] + 1
    records, problems = parse_audit(lines)
    assert problems == [] and records[-1]["n"] == dev.audit.n and len(records) > 50
    assert records[0]["n"] > 1 and records[0]["prev"] != "0" * 64  # the oldest let go


# ---------------------------------------------------------------------------------- the command line

@pytest.fixture(scope="module")
def vshoe():
    from facedown.virtualshoe import VirtualShoe

    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s


def cli(capsys, *argv):
    from facedown.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_needs_a_session_for_config_and_history(vshoe, capsys, tmp_path,
                                                                   monkeypatch):
    p = vshoe.port
    code, out, err = cli(capsys, "--port", p, "config", "--game", "holdem", "--seats", "1-9")
    assert code != 0 and "needs a maintenance session" in err
    code, out, err = cli(capsys, "--port", p, "history", "--last", "2")
    assert code != 0 and "needs a maintenance session" in err
    # a wrong key: refused, and the shoe makes the next attempt wait
    wrong = tmp_path / "wrong.key"
    keys.Key(vshoe.key.device, "device", os.urandom(32)).save(str(wrong))
    code, out, err = cli(capsys, "--port", p, "login", "--key-file", str(wrong))
    assert code != 0 and "login failed" in err
    code, out, err = cli(capsys, "--port", p, "login", "--key-file", str(wrong))
    assert code != 0 and "failed logins: wait" in err
    # the key from the environment (never an argument); a table key cannot configure
    right = tmp_path / "shoe.key"
    vshoe.key.save(str(right))
    assert oct(os.stat(right).st_mode & 0o777) == "0o600"
    table = tmp_path / "table.key"
    vshoe.key.derive("table").save(str(table))
    import time
    time.sleep(1.1)  # the wait after one failed login
    monkeypatch.setenv("FACEDOWN_KEY_FILE", str(table))
    code, out, err = cli(capsys, "--port", p, "login", "--role", "maintenance")
    assert code != 0 and "opens table sessions only" in err
    code, out, err = cli(capsys, "--port", p, "login")
    assert code == 0 and "table session" in out
    code, out, err = cli(capsys, "--port", p, "config", "--game", "holdem", "--seats", "1-9")
    assert code != 0 and "needs a maintenance session" in err
    monkeypatch.setenv("FACEDOWN_KEY_FILE", str(right))
    code, out, err = cli(capsys, "--port", p, "login", "--role", "maintenance")
    assert code == 0, err
    code, out, err = cli(capsys, "--port", p, "config", "--game", "holdem", "--seats", "1-9")
    assert code == 0, err
    code, out, err = cli(capsys, "--port", p, "deal")
    assert code == 0, err
    assert re.search(r"\[[2-9TJQKA][♣♦♥♠]\]", out)  # the session sees the hole cards
    code, out, err = cli(capsys, "--port", p, "audit")
    assert code == 0 and "hash chain intact" in out and "login-failed" in out
    code, out, err = cli(capsys, "--port", p, "logout")
    assert code == 0
    code, out, err = cli(capsys, "--port", p, "status", "--json")
    seats = json.loads(out)["table"]["seats"]
    assert {c["card"] for held in seats.values() for c in held} == {"??"}
    code, out, err = cli(capsys, "--port", p, "telemetry", "--json")
    assert code == 0 and json.loads(out)["failed_logins"] == 0  # cleared by the good login
    code, out, err = cli(capsys, "--port", p, "end")
    assert code != 0 and "needs a table session" in err


def test_raw_output_for_a_lab_between_hands_only(shoe):
    dev, key, hal = shoe
    anyone = InProcess(dev, W)
    assert reply(anyone.raw("raw", 0, 16), "raw")[0] == W.DENIED
    tech = InProcess(dev, W, key, "maintenance")
    code, (data,) = reply(tech.raw("raw", 0, 180), "raw")
    assert code == W.OK and len(data) == 180 and len(set(data)) > 64
    code, msg = reply(tech.raw("raw", 1, 16), "raw")  # this HAL is seeded: no generator
    assert code == W.DENIED and "seeded" in msg
    assert reply(tech.raw("raw", 2, 16), "raw")[0] == W.BAD_ARGUMENT
    tech.call("config", "holdem", SEATS, 9, "tda2024", "")
    tech.call("hand", 0)
    tech.call("deal", 1)
    code, msg = reply(tech.raw("raw", 0, 16), "raw")
    assert code == W.WRONG_STATE and "hand is in progress" in msg


def test_raw_output_from_the_virtual_shoe(vshoe, tmp_path, capsys):
    from conftest import login_cli

    login_cli(vshoe, "maintenance")
    cli(capsys, "--port", vshoe.port, "end")  # (an earlier test's hand, if any)
    out = tmp_path / "raw.bin"
    code, text, err = cli(capsys, "--port", vshoe.port, "certify", "--dump-raw", str(out),
                          "--bytes", "1000", "--entropy-samples", "400")
    assert code == 0, err
    gen = out.read_bytes()
    ent = (tmp_path / "raw.bin.entropy").read_bytes()
    assert len(gen) == 1000 and len(ent) == 400
    ones = sum(bin(b).count("1") for b in gen)
    assert 3700 < ones < 4300  # 8000 bits, half of them ones within ~4.5 sigma
