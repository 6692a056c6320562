-- SSH public keys of users (/v1/keys, the git push endpoint): maps key id → owner, name, the key as an
-- OpenSSH line (`<type> <base64 blob> <comment>`) and its SHA-256 fingerprint. A key authenticates one
-- user only, so the fingerprint is unique across users.
CREATE TABLE ssh_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  content TEXT NOT NULL,
  fingerprint TEXT NOT NULL UNIQUE,     -- SHA256:<base64, no padding>, as `ssh-keygen -l` prints it
  fixed INTEGER NOT NULL DEFAULT 0,     -- 1 = declared in the config (users[].sshKeys)
  created_at INTEGER NOT NULL,
  UNIQUE (user_id, name)
);
CREATE INDEX ssh_keys_user ON ssh_keys(user_id, created_at);
