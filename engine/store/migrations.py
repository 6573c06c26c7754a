"""Small named schema migrations, applied in order, each in its own transaction.

``PRAGMA user_version`` holds the schema version (mirrored in ``meta``).  An app that finds a version higher than
the last migration it knows refuses the vault (:class:`~engine.errors.VaultTooNew`) instead of touching it.

Deletion is uniform by construction: every object table's ``id`` references ``objects(id) ON DELETE CASCADE`` and
removes its ``objects`` row when deleted, the FTS tables follow their base rows by trigger, and ``embeddings`` rows
(which cascade from ``objects``) remove their vector by a trigger created with each vector table.  Deleting an id
from ``objects`` therefore removes the row, its full-text entry and its vector in the same transaction.

Every released schema has a fixture vault in ``tests/fixtures/`` that the tests upgrade to the current one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection

#: Tables whose ``id`` is a global id registered in ``objects`` (kind = the singular noun).
OBJECT_TABLES: dict[str, str] = {
    "event": "events",
    "fact": "facts",
    "subject": "subjects",
    "conflict": "conflicts",
    "episode": "episodes",
    "understanding": "understandings",
    "document": "documents",
    "section": "sections",
    "span": "spans",
    "collection": "collections",
    "job": "jobs",
    "receipt": "receipts",
    "quarantine": "quarantine",
    "observation": "observations",
}
#: The object tables of the first schema: m001 made their id-release triggers; later tables make their own.
_M001_OBJECT_TABLES = (
    "events",
    "facts",
    "subjects",
    "conflicts",
    "episodes",
    "understandings",
    "documents",
    "sections",
    "spans",
    "collections",
    "jobs",
    "receipts",
    "quarantine",
)


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``version`` it produces, a name, and the function that applies it."""

    version: int
    name: str
    apply: Callable[[Connection], None]


def _script(conn: Connection, sql: str) -> None:
    for statement in _split_sql(sql):
        conn.exec_driver_sql(statement)


def _split_sql(sql: str) -> list[str]:
    """Split a script on ``;`` at line ends, keeping trigger bodies (``BEGIN … END;``) whole."""
    statements: list[str] = []
    buf: list[str] = []
    depth = 0
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.endswith(" BEGIN") or upper == "BEGIN":
            depth += 1
        if stripped.endswith(";"):
            if depth and upper.startswith("END"):
                depth -= 1
            if depth == 0:
                statements.append("\n".join(buf).rstrip().rstrip(";"))
                buf = []
    if buf:
        statements.append("\n".join(buf))
    return statements


def _object_cleanup_triggers(tables: tuple[str, ...] = _M001_OBJECT_TABLES) -> str:
    return "\n".join(
        f"CREATE TRIGGER {table}_release_id AFTER DELETE ON {table} BEGIN\n"
        f"  DELETE FROM objects WHERE id = old.id;\nEND;"
        for table in tables
    )


def _fts(table: str, columns: tuple[str, ...]) -> str:
    """An external-content FTS5 index over ``table`` kept in step by triggers (secure-delete on)."""
    cols = ", ".join(columns)
    new_vals = ", ".join(f"new.{c}" for c in columns)
    old_vals = ", ".join(f"old.{c}" for c in columns)
    fts = f"{table}_fts"
    return f"""
CREATE VIRTUAL TABLE {fts} USING fts5({cols}, content='{table}', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2');
INSERT INTO {fts}({fts}, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER {table}_fts_ai AFTER INSERT ON {table} BEGIN
  INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_vals});
END;
CREATE TRIGGER {table}_fts_ad AFTER DELETE ON {table} BEGIN
  INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_vals});
END;
CREATE TRIGGER {table}_fts_au AFTER UPDATE OF {cols} ON {table} BEGIN
  INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_vals});
  INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_vals});
END;
"""


