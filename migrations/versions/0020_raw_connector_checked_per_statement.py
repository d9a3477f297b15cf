"""On PostgreSQL, a raw record's connector is checked once a statement instead of once a row.

The foreign key ``raw_records.connector_id`` → ``connectors.id`` checked each row on its own: after
a batch's COPY, the server ran one query for each of its 500 rows, each taking a ``FOR KEY SHARE``
lock on the same connector row. That was about a fifth of ``commit_batch``'s time: 50,000 rows in
batches of 500 (``bench.crawl``'s ingest rows, this machine, 2026-12-03, 19:55-20:02 UTC) stored
36,800-43,300 rows/s with the key in twelve runs and 54,200-55,400 with the triggers below in six,
against 55,500-64,200 for psycopg's plain COPY into a copy of the table in the same runs.

The same rules hold, checked once per statement:

* an ``INSERT`` or ``COPY`` into ``raw_records`` that names a connector not in ``connectors``
  fails with ``foreign_key_violation`` (SQLSTATE 23503), as the key's check did. It first locks
  the connectors it names (``FOR KEY SHARE``, as the key's check did), so a concurrent delete of
  one waits for the insert's transaction and then sees its rows;
* a connector that raw records name cannot be deleted, nor its id changed (23503 too), and
  ``connectors`` cannot be truncated while ``raw_records`` holds rows.

SQLite keeps the foreign key: it checks it in-process, and changing it would rebuild the table.
The models keep the ``ForeignKey`` with ``info`` naming this revision
(``rareindex.storage.schema.CHECKED_BY_TRIGGERS``). The downgrade restores the key.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03 20:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

FOREIGN_KEY = "fk_raw_records_connector_id_connectors"

PG_UPGRADE = r"""
CREATE OR REPLACE FUNCTION ri_raw_records_name_known_connectors() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  unknown text;
BEGIN
  -- Hold the named connectors as a foreign key's check would: a DELETE of one waits for us.
  PERFORM 1 FROM connectors c
    WHERE c.id IN (SELECT DISTINCT n.connector_id FROM inserted n) FOR KEY SHARE OF c;
  SELECT n.connector_id INTO unknown FROM inserted n
    WHERE NOT EXISTS (SELECT 1 FROM connectors c WHERE c.id = n.connector_id) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'insert into "raw_records" names connector "%", which is not in "connectors"',
      unknown USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ri_connectors_keep_their_raw_records() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    IF EXISTS (SELECT 1 FROM raw_records) THEN
      RAISE EXCEPTION 'cannot truncate "connectors": raw records name its connectors'
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
    RETURN NEW;
  END IF;
  IF EXISTS (SELECT 1 FROM raw_records r WHERE r.connector_id = OLD.id) THEN
    RAISE EXCEPTION '% of connector "%" refused: raw records name it', TG_OP, OLD.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END $$;

ALTER TABLE raw_records DROP CONSTRAINT IF EXISTS fk_raw_records_connector_id_connectors;

CREATE TRIGGER raw_records_name_known_connectors AFTER INSERT ON raw_records
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ri_raw_records_name_known_connectors();
CREATE TRIGGER connectors_keep_their_raw_records BEFORE DELETE OR UPDATE OF id ON connectors
  FOR EACH ROW EXECUTE FUNCTION ri_connectors_keep_their_raw_records();
CREATE TRIGGER connectors_keep_their_raw_records_truncate BEFORE TRUNCATE ON connectors
  FOR EACH STATEMENT EXECUTE FUNCTION ri_connectors_keep_their_raw_records();
"""

PG_DOWNGRADE = r"""
DROP TRIGGER IF EXISTS connectors_keep_their_raw_records_truncate ON connectors;
DROP TRIGGER IF EXISTS connectors_keep_their_raw_records ON connectors;
DROP TRIGGER IF EXISTS raw_records_name_known_connectors ON raw_records;
DROP FUNCTION IF EXISTS ri_connectors_keep_their_raw_records();
DROP FUNCTION IF EXISTS ri_raw_records_name_known_connectors();
ALTER TABLE raw_records ADD CONSTRAINT fk_raw_records_connector_id_connectors
  FOREIGN KEY (connector_id) REFERENCES connectors (id);
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_UPGRADE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_DOWNGRADE)
