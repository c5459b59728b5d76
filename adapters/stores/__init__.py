"""Session stores: SQLite (``sqlite`` over the statements in ``sql``), in memory
(``memory``), and what lives beside the sessions (summary cache, import ledger)."""
