"""Serving plumbing, no lessons: body and session bounds, the first script, heap, admission, refused routes, the wait page."""
