"""SPEC.md's generated tables: the prose of every command, event kind, error code, capability
and frame type, keyed by name, and the generator that joins it to protocol/wire.py's tables.

The shoe's image holds wire.py as it is (its tables carry names and formats, no prose); what a
reader of SPEC.md needs to know of each message is here, on the host. Regenerate SPEC.md after
changing either side:

    .venv/bin/python -m facedown.spec --update-spec

tests/test_wire_codec.py checks SPEC.md is current and that every table row has its prose.
"""

import os
import sys

from .firmware import PROTOCOL, load

W = load("wire")

SPEC_BEGIN = "<!-- messages -->"
SPEC_END = "<!-- /messages -->"

# command name -> (what its arguments do, what its reply holds): the text after the field names
COMMANDS = {'identify': ('read the catalogue document (JSON: protocol version, this table with each '
              'command\'s role and flags, error codes, capabilities) from this byte offset. The first command of a session. Its id, its '
              'argument and the first field of its reply are the same in every protocol version',
              'capabilities is the CAP_* bitmask; chunk is the document from offset on, as much '
              'as fits the frame; the host concatenates chunks until an empty one'),
 'config': ('set up the table: game name; seats bitmask (bit n = seat n); dealer button seat (0 = '
            'none, stud games); rules name; house rules as JSON text (it must fit the frame); its '
            'key "_profile", if any, is the house profile\'s name, kept with the configuration '
            "and in each hand's history, not a setting",
            'no data'),
 'status': ('read the table snapshot from this byte offset; offset 0 takes a new snapshot, 65535 '
            'asks for the counters only',
            'the hand number, the number the next new event will get, and the snapshot (JSON '
            "text, format defined by the firmware; never the stub's cards or their order) from "
            'offset on; the host concatenates chunks until an empty one'),
 'deal': ('deal count cards now; 0 = the whole rest of the initial deal', 'no data'),
 'street': ('deal the next street (board cards, or the next stud card)', 'no data'),
 'draw': ('repeated [seat u8, n u8, n card codes], the cards each seat discards (n = 0: stands '
          'pat); the replacements are dealt',
          'no data'),
 'action': ('record a betting action; kind 0 check, 1 call, 2 bet, 3 raise, 4 fold, 5 all-in, 6 '
            'complete (stud), 7 bring-in (stud). On a table configured with betting the action is '
            'checked as the bet command checks it, with no amount',
            'no data'),
 'report': ('report an irregularity; what 1 exposed card, 2 premature street, 3 misdeal; seat and '
            'card_index (1-based) where they apply, else 0',
            'no data'),
 'end': ('end the hand', 'no data'),
 'hand': ('start the next hand (the deck is shuffled) with the button on this seat; 0 = move the '
          'button to the next occupied seat',
          'no data'),
 'resume': ('retransmit the held events from this number on (after a reconnect: the last ACKed '
            'number + 1; 1 = all held events, 4294967295 = none, only new ones); the events '
            'before the start are taken as ACKed',
            'the oldest event number the device holds (= next when it holds none) and the number '
            'the next new event will get; retransmission starts at from_event clamped to '
            'first..next'),
 'sim_fault': ('arm a fault in the simulated mechanism: kind double_feed, boxed, foreign, '
               'duplicate, no_burn, jam, or power_cut (at = the journal record, counted from the '
               'next command on, whose writing the power cut interrupts); at = the upcoming card '
               'it hits (1-based); card = the card code for foreign and duplicate; flags for jam: '
               '1 mixed with the muck, 2 mixed with the burns, 4 order kept; kind pending only '
               'asks for the counters. Stopping faults (6.5): feed_jam (card = times the card '
               'sticks, 255 until cleared), empty, lid_open, reader_silent. Latching faults '
               '(6.6): internal (the at-th dealing command from now fails inside, after its '
               'handler ran), journal_fail (the at-th journal record from now fails to write), '
               "invariant (a card vanishes from the zones: the next dealing command's check "
               'fails). Simulator only (CAP_SIM), else DENIED',
               'faults armed and not hit yet, and cards fed in this hand (kind pending; 0, 0 for '
               'the others)'),
 'sim_deck': ('for the next hand, load the deck in this order (card codes, first dealt first; '
              'empty = shuffle) and, if flags bit 0 is set, seed the shuffle with seed (else a '
              'fresh random seed). Simulator only (CAP_SIM), else DENIED',
              'no data'),
 'ping': ('any value; also a keep-alive and an RTT sample', 'the same value'),
 'recover': ('after a power cut caught a card in flight and the shoe could not tell where it '
             'went: the card the operator found at the output (card code; 255 = none). Until then '
             'dealing commands answer WRONG_STATE',
             'no data'),
 'history': ('read a stored hand history from the journal in chunks (hand 0: the number of '
             'damaged areas the journal has (u16), then the stored hand numbers, u16 each). A '
             "hand's document: hand u16, first event u32, flags u8 (1 closed, 2 damaged), "
             "previous hash (32), hash (32, zeros while open), the HAND record's payload (u8 "
             'length + bytes), then its 4-byte entries',
             "the document's size in bytes, and the chunk from offset on"),
 'maintenance': ('leave the protocol for maintenance: the device replies OK, then its main loop '
                 'ends and the serial line (the USB CDC) belongs to the MicroPython REPL, where '
                 'mpremote copies and checks the firmware files (facedown deploy, facedown '
                 'verify); a reset returns to the protocol. WRONG_STATE while a hand is in '
                 'progress. Needs a maintenance session (or, on the reference shoe, the '
                 'maintenance key switch turned); logged in the audit log',
                 'no data'),
 'challenge': ('open a session of role 1 table or 2 maintenance',
               '16 random bytes for one login attempt'),
 'login': ('host nonce, HMAC proof, Unix time', "the device's HMAC proof, session number"),
 'logout': ('end the session', 'no data'),
 'audit': ('audit records from number first, in chunks', 'JSON lines, at most 4096 bytes'),
 'telemetry': ('counters and faults as JSON, in chunks', "the document's size and the chunk"),
 'raw': ('for an outside lab, between hands: 0 raw entropy bytes (the health-tested source, '
         'before the generator), 1 generator output; count bytes (1..180)',
         'the bytes'),
 'bet': ('a betting action with its amount, on a table configured with betting (else '
         'WRONG_STATE): kind as in the action command, + 128 when the dealer reports it as an '
         "action out of turn (the house setting out_of_turn deals with it); amount the seat's "
         "total for the round after a bet, raise, completion or all-in (raise to N), a call's "
         'chips or its total; 4294967295 = none (a check, a fold, a fixed-limit bet). The shoe '
         'checks whose turn it is and what the seat may do; a refused action changes nothing '
         '(BAD_ARGUMENT or WRONG_STATE naming the rule)',
         'no data'),
 'chips': ('a betting action with the chips the seat put out, on a table configured with betting '
           '(else WRONG_STATE): kind and amount the declaration as in the bet command (ignored '
           'when flags bit 0 says nothing was declared); put the chips pushed out by this '
           "action; smallest the smallest chip among them (0 = the table's chip); flags 1 not "
           'declared (the chips make the action), 2 one chip, 4 a string bet, 8 the player '
           'noticed the excess first. The shoe applies the procedure (TDA 40-41, 43-B, 44, 45, '
           '56; seed 003 by house settings no_chips and excess_chips), logs the action and then '
           'the procedure (its chips left in the pot in a bet event after it); a declared bet '
           'with no chips under no_chips void logs only the procedure. Refused like bet',
           'no data'),
 'stacks': ("repeated [seat u8, chips u32 LE], every seat's stack at the start of this hand, on a "
            'table configured with betting, after hand and before the first card (else '
            "WRONG_STATE); they replace the configuration's stacks for this hand: an action "
            'beyond a stack is refused, an all-in is the stack; each is logged as a stack event',
            'no data')}

