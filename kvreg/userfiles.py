"""Guards for the files a user names on the command line (a log, a config.json, a weights index).

Only a regular file (a symlink to one included) of a bounded size is opened: a named pipe blocks the open or
the read forever, a device (/dev/zero) never ends, and a file of gigabytes fills memory.  One function each for
the check and the bounded read, so every reader of user input refuses alike (issue 15: ``import-hf /dev/zero``
ate memory without bound while ``ingest-log /dev/zero`` was refused).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegularFile(ValueError):
    """``path`` is a directory, pipe, socket or device; ``kind`` says which ("a named pipe")."""

    def __init__(self, path: Path | str, kind: str):
        super().__init__(f"{path} is {kind}")
        self.path, self.kind = path, kind


class FileTooLarge(ValueError):
    """``path`` holds more than ``limit`` bytes; ``size`` is its size in bytes (None: only known to be over)."""

    def __init__(self, path: Path | str, size: int | None, limit: int):
        got = f"{size:,} bytes" if size is not None else f"over {limit:,} bytes"
        super().__init__(f"{path}: {got}, more than the {limit:,} bytes read")
        self.path, self.size, self.limit = path, size, limit


def check_regular_file(path: Path | str, limit: int) -> int:
    """The size in bytes of ``path``, refused before anything is opened unless it is a regular file of at most
    ``limit`` bytes.

    Raises:
        OSError: it cannot be examined (missing, no permission).
        NotRegularFile: a directory, named pipe, socket or device.
        FileTooLarge: more than ``limit`` bytes.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a named pipe" if stat.S_ISFIFO(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise NotRegularFile(path, kind)
    if st.st_size > limit:
        raise FileTooLarge(path, st.st_size, limit)
    return st.st_size


def read_bounded(path: Path | str, limit: int) -> bytes:
    """The bytes of ``path`` after :func:`check_regular_file`, never more than ``limit`` read (a file that grew
    after the check is refused, not read whole).

    Raises:
        OSError, NotRegularFile, FileTooLarge: as :func:`check_regular_file`.
    """
    check_regular_file(path, limit)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(path, None, limit)
    return data
