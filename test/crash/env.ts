/**
 * Process settings of the crash matrix and the conservation script; imported before anything that
 * builds an SDK client or a Powertools logger (both read these once). A crashed transfer hides its
 * message 3 s (not the deployed 30 s), so recovery does not sit idle; handler logs and EMF metric
 * lines stay out of the report.
 */
process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS ??= '3';
process.env.TRIAGE_SAFETY_MARGIN_MS ??= '3000';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
