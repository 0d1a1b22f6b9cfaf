"""docs/guide.md stays true to the code: every procedure id and every house setting is in it (and
its two tables match the firmware's, row by row), every `facedown <subcommand>` it names exists
(and every subcommand is named), the options it gives each subcommand exist, and its links
point at files that exist."""

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
                     r"([a-z][a-z0-9_-]*)([^\n|]*)")


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
        ("`%s`" % kind, str(code), advice) for code, kind, advice in faults.FAULTS]


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
