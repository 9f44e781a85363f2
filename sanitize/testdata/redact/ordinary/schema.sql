-- Users and sessions.
CREATE TABLE users (
    id              BIGSERIAL PRIMARY KEY,
    email           CITEXT NOT NULL UNIQUE,
    password_hash   TEXT NOT NULL,
    password_set_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    totp_secret_enc BYTEA,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    id          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash  BYTEA NOT NULL UNIQUE,
    expires_at  TIMESTAMPTZ NOT NULL,
    user_agent  TEXT
);

CREATE TABLE api_keys (
    id          BIGSERIAL PRIMARY KEY,
    owner_id    BIGINT NOT NULL REFERENCES users (id),
    prefix      TEXT NOT NULL,
    key_hash    BYTEA NOT NULL,
    scopes      TEXT[] NOT NULL DEFAULT '{}',
    last_used   TIMESTAMPTZ
);

CREATE INDEX sessions_user_id_idx ON sessions (user_id);
-- Passwords are hashed with argon2id; the application never stores the plain text.
UPDATE users SET password_hash = crypt(password_hash, gen_salt('bf')) WHERE password_hash NOT LIKE '$2%';
SELECT u.email, count(s.id) AS sessions FROM users u LEFT JOIN sessions s ON s.user_id = u.id GROUP BY u.email;
