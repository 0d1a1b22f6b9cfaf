"""The command table declared once (protocol/wire.py COMMANDS, issue 15): what is derived from
it (the codec, the device's checks, the client's classification, the identify catalogue,
SPEC.md), and Klipper's format check: a host refuses, with one line saying what to do, a shoe
whose served catalogue differs from its own for a command it sends; in-process, and through the
CLI on a real `facedown sim` whose firmware was built from a patched table."""

import json
import os
import re
import shutil
import types

import pytest

from cli import Sim, run
from conftest import ROOT
from facedown import spec
from facedown.client import Client, check_catalogue, own_digest, served_digest
from facedown.errors import UserError

import catalogue as K
import wire as W

# the table's action command with one argument more (as a betting branch might add one)
ACTION = '''    (7, "action", ROLE_TABLE, DEALS | PLAY,
     "BB", "seat kind", "", ""),'''
PATCHED = '''    (7, "action", ROLE_TABLE, DEALS | PLAY,
     "BBB", "seat kind cap", "", ""),'''


def test_the_table_is_well_formed_and_everything_has_its_prose():
    assert [r[W.C_ID] for r in W.COMMANDS] == list(range(1, len(W.COMMANDS) + 1))
    assert [r[0] for r in W.EVENTS] == list(range(1, len(W.EVENTS) + 1))
    names = [r[W.C_NAME] for r in W.COMMANDS]
    assert len(set(names)) == len(names)
    every = 0
    for bit, _name in W.FLAGS:
        every |= bit
    for r in W.COMMANDS:
        assert len(r) == 8 and r[W.C_ROLE] in (W.ROLE_PUBLIC, W.ROLE_TABLE, W.ROLE_MAINTENANCE)
        assert r[W.C_FLAGS] & ~every == 0
        assert len(r[W.C_ARGS]) == len(r[W.C_ARG_NAMES].split()), r
        assert len(r[W.C_REPLY]) == len(r[W.C_REPLY_NAMES].split()), r
        assert W.command(r[W.C_ID]) is r and W.command_row(r[W.C_NAME]) is r
        if r[W.C_FLAGS] & W.DEALS:
            assert r[W.C_FLAGS] & W.PLAY and not r[W.C_FLAGS] & W.READ_ONLY
    # prose for each, on the host, by name; and none left over
    assert set(spec.COMMANDS) == set(names)
    assert set(spec.EVENTS) == {r[1] for r in W.EVENTS}
    assert set(spec.ERRORS) == {r[1] for r in W.ERRORS}
    assert set(spec.CAPABILITIES) == {r[1] for r in W.CAPABILITIES}
    assert set(spec.FRAME_TYPES) == {r[1] for r in W.FRAME_TYPES}
    assert set(spec.FLAGS) == {name for _bit, name in W.FLAGS}


def test_what_is_derived_from_the_table():
    assert set(Client.TIMED) == {"identify", "status", "ping", "resume"}
    assert set(Client.MOVES) == {"deal", "street", "draw", "report", "hand", "config",
                                 "recover", "end"}
    assert W.COMMAND_ROLE[W.COMMAND_IDS["config"]] == W.ROLE_MAINTENANCE
    assert W.COMMAND_ARGS[W.COMMAND_IDS["bet"]] == "BBI"
    assert W.event_fields(bytes((1, 5, 0, 0x90))) == ("move", {"card": 5, "src": 0,
                                                               "dst": 0x90})
    assert W.event_fields(bytes((8, 2, 0, 0))) == ("status", {"status": 2})
    with pytest.raises(AttributeError):
        W.NO_SUCH_TABLE  # noqa: B018  (module __getattr__ makes only the derived lookups)


def served_by(wire_src):
    """The catalogue document (bytes) protocol/catalogue.py makes over the tables of this
    wire.py source: what a shoe built from it serves."""
    ns = {"__name__": "patched_wire"}
    exec(compile(wire_src, "wire.py", "exec"), ns)
    cat = {"__name__": "patched_catalogue"}
    with open(os.path.join(ROOT, "protocol", "catalogue.py"), encoding="utf-8") as f:
        exec(compile(f.read(), "catalogue.py", "exec"), cat)
    cat["W"] = types.SimpleNamespace(**ns)  # its functions read the tables through W
    return cat["catalogue_json"]()


def patched_catalogue(text=None, digest=True):
    """The catalogue document a shoe built from a patched table serves (bytes)."""
    with open(os.path.join(ROOT, "protocol", "wire.py"), encoding="utf-8") as f:
        src = f.read()
    if text is not None:
        assert ACTION in src
        src = src.replace(ACTION, text)
    doc = served_by(src)
    if not digest:  # an older shoe's document: no digest
        doc = re.sub(rb'"digest": "[^"]*", ', b"", doc)
    return doc


class FakeShoe(Client):
    """A Client whose identify is answered from a given catalogue document, in-process."""

    def __init__(self, doc):  # (no port)
        self.doc = doc
        self.calls = 0
        self.info = None

    def call(self, name, *args, **kwargs):
        assert name == "identify"
        self.calls += 1
        offset = args[0]
        return (W.PROTOCOL_VERSION, "9.9.9", "shoe-x", W.CAP_SIM, self.doc[offset:offset + 150])


