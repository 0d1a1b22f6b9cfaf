# What every shoe's image ships, whatever its hardware face: the boot, the device, the link, the
# journal and the rules engine. A manifest in micropython-lib's style (module(), package(),
# include()), read by host/facedown/build.py (build_image, manifest_files); paths are the
# image's: firmware/* at its root, protocol/wire.py as wire.py, hardware/pinmap.json as
# pinmap.json. Every file of the firmware is in some target's manifest (the build refuses one
# that is in none), and nothing here imports a module that a target leaves out
# (tests/test_build.py).
module("main.py")  # kept as source: the board boots it
module("device.py")  # the dispatch and the reply cache
module("events.py")  # the events kept until acknowledged
module("play.py")  # the hand's commands
module("version.py")  # the release's version (identify)
module("rare.py")  # the device's rare paths, imported on demand
module("history.py")  # the history command, imported on demand
module("link.py")
module("session.py")  # the sessions: each ACMD checked
module("login.py")  # the challenge and login commands, imported on demand
module("integrity.py")
module("journal.py")
module("journalread.py")  # the journal read back: at power-up and for history, resume, verify
module("journalrec.py")  # the journal's record format (journal.py and journalread.py)
module("crc.py")  # the CRC-16 of the journal, the reader's lines and the protocol
module("caps.py")  # the protocol's capability bits (the hardware faces bring theirs)
module("catalogue.py")  # protocol/catalogue.py: identify's catalogue, imported on demand
module("recorder.py")
module("audit.py")
module("panel.py")
module("wire.py")  # protocol/wire.py, as it is (its tables carry no prose)
package("shoe")  # the rules engine: pure logic
module("hal/__init__.py")
module("hal/base.py")  # the hardware layer's interface, its defaults, the Clock
module("hal/store.py")
module("hal/reserve.py")
module("hal/flashdev.py")  # RamFlash: a locked shoe's journal in RAM
module("hal/motion.py")
