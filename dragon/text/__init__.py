"""Text in, tokens out: the Chinese and English analysers, their lexicons, and how a line sounds."""
