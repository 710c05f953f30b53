"""The `jaxmap` command's entry point: the CLI, with Ctrl-C answered by one line and
exit status 130 at any moment, even while the CLI's own modules are still importing.

What the start-up imports build lives until the process ends, so the cyclic garbage
collector is kept off while they run and then told to leave them alone (frozen): it
would otherwise scan them again and again, and once more at exit, about 10 ms of a
20 ms question. The servers (`jaxmap mcp`, `jaxmap lsp`) hand them back to it."""

import gc
import sys


def run() -> None:
    gc.disable()
    try:
        from jaxmap.cli import main

        gc.freeze()
        gc.enable()
        code = main()
    except KeyboardInterrupt:
        sys.stderr.write("jaxmap: aborted\n")
        code = 130
    sys.exit(code)
