"""House profiles (issue 8): a room's rulebook, table defaults and house settings in one TOML file.

    # room.toml
    name = "Main room, Friday tournament"
    rules = "tda2024"          # the rulebook the profile starts from: tda2024 or robert
    game = "holdem"            # optional table defaults
    seats = "1-9"              # or [1, 2, 3, 4, 5, 6, 7, 8, 9]
    button = 9
    [house]
    premature_turn = "set_aside"
    cut_after_reshuffle = false

`facedown config --profile room.toml` configures a shoe with it (flags override the file);
`facedown profiles` lists every house setting with its default in each rulebook and the rule
behind it; `facedown profiles --check room.toml` validates a file and prints the effective
settings.  The settings themselves live in the firmware (firmware/shoe/house.py): this module
only reads, checks and explains files.  docs/profiles.md is the user's page.

    [betting]                  # optional: how the game is bet (docs/betting.md)
    structure = "nl"
    blinds = [50, 100]

API: load_profile(path) -> {"name", "rules", "game", "seats", "button", "house"[, "betting"]};
effective(profile) -> the settings dict the shoe deals by.
"""

import difflib
import json
import os
import re
import shutil
import sys

from .engine import firmware_imports
from .errors import UserError

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli backport, if installed
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

KEYS = ("name", "rules", "game", "seats", "button", "house", "betting")
DOCS = "docs/profiles.md"
LIST_HINT = "`facedown profiles` lists every house setting, its allowed values and its rule"


class ProfileError(UserError):
    """An invalid profile: the first problem as the message (file:line: ...), every problem found
    in `problems` as (line, message, hint), in file order."""

    def __init__(self, message, hint=None, problems=()):
        UserError.__init__(self, message, hint)
        self.problems = list(problems)


# -- the firmware's tables ------------------------------------------------------------------------

def _house():
    return firmware_imports().house


def _view():
    from . import view

    return view


def settings_table():
    """Every house setting as a dict: name, tda2024, robert, allowed, source."""
    return [{"name": r[0], "tda2024": r[1], "robert": r[2], "allowed": list(r[3]), "source": r[4]}
            for r in _house().SETTINGS]


def rulebooks():
    return tuple(_house().PROFILES)


def toml_value(v):
    """A value as it is written in a TOML file: 'set_aside', false, 9."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'%s'" % v if "'" not in v else json.dumps(v)
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "[%s]" % ", ".join(toml_value(x) for x in v)
    return str(v)


def _written(v):
    """A value as the hints suggest writing it: "set_aside", false."""
    return json.dumps(v) if isinstance(v, str) else toml_value(v)


def _plain(v):
    """A value for the tables on screen: set_aside, false."""
    return v if isinstance(v, str) else toml_value(v)


def _type_name(v):
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    return "a %s" % type(v).__name__


def _closest(word, names):
    found = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    if not found and isinstance(word, str):  # a prefix or a fragment: 'premature' -> premature_turn
        found = [n for n in names if len(word) >= 4 and word in n][:1]
    return found[0] if found else None


# -- where a key is in the file -------------------------------------------------------------------

def _split_key(text):
    """'house."premature_turn"' -> ('house', 'premature_turn'); None if it is not a key."""
    parts, cur, quote, i = [], "", None, 0
    text = text.strip()
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                cur += text[i + 1]
                i += 2
                continue
            if ch == quote:
                quote = None
            else:
                cur += ch
        elif ch in "\"'":
            quote = ch
        elif ch == ".":
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    parts.append(cur.strip())
    return tuple(parts) if all(parts) else None


def _key_end(line):
    """Index of the '=' that ends the key on a key/value line (outside quotes), or -1."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return i
        elif ch == "#":
            return -1
    return -1


