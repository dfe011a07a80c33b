// HTTP handler for GET /v1/usage: the account's plan, rate limit and quotas used, bytes stored today included
// (the dashboard's overview).
import * as z from 'zod';
import { type QuotaUsage, readUsage, type UsageDeps } from '../../app/usage';
import { PLAN_NAMES } from '../../domain/plans';
import type { ResponseSchemas, RouteHandler } from './context';
import { integer, isoTime, named, reply, success } from './response';

const quotaSchema = named(
  'QuotaUsage',
  z.strictObject({
    period: z.string().meta({ description: 'The month (YYYY-MM) or the UTC day (YYYY-MM-DD) counted.' }),
    // used and limit count emails, recipients or bytes (attachment_bytes_today, inbound_bytes_today).
    used: integer,
    limit: integer,
    resets_at: isoTime,
  }),
);

const responses = {
  getUsage: success(
    200,
    named(
      'Usage',
      z.strictObject({
        object: z.literal('usage'),
        plan: z.enum(PLAN_NAMES),
        rate_limit: z.strictObject({ requests_per_second: integer }),
        live_emails_this_month: quotaSchema,
        test_recipients_today: quotaSchema,
        // Bytes of attachments stored today (UTC), both modes; of received mail stored for the account.
        attachment_bytes_today: quotaSchema,
        inbound_bytes_today: quotaSchema,
      }),
    ),
    "The account's plan and what it has used",
  ),
} as const;

const quota = (q: QuotaUsage) => ({
  period: q.period,
  used: q.used,
  limit: q.limit,
  resets_at: new Date(q.resetsAt).toISOString(),
});

export function usageHandlers(deps: UsageDeps) {
  const get: RouteHandler = async ({ caller }) => {
    const usage = await readUsage(deps, caller);
    return reply(responses.getUsage, {
      object: 'usage',
      plan: usage.plan,
      rate_limit: { requests_per_second: usage.requestsPerSecond },
      live_emails_this_month: quota(usage.liveEmails),
      test_recipients_today: quota(usage.testRecipients),
      attachment_bytes_today: quota(usage.attachmentBytes),
      inbound_bytes_today: quota(usage.inboundBytes),
    });
  };
  return { getUsage: get };
}

export const responseSchemas: ResponseSchemas = responses;
