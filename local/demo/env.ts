/**
 * Process settings for local runs; imported first by local/main.ts, before any AWS SDK client or
 * Powertools logger is built (both read these once).
 */

/**
 * The settings a local run applies to `env` (an override already set there wins). Handler logs
 * (JSON lines, ERROR and WARN included) would drown the demo's own output, and the story and the
 * report already say what failed: they are silent unless `--verbose` is among `argv`, which keeps
 * them at Powertools' default level.
 */
export function applyLocalRunEnv(argv: readonly string[], env: NodeJS.ProcessEnv): void {
  if (!argv.includes('--verbose')) env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  // EMF metric lines (one JSON document per publish) are for CloudWatch, not for a terminal.
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // The demo's queues fail a message within seconds: a crashed transfer hides its message 5 s, not
  // the deployed 30 s, so a fault scenario's retry does not sit idle (an override still wins).
  env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS ??= '5';
}

applyLocalRunEnv(process.argv, process.env);
