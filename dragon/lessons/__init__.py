"""The lessons of chapters 3–5, one computation per module (no UI)."""
