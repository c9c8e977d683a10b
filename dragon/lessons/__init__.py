"""Chapter 3's lessons, one computation per module (no UI): head_math, race, fusion, heads_experiment, facts."""
