// A tour of the dashboard: an account seeded through the public API with one of everything a page shows (two
// webhooks with deliveries and a recovery job, emails with an inline image and attachments, a domain with its
// DNS records, a contact, a published template), and the list of every page to visit. The layout test
// (test/browser/dashboard-layout.test.ts) walks it at two widths; `npm run screenshot:dashboard` photographs it.

/** The two widths every page must fit: a laptop and a phone. */
export const TOUR_WIDTHS = [1280, 375] as const;

export interface TourIds {
  readonly webhookId: string;
  readonly deliveryId: string;
  readonly recoveryId: string;
  readonly emailId: string;
  readonly domainId: string;
  readonly contactId: string;
  readonly templateId: string;
  readonly keyId: string;
}

export interface TourPage {
  /** File-name friendly: `webhook-deliveries` (screenshots are docs/dashboard/<name>-<width>.png). */
  readonly name: string;
  /** Below /v1/dashboard ('' is the overview). */
  readonly path: string;
}

/** `api` is the API's base URL (…/v1); `endpoint` a local URL that answers webhook requests. */
export async function seedTour(api: string, key: string, endpoint: string, keyId: string): Promise<TourIds> {
  const call = async <T>(path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST'): Promise<T> => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`tour seed: ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  const hook = await call<{ id: string }>('/webhooks', {
    url: `${endpoint}/webhooks/sendflow/orders-service/production?source=dashboard-tour`,
    events: ['email.sent', 'email.delivered', 'email.bounced', 'email.complained'],
    description: 'Order service',
    rate_limit_per_second: 20,
    ordering: 'per_email',
  });
  await call('/webhooks', { url: `${endpoint}/billing`, events: ['email.delivered'] });
  for (let i = 0; i < 4; i++) await call(`/webhooks/${hook.id}/test`, {});
  const email = await call<{ id: string }>('/emails', {
    from: 'Acme Receipts <receipts@acme.example>',
    to: ['success@simulator.amazonses.com'],
    subject: 'Your receipt for order 1042',
    html: '<p><img src="cid:logo" alt="Acme" width="120" height="40"></p><p>Thanks for your order.</p>',
    text: 'Thanks for your order.',
    tags: [{ name: 'category', value: 'receipt' }],
    attachments: [
      { filename: 'receipt-1042.pdf', content: Buffer.from('%PDF-1.4 receipt').toString('base64') },
      { filename: 'logo.png', content: TINY_PNG, content_id: 'logo' },
    ],
  });
  await call('/emails', {
    from: 'Acme <hello@acme.example>',
    to: ['bounce@simulator.amazonses.com'],
    subject: 'Welcome to Acme',
    html: '<p>Welcome</p>',
  });
  const domain = await call<{ id: string }>('/domains', { name: 'mail.acme-tour.example' });
  const contact = await call<{ id: string }>('/contacts', { email: 'ada@acme.example', first_name: 'Ada' });
  const template = await call<{ id: string }>('/templates', {
    name: 'Order confirmation',
    alias: 'order',
    subject: 'Your {{{PRODUCT}}}',
    html: '<h1>Hi {{{NAME}}}</h1><p>{{{PRODUCT}}} is on its way.</p>',
    variables: [
      { key: 'NAME', type: 'string', fallback_value: 'there' },
      { key: 'PRODUCT', type: 'string', fallback_value: 'Your order' },
    ],
  });
  await call(`/templates/${template.id}/publish`, {});
  const recovery = await call<{ id: string }>(`/webhooks/${hook.id}/recoveries`, {
    since: new Date(Date.now() - 3_600_000).toISOString(),
  });
  // Deliveries are made in the background: wait for the webhook's first (bounded).
  let deliveryId = '';
  for (let tries = 0; tries < 100 && !deliveryId; tries++) {
    const log = await call<{ data: { id: string }[] }>(`/webhooks/${hook.id}/deliveries`);
    deliveryId = log.data[0]?.id ?? '';
    if (!deliveryId) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!deliveryId) throw new Error('tour seed: the webhook got no delivery');
  return {
    webhookId: hook.id,
    deliveryId,
    recoveryId: recovery.id,
    emailId: email.id,
    domainId: domain.id,
    contactId: contact.id,
    templateId: template.id,
    keyId,
  };
}

/** Every page of the dashboard, for the tour's account. */
export function tourPages(ids: TourIds): TourPage[] {
  const w = `webhooks/${ids.webhookId}`;
  const e = `emails/${ids.emailId}`;
  return [
    { name: 'overview', path: '' },
    { name: 'webhooks', path: 'webhooks' },
    { name: 'webhook-overview', path: w },
    { name: 'webhook-deliveries', path: `${w}/deliveries` },
    { name: 'webhook-settings', path: `${w}/settings` },
    { name: 'webhook-secret', path: `${w}/secret` },
    { name: 'webhook-recovery', path: `${w}/recovery` },
    { name: 'webhook-delete', path: `${w}/delete` },
    { name: 'delivery', path: `${w}/deliveries/${ids.deliveryId}` },
    { name: 'recovery-job', path: `${w}/recoveries/${ids.recoveryId}` },
    { name: 'event-types', path: 'event-types' },
    { name: 'emails', path: 'emails' },
    { name: 'email-overview', path: e },
    { name: 'email-content', path: `${e}/content` },
    { name: 'email-deliveries', path: `${e}/deliveries` },
    { name: 'templates', path: 'templates' },
    { name: 'template', path: `templates/${ids.templateId}` },
    { name: 'received', path: 'received' },
    { name: 'api-keys', path: 'api-keys' },
    { name: 'api-key-revoke', path: `api-keys/${ids.keyId}/revoke` },
    { name: 'domains', path: 'domains' },
    { name: 'domain', path: `domains/${ids.domainId}` },
    { name: 'domain-delete', path: `domains/${ids.domainId}/delete` },
    { name: 'contacts', path: 'contacts' },
    { name: 'contact-delete', path: `contacts/${ids.contactId}/delete` },
    { name: 'api-requests', path: 'api-requests' },
    { name: 'settings', path: 'settings' },
  ];
}

/** A 1×1 transparent PNG (the inline logo). */
/** A 1×1 PNG (base64): the inline image of the tour's email and of the layout test's received one. */
export const TINY_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
