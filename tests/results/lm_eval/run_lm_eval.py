"""lm-evaluation-harness's own command line with one more model, ``scripted``, that needs no download.

``python run_lm_eval.py run --model scripted --model_args model=NAME,answers=ANSWERS.json ...`` runs
``lm_eval``'s CLI as it is (``lm_eval.__main__.cli_evaluate``) after registering ``scripted``: for a
multiple-choice request it gives the chosen continuation log-likelihood 0 and every other -10, for a
generation request the text ANSWERS maps the prompt to. ANSWERS maps a prompt (the request's context)
to the index of the choice to pick or to the text to generate.
"""

from __future__ import annotations

import json

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model


@register_model("scripted")
class Scripted(LM):
    def __init__(self, model: str = "scripted", answers: str | None = None, **_: object) -> None:
        super().__init__()
        self.name = model
        self.answers = json.loads(open(answers, encoding="utf-8").read()) if answers else {}

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None) -> Scripted:
        from lm_eval.utils import simple_parse_args_string

        return cls(**simple_parse_args_string(arg_string))

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        out = []
        for request in requests:
            context, continuation = request.arguments
            choices = self.answers[context]["choices"]
            pick = self.answers[context]["pick"]
            out.append((0.0 if continuation.strip() == choices[pick] else -10.0, False))
        return out

    def generate_until(self, requests, disable_tqdm: bool = False):
        return [self.answers[request.arguments[0]]["text"] for request in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError


if __name__ == "__main__":
    from lm_eval.__main__ import cli_evaluate

    cli_evaluate()
