"""Run `benchscore mira judge` against a local stand-in judge (no network, no API key).

    python examples/mira/judge_locally.py PACKETS_DIR VERDICTS.json [ANSWER]
    python examples/mira/judge_locally.py CALIBRATION.jsonl VERDICTS.json [ANSWER]   # a calibration set

Starts benchscore's local OpenAI-compatible test server on 127.0.0.1, whose model `local-judge`
answers ANSWER (default `pass`) to every packet, and runs the real `mira judge` command against it
(`--calibration` when the first argument is a calibration set: the judge's agreement with its known
verdicts is printed). With a real endpoint, call `benchscore mira judge --base-url URL --model M ...`
directly. `examples/mira/verdicts_stand_in.json` is what this stand-in answered to the bundled
calibration set (`pass` to all 8 packets, as the three small local models did).
"""

from __future__ import annotations

import sys

from benchscore.common.testserver import OpenAITestServer
from benchscore.mira.cli import group


def main() -> None:
    packets, output = sys.argv[1], sys.argv[2]
    answer = sys.argv[3] if len(sys.argv) > 3 else "pass"
    with OpenAITestServer(models=["local-judge"], responder=lambda model, messages: answer) as srv:
        which = ["--calibration", packets] if packets.endswith(".jsonl") else ["--packets", packets]
        group.main(["judge", *which, "--base-url", srv.base_url, "--model", "local-judge",
                    "--output", output], standalone_mode=True)


if __name__ == "__main__":
    main()
