"""docs/guide.md stays true to the code: every procedure id and every house setting is in it (and
its two tables match the firmware's, row by row), every `facedown <subcommand>` it names exists
(and every subcommand is named), the options it gives each subcommand exist, and its links
point at files that exist; its sample session, played on a `facedown sim --seed 7`, prints
every line it shows; `facedown --version` says what the troubleshooting table compares."""

import argparse
import os
import re

import pytest

from conftest import ROOT

from shoe import house, procedures
from facedown.cli import build_parser

GUIDE = os.path.join(ROOT, "docs", "guide.md")


@pytest.fixture(scope="module")
def guide():
    with open(GUIDE, encoding="utf-8") as f:
        return f.read()


def subparsers():
    """{subcommand: its ArgumentParser}, as `facedown --help` lists them."""
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return parser, dict(action.choices)
    raise AssertionError("facedown has no subcommands")


def code_texts(text):
    """The guide's code: fenced blocks, indented blocks and inline code spans."""
    out = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    out += [m for m in re.findall(r"((?:^    .*\n)+)", prose, re.M)]
    out += re.findall(r"`([^`\n]+)`", prose)
    return out


# `facedown`, optionally global options (`--port PORT`, `--debug`), then the subcommand
COMMAND = re.compile(r"(?<![\w.$/-])(?:\S*/)?facedown((?:\s+--(?:port\s+\S+|debug))*)\s+"
                     r"([a-z][a-z0-9_-]*)([^\n|;]*)")


def named_commands(text):
    """[(subcommand, rest of the line)] for every `facedown <word>` in the guide's code."""
    found = []
    for chunk in code_texts(text):
        for line in chunk.splitlines():
            line = re.sub(r"(^|\s)#.*", "", line)  # a shell comment is prose
            for m in COMMAND.finditer(line):
                found.append((m.group(2), m.group(3)))
    return found


def table_rows(text, marker):
    """The rows of the table between <!-- marker: ... --> and <!-- /marker -->, as cell lists."""
    m = re.search(r"<!-- %s:.*?-->\n(.*?)<!-- /%s -->" % (marker, marker), text, re.S)
    assert m, "docs/guide.md has no <!-- %s --> table" % marker
    rows = []
    for line in m.group(1).splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header


def _text(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


def test_every_procedure_id_is_in_the_guide(guide):
    missing = [row[0] for row in procedures.PROCEDURES if "`%s`" % row[0] not in guide]
    assert not missing, "docs/guide.md does not mention procedures: %s" % ", ".join(missing)


def test_every_house_setting_is_in_the_guide(guide):
    missing = [row[0] for row in house.SETTINGS if "`%s`" % row[0] not in guide]
    assert not missing, "docs/guide.md does not mention house settings: %s" % ", ".join(missing)


def test_procedure_table_matches_the_catalogue(guide):
    want = [["`%s`" % pid, tda, rrop, text] for pid, tda, rrop, text in procedures.PROCEDURES]
    assert table_rows(guide, "procedures") == want


def test_settings_table_matches_the_firmware(guide):
    want = [["`%s`" % name, _text(tda), _text(rob), ", ".join(_text(a) for a in allowed), src]
            for name, tda, rob, allowed, src in house.SETTINGS]
    assert table_rows(guide, "settings") == want


def test_fault_table_matches_the_firmware(guide):
    from shoe import faults

    rows = table_rows(guide, "faults")
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("`%s`" % kind, str(code), faults.advice(code)) for code, kind in faults.FAULTS]


def test_every_named_subcommand_exists(guide):
    _, subs = subparsers()
    named = named_commands(guide)
    assert len(named) > 50, "the guide's commands were not found (%d)" % len(named)
    unknown = sorted(set(sub for sub, _ in named if sub not in subs))
    assert not unknown, "docs/guide.md names facedown subcommands that do not exist: %s" % (
        ", ".join(unknown))


def test_every_subcommand_is_in_the_guide(guide):
    _, subs = subparsers()
    named = set(sub for sub, _ in named_commands(guide))
    missing = sorted(set(subs) - named)
    assert not missing, "docs/guide.md does not show: %s" % ", ".join(
        "facedown " + m for m in missing)


def test_options_given_to_subcommands_exist(guide):
    parser, subs = subparsers()
    wrong = set()
    for sub, rest in named_commands(guide):
        if sub not in subs:
            continue
        known = set(subs[sub]._option_string_actions) | set(parser._option_string_actions)
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
            if flag not in known:
                wrong.add("facedown %s %s" % (sub, flag))
    assert not wrong, "docs/guide.md gives options that do not exist: %s" % ", ".join(
        sorted(wrong))


def test_links_point_at_files(guide):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", guide):
        if target.startswith(("http://", "https://", "#")):
            continue
        path = os.path.normpath(os.path.join(ROOT, "docs", target.split("#")[0]))
        if not os.path.exists(path):
            broken.append(target)
    assert not broken, "docs/guide.md links to missing files: %s" % ", ".join(broken)


