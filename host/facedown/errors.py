"""Errors a user can act on: one clear line and a hint, no traceback (unless --debug)."""


class UserError(Exception):
    def __init__(self, message, hint=None):
        Exception.__init__(self, message)
        self.hint = hint