EVENTS = {'move': 'a card moved from zone src to zone dst; card code = rank * 4 + suit (ranks 2..A = '
         '0..12, suits c d h s = 0..3, 52 = joker) in the low 6 bits; zones 0 stub, 1 board, 2 '
         'burns, 3 muck, 4 aside, 16 + n seat n, 255 nowhere; bit 7 of dst = face up',
 'shuffle': 'the stub was shuffled, mixed with (bits) 1 the stub, 2 the muck, 4 the burns; count '
            'cards',
 'cut': 'the deck was cut, count cards moved',
 'procedure': 'a rules procedure was applied (firmware procedure number), for seat (0 = none)',
 'action': 'a betting action (kinds as in the action command)',
 'remove': 'this card code was removed from play (e.g. a foreign card)',
 'pick': 'a card was picked at random from zone among candidates cards',
 'status': "the hand's status became 0 dealing, 1 complete, 2 misdeal, 3 void",
 'fault': 'a stopping fault (6.5) or a latched one (6.6); kind 1 jam, 2 empty, 3 lid_open, 4 '
          'reader_silent, 5 reader_fault, 6 motor_power, 7 double_feed_unresolved, 8 entropy, 9 '
          'carousel_lost_steps, 10 carousel_no_index, 11 carousel_pocket, 12 latched; dest = the '
          "zone the card in flight was going to (255 none); retries = the jam's tries",
 'bet': "follows an action event on a table that is bet: the seat's total bet for the round after "
        'that action, lo + 256 * mid + 65536 * hi chips; after a procedure event '
        '(chips-excess-pot): the chips it left in the pot; after a stack event: the stack',
 'stack': "the seat's stack at the start of the hand (the stacks command), its chips in the bet "
          'event after it'}

