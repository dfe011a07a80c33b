// The live-mode email provider on AWS (DESIGN §6): one SES v2 SendEmail per recipient copy, each with its own
// List-Unsubscribe headers, always through our configuration set (its event destination is how delivery,
// bounces and complaints come back) and tagged with the email, account and mode they belong to. Each copy's
// outcome goes back to the send worker, which records it with the recipient: SES refusing a copy outright is
// `refused` (email.failed); throttling is retried with backoff here first, then, like an outage, `retry`
// (the worker tries again on a later receive of the sends message).
import {
  AccountSuspendedException,
  BadRequestException,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  type SESv2Client,
  SESv2ServiceException,
  SendEmailCommand,
  type SendEmailRequest,
  SendingPausedException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { NO_TRACKING, type Tracking, type TrackingLookup } from '../../app/domains/tracking';
import type { CopyOutcome, EmailProvider, OutgoingAttachment, OutgoingCopy } from '../../app/emails/ports';
import { mapWithLimit } from '../../app/pool';
import { bareAddress, type EmailMessage } from '../../domain/email/email';
import { expandTrace } from '../../domain/trace-context';
import { mimeAddress } from './addresses';
import { configurationSetFor } from './configuration-sets';
import { customerSesTags, SES_TAGS } from './tags';

/** SES message tag values: ASCII letters, digits, `_` and `-`, at most 256 characters. */
const TAG_VALUE = /^[A-Za-z0-9_-]{1,256}$/;

/** Refusals that concern this message or the sending account: retrying the same request will not help. */
const REFUSALS = [
  MessageRejected,
  MailFromDomainNotVerifiedException,
  SendingPausedException,
  AccountSuspendedException,
  BadRequestException,
] as const;
/** Rate and quota limits: retried with backoff (on top of the SDK's own retries), then a refusal too. */
const THROTTLES = [TooManyRequestsException, LimitExceededException] as const;

export interface SesEmailProviderOptions {
  readonly client: SESv2Client;
  /**
   * The base configuration set (no open or click events): named on every SendEmail of an untracked email, its
   * `-open`/`-click`/`-open-click` variants on a tracked one (configurationSetFor). Without one SES publishes
   * no events and the email's story stops at "sent".
   */
  readonly configurationSet: string;
  /** The sender domain's tracking flags; none tracked when omitted. */
  readonly tracking?: TrackingLookup;
  /** Extra attempts of a throttled copy, after the SDK's own retries (default 3). */
  readonly throttleRetries?: number;
  /** First backoff before a throttled copy is tried again, doubled each time (default 250 ms). */
  readonly backoffMs?: number;
  /** SendEmail calls in flight for one email (default 4): a 50-recipient email is not 50 round trips in a row. */
  readonly concurrency?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The SendEmail request of one recipient's copy: exactly what SES receives. Attachments go as Simple content's
 * `Attachments` (SES builds the MIME): base64 in the message, inline with their Content-ID when they have one.
 */
export function sendEmailRequest(
  email: EmailMessage,
  copy: OutgoingCopy,
  configurationSet: string,
  attachments: readonly OutgoingAttachment[] = [],
): SendEmailRequest {
  const tags = {
    [SES_TAGS.emailId]: email.id,
    [SES_TAGS.accountId]: email.accountId,
    [SES_TAGS.mode]: email.mode,
    ...(email.templateId !== undefined ? { [SES_TAGS.templateId]: email.templateId } : {}),
    ...traceTag(email.trace),
  };
  for (const [name, value] of Object.entries(tags)) {
    if (!TAG_VALUE.test(value)) throw new TypeError(`SES tag ${name} cannot carry ${JSON.stringify(value)}`);
  }
  // The email's own tags ride along when they fit SES's limits, so its SES events carry them (webhook filters);
  // otherwise the mark says the SES mapper reads them from the stored email (adapters/ses/tags).
  const customer = customerSesTags(email.tags ?? [], Object.keys(tags).length);
  const body = {
    ...(email.html !== undefined ? { Html: { Data: email.html, Charset: 'UTF-8' } } : {}),
    ...(email.text !== undefined ? { Text: { Data: email.text, Charset: 'UTF-8' } } : {}),
  };
  return {
    FromEmailAddress: mimeAddress(email.from),
    Destination: { ToAddresses: [mimeAddress(copy.to)] },
    ...(email.replyTo.length ? { ReplyToAddresses: email.replyTo.map(mimeAddress) } : {}),
    Content: {
      Simple: {
        Subject: { Data: email.subject, Charset: 'UTF-8' },
        Body: body,
        Headers: messageHeaders(email.headers, copy.headers),
        ...(attachments.length
          ? {
              Attachments: attachments.map((a) => ({
                FileName: a.filename,
                RawContent: a.content,
                ContentType: a.contentType,
                ContentDisposition: a.disposition === 'inline' ? ('INLINE' as const) : ('ATTACHMENT' as const),
                ...(a.contentId ? { ContentId: a.contentId } : {}),
                ContentTransferEncoding: 'BASE64' as const,
              })),
            }
          : {}),
      },
    },
    ConfigurationSetName: configurationSet,
    EmailTags: [
      ...Object.entries(tags).map(([Name, Value]) => ({ Name, Value })),
      { Name: SES_TAGS.customerTags, Value: customer.mark },
      ...customer.tags,
    ],
  };
}

/** The email's own headers, then the copy's (List-Unsubscribe*), which replace any of the same name. */
function messageHeaders(
  custom: Readonly<Record<string, string>>,
  perCopy: Readonly<Record<string, string>>,
): { Name: string; Value: string }[] {
  const ours = new Set(Object.keys(perCopy).map((name) => name.toLowerCase()));
  return [...Object.entries(custom).filter(([name]) => !ours.has(name.toLowerCase())), ...Object.entries(perCopy)].map(
    ([Name, Value]) => ({ Name, Value }),
  );
}

/** An unexpected error's name only: its message may carry ARNs and account ids that webhooks must not show. */
function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown';
}

/** `Name: message` of an SES refusal, or null for anything else (a bug, the network, missing permissions). */
export function refusalReason(error: unknown): string | null {
  const known = [...REFUSALS, ...THROTTLES].some((type) => error instanceof type);
  return known ? `${(error as Error).name}: ${(error as Error).message}` : null;
}

/** Errors of a connection that was never made: the request did not leave, so trying again is safe. */
const NOT_SENT = /^(connect )?(ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b|^connect /;

/**
 * A copy's outcome from SendEmail's error. SES answered: a refusal is final, anything else (throttling, its
 * own fault, a missing configuration set) is retried later. SES did not answer: a connection never made is
 * retried; anything else (a reset or time-out once the request was on its way) may have been sent, and
 * SendEmail has no idempotency token, so it is never sent again: email.failed send_outcome_unknown.
 */
function outcomeOf(error: unknown): CopyOutcome {
  const throttled = THROTTLES.some((type) => error instanceof type);
  const reason = refusalReason(error);
  if (reason && !throttled) return { status: 'refused', reason };
  if (reason) return { status: 'retry', reason };
  const code = (error as { code?: string }).code ?? '';
  const message = error instanceof Error ? error.message : '';
  if (error instanceof SESv2ServiceException || NOT_SENT.test(code) || NOT_SENT.test(message)) {
    return { status: 'retry', reason: `provider_error: ${errorName(error)}` };
  }
  return { status: 'refused', reason: 'send_outcome_unknown' };
}

export class SesEmailProvider implements EmailProvider {
  private readonly throttleRetries: number;
  private readonly backoffMs: number;
  private readonly concurrency: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: SesEmailProviderOptions) {
    this.throttleRetries = options.throttleRetries ?? 3;
    this.backoffMs = options.backoffMs ?? 250;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * Sends every copy, `concurrency` at a time; one recipient's failure never holds back the others. A refusal
   * (SES said no to this message or sender) is final; a copy still throttled after the backoff, or one that
   * failed unexpectedly (network, credentials, a missing configuration set), is worth another try later. An
   * unexpected error's reason names its type only: its message may carry ARNs and account ids.
   */
  async send(
    email: EmailMessage,
    copies: readonly OutgoingCopy[],
    attachments: readonly OutgoingAttachment[] = [],
  ): Promise<CopyOutcome[]> {
    const configurationSet = configurationSetFor(this.options.configurationSet, await this.trackingOf(email));
    return mapWithLimit(copies, this.concurrency, async (copy): Promise<CopyOutcome> => {
      try {
        await this.sendCopy(email, copy, configurationSet, attachments);
        return { status: 'sent' };
      } catch (error) {
        return outcomeOf(error);
      }
    });
  }

  /**
   * The sender domain's flags. A failed read sends untracked rather than holding the email back: tracking is
   * the customer's option, delivery is the service (and untracked is the private default).
   */
  private async trackingOf(email: EmailMessage): Promise<Tracking> {
    if (!this.options.tracking) return NO_TRACKING;
    const domain = bareAddress(email.from).split('@')[1] ?? '';
    return this.options.tracking(email, domain).catch(() => NO_TRACKING);
  }

  private async sendCopy(
    email: EmailMessage,
    copy: OutgoingCopy,
    configurationSet: string,
    attachments: readonly OutgoingAttachment[],
  ): Promise<void> {
    const request = sendEmailRequest(email, copy, configurationSet, attachments);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.client.send(new SendEmailCommand(request));
        return;
      } catch (error) {
        const throttled = THROTTLES.some((type) => error instanceof type);
        if (!throttled || attempt >= this.throttleRetries) throw error;
        await this.sleep(this.backoffMs * 2 ** attempt);
      }
    }
  }
}

/** The trace tag of a traced email: the compact context's ids only (a tracestate stays behind). */
function traceTag(trace: string | undefined): Record<string, string> {
  const ids = trace?.split(' ')[0];
  return ids && expandTrace(ids) ? { [SES_TAGS.trace]: ids } : {};
}
