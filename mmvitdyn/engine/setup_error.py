"""The error of a problem the user can fix in a command line or a config."""


class SetupError(Exception):
    """A command-line or config problem the user can fix; tools print it plainly."""
