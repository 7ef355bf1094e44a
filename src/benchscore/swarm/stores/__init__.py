"""Stores behind one interface (:class:`~benchscore.swarm.stores.base.TaskPool`): SQLite,
PostgreSQL, and a Redis mirror attachable to either."""
