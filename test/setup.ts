// Runs before every test file: SDK matchers for aws-sdk-client-mock, and quiet SDK warnings, logs and metrics.
import 'aws-sdk-client-mock-vitest/extend';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// No EMF lines from code wired by configuration (the Lambda entry points); tests of metrics turn them on.
process.env.SF_METRICS ??= 'false';
