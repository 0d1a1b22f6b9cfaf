"""The documented workflows as a user meets them: `facedown` commands in subprocesses against
a real `facedown sim` (issue 16)."""

import json
import os
import re

import pytest

from cli import Sim, run
from conftest import ROOT
from facedown.virtualshoe import VirtualShoe


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_deploy_verify_identify_in_a_row_on_one_sim(tmp_path):
    with Sim("--flash", tmp_path / "flash") as sim:
        out = ok(run("--port", sim.port, "verify", "--no-reset"))
        # the sim's files are the image `facedown image` builds: wire.mpy included
        assert "MISMATCH" not in out and re.search(r"OK: \d+ match, 0 mismatch", out), out
        ok(run("--port", sim.port, "verify"))  # the reset: the sim boots again
        assert "deployed firmware" in ok(run("--port", sim.port, "deploy"))
        assert "OK:" in ok(run("--port", sim.port, "verify"))
        assert "device %s" % sim.device in ok(run("--port", sim.port, "identify"))
        refused = run("--port", sim.port, "provision")
        assert refused.returncode != 0 and "already has its key" in refused.stderr
        again = run("--port", sim.port, "identify")
        if again.returncode:
            sim.stop()
            raise AssertionError(again.stderr + "\nthe sim printed:\n" + sim.output())
        assert "device %s" % sim.device in again.stdout
        assert sim.alive()


@pytest.mark.slow
def test_a_sim_restarted_on_its_folder_boots_what_is_installed_there(tmp_path):
    flash = tmp_path / "flash"
    path = os.path.join(flash, "version.py")
    # a shoe whose folder holds another firmware (as a deploy of an older release leaves it)
    with VirtualShoe(flash=flash, compile=False) as s:
        s.stop()
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(re.sub(r'VERSION = "[^"]+"', 'VERSION = "0.0.1-old"', text))
    with Sim("--flash", flash) as sim:
        out = ok(run("--port", sim.port, "identify"))
        assert "firmware 0.0.1-old" in out, out  # not the checkout's copied over it
        assert "booted what is installed there" in sim.lines[0]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """One `facedown sim` for the misuse tests (a flash folder of its own)."""
    with Sim("--flash", tmp_path_factory.mktemp("misuse") / "flash") as s:
        yield s


def err(proc, code=None):
    """The one line (and hint) a refused command prints; no traceback."""
    assert proc.returncode != 0, proc.stdout
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_global_options_after_the_command(sim):
    assert "device %s" % sim.device in ok(run("identify", "--port", sim.port))
    assert "session" in ok(run("login", "--port", sim.port, "--role", "maintenance"))
    out = ok(run("config", "--port", sim.port, "--game", "holdem", "--seats", "1-6",
                 "--button", "6", "--debug"))
    assert "holdem" in out
    # every command that talks to a shoe lists --port in its help
    for command in ("replay", "deploy", "verify", "history", "status", "watch", "deal"):
        assert "--port PORT" in ok(run(command, "--help")), command
    assert "--port" not in ok(run("pots", "--help"))


@pytest.mark.parametrize("argv, says", [
    (("config", "--game", "holdem", "--seats", "9-1"), "9-1 runs backwards"),
    (("config", "--game", "holdem", "--seats", "1-6", "--button", "0"), "seats are 1..10, not 0"),
    (("config", "--game", "holdem", "--seats", "1-6", "--button", "9"),
     "--button 9 is not one of the seats (1,2,3,4,5,6)"),
    (("config", "--game", "holdem", "--seats", "0-3"), "seat 0: seats are 1..10"),
    (("report", "exposed", "--seat", "1", "--card", "0"), "counts from 1"),
    (("report", "exposed", "--seat", "1"), "report exposed needs --card K"),
    (("report", "premature", "--seat", "1"), "takes no --seat or --card"),
    (("deal", "--cards", "0"), "counts from 1"),
    (("history", "--last", "0"), "a number 1 or more, not 0"),
    (("action", "0", "call"), "seats are 1..10, not 0"),
])
def test_misuse_names_the_real_mistake(sim, argv, says):
    assert says in err(run("--port", sim.port, *argv))