M001_SQL = """
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE objects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  created_at REAL NOT NULL
);
CREATE INDEX objects_kind ON objects(kind);

CREATE TABLE subjects (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'entity',
  summary TEXT NOT NULL DEFAULT '',
  aliases TEXT NOT NULL DEFAULT '[]',
  tags TEXT NOT NULL DEFAULT '[]',
  merged_into INTEGER REFERENCES subjects(id) ON DELETE SET NULL,
  generation INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE UNIQUE INDEX subjects_name ON subjects(user_id, name COLLATE NOCASE);

CREATE TABLE episodes (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  project_id TEXT,
  conversation_id TEXT NOT NULL,
  first_event_id INTEGER,
  last_event_id INTEGER,
  started_at REAL NOT NULL,
  ended_at REAL NOT NULL,
  turn_count INTEGER NOT NULL DEFAULT 0,
  summary TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed', 'summarized')),
  summarizer TEXT,
  generation INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE INDEX episodes_conversation ON episodes(user_id, conversation_id, started_at);

CREATE TABLE events (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  project_id TEXT,
  conversation_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('message', 'tool_call', 'app_event', 'observation')),
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
  author TEXT,
  content TEXT NOT NULL,
  occurred_at REAL NOT NULL,
  valid_time REAL,
  ingested_at REAL NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  content_hash TEXT NOT NULL,
  source TEXT NOT NULL,
  external_id TEXT,
  status TEXT NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'enriched', 'skipped', 'blocked', 'failed')),
  episode_id INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
  generation INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX events_external ON events(user_id, conversation_id, external_id)
  WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX events_dedupe
  ON events(user_id, conversation_id, role, COALESCE(author, ''), content_hash, occurred_at)
  WHERE external_id IS NULL;
CREATE INDEX events_conversation ON events(conversation_id, occurred_at, id);
CREATE INDEX events_user_time ON events(user_id, occurred_at);
CREATE INDEX events_episode ON events(episode_id);

CREATE TABLE predicates (
  name TEXT PRIMARY KEY,
  label TEXT NOT NULL,
  description TEXT NOT NULL,
  kind TEXT NOT NULL,
  cardinality TEXT NOT NULL CHECK (cardinality IN ('single', 'multi')),
  importance REAL NOT NULL,
  decay TEXT NOT NULL CHECK (decay IN ('stable', 'moderate', 'ephemeral')),
  tier_hint TEXT NOT NULL CHECK (tier_hint IN ('hot', 'warm', 'cold')),
  cues TEXT NOT NULL DEFAULT '[]',
  examples TEXT NOT NULL DEFAULT '[]',
  origin TEXT NOT NULL DEFAULT 'catalog'
);

CREATE TABLE documents (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  project_id TEXT,
  name TEXT NOT NULL,
  path TEXT,
  mime TEXT,
  parser TEXT,
  parser_version TEXT,
  content_hash TEXT NOT NULL,
  size_bytes INTEGER NOT NULL DEFAULT 0,
  page_count INTEGER,
  status TEXT NOT NULL DEFAULT 'processing'
    CHECK (status IN ('processing', 'ready', 'degraded', 'failed')),
  status_reason TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  distillation TEXT,
  distiller TEXT,
  source TEXT NOT NULL DEFAULT 'upload',
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE INDEX documents_user ON documents(user_id, project_id);
CREATE INDEX documents_path ON documents(path);

CREATE TABLE sections (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  parent_id INTEGER REFERENCES sections(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  level INTEGER NOT NULL DEFAULT 1,
  title TEXT NOT NULL DEFAULT '',
  start_char INTEGER NOT NULL,
  end_char INTEGER NOT NULL,
  page_start INTEGER,
  page_end INTEGER,
  distillation TEXT,
  distiller TEXT
);
CREATE INDEX sections_document ON sections(document_id, ordinal);

CREATE TABLE spans (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  section_id INTEGER REFERENCES sections(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  start_char INTEGER NOT NULL,
  end_char INTEGER NOT NULL,
  page_start INTEGER,
  page_end INTEGER,
  token_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX spans_document ON spans(document_id, ordinal);
CREATE INDEX spans_section ON spans(section_id);

CREATE TABLE facts (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  project_id TEXT,
  subject_id INTEGER NOT NULL REFERENCES subjects(id),
  predicate TEXT NOT NULL,
  object_text TEXT NOT NULL,
  object_norm TEXT NOT NULL,
  statement TEXT NOT NULL,
  source_text TEXT NOT NULL,
  source_start INTEGER,
  source_end INTEGER,
  event_id INTEGER REFERENCES events(id) ON DELETE CASCADE,
  span_id INTEGER REFERENCES spans(id) ON DELETE CASCADE,
  conversation_id TEXT,
  source_role TEXT NOT NULL DEFAULT 'user',
  confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
  tier TEXT NOT NULL CHECK (tier IN ('hot', 'warm', 'cold')),
  tier_pinned INTEGER NOT NULL DEFAULT 0,
  standing TEXT NOT NULL
    CHECK (standing IN ('quarantine', 'candidate', 'working', 'fact', 'challenged')),
  kind TEXT NOT NULL,
  decay TEXT NOT NULL,
  valid_from REAL,
  valid_to REAL,
  recorded_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  superseded_at REAL,
  superseded_by INTEGER REFERENCES facts(id) ON DELETE SET NULL,
  previous_id INTEGER REFERENCES facts(id) ON DELETE SET NULL,
  status TEXT NOT NULL
    CHECK (status IN ('active', 'contested', 'superseded', 'retracted', 'deleted')),
  status_before_delete TEXT,
  extractor TEXT NOT NULL,
  prompt_hash TEXT,
  access_count INTEGER NOT NULL DEFAULT 0,
  last_accessed_at REAL,
  useful_count INTEGER NOT NULL DEFAULT 0,
  questionable_count INTEGER NOT NULL DEFAULT 0,
  corroboration INTEGER NOT NULL DEFAULT 0,
  generation INTEGER NOT NULL DEFAULT 0,
  metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX facts_slot ON facts(user_id, subject_id, predicate, status);
CREATE INDEX facts_status ON facts(user_id, status, tier);
CREATE INDEX facts_event ON facts(event_id);
CREATE INDEX facts_span ON facts(span_id);
CREATE INDEX facts_conversation ON facts(conversation_id);
CREATE INDEX facts_superseded_by ON facts(superseded_by);
CREATE INDEX facts_previous ON facts(previous_id);

CREATE TABLE fact_subjects (
  fact_id INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
  subject_id INTEGER NOT NULL REFERENCES subjects(id) ON DELETE CASCADE,
  PRIMARY KEY (fact_id, subject_id)
) WITHOUT ROWID;
CREATE INDEX fact_subjects_subject ON fact_subjects(subject_id);

CREATE TABLE event_subjects (
  event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  subject_id INTEGER NOT NULL REFERENCES subjects(id) ON DELETE CASCADE,
  PRIMARY KEY (event_id, subject_id)
) WITHOUT ROWID;
CREATE INDEX event_subjects_subject ON event_subjects(subject_id);

CREATE TABLE conflicts (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  subject_id INTEGER REFERENCES subjects(id) ON DELETE CASCADE,
  predicate TEXT NOT NULL,
  fact_a INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
  fact_b INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
  resolution TEXT CHECK (resolution IN ('keep_a', 'keep_b', 'keep_both')),
  winner_id INTEGER REFERENCES facts(id) ON DELETE SET NULL,
  resolved_by TEXT,
  reason TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  resolved_at REAL
);
CREATE INDEX conflicts_status ON conflicts(user_id, status);
CREATE INDEX conflicts_fact_a ON conflicts(fact_a);
CREATE INDEX conflicts_fact_b ON conflicts(fact_b);

CREATE TABLE understandings (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN
    ('single_subject', 'relationship', 'structural', 'soul', 'protocol', 'orientation')),
  title TEXT NOT NULL DEFAULT '',
  content TEXT NOT NULL,
  supersedes INTEGER REFERENCES understandings(id) ON DELETE SET NULL,
  superseded_by INTEGER REFERENCES understandings(id) ON DELETE SET NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
  source TEXT NOT NULL DEFAULT 'consolidation',
  generation INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL
);
CREATE INDEX understandings_user ON understandings(user_id, kind, status);

CREATE TABLE understanding_subjects (
  understanding_id INTEGER NOT NULL REFERENCES understandings(id) ON DELETE CASCADE,
  subject_id INTEGER NOT NULL REFERENCES subjects(id) ON DELETE CASCADE,
  PRIMARY KEY (understanding_id, subject_id)
) WITHOUT ROWID;
CREATE INDEX understanding_subjects_subject ON understanding_subjects(subject_id);

CREATE TABLE collections (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE UNIQUE INDEX collections_name ON collections(user_id, name COLLATE NOCASE);

CREATE TABLE collection_documents (
  collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  added_at REAL NOT NULL,
  PRIMARY KEY (collection_id, document_id)
) WITHOUT ROWID;
CREATE INDEX collection_documents_document ON collection_documents(document_id);

CREATE TABLE quarantine (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT,
  content_hash TEXT NOT NULL,
  size_bytes INTEGER NOT NULL DEFAULT 0,
  parser TEXT NOT NULL,
  parser_version TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('timeout', 'memory', 'crash', 'limit', 'invalid')),
  detail TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL
);
CREATE UNIQUE INDEX quarantine_hash ON quarantine(content_hash, parser, parser_version);

CREATE TABLE files (
  path TEXT PRIMARY KEY,
  root TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  content_hash TEXT,
  document_id INTEGER REFERENCES documents(id) ON DELETE SET NULL,
  state TEXT NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'indexed', 'degraded', 'quarantined', 'missing')),
  seen_at REAL NOT NULL
);
CREATE INDEX files_root ON files(root);

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'parked')),
  priority INTEGER NOT NULL DEFAULT 100,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 5,
  run_after REAL NOT NULL,
  last_error TEXT,
  warnings TEXT NOT NULL DEFAULT '[]',
  dedupe_key TEXT,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE INDEX jobs_ready ON jobs(status, priority, run_after, id);
CREATE UNIQUE INDEX jobs_dedupe ON jobs(dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE TABLE receipts (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT,
  scope TEXT NOT NULL,
  dry_run INTEGER NOT NULL DEFAULT 0,
  deleted_counts TEXT NOT NULL,
  created_at REAL NOT NULL
);

CREATE TABLE vector_spaces (
  id INTEGER PRIMARY KEY,
  model_id TEXT NOT NULL UNIQUE,
  dim INTEGER NOT NULL,
  table_name TEXT NOT NULL UNIQUE,
  created_at REAL NOT NULL
);

CREATE TABLE embeddings (
  object_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
  space_id INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  user_id TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (object_id, space_id)
) WITHOUT ROWID;
CREATE INDEX embeddings_space ON embeddings(space_id, kind);
"""