ERRORS = {'OK': 'success: the reply data follows',
 'BAD_FRAME': 'the CMD frame is valid on the wire but its body is malformed (empty)',
 'UNKNOWN_COMMAND': 'no command has this id',
 'BAD_ARGUMENT': "the arguments do not match the command's format, or a value is out of range",
 'WRONG_STATE': 'the command is not allowed now (e.g. deal before config)',
 'VERSION': 'the frame type or protocol version is not supported by the device',
 'BUSY': 'the device cannot take the command now (event buffer full, mechanism busy)',
 'DENIED': 'not permitted: a simulator command on a shoe, a higher role needed, a failed login, a '
           'forged or replayed ACMD',
 'FAULT': 'the mechanism or the engine failed; the message says why',
 'MECHANISM': 'a stopping fault (section 6.5): the message is its kind, a colon, and what the '
              'operator must do; once it is cleared, the same command (a new SEQ) finishes the '
              'step',
 'SESSION': 'an ACMD but no session (none, expired, ended, or a restart): log in'}

CAPABILITIES = {'CAP_SIM': 'simulated mechanism: the sim_* commands are available',
 'CAP_JOURNAL': 'events are journalled in flash: resume works across a power cycle',
 'CAP_AUTH': 'the shoe has its key: commands need a session of their role'}

FRAME_TYPES = {'CMD': 'command: u8 command id, then its arguments',
 'REPLY': 'reply to the command with the same SEQ: u8 status, then data',
 'EVENT': 'events: u32 first event number, u16 hand number, entries',
 'ACK': 'u32 highest event number received contiguously; never answered',
 'NAK': 'a corrupt frame was received; empty or a u8 hint; never answered',
 'ACMD': 'u32 session counter, 32-byte tag, then a CMD body'}


# a command's flags (wire.FLAGS), as SPEC.md explains them under the commands' table
FLAGS = {
    "read_only": "changes nothing the journal keeps (the shoe writes no flash for it)",
    "deals": "deals cards: refused while a stopping fault, a card to recover or a failed "
             "random source stands; the engine's invariants are checked after it",
    "play": "changes the play: refused while a fault is latched (end, and report misdeal, from "
            "the floor clear it)",
    "sim_only": "the simulator's (CAP_SIM); a shoe answers DENIED",
    "moves": "may move cards and write flash before replying (the host waits longer)",
    "timed": "the reply never waits on the mechanism (the host's RTT sample)",
}


def arg_names(fmt, doc):
    """The field names a MESSAGES doc starts with (one per format letter)."""
    if not fmt:
        return []
    return doc.split(": ", 1)[0].split(", ")