def test_misuse_without_a_shoe(tmp_path):
    assert "keys derive needs --out FILE" in err(run("keys", "derive", "--device", "x"))
    e = err(run("keys", "derive", "--device", "sim-none", "--out", tmp_path / "k"))
    assert "no key for sim-none in the key store" in e and "missing" not in e
    assert "keys derive needs the shoe's key" in err(run("keys", "derive", "--out", tmp_path / "k"))
    assert "no bundled scenario matches 'nosuch'" in err(run("demo", "--scenarios", "nosuch"))
    assert "a number 1 or more, not 0" in err(run("demo", "--hands", "0"))
    assert "milliseconds, 0 or more" in err(run("demo", "--feed-ms", "-5"))
    assert "goes with --scenarios" in err(run("demo", "premature"))
    assert "--deck has 4 cards" in err(run("sim", "--deck", "AhKd7c2s"))
    assert "'Xx' is not a card" in err(run("sim", "--deck", "AhXx"))
    assert "--feed-ms is a time in milliseconds" in err(run("sim", "--feed-ms", "-5"))
    e = err(run("sim", "--flash", "/etc/passwd"))
    assert "--flash /etc/passwd is a file" in e
    scn = tmp_path / "nobutton.json"
    scn.write_text('{"game": "holdem", "seats": [1, 2, 3], "steps": [{"do": "deal"}]}')
    e = err(run("replay", scn, "--in-process"))
    assert 'holdem needs "button"' in e and "None" not in e


def test_demo_scenarios_takes_a_bare_word(capsys):
    out = ok(run("demo", "--scenarios", "premature-turn"))
    m = re.search(r"(\d+) scenarios replayed", out)
    assert m and int(m.group(1)) >= 2, out


def test_a_session_is_named_as_the_user_s_command(sim):
    run("--port", sim.port, "logout")
    e = err(run("--port", sim.port, "deal"))
    assert e.startswith("facedown: error: deal: deal needs a table session"), e
    assert "login --role table" in e and "--port %s" % sim.port in e
    assert "sim_*" not in e and "PORT" not in e


def test_piping_into_head_is_quiet(sim):
    import subprocess

    from cli import FACEDOWN, env

    for command in ("demo --scenarios '0*'", "--port %s status" % sim.port):
        p = subprocess.run("%s %s | head -1" % (FACEDOWN, command), shell=True,
                           executable="/bin/bash", capture_output=True, text=True, env=env())
        assert p.stdout.strip() and "Error" not in p.stderr, p.stderr


