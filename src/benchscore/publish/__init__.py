"""What benchscore publishes for people: the HTML report (:mod:`.report`), compare's figures
(:mod:`.compare_figures`), the leaderboard site and its Every Eval Ever export (:mod:`.leaderboard`).
May import every room below it; only the CLI imports it."""
