"""benchscore.tcsexam"""
