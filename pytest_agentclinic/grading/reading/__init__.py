"""The reading wing: stage 1, from an answer's text to its diagnostic statement and the names it
gives with their roles (and the option an MCQ reply chose)."""
