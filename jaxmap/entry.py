"""The `jaxmap` command's entry point: the CLI, with Ctrl-C answered by one line and
exit status 130 at any moment, even while the CLI's own modules are still importing."""

import sys


def run() -> None:
    try:
        from jaxmap.cli import main

        code = main()
    except KeyboardInterrupt:
        sys.stderr.write("jaxmap: aborted\n")
        code = 130
    sys.exit(code)
