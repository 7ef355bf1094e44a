"""benchscore.rxn"""
