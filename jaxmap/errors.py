"""One exception hierarchy; every message says what went wrong and what to do next."""


class JaxmapError(Exception):
    """Base of every error jaxmap reports to a user."""

    exit_code = 2


class RootError(JaxmapError):
    """The root to index does not exist, is not a directory, or holds no Python."""


class StoreError(JaxmapError):
    """The on-disk index cannot be read or written."""


class NotFound(JaxmapError):
    """A name matched nothing in the index."""

    exit_code = 1

    def __init__(self, message: str, suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.suggestions = suggestions


class VerifyError(JaxmapError):
    """The runtime registries of the installed jax cannot be read."""
