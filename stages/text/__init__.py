"""Text shared by indexing and querying: tokens and CJK bigrams (``tokens``), English
irregular verbs (``irregular``)."""
