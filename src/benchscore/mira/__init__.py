"""benchscore.mira"""
