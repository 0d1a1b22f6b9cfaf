"""Facedown host package: drive, watch and replay the dealing shoe."""

from .firmware import version as _version

__version__ = _version()  # the release's, from firmware/version.py (one file)
