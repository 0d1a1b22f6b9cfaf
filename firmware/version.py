# The release's version: the shoe's firmware (identify), the host package (`facedown
# --version`, pyproject.toml's dynamic version) and the protocol codec they ship together.
# The one place it is written. (protocol/wire.py's PROTOCOL_VERSION is the frame format's own
# number, raised only when frames change.)
VERSION = "0.3.1"
