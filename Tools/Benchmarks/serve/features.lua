-- wrk script: GET /api/client/features; with $PLUGBOARD_ETAG set, a conditional request that gets 304.
wrk.headers["Authorization"] = os.getenv("PLUGBOARD_TOKEN")
local etag = os.getenv("PLUGBOARD_ETAG")
if etag and etag ~= "" then wrk.headers["If-None-Match"] = etag end
