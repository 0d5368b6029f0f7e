-- 0019: in a protected environment, a new release runs only once a change request takes it in.
--
-- approved_version is the newest release of a plug-in that a change in the environment took in while the environment
-- was protected: enabling the plug-in, unpinning it, enabling it again once a newer release is registered (itself a
-- change request there), or the environment becoming protected while the plug-in was enabled there. Hosts of a
-- protected environment run, of an unpinned plug-in without a rollout, the highest release up to it, and none when it
-- is NULL; registering a release changes nothing they run. Hosts of an unprotected environment ignore it.
ALTER TABLE plugin_environments ADD COLUMN approved_version TEXT
    CHECK (approved_version IS NULL OR length(approved_version) BETWEEN 1 AND 256);

-- What protected environments run now is what they were approved to run: each enabled plug-in's newest release.
UPDATE plugin_environments SET approved_version = (
    SELECT v.version FROM plugin_versions v
    WHERE v.plugin_id = plugin_environments.plugin_id AND v.is_prerelease = 0 AND v.yanked_at IS NULL
    ORDER BY v.sort_key DESC LIMIT 1)
WHERE enabled = 1 AND environment IN (SELECT environment FROM approval_policies WHERE approvals > 0);
