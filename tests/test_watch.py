"""The live table (`facedown watch`): the host's mirror picked up from a status snapshot
follows the event stream to the same table the shoe has."""

import pytest

from facedown.cli import main
from facedown.demo import styled
from facedown.mirror import Mirror
from facedown.virtualshoe import VirtualShoe
from facedown import view


@pytest.fixture(scope="module")
def shoe():
    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s


def test_a_mirror_from_status_follows_the_stream(shoe):
    events = []
    c = shoe.connect(timeout=30, on_event=lambda n, h, e: events.append(e))
    c.call("config", "holdem", 0b1111111110, 9, "tda2024", "{}")
    c.call("hand", 0)
    c.call("deal", 0)
    c.sync()
    m = Mirror.from_record(c.status()["table"])  # join mid-hand, as watch does
    del events[:]
    c.call("street")
    c.call("report", 2, 0, 0)  # premature flop
    c.call("street")
    c.sync()
    for e in events:
        m.apply(e)
    table = c.status()["table"]
    rec = m.record()
    for key in ("seats", "board", "burns", "muck", "aside", "stub", "status"):
        assert rec[key] == table[key]
    text = styled(view.render(rec, title="hand 1"))
    assert any(span.style == "bold yellow" for span in text.spans)  # the procedure stands out
    c.call("end")
    c.close()


def test_watch_runs_and_stops(shoe, capsys):
    assert main(["--port", shoe.port, "watch", "--lines", "--seconds", "0.5"]) == 0


def test_watch_shows_the_pot_and_whose_turn_on_a_table_that_is_bet(shoe, capsys):
    c = shoe.connect(timeout=30)
    c.call("config", "holdem", 0b11110, 4, "tda2024",
           '{"betting": {"blinds": [50, 100], "stacks": 10000}}')
    c.call("hand", 4)
    c.call("deal", 0)
    c.call("bet", 3, 3, 300)  # seat 3 raises to 300
    c.sync()
    c.close()
    assert main(["--port", shoe.port, "watch", "--lines", "--backlog", "--seconds", "3"]) == 0
    out = capsys.readouterr().out
    assert "seat 3 raise" in out
    assert "betting  no-limit, round 1, pot 450; seat 4 to act: call 300, fold, " \
           "raise 500..10000" in out
    c = shoe.connect(timeout=30)
    c.call("end")
    c.close()
