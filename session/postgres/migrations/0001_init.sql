-- The first schema of the Postgres session store: sessions with their
-- lease, their records, and what each tenant has spent.

-- Lease tokens, for every session of the schema: a token never repeats,
-- even for a session deleted and created again under the same ID.
CREATE SEQUENCE toolloop_lease_token AS bigint;

CREATE TABLE toolloop_sessions (
	-- sid keys the records: a session created again under a deleted one's
	-- ID is another session, with other records.
	sid           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text NOT NULL UNIQUE,
	user_name     text NOT NULL DEFAULT '',
	tenant        text NOT NULL DEFAULT '',
	title         text NOT NULL DEFAULT '',
	labels        jsonb NOT NULL DEFAULT '{}',
	parent        text NOT NULL DEFAULT '',
	forked_at     bigint NOT NULL DEFAULT 0,
	created       timestamptz NOT NULL DEFAULT now(),
	updated       timestamptz NOT NULL DEFAULT now(),
	head          bigint NOT NULL DEFAULT 0,
	base          bigint NOT NULL DEFAULT 0,
	status        text NOT NULL DEFAULT 'new',
	input_tokens  bigint NOT NULL DEFAULT 0,
	output_tokens bigint NOT NULL DEFAULT 0,
	cost          double precision NOT NULL DEFAULT 0,
	-- The writer's lease: all three NULL when none is held. Expiry is by
	-- the database's clock.
	lease_holder  text,
	lease_token   bigint,
	lease_expires timestamptz
);

CREATE INDEX toolloop_sessions_updated ON toolloop_sessions (updated DESC, id);
CREATE INDEX toolloop_sessions_user ON toolloop_sessions (user_name, updated DESC, id);
CREATE INDEX toolloop_sessions_tenant ON toolloop_sessions (tenant, updated DESC, id);

CREATE TABLE toolloop_records (
	sid  bigint NOT NULL REFERENCES toolloop_sessions (sid) ON DELETE CASCADE,
	seq  bigint NOT NULL,
	base boolean NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (sid, seq)
);

-- What each tenant's sessions have spent together, deleted ones included.
CREATE TABLE toolloop_tenant_spend (
	tenant        text PRIMARY KEY,
	input_tokens  bigint NOT NULL DEFAULT 0,
	output_tokens bigint NOT NULL DEFAULT 0,
	cost          double precision NOT NULL DEFAULT 0
);