def _scan(text):
    """Every key the file defines, with its line: [(path tuple, line number)], in file order.
    Table headers ([house], [[x]]) are listed too, and inline tables' keys
    (house = { premature_turn = 'x' }) with the line they are on."""
    out = []
    table = ()
    multiline = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if multiline:  # inside a multi-line string: no keys here
            if line.count(multiline) % 2 == 1:
                multiline = None
            continue
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            inner = line[2:] if line.startswith("[[") else line[1:]
            end = inner.find("]")
            key = _split_key(inner[:end]) if end >= 0 else None
            if key:
                table = key
                out.append((key, n))
            continue
        eq = _key_end(line)
        if eq < 0:
            continue
        key = _split_key(line[:eq])
        if not key:
            continue
        out.append((table + key, n))
        rest = line[eq + 1:].strip()
        for q in ('"""', "'''"):
            if rest.startswith(q) and rest.count(q) == 1:
                multiline = q
        if rest.startswith("{"):  # an inline table: its keys are on this line
            for m in re.finditer(r"(?:^|[{,])\s*([A-Za-z0-9_\-\"'.]+)\s*=", rest):
                sub = _split_key(m.group(1))
                if sub:
                    out.append((table + key + sub, n))
    return out


class _Lines:
    def __init__(self, text):
        self.keys = _scan(text)

    def line(self, path):
        """The line that defines path; failing that, the first line under it, then its
        parent's line (0: not found)."""
        path = tuple(path)
        for key, n in self.keys:
            if key == path:
                return n
        for key, n in self.keys:
            if key[:len(path)] == path:
                return n
        return self.line(path[:-1]) if len(path) > 1 else 0


# -- reading and checking -------------------------------------------------------------------------

def _where(path, line):
    return "%s:%d" % (path, line) if line else "%s" % path


def _syntax_error(path, text, exc):
    lineno = getattr(exc, "lineno", None)
    colno = getattr(exc, "colno", None)
    msg = getattr(exc, "msg", None) or str(exc)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", msg)
    if m:
        lineno = lineno or int(m.group(1))
        colno = colno or int(m.group(2))
        msg = msg[:m.start()]
    msg = re.sub(r"\s*\(at end of document\)\s*$", " at the end of the file", msg)
    msg = msg[:1].lower() + msg[1:]
    where = " at column %d" % colno if colno else ""
    lines = text.splitlines()
    shown = lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""
    if "invalid value" in msg.lower():
        hint = "strings need quotes (game = \"holdem\"), true/false and numbers do not; see " + DOCS
    else:
        hint = "a profile is `key = value` lines and one [house] table; see " + DOCS
    if shown:
        hint = "the line reads `%s`: %s" % (shown, hint)
    return ProfileError("%s: not valid TOML: %s%s" % (_where(path, lineno), msg, where), hint)


def _parse_seats(value):
    """'1-6,8' or [1, 2, 3] -> a sorted list of seats; ValueError with the reason."""
    if isinstance(value, str):
        out = []
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                a, _, b = part.partition("-")
                if not (a.strip().isdigit() and b.strip().isdigit()) or int(a) > int(b):
                    raise ValueError("%r is not a seat range like '1-9'" % part)
                out.extend(range(int(a), int(b) + 1))
            elif part.isdigit():
                out.append(int(part))
            else:
                raise ValueError("%r is not a seat number" % part)
    elif isinstance(value, list):
        out = value
    else:
        raise TypeError(value)
    seen = []
    for s in out:
        if not isinstance(s, int) or isinstance(s, bool):
            raise ValueError("%s is not a seat number" % toml_value(s))
        if not 1 <= s <= 10:
            raise ValueError("there is no seat %d" % s)
        if s in seen:
            raise ValueError("seat %d is listed twice" % s)
        seen.append(s)
    if not seen:
        raise ValueError("no seats")
    return sorted(seen)


