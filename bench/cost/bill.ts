// Prices one sample's usage by AWS's rules (bench/cost/billing.ts) at the list prices (bench/cost/prices.ts), as
// line items in USD for the sample; the entry divides them by what the sample did (deliveries, emails). Fixed
// monthly costs (web ACL, custom metrics, the secret, idle polling, the reconciler) are billed apart.
import { type TableName, tables as tableSpecs } from '../../lambdas/manifest';
import { gbSeconds } from './billing';
import type { Deployment } from './deployment';
import type { Usage } from './meter';
import { GB, PRICES } from './prices';
import type { Sample } from './workloads';

export type LineItems = Record<string, number>;

/**
 * What Lambda adds to the lines the code writes, which the local runtime cannot: injectLambdaContext's keys on
 * every Powertools log line (every function uses it, resetKeys), with a CDK-generated function name of the
 * 64 characters Lambda allows, and a request and trace id. An assumption of size, not a measurement.
 */
const FUNCTION_NAME = 'SendflowApi-prod-DeliveryPipelineDeliveryFunctionAB12CD34-EfGh5678Ij90'.slice(0, 64);
const REQUEST_ID = '8f507cfc-1b2a-4697-b07a-ac58fc914c95';
export const CONTEXT_KEYS_BYTES = Buffer.byteLength(
  `,"cold_start":false,"function_arn":"arn:aws:lambda:us-east-1:123456789012:function:${FUNCTION_NAME}",` +
    `"function_memory_size":"512","function_name":"${FUNCTION_NAME}","function_request_id":"${REQUEST_ID}",` +
    `"xray_trace_id":"1-5759e988-bd862e3fe1be46a994272793"`,
);
/** Lambda's own START, END and REPORT lines of one invocation (text format, no init line on a warm start). */
export const PLATFORM_LINES_BYTES = Buffer.byteLength(
  `START RequestId: ${REQUEST_ID} Version: $LATEST\n` +
    `END RequestId: ${REQUEST_ID}\n` +
    `REPORT RequestId: ${REQUEST_ID}\tDuration: 23.45 ms\tBilled Duration: 24 ms\tMemory Size: 512 MB\tMax Memory Used: 112 MB\t\n`,
);

/** Months a written item is stored, by its table's retention: deliveries expire after 30 days (TTL). */
export function storageMonths(table: string): number {
  if (table === 'rateLimits') return 0; // one-second windows, expired at once
  if (table === 'idempotency') return 1 / 30; // 24 h
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

  for (const [name, units] of u.dynamo.writeUnits)
    add(`dynamodb_wru ${name}`, units * PRICES.dynamodb.writeRequestUnit);
  for (const [name, units] of u.dynamo.readUnits) add(`dynamodb_rru ${name}`, units * PRICES.dynamodb.readRequestUnit);
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

  const logBytes = logsIngested(u);
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

/** Bytes CloudWatch Logs ingests for the sample: the lines the code wrote, what Lambda adds to them, its own lines. */
export function logsIngested(u: Usage): number {
  let bytes = 0;
  for (const line of u.logs) bytes += line.bytes + (line.emf ? 0 : CONTEXT_KEYS_BYTES);
  return bytes + u.invocations.length * PLATFORM_LINES_BYTES;
}

/** SES's own charge for the sample's emails: every recipient is one email; no attachments today. */
export function sesCharge(sample: Sample): number {
  return sample.recipients * PRICES.ses.recipient;
}

/**
 * Costs that do not grow with volume, per month: the web ACL and its rules, each distinct EMF metric, the
 * signing secret and its cached reads, the event source mappings' idle long polls, and the reconciler's runs.
 */
export function fixedMonthly(deployment: Deployment, metrics: ReadonlySet<string>): LineItems {
  const minutes = 730.5 * 60;
  const reconciler = deployment.functions.get('sendflow-reconciler');
  // Five pollers per queue long-polling 20 s (AWS Compute Blog, "Understanding how AWS Lambda scales with Amazon
  // SQS standard queues"): 15 empty receives a minute per queue with a consumer, whatever the volume.
  const consumedQueues = 4;
  // Secret reads: one per warm container per 5 minutes, for the API and sender functions (10 warm each, assumed).
  const secretReads = 2 * 10 * (minutes / 5);
  return {
    waf_web_acl: PRICES.waf.webAclMonth,
    waf_rules: deployment.webAclRules * PRICES.waf.ruleMonth,
    cloudwatch_custom_metrics: metrics.size * PRICES.cloudwatch.metricMonth,
    secrets_manager_secret: PRICES.secretsManager.secretMonth,
    secrets_manager_calls: secretReads * PRICES.secretsManager.apiCall,
    sqs_idle_polling: consumedQueues * 15 * minutes * PRICES.sqs.request,
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
