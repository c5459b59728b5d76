"""SQL for the SQLite session store, built by pure functions and executed elsewhere.

Every value is bound as a parameter; id lists travel as one JSON array read with
``json_each``, so a statement's text never depends on the data and never hits
SQLite's limit on bound variables. User text reaches ``MATCH`` only through
:func:`harkback.stages.query.to_fts5`. The modules: ``statement`` (what every builder
returns), ``schema`` (the tables), ``fulltext`` (full-text search and its statistics),
``rows`` (sessions and messages read, and rows turned into records and back),
``writes`` (an ingest's statements and its plan) and ``vectors`` (dense vectors).
"""
