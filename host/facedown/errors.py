"""Errors a user can act on: one clear line and a hint, no traceback (unless --debug)."""


class UserError(Exception):
    exit_code = 2  # what the facedown command exits with (3: the shoe stopped on a fault)

    def __init__(self, message, hint=None):
        Exception.__init__(self, message)
        self.hint = hint
