"""House profiles (issue 8): the example files, every kind of error with its line and allowed
values, `facedown profiles` and `facedown config --profile` against a virtual shoe."""

import json
import os
import textwrap

import pytest

from conftest import ROOT

from shoe import house
from facedown import profiles
from facedown.cli import main
from facedown.errors import UserError
from facedown.profiles import ProfileError, effective, load_profile

EXAMPLES = os.path.join(ROOT, "profiles")
ROOM = os.path.join(EXAMPLES, "room.toml")
NAMES = [row[0] for row in house.SETTINGS]


def write(tmp_path, text, name="room.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def error_of(path):
    with pytest.raises(UserError) as info:
        load_profile(path)
    return info.value


# -- the example profiles -------------------------------------------------------------------------

@pytest.mark.parametrize("rules", house.PROFILES)
def test_rulebook_examples_write_out_every_setting_at_its_default(rules):
    prof = load_profile(os.path.join(EXAMPLES, rules + ".toml"))
    assert prof["rules"] == rules
    assert prof["game"] is None and prof["seats"] is None and prof["button"] is None
    assert sorted(prof["house"]) == sorted(NAMES)  # every setting written out
    assert prof["house"] == house.profile(rules)
    assert effective(prof) == house.profile(rules)
    assert profiles.changed(prof) == []


@pytest.mark.parametrize("rules", house.PROFILES)
def test_rulebook_examples_give_each_setting_its_rule_in_a_comment(rules):
    with open(os.path.join(EXAMPLES, rules + ".toml")) as f:
        lines = f.read().splitlines()
    for name, _, _, _, source in house.SETTINGS:
        at = [i for i, line in enumerate(lines) if line.startswith(name + " =")]
        assert len(at) == 1, name
        comments = []
        i = at[0] - 1
        while i >= 0 and lines[i].startswith("#"):
            comments.append(lines[i])
            i -= 1
        assert any(source in c for c in comments), name


def test_room_example():
    prof = load_profile(ROOM)
    assert prof == {
        "name": "Main room, Friday tournament", "rules": "tda2024", "game": "holdem",
        "seats": list(range(1, 10)), "button": 9,
        "house": {"premature_turn": "set_aside", "extra_holecard": "burn",
                  "cut_after_reshuffle": False},
    }
    assert effective(prof) == house.profile("tda2024", prof["house"])
    assert effective(ROOM) == effective(prof)  # a path works too
    assert profiles.changed(prof) == ["cut_after_reshuffle", "extra_holecard", "premature_turn"]


def test_minimal_profile_defaults(tmp_path):
    prof = load_profile(write(tmp_path, "", name="bare.toml"))
    assert prof == {"name": "bare", "rules": "tda2024", "game": None, "seats": None,
                    "button": None, "house": {}}
    assert effective(prof) == house.profile("tda2024")


@pytest.mark.parametrize("seats, want", [
    ('"1-9"', list(range(1, 10))), ('"1-4, 6,8"', [1, 2, 3, 4, 6, 8]), ("[3, 1, 2]", [1, 2, 3]),
])
def test_seats_as_a_range_or_an_array(tmp_path, seats, want):
    assert load_profile(write(tmp_path, "seats = %s\n" % seats))["seats"] == want


def test_dotted_keys_and_inline_tables(tmp_path):
    a = load_profile(write(tmp_path, 'rules = "robert"\nhouse.premature_turn = "reshuffle"\n',
                           name="a.toml"))
    b = load_profile(write(tmp_path, 'rules = "robert"\nhouse = { premature_turn = "reshuffle" }\n',
                           name="b.toml"))
    assert a["house"] == b["house"] == {"premature_turn": "reshuffle"}
    assert effective(a)["premature_turn"] == "reshuffle"


# -- errors: the line and the allowed values ------------------------------------------------------

def test_bad_value_names_its_line_and_the_allowed_values(tmp_path):
    path = write(tmp_path, """
        name = "Main room, Friday tournament"
        rules = "tda2024"
        game = "holdem"
        seats = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        button = 9
        [house]
        premature_turn = "later"
        cut_after_reshuffle = false
        """)
    err = error_of(path)
    assert isinstance(err, ProfileError)
    assert str(err) == ("%s:7: house setting premature_turn: 'later' is not allowed "
                        "(allowed: 'reshuffle', 'set_aside')" % path)
    assert "facedown profiles" in err.hint
    assert err.problems == [(7, str(err), err.hint)]


def test_toml_syntax_error_gives_line_and_column(tmp_path):
    path = write(tmp_path, 'name = "x"\nrules = "tda2024"\ngame = holdem\n')
    err = error_of(path)
    assert str(err).startswith("%s:3: not valid TOML: " % path)
    assert "column 8" in str(err)
    assert "game = holdem" in err.hint and "quotes" in err.hint


def test_toml_syntax_error_duplicate_table(tmp_path):
    path = write(tmp_path, '[house]\npremature_turn = "set_aside"\n[house]\n')
    assert str(error_of(path)).startswith("%s:3: not valid TOML: " % path)


def test_unknown_key_suggests_the_closest(tmp_path):
    path = write(tmp_path, 'name = "x"\ngmae = "holdem"\n')
    err = error_of(path)
    assert str(err) == "%s:2: unknown key 'gmae' (did you mean game?)" % path
    assert "name, rules, game, seats, button, house" in err.hint


def test_unknown_key_without_a_close_one_lists_the_keys(tmp_path):
    path = write(tmp_path, '# a comment\n\nzzz = 1\n')
    assert str(error_of(path)) == ("%s:3: unknown key 'zzz' (known: name, rules, game, seats, "
                                   "button, house, betting)" % path)


def test_house_setting_outside_the_house_table(tmp_path):
    path = write(tmp_path, 'premature_turn = "set_aside"\n')
    err = error_of(path)
    assert str(err).startswith("%s:1: unknown key 'premature_turn'" % path)
    assert "[house]" in err.hint


def test_table_key_under_house(tmp_path):
    path = write(tmp_path, '[house]\ngame = "holdem"\n')
    err = error_of(path)
    assert str(err).startswith("%s:2: unknown house setting 'game'" % path)
    assert "above the [house] line" in err.hint


@pytest.mark.parametrize("text, line", [
    ('rules = "robert"\n\n[house]\n# premature_turn\npremature_trun = "set_aside"\n', 5),
    ('rules = "robert"\nhouse.premature_trun = "set_aside"\n', 2),
    ('rules = "robert"\n"house"."premature_trun" = "set_aside"\n', 2),
    ('house = { extra_burn = "stays", premature_trun = "set_aside" }\n', 1),
])
def test_unknown_setting_suggests_the_closest(tmp_path, text, line):
    path = write(tmp_path, text)
    err = error_of(path)
    assert str(err) == ("%s:%d: unknown house setting 'premature_trun' (did you mean "
                        "premature_turn?)" % (path, line))
    assert all(name in err.hint for name in NAMES)


def test_unknown_setting_without_a_close_one_lists_them(tmp_path):
    path = write(tmp_path, '[house]\nfoo = 1\n')
    err = error_of(path)
    assert str(err).startswith("%s:2: unknown house setting 'foo' (known: " % path)
    assert all(name in str(err) for name in NAMES)


@pytest.mark.parametrize("text, line", [
    ('name = "x"\n\nhouse.premature_turn = "later"\n', 3),
    ('[house]\nextra_burn = "stays"\n  premature_turn   =   "later"  # a comment\n', 3),
    ('house = {premature_turn = "later"}\n', 1),
    ('[house]\n"premature_turn" = \'later\'\n', 2),
    # a key-like line inside a multi-line string is not the key
    ('name = """\npremature_turn = "later"\n"""\n[house]\npremature_turn = "later"\n', 5),
])
def test_bad_value_line_found_however_the_key_is_written(tmp_path, text, line):
    path = write(tmp_path, text)
    assert str(error_of(path)) == ("%s:%d: house setting premature_turn: 'later' is not "
                                   "allowed (allowed: 'reshuffle', 'set_aside')" % (path, line))


def test_bad_value_suggests_the_closest_allowed(tmp_path):
    err = error_of(write(tmp_path, '[house]\npremature_turn = "setaside"\n'))
    assert "did you mean 'set_aside'?" in err.hint


def test_boolean_written_as_a_string(tmp_path):
    path = write(tmp_path, '[house]\n\ncut_after_reshuffle = "false"\n')
    err = error_of(path)
    assert str(err) == ("%s:3: house setting cut_after_reshuffle: 'false' is a string, not a "
                        "boolean (allowed: true, false)" % path)
    assert err.hint == "write cut_after_reshuffle = false, without quotes"


@pytest.mark.parametrize("value, kind", [("1", "an integer"), ('"yes"', "a string"),
                                         ("[true]", "an array")])
def test_boolean_setting_wrong_type(tmp_path, value, kind):
    path = write(tmp_path, "[house]\nflop4_pick_is_turn_burn = %s\n" % value)
    assert str(error_of(path)) == (
        "%s:2: house setting flop4_pick_is_turn_burn: %s is %s, not a boolean (allowed: true, "
        "false)" % (path, profiles.toml_value(json.loads(value)), kind))


def test_string_setting_wrong_type(tmp_path):
    path = write(tmp_path, "[house]\nextra_burn = true\n")
    err = error_of(path)
    assert str(err) == ("%s:2: house setting extra_burn: true is a boolean, not a string "
                        "(allowed: 'stays', 'next_burn')" % path)
    assert 'extra_burn = "stays"' in err.hint


def test_house_setting_as_a_table(tmp_path):
    path = write(tmp_path, '[house]\n[house.premature_turn]\nx = 1\n')
    assert str(error_of(path)).startswith(
        "%s:2: house setting premature_turn: a table is a table, not a string" % path)


@pytest.mark.parametrize("text, message", [
    ('rules = "roberts"\n', "1: rules: 'roberts' is not allowed (allowed: 'tda2024', 'robert')"),
    ('name = "x"\ngame = "holdum"\n',
     "2: game: 'holdum' is not allowed (allowed: 'draw5', 'holdem', "),
    ('seats = "1-11"\n', "1: seats: there is no seat 11 (allowed: seat numbers 1..10)"),
    ('seats = [1, 1, 2]\n', "1: seats: seat 1 is listed twice"),
    ('seats = 9\n', "1: seats: 9 is an integer, not an array or a string"),
    ('button = 11\n', "1: button: 11 is not a seat (allowed: 1..10)"),
    ('button = "9"\n', "1: button: '9' is not a seat (allowed: 1..10)"),
    ('name = 3\n', "1: name: 3 is an integer, not a string"),
    ('house = "tda"\n', "1: house: 'tda' is a string, not a table"),
    ('game = "omaha6"\nseats = "1-9"\n', "2: seats: omaha6 deals to 2..7 seats, not 9"),
])
def test_table_keys(tmp_path, text, message):
    path = write(tmp_path, text)
    assert str(error_of(path)).startswith("%s:%s" % (path, message))


def test_rules_suggestion(tmp_path):
    assert "did you mean 'robert'?" in error_of(write(tmp_path, 'rules = "roberts"\n')).hint


def test_every_problem_is_kept_and_the_first_by_line_raised(tmp_path):
    path = write(tmp_path, """
        rules = "tda2024"
        gmae = "holdem"
        [house]
        extra_burn = 3
        premature_turn = "later"
        """)
    err = error_of(path)
    assert [p[0] for p in err.problems] == [2, 4, 5]
    assert str(err) == "%s:2: unknown key 'gmae' (did you mean game?)" % path
    assert "2 more problems" in err.hint


def test_missing_file():
    with pytest.raises(UserError) as info:
        load_profile("no/such/room.toml")
    assert str(info.value) == "no/such/room.toml: no such profile"


# -- facedown profiles ----------------------------------------------------------------------------

def test_profiles_lists_every_setting_with_both_defaults(capsys):
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name, tda, robert, allowed, source in house.SETTINGS:
        row = [line for line in lines if " %s " % name in line]
        assert len(row) == 1, name
        cells = [c.strip().rstrip("*") for c in row[0].split("│")]
        assert profiles._plain(tda) in cells and profiles._plain(robert) in cells, name
        assert source.split()[0] in out
    assert "TDA 2024" in out and "Robert's" in out


def test_profiles_json(capsys):
    assert main(["profiles", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rulebooks"] == ["tda2024", "robert"]
    assert [(s["name"], s["tda2024"], s["robert"], tuple(s["allowed"]), s["source"])
            for s in data["settings"]] == list(house.SETTINGS)


def test_profiles_check_shows_the_effective_settings_and_the_changes(capsys):
    assert main(["profiles", "--check", ROOM]) == 0
    out = capsys.readouterr().out
    assert "Main room, Friday tournament" in out
    for name in NAMES:
        assert name in out
    changed = [line for line in out.splitlines() if "* changed" in line]
    assert len(changed) == 3
    assert any("premature_turn" in line and "set_aside" in line and "reshuffle" in line
               for line in changed)
    assert "3 settings changed from tda2024" in out


def test_profiles_check_json(capsys):
    assert main(["profiles", "--check", ROOM, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == load_profile(ROOM)
    assert data["settings"] == effective(ROOM)
    assert data["changed"] == ["cut_after_reshuffle", "extra_holecard", "premature_turn"]


def test_profiles_check_invalid_file(tmp_path, capsys):
    path = write(tmp_path, '[house]\npremature_turn = "later"\n')
    assert main(["profiles", "--check", path]) == 2
    err = capsys.readouterr().err
    assert ("facedown: error: %s:2: house setting premature_turn: 'later' is not allowed "
            "(allowed: 'reshuffle', 'set_aside')" % path) in err
    assert "hint: " in err


def test_profiles_check_lists_every_problem(tmp_path, capsys):
    path = write(tmp_path, 'gmae = "holdem"\n[house]\npremature_turn = "later"\n')
    assert main(["profiles", "--check", path]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("facedown")]
    assert err == ["facedown: error: %s:1: unknown key 'gmae' (did you mean game?)" % path,
                   "facedown: error: %s:3: house setting premature_turn: 'later' is not allowed "
                   "(allowed: 'reshuffle', 'set_aside')" % path]


# -- facedown config --profile --------------------------------------------------------------------

def test_config_needs_a_game_from_a_flag_or_the_profile(tmp_path, capsys):
    path = write(tmp_path, 'seats = "1-6"\n')
    assert main(["--port", "/nonexistent", "config", "--profile", path]) == 2
    assert "config needs --game (or a --profile that sets game)" in capsys.readouterr().err
    assert main(["--port", "/nonexistent", "config", "--game", "holdem"]) == 2
    assert "config needs --seats" in capsys.readouterr().err


def test_config_rejects_an_invalid_profile_before_talking_to_a_shoe(tmp_path, capsys):
    path = write(tmp_path, 'game = "holdem"\nseats = "1-9"\n[house]\ncut_after_reshuffle = "no"\n')
    assert main(["--port", "/nonexistent", "config", "--profile", path]) == 2
    assert "%s:4: house setting cut_after_reshuffle" % path in capsys.readouterr().err


def shoe_config(capsys, port):
    capsys.readouterr()
    assert main(["--port", port, "status", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["config"]


def test_config_profile_on_a_virtual_shoe(tmp_path, capsys):
    from facedown.virtualshoe import VirtualShoe

    from conftest import login_cli

    with VirtualShoe() as shoe:
        shoe.start(ready_line="ready", timeout=20)
        login_cli(shoe, "maintenance")
        capsys.readouterr()
        assert main(["--port", shoe.port, "config", "--profile", ROOM]) == 0
        cfg = shoe_config(capsys, shoe.port)
        assert cfg == {"game": "holdem", "seats": list(range(1, 10)), "button": 9,
                       "rules": "tda2024", "profile": "Main room, Friday tournament",
                       "house": {"premature_turn": "set_aside", "extra_holecard": "burn",
                                 "cut_after_reshuffle": False}}

        # explicit flags override the profile; --house goes over its house settings
        assert main(["--port", shoe.port, "config", "--profile", ROOM, "--game", "omaha",
                     "--seats", "1-6", "--button", "3", "--rules", "robert",
                     "--house", "premature_turn=reshuffle", "--house", "extra_burn=stays"]) == 0
        cfg = shoe_config(capsys, shoe.port)
        assert cfg == {"game": "omaha", "seats": [1, 2, 3, 4, 5, 6], "button": 3,
                       "rules": "robert", "profile": "Main room, Friday tournament",
                       "house": {"premature_turn": "reshuffle", "extra_holecard": "burn",
                                 "cut_after_reshuffle": False, "extra_burn": "stays"}}

        # a profile of house settings only: the table comes from the flags
        only = write(tmp_path, 'rules = "robert"\n[house]\nshort_hand = "misdeal"\n',
                     name="house-only.toml")
        assert main(["--port", shoe.port, "config", "--profile", only, "--game", "stud",
                     "--seats", "1-8"]) == 0
        cfg = shoe_config(capsys, shoe.port)
        assert cfg["game"] == "stud" and cfg["rules"] == "robert"
        assert cfg["house"] == {"short_hand": "misdeal"}
        assert cfg["profile"] == "house-only"  # (no name in the file: its own)


def test_the_docs_table_is_the_firmwares():
    with open(os.path.join(ROOT, "docs", "profiles.md")) as f:
        rows = [line for line in f if line.startswith("| `")]
    for name, tda, robert, allowed, source in house.SETTINGS:
        want = "| `%s` | %s | %s | %s | %s |" % (
            name, profiles._plain(tda), profiles._plain(robert),
            ", ".join(profiles._plain(a) for a in allowed), source)
        assert want + "\n" in rows, name


# -- how the game is bet: [betting] -----------------------------------------------------------

def test_betting_table_is_read_and_checked_for_the_profiles_game(tmp_path):
    path = write(tmp_path, '''
        rules = "robert"
        game = "holdem"
        [betting]
        structure = "pl"
        blinds = [50, 100]
        straddles = [200]
        stacks = 10000
        ''')
    prof = load_profile(path)
    assert prof["betting"] == {"structure": "pl", "blinds": [50, 100], "straddles": [200],
                               "stacks": 10000}
    stud = write(tmp_path, '''
        game = "stud"
        [betting]
        ante = 5
        bring_in = 10
        small_bet = 20
        ''', "stud.toml")
    assert load_profile(stud)["betting"]["bring_in"] == 10
    assert "betting" not in load_profile(ROOM)  # a profile without [betting] reads as before


@pytest.mark.parametrize("table, line, says", [
    ('structure = "xl"\nblinds = [1, 2]', 4, "betting: structure 'xl' is not known "
                                             "(nl, pl or fl)"),
    ('blinds = [1, 2]\nstraddles = [4]', 5, "straddles are off in this house (house setting "
                                            "straddle)"),
    ('blinds = [2, 1]', 4, "the small blind (2) is more than the big blind (1)"),
    ('blinds = [1, 2]\nante = 1\nbb_ante = 2', 6, "give ante (every seat) or bb_ante"),
    ('blinds = [1, 2]\nblnds = 3', 5, "unknown betting key 'blnds'"),
    ('blinds = [25, 50]\nchip = 25\nstacks = 1010', 6, "stacks: every seat's must be a whole "
                                                       "number of chips >= 1, a multiple of the "
                                                       "chip (25), not 1010"),
])
def test_betting_table_errors_name_the_line_and_the_rule(tmp_path, table, line, says):
    path = write(tmp_path, 'rules = "tda2024"\ngame = "holdem"\n[betting]\n' + table + "\n")
    err = error_of(path)
    assert str(err).startswith("%s:%d: betting: " % (path, line)), str(err)
    assert says in str(err)
    assert "docs/betting.md" in err.hint


def test_betting_not_a_table(tmp_path):
    path = write(tmp_path, 'betting = "nl"\n')
    assert "betting: 'nl' is a string, not a table" in str(error_of(path))


def test_betting_house_settings_are_house_settings():
    tda, rob = house.profile("tda2024"), house.profile("robert")
    assert (tda["out_of_turn"], rob["out_of_turn"]) == ("tda53", "robert")
    assert (tda["straddle"], rob["straddle"]) == ("off", "on")
    assert house.profile("tda2024", {"out_of_turn": "home"})["out_of_turn"] == "home"
    with pytest.raises(ValueError, match="out_of_turn: 'later' not allowed"):
        house.profile("tda2024", {"out_of_turn": "later"})
    # the betting configuration rides with the house overrides, and is not a setting
    assert house.profile("tda2024", {"betting": {"blinds": [1, 2]}}) == tda
