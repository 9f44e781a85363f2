-- Version 1: sessions, their records, tenants' spend and the lease token
-- counter. Times are Unix nanoseconds (UTC) by the writing process's clock.

-- sid numbers a session for its records; AUTOINCREMENT never reuses one,
-- so the records of a deleted session cannot be taken for those of a new
-- session with the same ID.
CREATE TABLE sessions (
	sid           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT    NOT NULL UNIQUE,
	user          TEXT    NOT NULL DEFAULT '',
	tenant        TEXT    NOT NULL DEFAULT '',
	title         TEXT    NOT NULL DEFAULT '',
	labels        TEXT,                         -- a JSON object; NULL: none
	parent        TEXT    NOT NULL DEFAULT '',
	forked_at     INTEGER NOT NULL DEFAULT 0,
	created       INTEGER NOT NULL,
	updated       INTEGER NOT NULL,
	head          INTEGER NOT NULL DEFAULT 0,
	base          INTEGER NOT NULL DEFAULT 0,
	status        TEXT    NOT NULL DEFAULT 'new',
	spent_in      INTEGER NOT NULL DEFAULT 0,
	spent_out     INTEGER NOT NULL DEFAULT 0,
	spent_cost    REAL    NOT NULL DEFAULT 0,
	lease_holder  TEXT    NOT NULL DEFAULT '',
	lease_token   INTEGER NOT NULL DEFAULT 0,   -- 0: no lease
	lease_expires INTEGER NOT NULL DEFAULT 0
);

-- List: the most recently updated first, then by ID, filtered by user or
-- tenant.
CREATE INDEX sessions_updated ON sessions (updated DESC, id);
CREATE INDEX sessions_user ON sessions (user, updated DESC, id);
CREATE INDEX sessions_tenant ON sessions (tenant, updated DESC, id);

CREATE TABLE records (
	sid  INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
	seq  INTEGER NOT NULL,
	base INTEGER NOT NULL DEFAULT 0,
	data BLOB    NOT NULL,
	PRIMARY KEY (sid, seq)
);

-- What each tenant's sessions have spent, deleted ones included.
CREATE TABLE tenants (
	tenant     TEXT    PRIMARY KEY,
	spent_in   INTEGER NOT NULL DEFAULT 0,
	spent_out  INTEGER NOT NULL DEFAULT 0,
	spent_cost REAL    NOT NULL DEFAULT 0
);

-- The last lease token given: one counter for the whole file, so that no
-- token repeats for an ID, even after Delete and Create.
CREATE TABLE counters (
	name  TEXT    PRIMARY KEY,
	value INTEGER NOT NULL
);
INSERT INTO counters (name, value) VALUES ('lease_token', 0);
