"""The level rooms: the slider levels, chapter 1's match, and one module per lab level kind, on the lab toolkit; registry.py names which serves each kind."""
