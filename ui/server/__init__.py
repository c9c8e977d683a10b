"""Serving plumbing, no lessons: body and session bounds, the first script, heap, admission, the queue's wake-ups, refused routes, the wait page."""
