/**
 * Process settings for local runs; imported first by local/main.ts, before any AWS SDK client or
 * Powertools logger is built (both read these once).
 */
// Handler logs (JSON lines) would drown the demo's own output; `--verbose` keeps them.
if (!process.argv.includes('--verbose')) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// EMF metric lines (one JSON document per publish) are for CloudWatch, not for a terminal.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// The demo's queues fail a message within seconds: a crashed transfer hides its message 5 s, not
// the deployed 30 s, so a fault scenario's retry does not sit idle (an override still wins).
process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS ??= '5';
