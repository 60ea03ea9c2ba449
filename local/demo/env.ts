/**
 * Process settings for local runs; imported first by local/main.ts, before any AWS SDK client or
 * Powertools logger is built (both read these once).
 */
// Handler logs (JSON lines) would drown the demo's own output; `--verbose` keeps them.
if (!process.argv.includes('--verbose')) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// EMF metric lines (one JSON document per publish) are for CloudWatch, not for a terminal.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
