"""The live class: its rules (what the projector, the teacher and each student see) and its store (SQLite, or
PostgreSQL at DATABASE_URL)."""
