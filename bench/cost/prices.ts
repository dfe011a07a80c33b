// Unit prices of every AWS service the meter bills, us-east-1 list prices (on demand, and DynamoDB's provisioned
// capacity), in one place with the date they were read and the pricing page each comes from. Free tiers are left
// out: the figures are marginal costs.

/** When these were read. Re-read the pages (names below) before you use a figure for a decision. */
export const PRICES_READ_ON = '2026-11-25';
export const REGION = 'us-east-1';

export const PRICES = {
  apiGateway: {
    /** REST API, per request, first 333 million a month. Page: "Amazon API Gateway pricing" (REST APIs). */
    restRequest: 3.5 / 1e6,
  },
  waf: {
    /** Per request inspected by a web ACL. Page: "AWS WAF pricing". */
    request: 0.6 / 1e6,
    /** Per web ACL, per month (fixed). */
    webAclMonth: 5,
    /** Per rule (or managed rule group) in a web ACL, per month (fixed). */
    ruleMonth: 1,
  },
  lambda: {
    /** Per invocation. Page: "AWS Lambda pricing". */
    request: 0.2 / 1e6,
    /** Per GB-second of duration, first 7.5 billion GB-s a month (arm64), first 6 billion (x86_64). */
    gbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  },
  dynamodb: {
    /** On-demand, Standard table class, since the 1 November 2024 price cut. Page: "Amazon DynamoDB pricing for on-demand capacity". */
    writeRequestUnit: 0.625 / 1e6,
    readRequestUnit: 0.125 / 1e6,
    /**
     * Provisioned capacity, Standard table class, per unit provisioned per hour: what a table (and each GSI) in
     * provisioned mode pays instead of request units. Page: "Amazon DynamoDB pricing for provisioned capacity"
     * (us-east-1), $0.00065 per WCU-hour and $0.00013 per RCU-hour, unchanged by the November 2024 on-demand cut.
     * Read on 2026-11-26; the stored copy of the page renders its price table by script, so the figures were
     * checked against a summary that quotes them (notes.deiveris.lv, "DynamoDB Provisioned Throughput"): re-read
     * the page before a decision.
     */
    writeCapacityUnitHour: 0.00065,
    readCapacityUnitHour: 0.00013,
    /** Per GB-month of table storage (Standard class, after the first 25 GB). */
    storageGbMonth: 0.25,
    /** Continuous backups (PITR), per GB-month of table size. */
    pitrGbMonth: 0.2,
  },
  sqs: {
    /** Standard queue, per request (each 64 KB chunk of a request's payload is one), first 100 billion a month. Page: "Amazon SQS pricing". */
    request: 0.4 / 1e6,
  },
  scheduler: {
    /** Per schedule invocation; creating and storing schedules is not billed. Page: "Amazon EventBridge pricing" (Scheduler). */
    invocation: 1 / 1e6,
  },
  ses: {
    /** Per email sent, each recipient counting as one email. Page: "Amazon SES pricing" (outbound email). */
    recipient: 0.1 / 1000,
    /** Per GB of attachments sent. */
    attachmentGb: 0.12,
  },
  cloudwatch: {
    /** Logs ingested (Standard log class), per GB. Page: "Amazon CloudWatch pricing" (Logs). */
    logsIngestGb: 0.5,
    /** Logs stored (archived), per GB-month, compressed. */
    logsStorageGbMonth: 0.03,
    /** Custom metric per month (first 10,000), prorated by the hour; EMF metrics are custom metrics. */
    metricMonth: 0.3,
    /** PutMetricData, per 1,000 requests. */
    putMetricDataRequest: 0.01 / 1000,
    /**
     * Alarms, per month: a standard-resolution (period of 60 s or more) alarm per metric it evaluates (a metric
     * math alarm pays for each metric of its expression), a high-resolution one 3×, a composite alarm its own
     * price. Same page ("Alarms").
     */
    alarmMetricMonth: 0.1,
    highResolutionAlarmMetricMonth: 0.3,
    compositeAlarmMonth: 0.5,
    /** A dashboard, per month (the account's first 3 are free: not counted, a stage's dashboard is marginal). */
    dashboardMonth: 3,
  },
  kms: {
    /** A customer managed key, per month (requests: $0.03 per 10,000, only when the alarm topic publishes). Page: "AWS Key Management Service pricing". */
    keyMonth: 1,
  },
  secretsManager: {
    /** Per 10,000 API calls. Page: "AWS Secrets Manager pricing". */
    apiCall: 0.05 / 10_000,
    /** Per secret per month (fixed). */
    secretMonth: 0.4,
  },
  s3: {
    /** Email bodies too large to keep inline. Page: "Amazon S3 pricing" (S3 Standard, first 50 TB). PUT, COPY, POST, LIST per request. */
    putRequest: 0.005 / 1000,
    /** GET, SELECT and all other requests, per request. */
    getRequest: 0.0004 / 1000,
    storageGbMonth: 0.023,
    /** Object tags (the lifecycle's retention tag), per tag per month: $0.01 per 10,000 (same page, "Storage management"). */
    tagMonth: 0.01 / 10_000,
  },
  dataTransfer: {
    /** Data transfer out to the internet, first 10 TB a month after the first 100 GB. Page: "Amazon EC2 On-Demand pricing" (Data Transfer), which Lambda's page points to. */
    outGb: 0.09,
  },
} as const;

/** Bytes in a GB as AWS bills them (GiB, 2^30). */
export const GB = 1024 ** 3;
/** Average month (365.25 × 24 / 12 hours) for per-month fixed prices. */
export const HOURS_PER_MONTH = 730.5;
