"""Readers of other tools' files: inspect_ai logs (:mod:`.inspect_logs`), lm-evaluation-harness
``--log_samples`` output (:mod:`.lm_eval`), Every Eval Ever records (:mod:`.every_eval_ever`). Each
imports its optional dependency lazily, and only :mod:`benchscore.common`."""
