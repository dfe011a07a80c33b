// AWS-only wiring the stack hands the email side of its functions (sends queue and schedule group, the
// signing secret's ARN, the SES configuration set, the bodies bucket): names and ARNs, parsed once at cold start next to the
// shared configuration, which they do not concern locally.
import * as z from 'zod';

const optional = z.string().min(1).optional();

const schema = z.object({
  SF_SENDS_QUEUE_URL: optional,
  SF_SENDS_QUEUE_ARN: optional,
  SF_SENDS_SCHEDULE_GROUP: optional,
  SF_SENDS_SCHEDULER_ROLE_ARN: optional,
  SF_SENDS_SCHEDULER_DLQ_ARN: optional,
  SF_SIGNING_SECRET_ID: optional,
  SF_SES_CONFIGURATION_SET: optional,
  SF_SES_IDENTITY_OWNER: optional,
  SF_SLOW_DELIVERIES_QUEUE_URL: optional,
  SF_SLOW_DELIVERIES_QUEUE_ARN: optional,
  SF_DELIVERY_DLQ_ARNS: optional,
  SF_DELIVERIES_BYPASS_QUEUE_URL: optional,
  SF_EMAIL_BODIES_BUCKET: optional,
  SF_INBOUND_BUCKET: optional,
  SF_RECEIVING_MX: optional,
  SF_NOTICE_FROM: optional,
});

export interface AwsWiring {
  readonly sendsQueueUrl?: string;
  readonly sendsQueueArn?: string;
  readonly sendsScheduleGroup?: string;
  readonly sendsSchedulerRoleArn?: string;
  readonly sendsSchedulerDlqArn?: string;
  /** Name or ARN of the Secrets Manager secret holding the link-signing key (SF_SIGNING_SECRET wins if set). */
  readonly signingSecretId?: string;
  /** Every SES SendEmail names it: its event destination is how SES events come back. */
  readonly sesConfigurationSet?: string;
  /**
   * The `sendflow:managed` tag value on every SES identity this deployment creates (its stage-qualified api
   * stack name); the stack's IAM policies allow identity actions only on identities carrying it.
   */
  readonly sesIdentityOwner?: string;
  /** The slow deliveries lane (the delivery worker sends slow endpoints' jobs there, and consumes it). */
  readonly slowDeliveriesQueueUrl?: string;
  readonly slowDeliveriesQueueArn?: string;
  /** The deliveries DLQs the delivery worker consumes (comma-separated ARNs): their jobs are recorded failed. */
  readonly deliveryDlqArns?: string;
  /**
   * The shared lane's bypass queue (issue 29): where a function that sends first attempts sends them while the
   * deliveries queue is behind (app/webhooks/bypass-delivery-queue). Absent: always the deliveries queue.
   */
  readonly deliveriesBypassQueueUrl?: string;
  /** The bucket holding email bodies too large to keep inline (the API writes and reads them, the send worker reads). */
  readonly emailBodiesBucket?: string;
  /** The bucket SES's receipt rule stores received messages in (the inbound function reads them). */
  readonly inboundBucket?: string;
  /** SES's inbound endpoint where this stage receives email: a receiving domain's MX record (API). */
  readonly receivingMx?: string;
  /** The stage's sender of the accounts' notices (an SES identity); absent: notices are skipped with a log line. */
  readonly noticeFrom?: string;
}

export function loadAwsWiring(env: NodeJS.ProcessEnv): AwsWiring {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const w = schema.parse(present);
  const entries = {
    sendsQueueUrl: w.SF_SENDS_QUEUE_URL,
    sendsQueueArn: w.SF_SENDS_QUEUE_ARN,
    sendsScheduleGroup: w.SF_SENDS_SCHEDULE_GROUP,
    sendsSchedulerRoleArn: w.SF_SENDS_SCHEDULER_ROLE_ARN,
    sendsSchedulerDlqArn: w.SF_SENDS_SCHEDULER_DLQ_ARN,
    signingSecretId: w.SF_SIGNING_SECRET_ID,
    sesConfigurationSet: w.SF_SES_CONFIGURATION_SET,
    sesIdentityOwner: w.SF_SES_IDENTITY_OWNER,
    slowDeliveriesQueueUrl: w.SF_SLOW_DELIVERIES_QUEUE_URL,
    slowDeliveriesQueueArn: w.SF_SLOW_DELIVERIES_QUEUE_ARN,
    deliveryDlqArns: w.SF_DELIVERY_DLQ_ARNS,
    deliveriesBypassQueueUrl: w.SF_DELIVERIES_BYPASS_QUEUE_URL,
    emailBodiesBucket: w.SF_EMAIL_BODIES_BUCKET,
    inboundBucket: w.SF_INBOUND_BUCKET,
    receivingMx: w.SF_RECEIVING_MX,
    noticeFrom: w.SF_NOTICE_FROM,
  };
  return Object.freeze(Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as AwsWiring);
}
