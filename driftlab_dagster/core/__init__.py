"""The study itself, in plain Python: nothing under `core` imports dagster.

world -> pages -> store (versioned facts, extraction log) -> maintenance -> retrieval -> designs/readers
-> evaluation -> reports. `study.run_study` runs the whole deterministic study in memory.
"""