def _doc(names, text):
    return "%s: %s" % (", ".join(names.split()), text) if names else text


def messages():
    """The protocol's messages with their prose, as (id, name, direction, format, doc) rows in
    the identify catalogue's order; doc starts with the field names ("name1, name2: text")."""
    out = []
    for r in W.COMMANDS:
        args, reply = COMMANDS[r[W.C_NAME]]
        out.append((r[W.C_ID], r[W.C_NAME], W.DIR_CMD, r[W.C_ARGS], _doc(r[W.C_ARG_NAMES], args)))
        out.append((r[W.C_ID], r[W.C_NAME], W.DIR_REPLY, r[W.C_REPLY],
                    _doc(r[W.C_REPLY_NAMES], reply)))
    for op, name, fmt, names in W.EVENTS:
        out.append((op, name, W.DIR_EVENT, fmt, _doc(names, EVENTS[name])))
    return tuple(out)


MESSAGES = messages()


def _fields(fmt, names):
    if not fmt:
        return "-"
    names = names.split()
    return ", ".join("`%s` %s" % (fmt[i], names[i]) for i in range(len(fmt)))


def _flags(flags):
    return ", ".join(name.replace("_", "-") for bit, name in W.FLAGS if flags & bit) or "-"


def catalogue_markdown():
    """The message tables of SPEC.md (between <!-- messages --> and <!-- /messages -->)."""
    out = ["### Commands (CMD body: u8 id, then the arguments)", "",
           "| id | command | role | flags | arguments | reply data (after status 0) | "
           "description |",
           "|---:|---|---|---|---|---|---|"]
    for r in W.COMMANDS:
        args, reply = COMMANDS[r[W.C_NAME]]
        desc = args + (". Reply: " + reply if r[W.C_REPLY] else "")
        out.append("| %d | `%s` | %s | %s | %s | %s | %s |" % (
            r[W.C_ID], r[W.C_NAME], W.ROLES[r[W.C_ROLE]], _flags(r[W.C_FLAGS]),
            _fields(r[W.C_ARGS], r[W.C_ARG_NAMES]), _fields(r[W.C_REPLY], r[W.C_REPLY_NAMES]),
            desc))
    out += ["", "Flags: " + "; ".join("%s: %s" % (name.replace("_", "-"), FLAGS[name])
                                      for _bit, name in W.FLAGS) + ".",
            "", "### Event entries (EVENT body: 4 bytes op, a, b, c each; unused bytes are 0)", "",
            "| op | event | a, b, c | description |", "|---:|---|---|---|"]
    for op, name, fmt, names in W.EVENTS:
        out.append("| %d | `%s` | %s | %s |" % (op, name, _fields(fmt, names), EVENTS[name]))
    out += ["", "### Reply status codes", "", "| code | name | meaning |", "|---:|---|---|"]
    for code, name in W.ERRORS:
        out.append("| %d | `%s` | %s |" % (code, name, ERRORS[name]))
    out += ["", "### Capability bits (identify reply)", "", "| bit | name | meaning |",
            "|---:|---|---|"]
    for bit, name in W.CAPABILITIES:
        out.append("| 0x%02X | `%s` | %s |" % (bit, name, CAPABILITIES[name]))
    out += ["", "### Frame types", "", "| TYPE | name | direction | body |", "|---:|---|---|---|"]
    for t, name, way in W.FRAME_TYPES:
        out.append("| %d | `%s` | %s | %s |" % (t, name, way, FRAME_TYPES[name]))
    return "\n".join(out) + "\n"


def spec_path():
    return os.path.join(PROTOCOL, "SPEC.md")


def update_spec(path=None):
    """Rewrite the generated part of SPEC.md at path; True if it changed."""
    path = path or spec_path()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    a = text.index(SPEC_BEGIN) + len(SPEC_BEGIN)
    b = text.index(SPEC_END)
    new = text[:a] + "\n" + catalogue_markdown() + text[b:]
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return new != text


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--update-spec"]:
        print("updated" if update_spec() else "up to date", spec_path())
    else:
        sys.stdout.write(catalogue_markdown())


if __name__ == "__main__":
    main()
