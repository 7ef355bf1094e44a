"""benchscore.swarm"""
