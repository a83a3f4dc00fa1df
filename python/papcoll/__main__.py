"""`python -m papcoll`: the command line, as the `papcoll` command runs it (papcoll.cli), for
an environment whose scripts folder is not on PATH. In the command line's room: the library
never imports it."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
