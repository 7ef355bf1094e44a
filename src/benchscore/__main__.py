"""``python -m benchscore ...``: the same as the ``benchscore`` console script (e.g. from a venv whose
scripts are not on PATH)."""

from benchscore.cli import main

if __name__ == "__main__":
    main()
