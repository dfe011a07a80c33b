// Prices one sample's usage by AWS's rules (bench/cost/billing.ts) at the list prices (bench/cost/prices.ts), as
// line items in USD for the sample; the entry divides them by what the sample did (deliveries, emails). Fixed
// monthly costs (web ACL, custom metrics, alarms, dashboard, KMS, the secret, idle polling, the reconciler) are
// billed apart.

import { CompactLogFormatter } from '../../lambdas/adapters/telemetry/compact-log-formatter';
import { API_REQUEST_RETENTION_MS } from '../../lambdas/app/api-requests/api-requests';
import { type TableName, tables as tableSpecs } from '../../lambdas/manifest';
import { gbSeconds, provisionedUnitCost } from './billing';
import type { Deployment } from './deployment';
import type { Usage } from './meter';
import { GB, PRICES } from './prices';
import type { Sample } from './workloads';

export type LineItems = Record<string, number>;

const REQUEST_ID = '8f507cfc-1b2a-4697-b07a-ac58fc914c95';

/**
 * What the Lambda context adds to each Powertools log line on AWS, which the local runtime (no context) cannot:
 * measured with the functions' own formatter (CompactLogFormatter) on a warm invocation's context, as the
 * difference with and without it. EMF lines carry no context.
 */
export const CONTEXT_KEYS_BYTES = (() => {
  const formatter = new CompactLogFormatter();
  const line = (lambdaContext?: Record<string, unknown>) =>
    Buffer.byteLength(
      JSON.stringify(
        formatter
          .formatAttributes(
            {
              logLevel: 'INFO',
              timestamp: new Date(0),
              serviceName: 'sendflow-delivery',
              message: 'webhook attempt',
              sampleRateValue: 0,
              ...(lambdaContext ? { lambdaContext } : {}),
            } as unknown as Parameters<CompactLogFormatter['formatAttributes']>[0],
            {},
          )
          .getAttributes(),
      ),
    );
  const context = {
    awsRequestId: REQUEST_ID,
    coldStart: false,
    functionName: 'SendflowApi-prod-DeliveryPipelineDeliveryFunctionAB12CD34-EfGh5678Ij90'.slice(0, 64),
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:SendflowApi-prod-Delivery',
    memoryLimitInMB: '512',
  };
  return line(context) - line();
})();

/** Lambda's own START, END and REPORT lines of one invocation in text format (no init line on a warm start). */
export const TEXT_PLATFORM_LINES_BYTES = Buffer.byteLength(
  `START RequestId: ${REQUEST_ID} Version: $LATEST\n` +
    `END RequestId: ${REQUEST_ID}\n` +
    `REPORT RequestId: ${REQUEST_ID}\tDuration: 23.45 ms\tBilled Duration: 24 ms\tMemory Size: 512 MB\tMax Memory Used: 112 MB\t\n`,
);
/**
 * The same in JSON format, as the Telemetry API's schema has them (platform.start and platform.report, level
 * INFO): an assumption of shape, not a measurement. None is written when the system log level is WARN.
 */
export const JSON_PLATFORM_LINES_BYTES = Buffer.byteLength(
  `{"time":"2026-11-26T01:00:00.000Z","type":"platform.start","record":{"requestId":"${REQUEST_ID}","version":"$LATEST"}}\n` +
    `{"time":"2026-11-26T01:00:00.024Z","type":"platform.report","record":{"requestId":"${REQUEST_ID}","metrics":` +
    `{"durationMs":23.45,"billedDurationMs":24,"memorySizeMB":512,"maxMemoryUsedMB":112},"status":"success"}}\n`,
);

/** Typical lengths of the $context values an access log line carries (an unknown one counts 10). */
const ACCESS_LOG_VALUES: Readonly<Record<string, number>> = {
  requestId: 36,
  'identity.sourceIp': 13,
  requestTime: 26,
  httpMethod: 4,
  resourcePath: 11,
  path: 14,
  status: 3,
  responseLength: 3,
  responseLatency: 3,
  'integration.latency': 3,
  'authorizer.accountId': 31,
  'authorizer.principalId': 31,
  'error.responseType': 1,
  'waf.status': 3,
};

/** Bytes of one API Gateway access log line in `format` (its $context variables at typical lengths). */
export function accessLogLineBytes(format: string): number {
  if (!format) return 0;
  const line = format.replace(/\$context\.([A-Za-z.]+)/g, (_, name: string) =>
    'x'.repeat(ACCESS_LOG_VALUES[name] ?? 10),
  );
  return Buffer.byteLength(line) + 1;
}