class _Checker:
    def __init__(self, path, text):
        self.path = path
        self.lines = _Lines(text)
        self.problems = []

    def problem(self, key_path, message, hint):
        line = self.lines.line(key_path)
        self.problems.append((line, "%s: %s" % (_where(self.path, line), message), hint))

    def one_of(self, key_path, label, value, allowed, more=LIST_HINT):
        """value must be one of allowed, with the same type; True if it is."""
        if value in allowed and type(value) is type(allowed[0]):
            return True
        shown = ", ".join(toml_value(a) for a in allowed)
        name = key_path[-1]
        kinds = {type(a) for a in allowed}
        if type(value) in kinds:  # the right type, a value the setting does not have
            close = _closest(value, allowed) if isinstance(value, str) else None
            self.problem(key_path, "%s: %s is not allowed (allowed: %s)" % (
                label, toml_value(value), shown),
                ("did you mean %s? " % toml_value(close) if close else "") + more)
        elif bool in kinds and isinstance(value, str) and value.strip().lower() in ("true",
                                                                                    "false"):
            self.problem(key_path, "%s: %s is a string, not a boolean (allowed: %s)" % (
                label, toml_value(value), shown),
                "write %s = %s, without quotes" % (name, value.strip().lower()))
        else:
            self.problem(key_path, "%s: %s is %s, not %s (allowed: %s)" % (
                label, toml_value(value), _type_name(value), _type_name(allowed[0]), shown),
                "write %s = %s (one of: %s)" % (name, _written(allowed[0]), shown))
        return False

    def check(self, doc):
        house = _house()
        fw_games = firmware_imports().games
        out = {"name": None, "rules": "tda2024", "game": None, "seats": None, "button": None,
               "house": {}}
        for key, value in doc.items():
            if key not in KEYS:
                if key in house._INDEX:
                    hint = ("%s is a house setting: put it under the [house] line "
                            "(or write house.%s = ...)" % (key, key))
                    message = "unknown key %r (known: %s)" % (key, ", ".join(KEYS))
                else:
                    close = _closest(key, KEYS)
                    message = "unknown key %r (%s)" % (
                        key, "did you mean %s?" % close if close else "known: " + ", ".join(KEYS))
                    hint = ("a profile's keys are %s; " % ", ".join(KEYS) if close else "") + \
                        "house settings go under the [house] line; see " + DOCS
                self.problem((key,), message, hint)
            elif key == "name":
                if isinstance(value, str):
                    out["name"] = value
                else:
                    self.problem((key,), "name: %s is %s, not a string" % (
                        toml_value(value), _type_name(value)), 'write name = "Main room"')
            elif key == "rules":
                if self.one_of((key,), "rules", value, tuple(house.PROFILES),
                               "rules names the rulebook the profile starts from; see " + DOCS):
                    out["rules"] = value
            elif key == "game":
                if self.one_of((key,), "game", value, tuple(fw_games.names()),
                               "game is the table's default game; see " + DOCS):
                    out["game"] = value
            elif key == "seats":
                try:
                    out["seats"] = _parse_seats(value)
                except TypeError:
                    self.problem((key,), "seats: %s is %s, not an array or a string" % (
                        toml_value(value), _type_name(value)),
                        'write seats = [1, 2, 3, 4, 5, 6] or seats = "1-6"')
                except ValueError as e:
                    self.problem((key,), "seats: %s (allowed: seat numbers 1..10)" % e,
                                 'write seats = [1, 2, 3, 4, 5, 6] or seats = "1-6"')
            elif key == "button":
                if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10:
                    out["button"] = value
                else:
                    self.problem((key,), "button: %s is not a seat (allowed: 1..10)" %
                                 toml_value(value), "write button = 9 (the dealer button's seat)")
            elif key == "house":
                if not isinstance(value, dict):
                    self.problem((key,), "house: %s is %s, not a table" % (
                        toml_value(value), _type_name(value)),
                        "put house settings under a [house] line, one `setting = value` a line")
                    continue
                out["house"] = self.check_house(value)
            elif key == "betting":
                if not isinstance(value, dict):
                    self.problem((key,), "betting: %s is %s, not a table" % (
                        toml_value(value), _type_name(value)),
                        "put how the game is bet under a [betting] line: structure, blinds, "
                        "ante, ... (see docs/betting.md)")
                    continue
                out["betting"] = value
        if "betting" in out:
            self.check_betting(out)
        game, seats = out["game"], out["seats"]
        if game and seats and not 2 <= len(seats) <= fw_games.GAMES[game][4]:
            self.problem(("seats",), "seats: %s deals to 2..%d seats, not %d" % (
                game, fw_games.GAMES[game][4], len(seats)), "seat fewer players, or another game")
        return out

    def check_house(self, table):
        house = _house()
        names = [r[0] for r in house.SETTINGS]
        ok = {}
        for key, value in table.items():
            if key not in house._INDEX:
                if key in KEYS:
                    hint = ("%s is not a house setting: move it above the [house] line"
                            % key)
                    message = "unknown house setting %r" % key
                else:
                    close = _closest(key, names)
                    message = "unknown house setting %r (%s)" % (
                        key, "did you mean %s?" % close if close else "known: " + ", ".join(names))
                    hint = ("known settings: %s; " % ", ".join(names) if close else "") + LIST_HINT
                self.problem(("house", key), message, hint)
                continue
            row = house.SETTINGS[house._INDEX[key]]
            if self.one_of(("house", key), "house setting %s" % key, value, row[3]):
                ok[key] = value
        return ok

    def check_betting(self, out):
        """The [betting] table, checked by the firmware's own rules (shoe.betting.config) for
        the profile's game (hold'em's kind when it names none, stud's if it has a bring_in)."""
        fw = firmware_imports()
        games, value = fw.games, out["betting"]
        if out["game"]:
            kind = games.GAMES[out["game"]][0]
        else:
            kind = games.STUD if "bring_in" in value else games.BOARD
        try:
            fw.betting.config(kind, value, _house().profile(out["rules"], out["house"]))
        except fw.betting.ShoeError as e:
            named = [k for k in value if repr(k) in e.message] or sorted(  # an unknown key
                (k for k in value if k.rstrip("s") in e.message), key=len)  # or the one named
            self.problem(("betting", named[-1]) if named else ("betting",),
                         "betting: %s" % (e.message[8:] if e.message.startswith("betting ")
                                          else e.message),
                         "see docs/betting.md for the [betting] keys")
        except ValueError:
            pass  # the house table's own problem, reported there

    def raise_if_any(self):
        if not self.problems:
            return
        probs = sorted(self.problems, key=lambda p: p[0] if p[0] else 1 << 30)
        line, message, hint = probs[0]
        if len(probs) > 1:
            hint = "%s (%d more problem%s: `facedown profiles --check %s` lists them)" % (
                hint, len(probs) - 1, "" if len(probs) == 2 else "s", self.path)
        raise ProfileError(message, hint, probs)


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise UserError("%s: no such profile" % path,
                        hint="profiles/ in a Facedown checkout has examples (tda2024.toml, "
                             "robert.toml, room.toml)")
    except OSError as e:
        raise UserError("%s: cannot read the profile: %s" % (path, e.strerror or e))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise UserError("%s:%d: not valid TOML: the file is not UTF-8 text" % (path, line),
                        hint="save the profile as UTF-8")


