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

    def __init__(self, message: str, suggestions: tuple[str, ...] = (), output: str = ""):
        super().__init__(message)
        self.suggestions = suggestions
        self.output = output  # what the CLI prints before the error line (a partial answer)


class VerifyError(JaxmapError):
    """The runtime registries of the installed jax cannot be read."""


class SpecError(JaxmapError):
    """A generated primitive's name or options are invalid or contradict each other."""


class NameTaken(JaxmapError):
    """A primitive of that name already exists in the tree checked against."""


class TargetError(JaxmapError):
    """A file or directory to write is unusable: exists, not a directory, not writable."""


class AnchorError(JaxmapError):
    """An existing file lacks the statement an in-tree insertion goes after."""


class ArgumentError(JaxmapError):
    """A tool call's arguments do not fit the tool: unknown, missing or of the wrong type."""


class SnapshotError(JaxmapError):
    """A snapshot is missing, unreadable, or of another format."""


def describe(error: BaseException, debug_hint: bool = True) -> str:
    """The one line a user sees for `error` (the CLI's message; the MCP server's too)."""
    if isinstance(error, NotFound):
        tail = f"; did you mean: {', '.join(error.suggestions)}?" if error.suggestions else ""
        return f"jaxmap: {error}{tail}"
    if isinstance(error, JaxmapError):
        return f"jaxmap: error: {error}"
    hint = " (run with --debug for details)" if debug_hint else ""
    if isinstance(error, (OSError, RecursionError, MemoryError)):
        return f"jaxmap: error: {error}{hint}"
    return f"jaxmap: internal error: {type(error).__name__}: {error}{hint}"


def exit_code(error: BaseException) -> int:
    """The CLI's exit status for `error`."""
    return error.exit_code if isinstance(error, JaxmapError) else 3