def test_anchors_exist(guide):
    """Every #anchor link points at a heading of the guide (GitHub's slug rules)."""
    slugs = set()
    for title in re.findall(r"^#+ (.+)$", guide, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        slugs.add(slug)
    missing = [a for a in re.findall(r"\]\(#([^)]+)\)", guide) if a not in slugs]
    assert not missing, "docs/guide.md links to missing headings: %s" % ", ".join(missing)


def session_steps(text):
    """[(command argv, pattern of its whole output)] of the guide's sample session: each line
    shown literally (the device id and port as any), `...` any lines."""
    m = re.search(r"<!-- session:.*?-->\n(.*?)<!-- /session -->", text, re.S)
    assert m, "docs/guide.md has no <!-- session --> block"
    steps = []
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        line = line[4:]
        if line.startswith("$ facedown "):
            steps.append((re.sub(r"\s+#.*", "", line[len("$ facedown "):]).split(), []))
        elif line.startswith("$ "):
            continue  # (the export)
        else:
            steps[-1][1].append(line)
    out = []
    for argv, shown in steps:
        pattern = ""
        for line in shown:
            if line == "...":
                pattern += r"(?:.*\n)*?"
            else:
                text = re.escape(line)
                text = re.sub(r"sim\\-[0-9a-f]{8}", r"sim-[0-9a-f]{8}", text)
                pattern += text.replace(re.escape("/dev/pts/3"), r"/dev/pts/\d+") + r"\n"
        out.append((argv, pattern))
    return out


def sim_lines_as_shown(guide, sim):
    """facedown sim's first two lines, as the guide shows them for `facedown sim --seed 7`."""
    m = re.search(r"\$ \.venv/bin/facedown sim --seed 7\n    (.*)\n    (.*)\n", guide)
    assert m, "the guide shows no `facedown sim --seed 7`"
    first, second = sim.lines[0].rstrip("\n"), sim.proc.stdout.readline().rstrip("\n")
    pattern = re.escape(m.group(1))
    for shown, real in (("sim\\-c00bbe94", r"sim-[0-9a-f]{8}"), ("/dev/pts/3", r"/dev/pts/\d+"),
                        ("/tmp/facedown\\-flash\\-k2j8x0qa", r"\S+"),
                        ("/home/you/\\.config/facedown", r"\S+")):
        pattern = pattern.replace(shown, real)
    assert re.fullmatch(pattern, first), (first, m.group(1))
    assert re.fullmatch(re.escape(m.group(2)).replace("/dev/pts/3", r"/dev/pts/\d+"),
                        second), second


@pytest.mark.slow
def test_the_sample_session_prints_what_the_guide_shows(guide, tmp_path):
    from cli import Sim, run

    steps = session_steps(guide)
    assert len(steps) >= 14
    with Sim("--flash", tmp_path / "flash", "--seed", "7") as sim:
        sim_lines_as_shown(guide, sim)
        for argv, pattern in steps:
            proc = run(*argv, FACEDOWN_PORT=sim.port)
            out = proc.stdout + proc.stderr
            assert "Traceback" not in out
            if pattern:  # the lines shown, in order, and nothing else where no "..." is
                assert re.fullmatch(pattern, out), "facedown %s printed:\n%s" % (
                    " ".join(argv), out)
            elif argv[0] in ("action", "street", "deal", "end", "report"):
                assert "holdem | Poker TDA 2024" in out, out  # (the table, as the guide says)


def test_version_names_what_identify_is_compared_with(guide):
    from cli import run

    out = run("--version").stdout
    assert re.fullmatch(r"facedown \S+ \(protocol 1; deploys firmware [0-9.]+\)\n", out), out
    with open(os.path.join(ROOT, "firmware", "version.py")) as f:
        firmware = re.search(r'VERSION = "([^"]+)"', f.read()).group(1)
    assert "deploys firmware %s)" % firmware in out
    assert out.startswith("facedown %s " % firmware)  # one version: host and firmware
    assert "facedown --version` prints the protocol this host speaks and the firmware it " \
        "deploys" in guide


def test_the_values_the_host_checks_fail_as_the_guide_says(guide):
    """Troubleshooting's list of what the host checks before anything is sent: each message as
    the guide gives it, one line (and a hint), exit status 2, no shoe needed."""
    from cli import run

    for argv, message in (
            (("config", "--game", "holdem", "--seats", "1-11"),
             "argument --seats: seat 11: seats are 1..10"),
            (("action", "11", "call"), "argument seat: seats are 1..10, not 11"),
            (("config", "--game", "holdem"), "config needs --seats (or a --profile that sets "
                                             "seats)"),
            (("report", "exposed"), "report exposed needs --seat S and --card K"),
            (("config", "--game", "holdem", "--seats", "1-6", "--house", "foo"),
             "--house takes SETTING=VALUE, not 'foo'"),
            (("draw", "--discard", "1:Zz"), "--discard 1:Zz: unknown card 'Zz'")):
        proc = run("--port", "/dev/facedown-not-used", *argv)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.splitlines()
        assert lines[0] == "facedown: error: " + message and len(lines) <= 2, proc.stderr
        assert "`%s`" % message.replace("\n", " ") in re.sub(r"\s+", " ", guide) or \
            message in re.sub(r"`\s+`|\s+", " ", guide), message

