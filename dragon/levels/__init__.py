"""The levels: their data types, the loader of assets/levels/*.yaml, claims checked against the real attention,
puzzles, variants and teachers' own levels."""
