"""Which of the store's tables this role may not vacuum, and so why a ``VACUUM`` did nothing.

The server skips a table its role may not vacuum with a mere warning: ``harkback optimize``
said "vacuumed" having done nothing, and ``harkback redact`` left the old row versions of
what it redacted in the tables' files unsaid. Both ask first (:data:`NOT_VACUUMABLE`).
"""

from __future__ import annotations

NOT_VACUUMABLE = (
    "SELECT string_agg(c.relname || ' (owner ' || pg_get_userbyid(c.relowner) || ')', ', ' "
    "ORDER BY c.relname COLLATE \"C\") "
    "FROM pg_class c WHERE c.oid = ANY(%s::regclass[]) AND NOT pg_has_role(c.relowner, "
    "'USAGE') AND NOT (NOT c.relisshared AND pg_has_role((SELECT d.datdba FROM pg_database d "
    "WHERE d.datname = current_database()), 'USAGE')) "
    "AND NOT CASE WHEN current_setting('server_version_num')::int >= 170000 "
    "THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END")
"""The tables of those given (as one parameter, a list of names) that this role may not
vacuum, as ``name (owner role), ...`` (NULL: none): it is (a member of) neither their
owner nor the database's owner (who may vacuum every table of the database that is not
shared, on every version), nor, from PostgreSQL 17 on, holds ``MAINTAIN`` on them."""