/** Lambda's log levels, least severe first; a line without a level (EMF) counts as INFO. */
const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
const severity = (level: string | undefined) => LEVELS.indexOf((level ?? 'INFO').replace('CRITICAL', 'FATAL'));

/** Months a written item is stored, by its table's retention: deliveries expire after 30 days (TTL). */
export function storageMonths(table: string): number {
  if (table === 'rateLimits') return 0; // one-second windows, expired at once
  if (table === 'idempotency') return 1 / 30; // 24 h
  if (table === 'apiRequests') return API_REQUEST_RETENTION_MS / (30 * 86_400_000); // the request log's 24 h
  // deliveries: the 30-day TTL; emails, their parts and events, and their bodies in S3 (emailBodies): the default
  // 30-day email retention. One month each.
  return 1;
}

/** The sample's line items in USD. */
export function bill(sample: Sample, deployment: Deployment): LineItems {
  const u: Usage = sample.usage;
  const items: LineItems = {};
  const add = (name: string, usd: number) => {
    items[name] = (items[name] ?? 0) + usd;
  };
  add('api_gateway_rest_requests', sample.apiRequests * PRICES.apiGateway.restRequest);
  add('waf_requests', sample.apiRequests * PRICES.waf.request);

  for (const inv of u.invocations) {
    const fn = deployment.functions.get(inv.fn);
    if (!fn) throw new Error(`no function ${inv.fn} in the synthesized template`);
    add('lambda_requests', PRICES.lambda.request);
    add('lambda_gb_seconds', gbSeconds(fn.memoryMb, inv.ms) * PRICES.lambda.gbSecond[fn.architecture]);
  }

  // In the deployment's capacity mode, table by table and index by index: request units on demand; in provisioned
  // mode the capacity a steady rate of those units holds at the auto scaling target (dynamodb_wcu, dynamodb_rcu).
  for (const [name, units] of u.dynamo.writeUnits) {
    const provisioned = deployment.provisioned?.get(name);
    if (provisioned) {
      add(
        `dynamodb_wcu ${name}`,
        units * provisionedUnitCost(PRICES.dynamodb.writeCapacityUnitHour, provisioned.write),
      );
    } else add(`dynamodb_wru ${name}`, units * PRICES.dynamodb.writeRequestUnit);
  }
  for (const [name, units] of u.dynamo.readUnits) {
    const provisioned = deployment.provisioned?.get(name);
    if (provisioned) {
      add(`dynamodb_rcu ${name}`, units * provisionedUnitCost(PRICES.dynamodb.readCapacityUnitHour, provisioned.read));
    } else add(`dynamodb_rru ${name}`, units * PRICES.dynamodb.readRequestUnit);
  }
  for (const [table, bytes] of u.dynamo.storedBytes) {
    const months = storageMonths(table);
    if (!(table in tableSpecs)) continue;
    add(`dynamodb_storage ${table as TableName}`, (bytes / GB) * months * PRICES.dynamodb.storageGbMonth);
    add(`dynamodb_pitr ${table as TableName}`, (bytes / GB) * months * PRICES.dynamodb.pitrGbMonth);
  }

  // Email bodies in S3: each PUT and GET, and what the sample left stored (and tagged) for the email retention.
  add('s3_requests', u.s3.put * PRICES.s3.putRequest + u.s3.get * PRICES.s3.getRequest);
  add('s3_storage', (u.s3.storedBytes / GB) * storageMonths('emailBodies') * PRICES.s3.storageGbMonth);
  add('s3_tags', u.s3.tags * storageMonths('emailBodies') * PRICES.s3.tagMonth);

  for (const [queue, q] of u.sqs) add(`sqs_requests ${queue}`, q.billed * PRICES.sqs.request);
  add('scheduler_invocations', u.scheduler * PRICES.scheduler.invocation);

  // API Gateway's access log: one line per request, in the stage's own log group.
  const logBytes = logsIngested(u, deployment) + sample.apiRequests * accessLogLineBytes(deployment.accessLogFormat);
  add('cloudwatch_logs_ingestion', (logBytes / GB) * PRICES.cloudwatch.logsIngestGb);
  // Stored for the log groups' retention (uncompressed here: AWS bills the compressed size, so this is an upper bound).
  add(
    'cloudwatch_logs_storage',
    (logBytes / GB) * (deployment.logRetentionDays / 30) * PRICES.cloudwatch.logsStorageGbMonth,
  );
  add('data_transfer_out_webhooks', (sample.egressBytes / GB) * PRICES.dataTransfer.outGb);
  // The AWS adapter reads the secret once per warm container per max age (lambdas/runtime/aws/plugs/links.ts),
  // never per call: that is a fixed cost (fixedMonthly), not a per-email one.
  add('secrets_manager_calls', 0);
  return items;
}

