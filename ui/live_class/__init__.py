"""The live class: its JSON routes and the link from a framed game to the class."""
