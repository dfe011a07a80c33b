// Runs before every test file: SDK matchers for aws-sdk-client-mock, and quiet SDK warnings.
import 'aws-sdk-client-mock-vitest/extend';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