def test_a_second_process_on_the_port_is_refused_and_changes_nothing(sim):
    import subprocess

    from cli import FACEDOWN, env

    watch = subprocess.Popen([FACEDOWN, "--port", sim.port, "watch", "--lines", "--seconds",
                              "6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env())
    try:
        import time

        time.sleep(2.5)  # the watch has the port
        e = err(run("--port", sim.port, "status"))
        assert e.startswith("facedown: error: %s is in use by pid %d (facedown watch)"
                            % (sim.port, watch.pid)), e
        out, werr = watch.communicate(timeout=20)
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 0 and "unreadable" not in werr + out, werr
    ok(run("--port", sim.port, "status"))  # the port is free again


def test_a_second_sim_on_one_flash_folder_refuses(sim):
    e = err(run("sim", "--flash", sim.flash, timeout=30))
    assert "the flash folder %s is in use by pid" % sim.flash in e and "facedown sim" in e, e
    assert "device %s" % sim.device in ok(run("--port", sim.port, "identify"))


def _children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


@pytest.mark.slow
def test_a_shoe_that_dies_mid_deal_does_not_answer_and_the_next_command_says_what_it_did(
        tmp_path):
    import signal
    import subprocess
    import time

    from cli import FACEDOWN, env

    flash = tmp_path / "flash"
    sim = Sim("--flash", flash, "--feed-ms", "300")
    try:
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-9"))
        deal = subprocess.Popen([FACEDOWN, "--port", sim.port, "deal"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env())
        from facedown import portlock

        end = time.monotonic() + 30
        while portlock.owner(portlock.lock_path(sim.port))[0] != deal.pid:
            assert time.monotonic() < end and deal.poll() is None, deal.communicate()
            time.sleep(0.05)
        time.sleep(2.0)  # the deal has begun: some cards are out
        shoe = _children(sim.proc.pid)
        sim.kill()  # the power goes: the sim and its firmware with it
        for pid in shoe:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, e = deal.communicate(timeout=60)
    finally:
        sim.stop()
    assert deal.returncode != 0 and "Traceback" not in e and "AttributeError" not in e, e
    assert "the shoe on %s does not answer (deal)" % sim.port in e, e
    assert "it may have carried out part of deal" in e
    with Sim("--flash", flash, "--feed-ms", "0") as again:  # the power is back
        ok(run("--port", again.port, "login", "--role", "maintenance"))
        st = run("--port", again.port, "status")
        out = ok(st)
        if again.port == sim.port:  # the note is the port's (the pty may be another now)
            assert "`deal` (sent" in st.stderr and "got no answer" in st.stderr, st.stderr
        assert "DEALING" in out or "dealing" in out.lower(), out  # the hand it had started
        out = ok(run("--port", again.port, "deal"))  # sent again, it finishes the deal
        assert out.count("seat ") >= 9 and "[" in out


def test_commands_say_what_the_shoe_did(sim):
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    out = ok(run("--port", sim.port, "config", "--profile", "profiles/room.toml", "--rules",
                 "robert", "--button", "3", "--house", "premature_turn=reshuffle"))
    assert ("holdem, seats 1,2,3,4,5,6,7,8,9, button 3, Robert's Rules of Poker, house "
            in out) and "premature_turn=reshuffle" in out and \
        "profile 'Main room, Friday tournament' (from profiles/room.toml)" in out, out
    out = ok(run("--port", sim.port, "deal"))
    assert "DEALING: before the flop" in out, out
    assert "DEALING: flop" in ok(run("--port", sim.port, "street"))
    assert "DEALING: turn" in ok(run("--port", sim.port, "street"))
    out = ok(run("--port", sim.port, "report", "premature"))
    # the procedure, its rule (a house setting here: Robert's sets the turn aside), and a line
    assert "> house setting          premature-turn: " in out, out
    assert "report premature: the shoe applied premature-turn (house setting)" in out, out
    assert "> house setting          premature-turn: " in ok(run("--port", sim.port, "status"))
    ok(run("--port", sim.port, "end"))


def test_every_history_format_has_the_hands_configuration(sim):
    """The floor settling a dispute sees the table the hand was dealt under: rules, house
    overrides (room.toml's premature_turn=set_aside), the profile's name, seats and button."""
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    ok(run("--port", sim.port, "config", "--profile", "profiles/room.toml", "--button", "4"))
    for step in (("deal",), ("street",), ("street",), ("report", "premature"), ("end",)):
        ok(run("--port", sim.port, *step))
    hand = json.loads(ok(run("--port", sim.port, "status", "--json")))["hand"]
    table = ok(run("--port", sim.port, "history", "--hand", hand))
    assert ("  config   holdem, seats 1,2,3,4,5,6,7,8,9, button 4, Poker TDA 2024, house "
            "cut_after_reshuffle=false, extra_holecard=burn, premature_turn=set_aside, profile "
            "'Main room, Friday tournament'") in table, table
    [rec] = json.loads(ok(run("--port", sim.port, "history", "--hand", hand, "--json")))
    assert rec["config"] == {"game": "holdem", "seats": list(range(1, 10)), "button": 4,
                             "rules": "tda2024", "profile": "Main room, Friday tournament",
                             "house": {"premature_turn": "set_aside", "extra_holecard": "burn",
                                       "cut_after_reshuffle": False}}
    phh = ok(run("--port", sim.port, "history", "--hand", hand, "--format", "phh"))
    assert "_shoe_rules = 'tda2024'" in phh and "_shoe_button = 4" in phh, phh
    assert "_shoe_table_seats = [1, 2, 3, 4, 5, 6, 7, 8, 9]" in phh, phh
    assert "premature_turn = 'set_aside'" in phh.split("_shoe_house = ", 1)[1].split("\n")[0]
    assert "_shoe_profile = 'Main room, Friday tournament'" in phh, phh
    from pokerkit import HandHistory

    HandHistory.loads(phh)  # still a history pokerkit reads


def test_a_long_profile_name_is_cut_and_the_user_told(sim, tmp_path):
    with open(os.path.join(ROOT, "profiles", "room.toml"), encoding="utf-8") as f:
        text = f.read()
    name = "Main room, Friday tournament, the second flight of the day"
    long = tmp_path / "long.toml"
    long.write_text(text.replace('name = "Main room, Friday tournament"', 'name = "%s"' % name))
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    proc = run("--port", sim.port, "config", "--profile", long)
    ok(proc)
    assert "note: the shoe keeps the first 48 characters of the profile's name: %r" % (
        name[:48],) in proc.stderr, proc.stderr
    ok(run("--port", sim.port, "deal"))
    ok(run("--port", sim.port, "end"))
    hand = json.loads(ok(run("--port", sim.port, "status", "--json")))["hand"]
    [rec] = json.loads(ok(run("--port", sim.port, "history", "--hand", hand, "--json")))
    assert rec["config"]["profile"] == name[:48]


def test_house_overrides_too_long_for_a_frame_are_one_line(sim):
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    # a table configured first (run alone, or first on its worker, the module's shoe has none)
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6"))
    before = json.loads(ok(run("--port", sim.port, "status", "--json")))["config"]
    many = sum((["--house", h] for h in (
        "draw_reshuffle_own_discards=true", "flop4_pick_is_turn_burn=false",
        "misdeal_window=two_actions", "exposed_holecard=muck", "four_card_flop=reshuffle")), [])
    out = err(run("--port", sim.port, "config", "--profile", "profiles/room.toml", *many), 2)
    assert "config: the house settings take 277 bytes as JSON (the profile's name 30, 8 house " \
        "overrides 235), more than the 144 one frame of the protocol carries here" in out, out
    assert len(out.strip().splitlines()) == 2 and "hint:" in out, out  # one line and its hint
    assert json.loads(ok(run("--port", sim.port, "status", "--json")))["config"] == before


def test_an_action_during_a_partial_deal_is_reported(sim):
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6", "--button", "6"))
    assert "DEALING: the initial deal" in ok(run("--port", sim.port, "deal", "--cards", "3"))
    out = ok(run("--port", sim.port, "action", "5", "call"))
    assert "action 5 call: the shoe applied misdeal-short (TDA 35-A-5)" in out, out
    assert "action 5 call: hand" in out and "is MISDEAL" in out, out
    help_text = ok(run("action", "--help"))
    assert "in turn" not in help_text and "does not check the order" in help_text


class _Bouncing:
    """A shoe for sim.serve(): its firmware ends at once after every boot, with `status`."""

    def __init__(self, status, boots):
        self.status, self.boots, self.port = status, boots, "/dev/pts/x"
        self.returncode = None

    def alive(self):
        return False

    def log_tail(self, n):
        return "(log)"

    def start(self, ready_line=None, timeout=None):
        self.boots -= 1
        self.returncode = self.status
        if self.boots <= 0:
            raise KeyboardInterrupt  # the test's way out of serve()'s loop


def test_sim_reboots_a_shoe_reset_in_quick_succession_but_gives_up_on_a_crash_loop(capsys):
    from facedown import sim as simmod

    # host-asked soft resets (verify, deploy, provision: status 0) one right after another
    with pytest.raises(KeyboardInterrupt):
        simmod.serve(_Bouncing(0, boots=6), seconds=30)
    assert "keeps stopping" not in capsys.readouterr().out
    # a firmware that crashes as it boots (status 1): three in a row and the sim says so
    assert simmod.serve(_Bouncing(1, boots=6), seconds=30) == 1
    assert "keeps stopping (exit status 1)" in capsys.readouterr().out


def inner_pytest(*argv):
    """`pytest ARGV...` as a test engineer runs it from the checkout."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rfs"] + list(argv), capture_output=True, text=True, timeout=600,
                          cwd=ROOT)


@pytest.mark.slow
def test_the_bundled_scenarios_on_a_shoe_port(tmp_path):
    """pytest --shoe-port=PORT tests/scenarios plays the bundled scenarios from the shoe's own
    shuffle (checks that do not depend on the stacked order), skips only what needs the
    simulated mechanism, fails the power cuts as the guide says, and never passes green on a
    port that does not answer or a run that played nothing."""
    with Sim("--flash", tmp_path / "flash") as sim:
        run_ = inner_pytest("--shoe-port=" + sim.port, "tests/scenarios")
        out = run_.stdout
        assert run_.returncode == 1, out[-3000:]
        m = re.search(r"(\d+) failed, (\d+) passed, (\d+) skipped", out)
        assert m and int(m.group(1)) == 2 and int(m.group(2)) >= 50, out[-3000:]
        failed = re.findall(r"FAILED (\S+) - .*", out)
        assert sorted(os.path.basename(f) for f in failed) == [
            "14-premature-flop-then-power-cut-robert.json",
            "14-premature-flop-then-power-cut-tda.json"], out[-3000:]
        assert out.count("a power cut needs a virtual shoe (simulator only)") >= 2, out[-3000:]
        skips = re.findall(r"SKIPPED \[\d+\] \S+: (.*)", out)
        assert len(skips) == int(m.group(3)) and all(
            re.fullmatch(r"(needs simulated faults? .*|marked sim_only) \(simulator only\)", r)
            for r in skips), skips  # (marked: stud's betting, whose order follows the upcards)
        # what a real shoe can play, all green
        clean = inner_pytest("--shoe-port=" + sim.port, "tests/scenarios", "-m", "not sim_only")
        assert clean.returncode == 0 and re.search(r"\b(5\d|[6-9]\d) passed", clean.stdout), \
            clean.stdout[-3000:]
        assert "skipped" not in clean.stdout.splitlines()[-1]
        # a run that played nothing does not pass
        nothing = inner_pytest("--shoe-port=" + sim.port, "tests/scenarios", "-k", "jam")
        assert nothing.returncode != 0, nothing.stdout[-2000:]
        assert "no scenario was played on the shoe at %s" % sim.port in nothing.stdout
    # a port with no shoe fails the run, before any test
    bad = inner_pytest("--shoe-port=/dev/facedown-no-such-port", "tests/scenarios")
    assert bad.returncode not in (0, 5), bad.stdout + bad.stderr
    assert "cannot open /dev/facedown-no-such-port" in bad.stdout + bad.stderr
    assert " passed" not in bad.stdout and " skipped" not in bad.stdout


@pytest.mark.slow
def test_throwaway_sims_leave_nothing_behind(tmp_path, monkeypatch):
    """A `facedown sim` without --flash is a throwaway shoe: its temporary flash folder, its
    key in the key store and its session go with it, even when it was killed outright (the
    next throwaway sim sweeps them); a --flash shoe keeps its key."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("FACEDOWN_HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp))

    def left():
        keys = sorted(os.listdir(home / "keys")) if (home / "keys").is_dir() else []
        sessions = sorted(os.listdir(home / "sessions")) if (home / "sessions").is_dir() else []
        return keys, sessions, sorted(p.name for p in tmp.glob("facedown-flash-*"))

    killed = Sim()
    ok(run("--port", killed.port, "login", "--role", "maintenance"))
    assert left()[0] == [killed.device + ".key"] and left()[2]
    killed.kill()  # no cleanup can run: the next throwaway sim sweeps
    with Sim() as sim:
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        keys, _, folders = left()
        assert keys == [sim.device + ".key"] and folders == [os.path.basename(sim.flash)]
    killed.proc.stdout.close()
    keys, sessions, folders = left()
    assert keys == [] and folders == [] and sessions == [], (keys, sessions, folders)
    with Sim("--flash", tmp_path / "kept") as kept:  # a shoe that lasts keeps its key
        ok(run("--port", kept.port, "identify"))
    assert left()[0] == [kept.device + ".key"]


def test_profiles_piped_fits_the_width_and_marks_without_bold():
    from facedown import profiles

    out = ok(run("profiles", COLUMNS="100"))
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100, max(map(len, lines))
    assert lines[0].startswith("House settings (*: the rulebooks differ)"), lines[0]
    assert "bold" not in out and "\x1b[" not in out
    for row in profiles.settings_table():  # the mark where the rulebooks differ, only there
        line = next(x for x in lines if " %s " % row["name"] in x)
        assert ("*" in line) == (row["tda2024"] != row["robert"]), line
    assert max(len(x.rstrip()) for x in ok(run("profiles", COLUMNS="72")).splitlines()) <= 72


def test_no_help_names_an_issue_of_the_project():
    import argparse

    from facedown.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    # the top level as the user runs it; each command's help from the same parser
    texts = [ok(run("--help"))] + [p.format_help() for p in sub.choices.values()]
    for text in texts:
        assert not re.search(r"\(issue \d+\)|\bissue \d+\b", text), text


@pytest.mark.xdist_group("checkout_build")  # writes host/facedown.egg-info: tests/test_wheel.py
def test_installing_prints_no_deprecation_box():
    """`make setup` installs the package: the build backend finds nothing in pyproject.toml to
    warn about (the license as a SPDX string, not setuptools' deprecated table)."""
    import subprocess
    import sys

    root = ROOT
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps",
                           "-e", root], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "Would install facedown" in out, out[-2000:]
    assert "deprecated" not in out.lower() and "!!" not in out, out[-3000:]


