"""Session stores: SQLite (``sqlite``, with its connection, search, vectors and writes in
``sqlite_*`` modules over the statements in ``sql``), in memory (``memory``, matching with
``memory_match``), and what lives beside the sessions (summary cache, import ledger)."""
