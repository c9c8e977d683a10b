"""Serving plumbing, no lessons: body limits, the first script, heap and session bounds, admission limits, refused routes."""
