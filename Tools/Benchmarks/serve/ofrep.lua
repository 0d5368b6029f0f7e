-- wrk script: OFREP single evaluation (POST with a context), the token from $PLUGBOARD_TOKEN.
wrk.method = "POST"
wrk.body = '{"context":{"targetingKey":"user-42","tenant":"acme"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("PLUGBOARD_TOKEN")
