// The event catalog (lambdas/handlers/http/event-catalog.ts) against real payloads: every event the code makes
// (the simulator's stories, every SES fixture through the SES mapper, the send, unsubscribe, domain and contact
// use cases on in-memory fakes) is rendered as a `standard` webhook body and validated with ajv (draft 2020-12,
// formats checked) against its type's schema; and the schemas are closed: an extra field, a missing one, a
// wrong type or a `sequence` below 1 fails.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { mapSesEvent } from '../../lambdas/adapters/ses/map-ses-event';
import { SimulatedEmailProvider } from '../../lambdas/adapters/simulator/simulated-provider';
import {
  type ContactDeps,
  confirmContact,
  createContact,
  deleteContact,
  updateContact,
} from '../../lambdas/app/contacts/contacts';
import {
  createDomain,
  type DomainDeps,
  deleteDomain,
  updateDomainTracking,
  verifyDomain,
} from '../../lambdas/app/domains/domains';
import { type EmailDraft, type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
import { unsubscribe } from '../../lambdas/app/emails/unsubscribe';
import type { Principal } from '../../lambdas/app/ports';
import { warningEvent } from '../../lambdas/app/reputation/track-reputation';
import { addSuppressions, removeSuppressions, type SuppressionDeps } from '../../lambdas/app/suppressions/suppressions';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { DEFAULT_REPUTATION_POLICY, judge, NO_COUNTS } from '../../lambdas/domain/email/reputation';
import { SIMULATOR_DOMAIN, SIMULATOR_STORIES } from '../../lambdas/domain/email/simulator';
import { EVENT_TYPES, type SendflowEvent } from '../../lambdas/domain/events';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { signToken } from '../../lambdas/domain/tokens';
import { renderPayload } from '../../lambdas/domain/webhooks/render';
import { eventCatalog } from '../../lambdas/handlers/http/event-catalog';

/** Made by auto-disable, whose own test validates them (test/integration/webhook-health.test.ts). */
const WEBHOOK_EVENT_TYPES = ['webhook.disabled', 'webhook.failing'];

import {
  FakeClock,
  fixedLinks,
  InMemoryContactRepository,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  ScriptedDomainProvider,
  seededRandom,
} from '../support/fakes';

type Json = Record<string, unknown>;

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);
const SECRET = 'catalog-link-secret';
const TENANT: Tenant = { accountId: 'acct_catalog', mode: 'test' };
const CALLER: Principal = { ...TENANT, keyId: 'key_01', scopes: ['email:send'], plan: 'scale' };

/** Types no code on this branch makes: inbound mail is reserved; the webhook events come with endpoint health. */
const NOT_MADE_HERE = ['email.received', ...WEBHOOK_EVENT_TYPES];

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validators = new Map(eventCatalog().map((entry) => [entry.type, ajv.compile(entry.schema)]));