def test_identify_serves_a_chunk_without_building_the_document(monkeypatch):
    """A Pico's identify made the whole document (and its messages array) at each call: about
    10 KB live at once, the peak of its heap through a hand (rp2 port in rp2040js). The chunk is
    now cut from pieces of a row at most, byte for byte the document's."""
    import json as J

    doc = K.catalogue_json()
    longest = [0]
    dumps = J.dumps

    def measured(obj, *a, **k):
        text = dumps(obj, *a, **k)
        longest[0] = max(longest[0], len(text))
        return text

    monkeypatch.setattr(J, "dumps", measured)
    monkeypatch.setattr(K, "catalogue_json", None)  # identify never asks for the whole of it
    got = b""
    while True:
        chunk = W.decode_reply(K.identify_reply(len(got), "0.1.0", "shoe-0042", 0), "BssIy")[1][4]
        if not chunk:
            break
        got += chunk
    assert got == doc and len(doc) > 4000
    assert 0 < longest[0] < 256, "identify made a text of %d B" % longest[0]


def test_a_matching_shoe_costs_one_identify_call():
    shoe = FakeShoe(K.catalogue_json())
    assert served_digest(shoe.doc[:150]) == own_digest()
    assert shoe.identify()["device_id"] == "shoe-x" and shoe.calls == 1
    # an older shoe (no digest) with the same rows: read whole, compared, accepted
    old = FakeShoe(patched_catalogue(digest=False))
    old.identify()
    assert old.calls > 1


def test_a_shoe_whose_table_differs_for_a_command_is_refused_in_one_line():
    shoe = FakeShoe(patched_catalogue(PATCHED))
    assert served_digest(shoe.doc[:150]) != own_digest()
    with pytest.raises(UserError) as e:
        shoe.identify()
    text = str(e.value)
    assert "\n" not in text and "the command action" in text and "9.9.9" in text
    assert "'BBB' (seat, kind, cap)" in text and "'BB' (seat, kind)" in text
    assert "facedown deploy" in e.value.hint
    # deploy does not check: it is how the shoe gets the matching firmware
    assert FakeShoe(patched_catalogue(PATCHED)).identify(check=False)["firmware"] == "9.9.9"


@pytest.mark.parametrize("patched,theirs,ours", [
    (ACTION.replace("ROLE_TABLE", "ROLE_MAINTENANCE"), "role maintenance", "role table"),
    (ACTION.replace("DEALS | PLAY", "DEALS | PLAY | READ_ONLY"), "flags read_only, deals, play",
     "flags deals, play"),
])
def test_a_shoe_whose_role_or_flags_differ_for_a_command_is_refused_in_one_line(
        patched, theirs, ours):
    """The served catalogue carries each command's role and flags (its "commands" table, the
    flags named by its "flags" table), inside the digest: a shoe whose table gives the action
    command another role, or other flags, is refused in one line naming what differs."""
    served = json.loads(K.catalogue_json())
    assert served["commands"] == [[r[W.C_ID], r[W.C_NAME], W.ROLES[r[W.C_ROLE]], r[W.C_FLAGS]]
                                  for r in W.COMMANDS]
    assert served["flags"] == [list(r) for r in W.FLAGS]
    shoe = FakeShoe(patched_catalogue(patched))
    assert served_digest(shoe.doc[:150]) != own_digest()  # (read whole, then compared)
    with pytest.raises(UserError) as e:
        shoe.identify()
    text = str(e.value)
    assert "\n" not in text and "for the command action:" in text, text
    assert "the shoe has %s, this host %s" % (theirs, ours) in text, text
    assert "facedown deploy" in e.value.hint


def test_a_shoe_that_serves_no_roles_or_flags_is_refused():
    served = json.loads(K.catalogue_json())
    del served["commands"]
    with pytest.raises(UserError, match="for the command identify: the shoe has no role or "
                                        "flags for it, this host role public, flags "
                                        "read_only, timed"):
        check_catalogue(served, "0.3.0")


def test_a_shoe_with_a_command_more_is_accepted_and_one_without_one_refused():
    more = '''    (25, "extra", ROLE_TABLE, 0, "B", "x", "", ""),\n)\n# the columns of a row'''
    with open(os.path.join(ROOT, "protocol", "wire.py"), encoding="utf-8") as f:
        src = f.read()
    # a command this host never sends: no matter
    FakeShoe(served_by(src.replace(")\n# the columns of a row", more, 1))).identify()
    served = json.loads(K.catalogue_json())
    served["messages"] = [m for m in served["messages"] if m[1] != "bet"]
    with pytest.raises(UserError, match="the command bet: the shoe has none"):
        check_catalogue(served, "0.0.1")
    served = json.loads(K.catalogue_json())
    for m in served["messages"]:
        if m[1] == "move" and m[2] == "event":
            m[4] = ["card", "from", "to"]
    with pytest.raises(UserError, match="the event move"):
        check_catalogue(served)


def test_the_cli_refuses_a_sim_built_from_another_table_until_deployed(tmp_path):
    """A real `facedown sim` whose image was laid out from a patched protocol/wire.py
    (FACEDOWN_PROTOCOL): `facedown status` says in one line what differs and what to do;
    `facedown deploy` (which does not check) installs this host's firmware, then it works."""
    proto = tmp_path / "protocol"
    shutil.copytree(os.path.join(ROOT, "protocol"), proto)
    src = (proto / "wire.py").read_text(encoding="utf-8")
    (proto / "wire.py").write_text(src.replace(ACTION, PATCHED), encoding="utf-8")
    with Sim("--flash", tmp_path / "flash", extra_env={"FACEDOWN_PROTOCOL": str(proto)}) as sim:
        refused = run("--port", sim.port, "status")
        assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 2, refused.stderr  # the error and its hint
        assert "does not match this host for the command action" in lines[0], lines
        assert "facedown deploy" in lines[1], lines
        deployed = run("--port", sim.port, "deploy", timeout=240)
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        status = run("--port", sim.port, "status")
        assert status.returncode == 0, status.stderr
