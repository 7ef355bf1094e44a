"""The statistics of the house, the only ones: 95 % intervals (:mod:`.intervals`), paired tests,
Holm, rank intervals and letters (:mod:`.paired`), simultaneous rank sets of large boards (:mod:`.ranks`),
and ``benchscore compare``'s mechanism (:mod:`.compare`). Imports only :mod:`benchscore.common`."""