/** The problems of one delivered body against its type's schema; [] when it validates. */
function problems(body: string): string[] {
  const payload = JSON.parse(body) as Json;
  const validate = validators.get(payload.type as never);
  if (!validate) return [`no schema for ${String(payload.type)}`];
  return validate(payload) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

function draft(overrides: Partial<EmailDraft> = {}): EmailDraft {
  return {
    from: 'Acme Billing <billing@acme.example>',
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Invoice 42',
    text: 'Hello',
    headers: {},
    tags: [],
    ...overrides,
  };
}

/** Every email event the simulator's stories make, one email per story. */
async function simulatorEvents(): Promise<SendflowEvent[]> {
  const events = new RecordingEventPublisher();
  const provider = new SimulatedEmailProvider({ events, stepSeconds: 1 });
  for (const story of Object.keys(SIMULATOR_STORIES)) {
    const to = `${story}@${SIMULATOR_DOMAIN}`;
    const { attachments: _none, ...content } = draft({ to: [to] });
    const email = {
      ...content,
      ...TENANT,
      id: timeOrderedId('email', T0, seededRandom(story)),
      createdAt: new Date(T0).toISOString(),
    };
    await provider.send(email, [{ to, headers: {} }]);
  }
  return events.published.flatMap((p) => p.events);
}

/** Every event the SES mapper makes of the SES fixtures (each documented SES event type and bounce kind). */
function sesEvents(): SendflowEvent[] {
  const dir = new URL('../fixtures/ses/', import.meta.url);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .flatMap((file) => {
      const mapped = mapSesEvent(JSON.parse(readFileSync(new URL(file, dir), 'utf8')).detail);
      return mapped.kind === 'events' ? mapped.events : [];
    });
}

/** email.scheduled, email.suppressed, email.sent, email.failed from the send use cases, then email.unsubscribed. */
async function sendingEvents(): Promise<SendflowEvent[]> {
  const clock = new FakeClock(T0);
  const events = new RecordingEventPublisher();
  const emails = new InMemoryEmailRepository();
  const suppressions = new InMemorySuppressionList();
  const provider = new RecordingEmailProvider();
  provider.outcome = (to) =>
    to.startsWith('refused') ? { status: 'refused', reason: 'MessageRejected' } : { status: 'sent' };
  const sendScheduler = new RecordingSendScheduler();
  const deps: SendEmailDeps = {
    emails,
    domains: new InMemoryDomainRepository(),
    providerFor: () => provider,
    quotas: new InMemoryQuotaCounter(),
    suppressions,
    events,
    sendScheduler,
    links: fixedLinks(SECRET),
    clock,
    random: seededRandom('catalog-sends'),
    maxSendTries: 1,
  };
  for (const reason of ['hard_bounce', 'complaint', 'unsubscribe'] as const) {
    await suppressions.add(TENANT, { address: `${reason}@example.com`, reason, createdAt: new Date(T0).toISOString() });
  }
  const later = new Date(T0 + 3_600_000).toISOString();
  await sendEmails(deps, CALLER, [draft({ to: ['Ada <ada@example.com>'], scheduledAt: later })]);
  const [id] = await sendEmails(deps, CALLER, [
    draft({
      to: ['hard_bounce@example.com', 'complaint@example.com', 'unsubscribe@example.com', 'refused@x.test'],
      // Taken by the provider: the send worker's own email.sent.
      cc: ['taken@example.com'],
    }),
  ]);
  for (const job of sendScheduler.scheduled.filter((s) => s.atMs <= clock.now())) {
    await sendQueuedEmail(deps, job.emailId);
  }
  const token = signToken(
    'unsubscribe',
    { a: TENANT.accountId, m: TENANT.mode, e: id ?? '', r: 'refused@x.test' },
    SECRET,
  );
  await unsubscribe({ emails, suppressions, events, links: fixedLinks(SECRET), clock }, token);
  return events.published.flatMap((p) => p.events);
}

/** Every domain.* and contact.* event, from their use cases. */
async function accountEvents(): Promise<SendflowEvent[]> {
  const events = new RecordingEventPublisher();
  const clock = new FakeClock(T0);
  const provider = new ScriptedDomainProvider();
  const domainDeps: DomainDeps = {
    domains: new InMemoryDomainRepository(),
    domainProviderFor: () => provider,
    events,
    clock,
    random: seededRandom('catalog-domains'),
  };
  const domain = await createDomain(domainDeps, TENANT, 'mail.acme.example');
  provider.statuses.set(domain.name, 'verified');
  await verifyDomain(domainDeps, TENANT, domain.id);
  await updateDomainTracking(domainDeps, TENANT, domain.id, { openTracking: true });
  await deleteDomain(domainDeps, TENANT, domain.id);
  const contactDeps: ContactDeps = {
    contacts: new InMemoryContactRepository(),
    events,
    links: fixedLinks(SECRET),
    clock,
    random: seededRandom('catalog-contacts'),
  };
  const { contact, confirmationUrl } = await createContact(contactDeps, TENANT, { email: 'Ada@Example.com' });
  await updateContact(contactDeps, TENANT, contact.id, { firstName: 'Ada', lastName: null });
  await confirmContact(contactDeps, confirmationUrl.slice(confirmationUrl.lastIndexOf('/') + 1));
  await deleteContact(contactDeps, TENANT, contact.id);
  // suppression.* (their stored format on): added by hand, and removed, through their use cases.
  const suppressionDeps: SuppressionDeps = {
    suppressions: new InMemorySuppressionList(),
    events,
    clock,
    random: seededRandom('catalog-suppressions'),
    suppressionEvents: true,
  };
  await addSuppressions(suppressionDeps, TENANT, ['ada@example.com']);
  await removeSuppressions(suppressionDeps, TENANT, ['ada@example.com']);
  return events.published.flatMap((p) => p.events);
}

/** account.reputation_warning at both levels, for the account and for a domain, as the judgment makes it. */
function reputationEvents(): SendflowEvent[] {
  const deps = { policy: DEFAULT_REPUTATION_POLICY, clock: new FakeClock(T0), random: seededRandom('catalog-rep') };
  const warned = judge({ ...NO_COUNTS, sent: 400, bounced: 20, bounced_permanent: 20 }, DEFAULT_REPUTATION_POLICY);
  const paused = judge({ ...NO_COUNTS, sent: 400, complained: 2 }, DEFAULT_REPUTATION_POLICY);
  return [
    warningEvent(deps, TENANT, { kind: 'account' }, warned, 'warning'),
    warningEvent(deps, TENANT, { kind: 'domain', domain: 'acme.example' }, paused, 'paused'),
  ];
}

let made: SendflowEvent[] = [];
beforeAll(async () => {
  made = [
    ...(await simulatorEvents()),
    ...sesEvents(),
    ...(await sendingEvents()),
    ...(await accountEvents()),
    ...reputationEvents(),
  ];
});

const bodies = () => made.map((event) => renderPayload(event, 'standard'));

describe('the catalog', () => {
  it('lists every event type once, with a description and a draft 2020-12 schema of its own type', () => {
    expect(EVENT_TYPES).toEqual(expect.arrayContaining(WEBHOOK_EVENT_TYPES));
    expect(eventCatalog().map((entry) => entry.type)).toEqual(EVENT_TYPES);
    for (const { type, description, schema } of eventCatalog()) {
      expect(description.length, type).toBeGreaterThan(10);
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema).toMatchObject({ type: 'object', additionalProperties: false, title: type });
      expect((schema.properties as Json).type).toEqual({ type: 'string', const: type });
      expect((schema.properties as Json).data).toMatchObject({ type: 'object', additionalProperties: false });
    }
  });

  it('never lists the test event: no webhook subscribes to it', () => {
    expect(EVENT_TYPES).not.toContain('test');
  });
});