def m001_initial(conn: Connection) -> None:
    """The foundation schema: ids, events, facts, subjects, documents, jobs, receipts, FTS, vector registry."""
    _script(conn, M001_SQL)
    _script(conn, _object_cleanup_triggers())
    _script(conn, _fts("events", ("content", "author")))
    _script(conn, _fts("facts", ("statement", "source_text")))
    _script(conn, _fts("spans", ("text",)))
    _script(conn, _fts("episodes", ("summary",)))
    _script(conn, _fts("understandings", ("title", "content")))


M002_SQL = """
CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab(events_fts, 'row');
CREATE VIRTUAL TABLE facts_fts_vocab USING fts5vocab(facts_fts, 'row');
CREATE VIRTUAL TABLE spans_fts_vocab USING fts5vocab(spans_fts, 'row');
CREATE INDEX facts_rank ON facts(user_id, importance DESC, updated_at DESC);
CREATE INDEX facts_predicate ON facts(user_id, predicate, importance DESC);
"""


M003_SQL = """
DROP INDEX quarantine_hash;
CREATE UNIQUE INDEX quarantine_hash ON quarantine(user_id, content_hash, parser, parser_version);
"""


def m003_quarantine_per_user(conn: Connection) -> None:
    """Quarantine entries belong to one user: another user's identical file gets its own entry (and never sees
    the first user's file name or path)."""
    _script(conn, M003_SQL)


