-- 0020: people who sign in with an identity provider (OpenID Connect).
--
-- identities keys a person on the provider's (issuer, subject), never on an e-mail address or a user name: the first
-- sign-in of an unknown (issuer, subject) makes a principal of a name no one else has; an admin links an identity to
-- an existing principal explicitly (plugboard principal link). sso_group_roles maps a group the provider names (its
-- groups claim) to a role: board admin, owner or maintainer of one plug-in, or read-only. A sign-in grants the
-- roles its groups map to and takes back those it granted earlier that no group maps to any more; the rows it grants
-- say so in added_by ('sso ISSUER'). Both tables are policy: every change is audited and the state proof covers them.
CREATE TABLE identities (
    issuer     TEXT NOT NULL CHECK (length(issuer) BETWEEN 1 AND 512),
    subject    TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    principal  TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 128),
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
) WITHOUT ROWID;

CREATE INDEX identities_by_principal ON identities (principal);

CREATE TABLE sso_group_roles (
    issuer     TEXT NOT NULL CHECK (length(issuer) BETWEEN 1 AND 512),
    group_name TEXT NOT NULL CHECK (length(group_name) BETWEEN 1 AND 256),
    role       TEXT NOT NULL CHECK (role IN ('admin', 'owner', 'maintainer', 'read-only')),
    plugin_id  TEXT NOT NULL DEFAULT '' CHECK ((role IN ('owner', 'maintainer')) = (plugin_id <> '')),
    added_at   TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    PRIMARY KEY (issuer, group_name, role, plugin_id)
) WITHOUT ROWID;
