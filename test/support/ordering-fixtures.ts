// Fixtures of the per-email ordering tests (unit and property): a tenant, emails made at one instant, an ordered
// or unordered webhook, and an email's events at given times after it (their sequences follow those times).
import type { Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { type NewEvent, newEvent, type SendflowEvent } from '../../lambdas/domain/events';
import { timeOrderedId } from '../../lambdas/domain/ids';

export const T0 = Date.UTC(2026, 10, 26, 4, 0, 0);
export const TENANT: Tenant = { accountId: 'acct_main', mode: 'test' };
export const fixed = (byte: number) => (n: number) => new Uint8Array(n).fill(byte);
/** An email accepted at T0; `byte` tells emails apart. */
export const emailAt = (byte: number) => timeOrderedId('email', T0, fixed(byte));
export const EMAIL_A = emailAt(1);
export const EMAIL_B = emailAt(2);

export function webhookOf(ordering?: Webhook['ordering']): Webhook {
  return {
    ...TENANT,
    id: 'wh_01ordered',
    url: 'https://hooks.example.com/sendflow',
    events: ['email.sent', 'email.delivered', 'email.opened'],
    format: 'standard',
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    active: true,
    createdAt: new Date(T0 - 86_400_000).toISOString(),
    updatedAt: new Date(T0 - 86_400_000).toISOString(),
    ...(ordering ? { ordering } : {}),
  };
}

/** An event of `emailId`, `afterMs` after T0; `byte` makes its id. */
export function eventOf(emailId: string, type: NewEvent['type'], afterMs: number, byte: number): SendflowEvent {
  return newEvent({ type, ...TENANT, at: T0 + afterMs, emailId, to: 'user@example.com', data: {} }, fixed(byte));
}