def m002_search_statistics(conn: Connection) -> None:
    """Term statistics for recall (document frequency per stem) and an index for importance-ordered listings.

    Recall drops a query's most common words when they would make BM25 score most of the vault; the
    ``fts5vocab`` tables read those frequencies straight from the full-text indexes, without a copy.
    """
    _script(conn, M002_SQL)


M004_SQL = """
CREATE TABLE conversation_titles(
  user_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  title TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT '',
  updated_at REAL NOT NULL,
  PRIMARY KEY (user_id, conversation_id)
) WITHOUT ROWID;
"""


def m004_conversation_titles(conn: Connection) -> None:
    """Conversations keep the titles their exports give them ("Moving to Lisbon"), shown instead of their ids.

    A title belongs to a (user, conversation) pair, not to an object with a global id: forget removes it with the
    conversation's last event.
    """
    _script(conn, M004_SQL)


M005_SQL = """
CREATE TABLE vector_backlog(
  space_id INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
  object_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  user_id TEXT NOT NULL,
  content_hash TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL CHECK (reason IN ('migration', 'outage')),
  added_at REAL NOT NULL,
  PRIMARY KEY (space_id, object_id)
) WITHOUT ROWID;
CREATE INDEX vector_backlog_object ON vector_backlog(object_id);
"""


