// Who the alarms of a stage reach, from committed CDK context (cdk.json): `sendflow:alarmSubscribers` (e-mail
// addresses and HTTPS pager endpoints, per stage, for the paging topic and optionally the non-paging one), the
// older `sendflow:alarmEmails` (page by e-mail), and `sendflow:unmonitoredStages`, the stages nobody is paged for
// (a developer's). A stage that has no page subscriber and is not declared unmonitored is refused at synth
// (checkMonitored): alarms that page nobody are worse than none, since everyone believes they page.
import { contextObject } from './context-object';

export const CONTEXT_ALARM_SUBSCRIBERS = 'sendflow:alarmSubscribers';
/** Replaced by CONTEXT_ALARM_EMAILS: a one-off flag, undone by the next deploy without it. Refused with a pointer. */
export const CONTEXT_ALARM_EMAIL = 'sendflow:alarmEmail';
/**
 * `{"prod": ["oncall@example.com"]}`: the older spelling, e-mail only. Still read: its addresses page, as
 * sendflow:alarmSubscribers' do (and keep the subscriptions they had, so nobody confirms again).
 */
export const CONTEXT_ALARM_EMAILS = 'sendflow:alarmEmails';
/** `["ci", "dev-*"]`: stages synthesized without anyone to page; a trailing `*` matches a prefix. */
export const CONTEXT_UNMONITORED_STAGES = 'sendflow:unmonitoredStages';

/** E-mail addresses and `https://` endpoints (a pager's SNS integration URL). */
export interface AlarmSubscribers {
  /** Subscribed to the paging topic: the few composite alarms of symptoms, when they fire and recover. */
  readonly page: readonly string[];
  /** Subscribed to the non-paging topic: every other alarm (the causes), for working hours. */
  readonly notify: readonly string[];
}

export const NO_SUBSCRIBERS: AlarmSubscribers = { page: [], notify: [] };

const EMAIL_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SUBSCRIBERS_EXAMPLE = '{"prod": ["oncall@example.com", "https://events.pagerduty.com/integration/KEY/enqueue"]}';
/** A stage name (lib/outputs.ts's rule), optionally ending in `*` after at least one character. */
const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}\*?$/;

/** Why a subscriber is refused, or undefined when it is an e-mail address or an https:// URL with a host. */
function subscriberProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `${JSON.stringify(value)} is not an e-mail address or an https:// URL`;
  if (value.includes('://')) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return `${JSON.stringify(value)} is not a URL`;
    }
    if (url.protocol !== 'https:')
      return `${JSON.stringify(value)}: SNS endpoints here must be https (not ${url.protocol})`;
    return url.hostname && value.length <= 2048 ? undefined : `${JSON.stringify(value)} is not an https:// URL`;
  }
  return EMAIL_ADDRESS.test(value) && value.length <= 254
    ? undefined
    : `${JSON.stringify(value)} is not an e-mail address or an https:// URL`;
}

function subscriberList(stage: string, field: string, raw: unknown, problems: string[]): string[] {
  if (!Array.isArray(raw)) {
    problems.push(`${stage}${field ? `.${field}` : ''} must be a list of subscribers, got ${JSON.stringify(raw)}`);
    return [];
  }
  for (const value of raw) {
    const problem = subscriberProblem(value);
    if (problem) problems.push(`${stage}: ${problem}`);
  }
  return raw.filter((value): value is string => typeof value === 'string');
}

/**
 * The stage's entry of `sendflow:alarmSubscribers` (an object, or its JSON from `-c`): a list (all page) or
 * `{"page": [...], "notify": [...]}`. Every stage's entry is checked, so a typo in another stage fails too.
 */
export function parseAlarmSubscribers(raw: unknown, stage: string, key = CONTEXT_ALARM_SUBSCRIBERS): AlarmSubscribers {
  if (raw === undefined) return NO_SUBSCRIBERS;
  const stages = contextObject(raw, key, SUBSCRIBERS_EXAMPLE);
  const problems: string[] = [];
  const parsed = new Map<string, AlarmSubscribers>();
  for (const [name, entry] of Object.entries(stages)) {
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      const { page = [], notify = [], ...rest } = entry as Record<string, unknown>;
      const unknown = Object.keys(rest);
      if (unknown.length) problems.push(`${name}: unknown setting ${unknown.join(', ')} (known: page, notify)`);
      parsed.set(name, {
        page: subscriberList(name, 'page', page, problems),
        notify: subscriberList(name, 'notify', notify, problems),
      });
    } else parsed.set(name, { page: subscriberList(name, '', entry, problems), notify: [] });
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return parsed.get(stage) ?? NO_SUBSCRIBERS;
}

/** The stage's entry of `sendflow:alarmEmails` (e-mail addresses only); [] when it has none. */
export function parseAlarmEmails(raw: unknown, stage: string, key = CONTEXT_ALARM_EMAILS): readonly string[] {
  if (raw === undefined) return [];
  const stages = contextObject(raw, key, '{"prod": ["oncall@example.com"]}');
  const problems: string[] = [];
  for (const [name, addresses] of Object.entries(stages)) {
    if (!Array.isArray(addresses))
      problems.push(`${name} must be a list of addresses, got ${JSON.stringify(addresses)}`);
    else {
      for (const address of addresses) {
        if (typeof address !== 'string' || !EMAIL_ADDRESS.test(address) || address.length > 254) {
          problems.push(`${name}: ${JSON.stringify(address)} is not an email address`);
        }
      }
    }
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return [...new Set(((stages as Record<string, string[]>)[stage] ?? []) as string[])];
}

/**
 * Whether `sendflow:unmonitoredStages` (a list, or its JSON from `-c`) names the stage, exactly or by a prefix
 * pattern (`dev-*`). A bare `*` is refused: it would declare every stage, production included, unmonitored.
 */
export function isUnmonitored(raw: unknown, stage: string, key = CONTEXT_UNMONITORED_STAGES): boolean {
  if (raw === undefined) return false;
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error(`Context ${key} must be a JSON list such as ["ci", "dev-*"], got ${raw}`);
    }
  }
  if (!Array.isArray(value)) {
    throw new Error(`Context ${key} must be a list of stages such as ["ci", "dev-*"], got ${JSON.stringify(value)}`);
  }
  const problems = value
    .filter((entry) => typeof entry !== 'string' || !STAGE_PATTERN.test(entry))
    .map(
      (entry) =>
        `${JSON.stringify(entry)} is not a stage name or a prefix pattern such as "dev-*" (a bare "*" would ` +
        'leave every stage, production included, unmonitored)',
    );
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return (value as string[]).some((entry) =>
    entry.endsWith('*') ? stage.startsWith(entry.slice(0, -1)) : stage === entry,
  );
}

/** Refuses a stage that would page nobody, unless committed configuration says nobody watches it. */
export function checkMonitored(stage: string, subscribers: AlarmSubscribers, unmonitored: boolean): void {
  if (subscribers.page.length || unmonitored) return;
  throw new Error(
    `Stage ${stage} has no alarm subscriber: its alarms would page nobody. Add who is paged to ` +
      `${CONTEXT_ALARM_SUBSCRIBERS} in cdk.json and commit it, e.g. "${CONTEXT_ALARM_SUBSCRIBERS}": {"${stage}": ` +
      '["oncall@example.com", "https://events.pagerduty.com/integration/KEY/enqueue"]} (e-mail addresses or ' +
      `https:// pager endpoints); or, for a stage nobody watches (a developer's), name it in ` +
      `${CONTEXT_UNMONITORED_STAGES} in cdk.json. See docs/runbook.md, "Alarms and what to do".`,
  );
}
