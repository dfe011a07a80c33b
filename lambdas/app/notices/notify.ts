// Use case: a short plain-text notice to the account's address for notices (set on the dashboard's settings page,
// app/dashboard/notice-address) when Sendflow warns or pauses its sending reputation or disables one of its
// webhooks. Best effort and at most once per account, kind and UTC day: the day's claim is taken before the
// send, so a failed send is not retried that day (the dashboard and the events still tell). No address: nothing.

import type { AccountRepository, Clock, RateLimitCounter } from '../ports';
import type { NotedFigures, Subject } from '../reputation/ports';
import type { Tenant } from '../webhooks/ports';

export type NoticeKind = 'reputation_warning' | 'reputation_paused' | 'webhook_disabled';

/** One notice as a Notifier sends it: plain text, from the stage's sender (SF_NOTICE_FROM on AWS). */
export interface Notice {
  readonly accountId: string;
  readonly kind: NoticeKind;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** Sends a notice: SES on AWS (adapters/ses/ses-notifier), a line in the data directory locally. */
export interface Notifier {
  send(notice: Notice): Promise<void>;
}

export interface NoticeDeps {
  readonly accounts: Pick<AccountRepository, 'get'>;
  /** The day's claim: a counter of the rate-limit windows (the first to add one sends), gone by TTL after the day. */
  readonly counter: RateLimitCounter;
  readonly notifier: Notifier;
  readonly clock: Clock;
}

export type NoticeOutcome = 'sent' | 'no-address' | 'already-sent-today';

const DAY_SECONDS = 86_400;

export async function sendNotice(
  deps: NoticeDeps,
  accountId: string,
  kind: NoticeKind,
  content: { readonly subject: string; readonly text: string },
): Promise<NoticeOutcome> {
  const account = await deps.accounts.get(accountId);
  const to = account?.noticeEmail;
  if (!to) return 'no-address';
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const start = nowSeconds - (nowSeconds % DAY_SECONDS);
  const count = await deps.counter.increment(`notice#${accountId}#${kind}`, { start, reset: start + DAY_SECONDS });
  if (count > 1) return 'already-sent-today';
  await deps.notifier.send({ accountId, kind, to, ...content });
  return 'sent';
}

const pct = (value: number | null) => (value === null ? 'n/a' : `${+(value * 100).toFixed(2)}%`);

/** The notice of a reputation warning or pause (what app/reputation notes), in a few plain lines. */
export function reputationNotice(
  tenant: Tenant,
  subject: Subject,
  level: 'warning' | 'paused',
  figures: NotedFigures,
): { kind: NoticeKind; subject: string; text: string } {
  const who = subject.kind === 'account' ? 'this account' : `the domain ${subject.domain}`;
  const rates = `bounce rate ${pct(figures.bounceRate)}, complaint rate ${pct(figures.complaintRate)} (${figures.sent} sent)`;
  const head =
    level === 'paused'
      ? `Live sending from ${who} is paused: ${rates}, past the pause thresholds. Clean the list and ask support to lift the pause.`
      : `The sending reputation of ${who} is at risk: ${rates}. Sending is paused if it keeps rising.`;
  return {
    kind: level === 'paused' ? 'reputation_paused' : 'reputation_warning',
    subject: level === 'paused' ? 'Sendflow: live sending paused' : 'Sendflow: sending reputation warning',
    text: `${head}\n\nAccount ${tenant.accountId} (${tenant.mode} mode). The dashboard's overview shows the figures.\n`,
  };
}

/** The notice of a webhook Sendflow disabled (auto-disable: a 410, or failures past the window). */
export function webhookDisabledNotice(
  webhook: { readonly id: string; readonly accountId: string; readonly mode: string },
  url: string,
  reason: string,
): { kind: NoticeKind; subject: string; text: string } {
  const why = reason === 'gone' ? 'the endpoint answered 410 Gone' : 'its deliveries kept failing';
  return {
    kind: 'webhook_disabled',
    subject: 'Sendflow: a webhook was disabled',
    text:
      `Sendflow disabled the webhook ${webhook.id} (${url}): ${why}. No events are delivered to it until it is ` +
      `resumed on its dashboard page.\n\nAccount ${webhook.accountId} (${webhook.mode} mode).\n`,
  };
}