def m005_vector_backlog(conn: Connection) -> None:
    """Objects waiting for their vector in a space: re-embedding after the embedder changed, or an embedder that was
    down when they were stored (:mod:`engine.vectors.migration`).  Forgetting an object removes its row (cascade)."""
    _script(conn, M005_SQL)


M006_SQL = """
CREATE INDEX jobs_claim ON jobs(status, kind, priority, id);
"""


def m006_jobs_claim_index(conn: Connection) -> None:
    """Claiming a batch of one kind walks an index in claim order instead of sorting every queued job: with a
    backlog of thousands of enrichment jobs, each claim read and sorted them all (2.5 ms a batch, on the writer)."""
    _script(conn, M006_SQL)


M007_SQL = """
CREATE TABLE observations (
  id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'note',
  content TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  confidence REAL NOT NULL DEFAULT 0.8,
  observed_at REAL NOT NULL,
  session_id TEXT,
  generation INTEGER NOT NULL DEFAULT 0,
  useful_count INTEGER NOT NULL DEFAULT 0,
  questionable_count INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL
);
CREATE UNIQUE INDEX observations_hash ON observations(user_id, content_hash);
CREATE INDEX observations_generation ON observations(user_id, generation);
CREATE INDEX observations_time ON observations(user_id, observed_at);

CREATE TABLE observation_subjects (
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  subject_id INTEGER NOT NULL REFERENCES subjects(id) ON DELETE CASCADE,
  PRIMARY KEY (observation_id, subject_id)
) WITHOUT ROWID;
CREATE INDEX observation_subjects_subject ON observation_subjects(subject_id);

CREATE TABLE understanding_sources (
  understanding_id INTEGER NOT NULL REFERENCES understandings(id) ON DELETE CASCADE,
  object_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
  PRIMARY KEY (understanding_id, object_id)
) WITHOUT ROWID;
CREATE INDEX understanding_sources_object ON understanding_sources(object_id);

ALTER TABLE understandings ADD COLUMN summary TEXT NOT NULL DEFAULT '';
ALTER TABLE understandings ADD COLUMN session_id TEXT;
ALTER TABLE understandings ADD COLUMN useful_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE understandings ADD COLUMN questionable_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX understandings_superseded_by ON understandings(superseded_by);

CREATE TABLE workspace_sessions (
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  token TEXT NOT NULL DEFAULT '',
  last_seen_at REAL NOT NULL,
  PRIMARY KEY (user_id, session_id)
) WITHOUT ROWID;

CREATE TABLE workspace_seen (
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  object_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
  seen_at REAL NOT NULL,
  PRIMARY KEY (user_id, session_id, object_id)
) WITHOUT ROWID;
CREATE INDEX workspace_seen_object ON workspace_seen(object_id);
"""


def m007_workspace(conn: Connection) -> None:
    """The subject workspace (DESIGN §3a): observations — immutable evidence tagged with subjects, one row per
    content (hash) — the sources each understanding was made from, understandings' summaries, session and marks,
    and each session's heartbeat token and seen log for ``bring_to_mind``."""
    _script(conn, M007_SQL)
    _script(conn, _object_cleanup_triggers(("observations",)))
    _script(conn, _fts("observations", ("content",)))