def parse_profile(text, path="<profile>"):
    """A profile from TOML text (path names it in errors)."""
    if tomllib is None:
        raise UserError("reading profiles needs Python 3.11 (tomllib) or the tomli package",
                        hint="pip install tomli")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(path, text, e) from None
    checker = _Checker(path, text)
    out = checker.check(doc)
    checker.raise_if_any()
    if out["name"] is None:
        out["name"] = os.path.splitext(os.path.basename(path))[0]
    return out


def load_profile(path):
    """Read and check a profile file: {"name", "rules", "game", "seats", "button", "house",
    "betting"}; "betting" only when the file has a [betting] table.
    game, seats and button are None when the file leaves them out; rules defaults to tda2024
    and name to the file's name; house holds only the settings the file writes.  Raises
    UserError (ProfileError for an invalid file) with "file:line: ..." and a hint."""
    path = os.fspath(path)
    return parse_profile(read_text(path), path)


def effective(profile):
    """The settings the shoe deals by under a profile (a load_profile dict, or a path): the
    rulebook's defaults with the file's house settings on top."""
    if not isinstance(profile, dict):
        profile = load_profile(profile)
    try:
        return _house().profile(profile.get("rules") or "tda2024", profile.get("house") or {})
    except ValueError as e:
        raise UserError(str(e), hint=LIST_HINT)


def changed(profile):
    """The house settings a profile writes that differ from its rulebook's defaults."""
    base = _house().profile(profile.get("rules") or "tda2024")
    return sorted(k for k, v in (profile.get("house") or {}).items() if base.get(k) != v)


# -- the command ----------------------------------------------------------------------------------