@pytest.mark.slow
def test_the_demo_reads_as_a_table_not_as_failures():
    """facedown demo (seed 3: hand 4 ends as a misdeal on its deal): no refusal after a hand
    is over, folded seats told from undealt ones, no raw event numbers in the headers, and
    counts that agree with their nouns."""
    from facedown.view import count

    out = ok(run("demo", "--hands", "4", "--seed", "3", timeout=120))
    assert "refused" not in out and "declined" not in out, out
    heads = [line for line in out.splitlines() if re.match(r"hand \d+ ", line)]
    assert len(heads) == 4 and all(re.fullmatch(r"hand \d+   last: [^#]+", h) for h in heads), \
        heads
    assert not re.search(r"#\d+", out), out
    assert "(folded)" in out and "(not dealt)" in out and "(no cards)" not in out, out
    assert not re.search(r"\b1 (hands|jams|times|duplicates|card movements)\b", out), out
    assert "4 hands of 9-seat hold'em" in out and "0 jams cleared" in out
    assert (count(1, "hand"), count(0, "jam"), count(2, "hand")) == ("1 hand", "0 jams",
                                                                      "2 hands")


@pytest.mark.slow
def test_status_says_why_a_seat_holds_no_cards(sim):
    """`status` has no log: the shoe names the seats that are out, so an empty seat reads as
    folded, mucked (a dead hand) or not dealt yet, never "(no cards)"."""
    ok(run("--port", sim.port, "login", "--role", "maintenance"))
    run("--port", sim.port, "end")
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6", "--button", "6"))
    out = ok(run("--port", sim.port, "deal", "--cards", "3"))
    assert re.search(r"seat 4 +\(not dealt\)", out) and "(no cards)" not in out, out
    ok(run("--port", sim.port, "deal", "--cards", "8"))  # all but the button's second card
    out = ok(run("--port", sim.port, "action", "6", "call"))  # the button acts: its hand is dead
    assert "button-dead" in out, out
    ok(run("--port", sim.port, "action", "3", "fold"))
    out = ok(run("--port", sim.port, "status"))
    assert re.search(r"seat 3 +\(folded\)", out) and re.search(r"seat 6 +\(mucked\)", out), out
    assert "(no cards)" not in out, out
    snap = json.loads(ok(run("--port", sim.port, "status", "--json")))
    assert snap["table"]["out"] == {"3": "folded", "6": "dead"}, snap
    ok(run("--port", sim.port, "end"))


