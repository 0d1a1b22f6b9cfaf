"""Facedown host package: drive, watch and replay the dealing shoe."""

__version__ = "0.1.0"
