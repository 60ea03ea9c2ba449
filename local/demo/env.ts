/**
 * Process settings for local runs; imported first by local/main.ts, before any AWS SDK client or
 * Powertools logger is built (both read these once).
 */
// The SDK warns once per process that Node 20 support ends; the local stack runs on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// Handler logs (JSON lines) would drown the demo's own output; `--verbose` keeps them.
if (!process.argv.includes('--verbose')) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