M008_SQL = """
CREATE TABLE perspectives (
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  instruction TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (user_id, name)
) WITHOUT ROWID;

CREATE TABLE workspace_vectors (
  object_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
  perspective TEXT NOT NULL,
  user_id TEXT NOT NULL,
  model_id TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (object_id, perspective)
) WITHOUT ROWID;
CREATE INDEX workspace_vectors_user ON workspace_vectors(user_id, model_id, perspective);

CREATE TABLE workspace_vector_versions (
  user_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER workspace_vectors_ai AFTER INSERT ON workspace_vectors BEGIN
  INSERT INTO workspace_vector_versions(user_id, version) VALUES (new.user_id, random())
    ON CONFLICT(user_id) DO UPDATE SET version = random();
END;
CREATE TRIGGER workspace_vectors_ad AFTER DELETE ON workspace_vectors BEGIN
  INSERT INTO workspace_vector_versions(user_id, version) VALUES (old.user_id, random())
    ON CONFLICT(user_id) DO UPDATE SET version = random();
END;
CREATE TRIGGER workspace_vectors_au AFTER UPDATE ON workspace_vectors BEGIN
  INSERT INTO workspace_vector_versions(user_id, version) VALUES (new.user_id, random())
    ON CONFLICT(user_id) DO UPDATE SET version = random();
END;
"""


def m008_perspectives(conn: Connection) -> None:
    """Perspectives (DESIGN §3a): a user's own perspectives beside the five built in, the workspace items' vectors
    under each (an instruction-blind embedder gets one shared vector per item), and a per-user version that every
    vector write draws anew (at random, so a version forgotten with its user never comes back and matches an old
    cache), so a search's in-memory matrix knows when it is stale without reading the vectors."""
    _script(conn, M008_SQL)


M009_SQL = """
CREATE TABLE activity (
  seq INTEGER PRIMARY KEY,
  at REAL NOT NULL,
  kind TEXT NOT NULL,
  level TEXT NOT NULL CHECK (level IN ('info', 'warning', 'failed')),
  text TEXT NOT NULL,
  object_id INTEGER
);
CREATE INDEX activity_at ON activity(at);
"""


def m009_activity(conn: Connection) -> None:
    """The activity history (:mod:`engine.activity`): what happened in the background that a person may want to
    know after a restart — imports, forgets, model warnings, parked jobs, proxy captures, exports, backups.  Keyed by
    the change feed's ``seq`` (clock-based, so it keeps growing across restarts); no content, only counts, kinds and
    ids, so nothing here needs forgetting."""
    _script(conn, M009_SQL)


M010_SQL = """
CREATE TABLE document_tables (
  id INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  section_id INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
  start_char INTEGER NOT NULL,
  end_char INTEGER NOT NULL,
  header_chars INTEGER NOT NULL DEFAULT 0,
  text TEXT NOT NULL
);
CREATE INDEX document_tables_section ON document_tables(section_id, start_char);
CREATE INDEX document_tables_document ON document_tables(document_id);
"""


def m010_document_tables(conn: Connection) -> None:
    """Tables of a document (issue 27): a statement or schedule as one unit, caption and header lines first
    (``header_chars`` of ``text``), so recall can show a span that falls inside a table as the whole table.  The
    text passed the privacy firewall like a span's; ``start_char``/``end_char`` index the parsed text, within one
    section, and go with it (a new version replaces its sections).  Not searched: spans stay the searched units.
    Documents stored before this migration have none until they are read again."""
    _script(conn, M010_SQL)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "m001_initial", m001_initial),
    Migration(2, "m002_search_statistics", m002_search_statistics),
    Migration(3, "m003_quarantine_per_user", m003_quarantine_per_user),
    Migration(4, "m004_conversation_titles", m004_conversation_titles),
    Migration(5, "m005_vector_backlog", m005_vector_backlog),
    Migration(6, "m006_jobs_claim_index", m006_jobs_claim_index),
    Migration(7, "m007_workspace", m007_workspace),
    Migration(8, "m008_perspectives", m008_perspectives),
    Migration(9, "m009_activity", m009_activity),
    Migration(10, "m010_document_tables", m010_document_tables),
)

#: The schema version this code writes and understands.
SCHEMA_VERSION = MIGRATIONS[-1].version