/**
 * Bytes CloudWatch Logs ingests for the sample: the lines the code wrote at or above the function's application
 * log level, with what the Lambda context adds to them, and Lambda's own lines per invocation unless the system
 * log level (JSON logs) drops them.
 */
export function logsIngested(u: Usage, deployment: Pick<Deployment, 'functions'>): number {
  const logging = (fn: string) => {
    const config = deployment.functions.get(fn);
    if (!config) throw new Error(`no function ${fn} in the synthesized template`);
    return config.logging;
  };
  let bytes = 0;
  for (const line of u.logs) {
    const { applicationLevel } = logging(line.fn);
    if (applicationLevel && severity(line.level) < severity(applicationLevel)) continue;
    bytes += line.bytes + (line.emf ? 0 : CONTEXT_KEYS_BYTES);
  }
  for (const inv of u.invocations) {
    const { format, systemLevel } = logging(inv.fn);
    if (format === 'Text') bytes += TEXT_PLATFORM_LINES_BYTES;
    else if (severity(systemLevel) <= severity('INFO')) bytes += JSON_PLATFORM_LINES_BYTES;
  }
  return bytes;
}

/** SES's own charge for the sample's emails: every recipient is one email; no attachments today. */
export function sesCharge(sample: Sample): number {
  return sample.recipients * PRICES.ses.recipient;
}

/**
 * Costs that do not grow with volume, per month: the web ACL and its rules, the custom metric series the stage
 * can publish (`series`: bench/cost/metric-series.ts, an upper bound), the alarms, the dashboard and the KMS key
 * read from the template, the signing secret and its cached reads, every event source mapping's idle long polls,
 * and the reconciler's runs.
 */
export function fixedMonthly(deployment: Deployment, series: number): LineItems {
  const minutes = 730.5 * 60;
  const reconciler = deployment.functions.get('sendflow-reconciler');
  // Lambda's pollers long-poll 20 s each (AWS Compute Blog, "Understanding how AWS Lambda scales with Amazon SQS
  // standard queues"); an idle event source keeps five of them (the Lambda Developer Guide, "Configuring scaling
  // behavior for SQS event source mappings": the optimization down to 2 is not available with maximum
  // concurrency, which every mapping here sets): 15 empty receives a minute per mapping, whatever the volume.
  const idleReceivesPerMinute = 5 * 3;
  // Secret reads: one per warm container per 5 minutes, for the API and sender functions (10 warm each, assumed).
  const secretReads = 2 * 10 * (minutes / 5);
  const { alarms } = deployment;
  return {
    waf_web_acl: PRICES.waf.webAclMonth,
    waf_rules: deployment.webAclRules * PRICES.waf.ruleMonth,
    cloudwatch_custom_metrics: series * PRICES.cloudwatch.metricMonth,
    cloudwatch_alarms:
      alarms.metrics * PRICES.cloudwatch.alarmMetricMonth +
      alarms.highResolutionMetrics * PRICES.cloudwatch.highResolutionAlarmMetricMonth +
      alarms.composite * PRICES.cloudwatch.compositeAlarmMonth,
    cloudwatch_dashboards: deployment.dashboards * PRICES.cloudwatch.dashboardMonth,
    kms_keys: deployment.kmsKeys * PRICES.kms.keyMonth,
    secrets_manager_secret: PRICES.secretsManager.secretMonth,
    secrets_manager_calls: secretReads * PRICES.secretsManager.apiCall,
    sqs_idle_polling: deployment.eventSourceMappings.length * idleReceivesPerMinute * minutes * PRICES.sqs.request,
    // A rate schedule once a minute; its run measured as the dispatcher's median would be a guess: 1 s assumed.
    reconciler_scheduler: minutes * PRICES.scheduler.invocation,
    // 17 Queries on deliveries and 9 on emails a run (docs/benchmarks.md, issue 9), half a unit each when empty.
    reconciler_dynamodb_reads: minutes * 26 * 0.5 * PRICES.dynamodb.readRequestUnit,
    reconciler_lambda:
      minutes *
      (PRICES.lambda.request +
        gbSeconds(reconciler?.memoryMb ?? 256, 1000) * PRICES.lambda.gbSecond[reconciler?.architecture ?? 'arm64']),
  };
}