describe('every payload the code makes validates against its type’s schema', () => {
  it('covers every type some code makes', () => {
    const types = new Set<string>(made.map((event) => event.type));
    expect(EVENT_TYPES.filter((type) => !types.has(type)).sort()).toEqual([...NOT_MADE_HERE].sort());
  });

  it('validates each one', () => {
    const failures = bodies()
      .map((body) => ({ body, problems: problems(body) }))
      .filter((result) => result.problems.length);
    expect(failures).toEqual([]);
    expect(made.length).toBeGreaterThan(40);
  });

  it('requires `sequence` (an integer from 1) on email events, and refuses it on others', () => {
    const email = JSON.parse(bodies().find((b) => b.includes('"email.delivered"')) ?? '{}') as Json;
    const domain = JSON.parse(bodies().find((b) => b.includes('"domain.created"')) ?? '{}') as Json;
    expect(problems(JSON.stringify({ ...email, sequence: 3 }))).toEqual([]);
    expect(problems(JSON.stringify({ ...email, sequence: 0 }))).not.toEqual([]);
    expect(problems(JSON.stringify({ ...email, sequence: 1.5 }))).not.toEqual([]);
    expect(problems(JSON.stringify({ ...domain, sequence: 1 }))).not.toEqual([]);
    const { sequence, ...without } = email;
    expect(sequence).toEqual(expect.any(Number));
    expect(problems(JSON.stringify(without))).not.toEqual([]);
  });
});

describe('the schemas are closed', () => {
  const one = (type: string) => JSON.parse(bodies().find((b) => JSON.parse(b).type === type) ?? '{}') as Json;

  it.each(['email.bounced', 'email.sent', 'domain.updated', 'contact.created'])(
    '%s: an extra field, top level or in data, fails',
    (type) => {
      const payload = one(type);
      expect(problems(JSON.stringify(payload))).toEqual([]);
      expect(problems(JSON.stringify({ ...payload, extra: 1 })).join()).toMatch(/additional properties/);
      const data = { ...(payload.data as Json), extra: 1 };
      expect(problems(JSON.stringify({ ...payload, data })).join()).toMatch(/additional properties/);
    },
  );

  it('a missing required field, a wrong type, a bad time or a value off its list fails', () => {
    const bounced = one('email.bounced');
    const data = bounced.data as Json;
    const { email_id: _, ...noEmail } = bounced;
    expect(problems(JSON.stringify(noEmail)).join()).toMatch(/required property 'email_id'/);
    const { refused_by_account_suppression_list: __, ...noRefused } = data;
    expect(problems(JSON.stringify({ ...bounced, data: noRefused })).join()).toMatch(/required/);
    expect(problems(JSON.stringify({ ...bounced, data: { ...data, bounce_type: 1 } }))).not.toEqual([]);
    expect(problems(JSON.stringify({ ...bounced, timestamp: 'yesterday' })).join()).toMatch(/date-time/);
    expect(problems(JSON.stringify({ ...bounced, type: 'email.sent' }))).not.toEqual([]);
    const domain = one('domain.created');
    expect(problems(JSON.stringify({ ...domain, data: { ...(domain.data as Json), status: 'gone' } }))).not.toEqual([]);
    const suppressed = one('email.suppressed');
    const reason = { ...(suppressed.data as Json), reason: 'bogus' };
    expect(problems(JSON.stringify({ ...suppressed, data: reason }))).not.toEqual([]);
  });

  it('the webhook events: their documented data, and nothing else', () => {
    const base = { id: 'evt_01kabc', timestamp: new Date(T0).toISOString(), created_at: new Date(T0).toISOString() };
    const webhook = {
      webhook_id: 'wh_01kabc',
      url: 'https://hooks.acme.example/in',
      last_error_class: 'http_5xx',
      last_status_code: 500,
    };
    const disabled = {
      ...base,
      type: 'webhook.disabled',
      data: { ...webhook, reason: 'failing', disabled_at: base.timestamp, failing_since: base.timestamp },
    };
    const failing = {
      ...base,
      type: 'webhook.failing',
      data: { ...webhook, failing_since: base.timestamp, disable_at: base.timestamp },
    };
    expect(problems(JSON.stringify(disabled))).toEqual([]);
    expect(problems(JSON.stringify(failing))).toEqual([]);
    expect(problems(JSON.stringify({ ...disabled, data: { ...disabled.data, reason: 'paused' } }))).not.toEqual([]);
    expect(problems(JSON.stringify({ ...disabled, email_id: 'email_01k' }))).not.toEqual([]);
    const { failing_since: _, ...noSince } = failing.data;
    expect(problems(JSON.stringify({ ...failing, data: noSince }))).not.toEqual([]);
  });
});