@pytest.mark.slow
def test_a_damaged_journal_record_latches_the_sim_until_the_floor_ends_the_hand(tmp_path):
    """A bit flipped in the virtual shoe's flash, in a record of the open hand: the sim boots
    the hand from the records that verify and latches; status names the record; the dealer
    cannot go on; the floor's end clears it and the next hand deals."""
    from hal.flashdev import BLOCK, RamFlash
    from journal import JOURNAL_BLOCKS, R_COMMIT, Journal

    flash = tmp_path / "flash"
    with Sim("--flash", flash) as sim:
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6",
               "--button", "6"))
        for _ in range(5):
            ok(run("--port", sim.port, "deal", "--cards", "1"))
    path = os.path.join(sim.flash, "flash.bin")
    with open(path, "rb") as f:
        mem = bytearray(f.read())
    j = Journal(RamFlash(blocks=JOURNAL_BLOCKS, image=bytearray(mem)))
    block, (_, start) = j.block, j.hand_loc
    off, moving = start, []
    while mem[block * BLOCK + off] != 0xFF:  # the open hand's records in the head block
        if mem[block * BLOCK + off] == R_COMMIT and mem[block * BLOCK + off + 2]:
            moving.append(off)
        off += 4 + mem[block * BLOCK + off + 1]
    assert len(moving) == 5, moving
    mem[block * BLOCK + moving[1] + 3] ^= 0x24
    with open(path, "r+b") as f:
        f.write(mem)
    with Sim("--flash", flash) as sim:
        out = ok(run("--port", sim.port, "status"))
        why = "journal: a damaged record in block %d at offset %d of hand" % (block, moving[1])
        assert "FAULT LATCHED" in out and why in out, out
        ok(run("--port", sim.port, "login", "--role", "table"))
        refused = err(run("--port", sim.port, "deal"))
        assert "fault latched" in refused and "login --role maintenance" in refused, refused
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        ok(run("--port", sim.port, "end"))
        out = ok(run("--port", sim.port, "status"))
        assert "LATCHED" not in out, out
        assert "DEALING" in ok(run("--port", sim.port, "deal"))


