"""Named suites and references: a ``--suite``/``--reference`` value resolved to a file.

Named suites and references (``lite``, ``full``, or any other name) resolve from a data folder
(``--data-dir`` or the ``TCSEXAM_DATA`` environment variable) laid out as::

    DATA/suites/NAME.json        a suite manifest
    DATA/references/NAME.json    the fixed reference of that suite

The official TCSExam manifests and the ``paper-k3-fixed-260925`` values are not public and are
not bundled; without a data folder a named suite or reference is refused in one line.
This module is light (no numpy, no pydantic): the CLI imports it at start-up.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchscore.common.errors import BadInput

DATA_ENV = "TCSEXAM_DATA"
OFFICIAL_NAMES = ("lite", "full")


def _is_path(value: str) -> bool:
    return "/" in value or os.sep in value or value.endswith(".json")


def resolve(value: str, what: str, data_dir: Path | None) -> Path:
    """A ``PATH`` (contains a slash or ends in .json) or a NAME looked up in the data folder.

    ``what`` is ``suite`` or ``reference``.
    """
    if _is_path(value):
        return Path(value)
    folder = "suites" if what == "suite" else "references"
    root = (
        data_dir
        if data_dir is not None
        else (Path(os.environ[DATA_ENV]) if os.environ.get(DATA_ENV) else None)
    )
    if root is not None:
        from benchscore.common.provenance import located, note_read

        candidate = Path(located(root)) / folder / f"{value}.json"  # verify's staged copy of the folder, if any
        if candidate.is_file():
            note_read(root, f"{folder}/{value}.json", candidate)  # provenance: the file read through --data-dir
            return candidate
        where = f"{candidate} does not exist"
    else:
        where = f"no data folder given (--data-dir or {DATA_ENV})"
    official = (
        f"the official TCSExam {value!r} {what} is not public and not bundled"
        if value in OFFICIAL_NAMES
        else f"{what} {value!r} is not installed"
    )
    raise BadInput(
        f"{official} ({where}); pass --{what} PATH to a {what} file, or run `tcsexam demo` "
        "for a bundled synthetic example"
    )
