"""Stand-alone evaluator scripts copied into every build folder (standard library only)."""