def test_a_sim_restarted_between_hands_says_the_hand_is_over_and_moves_the_button(tmp_path):
    """What the dealer meets after a power cycle between hands: status says the last hand is
    over and where to read it (it is not rebuilt at power-up) with the next hand's button, its
    history is whole, and the next deal moves the button on from it."""
    flash = tmp_path / "flash"
    with Sim("--flash", flash) as sim:
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6",
               "--button", "6"))
        ok(run("--port", sim.port, "deal"))
        ended = ok(run("--port", sim.port, "end"))
        assert "COMPLETE" in ended, ended
    with Sim("--flash", flash) as sim:
        out = ok(run("--port", sim.port, "status"))
        assert out.startswith("hand 1 is over (facedown history --hand 1 shows it); "
                              "no hand in progress (holdem, seats 1,2,3,4,5,6, button 1"), out
        ok(run("--port", sim.port, "login", "--role", "maintenance"))
        shown = ok(run("--port", sim.port, "history", "--hand", "1"))
        assert "hand 1  [chain ok]" in shown and "COMPLETE" in shown, shown
        dealt = ok(run("--port", sim.port, "deal"))
        assert dealt.splitlines()[:2] == [
            "hand 2", "holdem | Poker TDA 2024 | button 1 | DEALING: before the flop"], dealt