def add_command(sub):
    p = sub.add_parser(
        "profiles", help="house settings: every one with its rulebook defaults, or check a profile",
        description="List every house setting with its default under TDA 2024 and Robert's Rules "
                    "and the rule it comes from; with --check, validate a profile (TOML) and "
                    "print the settings it gives.  See %s." % DOCS)
    p.add_argument("--check", metavar="FILE", help="validate a profile and show its settings")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args):
    if args.check:
        return check(args.check, args.json)
    rows = settings_table()
    if args.json:
        print(json.dumps({"rulebooks": list(rulebooks()), "settings": rows}, indent=1))
        return 0
    _print_settings(rows)
    return 0


def _console():
    from rich.console import Console

    width = None  # a terminal: its width
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:  # a pipe, a file: $COLUMNS, else 100 (the allowed values then go under the rule)
        width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    return Console(width=width, highlight=False)


def _print_settings(rows):
    from rich.table import Table
    from rich.text import Text

    console = _console()
    narrow = console.width < 110  # the allowed values go under the rule, not in a column
    styled = console.color_system is not None  # bold shows; in a pipe or a file a mark does
    table = Table(title="House settings (%s: the rulebooks differ)" % (
        "bold" if styled else "*"), title_justify="left")
    table.add_column("setting", no_wrap=True, overflow="fold")
    for title, key in (("TDA 2024", "tda2024"), ("Robert's", "robert")):
        table.add_column(title, no_wrap=True, overflow="fold",
                         min_width=max(len(title), max(len(_plain(r[key])) for r in rows)))
    if not narrow:
        table.add_column("allowed", no_wrap=True)
    table.add_column("rule" + (" (allowed values)" if narrow else ""), ratio=1, min_width=20)
    for r in rows:
        differ = r["tda2024"] != r["robert"]
        style = "bold" if differ else ""
        mark = "*" if differ and not styled else ""
        allowed = " | ".join(_plain(a) for a in r["allowed"])
        cells = [Text(r["name"]), Text(_plain(r["tda2024"]) + mark, style=style),
                 Text(_plain(r["robert"]) + mark, style=style)]
        if narrow:
            rule = Text(r["source"])
            rule.append("\n(%s)" % allowed, style="dim")
            cells.append(rule)
        else:
            cells += [Text(allowed), Text(r["source"])]
        table.add_row(*cells)
    console.print(table)


def check(path, as_json=False):
    try:
        prof = load_profile(path)
    except ProfileError as e:
        if len(e.problems) < 2:
            raise
        for _, message, hint in e.problems:  # every problem, in file order
            print("facedown: error: %s" % message, file=sys.stderr)
            if hint:
                print("hint: %s" % hint, file=sys.stderr)
        return 2
    settings = effective(prof)
    base = _house().profile(prof["rules"])
    if as_json:
        print(json.dumps({"profile": prof, "settings": settings, "set": sorted(prof["house"]),
                          "changed": changed(prof)}, indent=1))
        return 0
    from rich.table import Table
    from rich.text import Text

    seats = prof["seats"]
    lines = ["%s: %s" % (path, prof["name"]),
             "rules: %s" % prof["rules"],
             "game: %s" % (prof["game"] or "- (give --game)"),
             "seats: %s" % (", ".join(map(str, seats)) if seats else "- (give --seats)"),
             "button: %s" % (prof["button"] if prof["button"] is not None else "-"),
             "betting: %s" % (_view().betting(prof["betting"]) if prof.get("betting")
                              else "- (dealt without betting; add a [betting] table)")]
    console = _console()
    for line in lines:
        console.print(Text(line))
    table = Table(title="Effective house settings (* set by the file)", title_justify="left")
    table.add_column("setting", no_wrap=True)
    table.add_column("value", no_wrap=True)
    table.add_column("%s default" % prof["rules"], no_wrap=True)
    table.add_column("", no_wrap=True)
    for r in settings_table():
        name = r["name"]
        mark = ""
        if name in prof["house"]:
            mark = "* changed" if settings[name] != base[name] else "* same as the default"
        table.add_row(Text(name), Text(_plain(settings[name]), style="bold" if mark else ""),
                      Text(_plain(base[name])), Text(mark))
    console.print(table)
    n = len(changed(prof))
    console.print(Text("OK: %d setting%s changed from %s" % (n, "" if n == 1 else "s",
                                                             prof["rules"])))
    return 0
