// Use case: whether a tenant may send now. A paused account (or a paused sending domain) is refused with a 403
// `sending_paused` on POST /v1/emails and /v1/emails/batch, and the send worker fails what was queued before the
// pause; other tenants never read this tenant's standing. One read of the tenant's standings (usually none).
import { isJudgedMode, percent, type ReputationPolicy } from '../../domain/email/reputation';
import { SendingPausedError } from '../../domain/errors';
import type { Tenant } from '../webhooks/ports';
import type { ReputationStore, Standing } from './ports';

export interface SendingGateDeps {
  readonly store: Pick<ReputationStore, 'standings'>;
  readonly policy: ReputationPolicy;
}

/** The pause that stops sending from `domain` (the account's own, else that domain's); null when none. */
export async function pauseFor(
  deps: SendingGateDeps,
  tenant: Tenant,
  domains: readonly string[],
): Promise<Standing | null> {
  if (!isJudgedMode(tenant.mode, deps.policy)) return null;
  const paused = (await deps.store.standings(tenant)).filter((s) => s.pausedAt);
  const wanted = new Set(domains.map((d) => d.toLowerCase()));
  return (
    paused.find((s) => s.subject.kind === 'account') ??
    paused.find((s) => s.subject.kind === 'domain' && wanted.has(s.subject.domain)) ??
    null
  );
}

/** Refuses the send (403 sending_paused) when the tenant, or one of the sending domains, is paused. */
export async function assertSendingAllowed(
  deps: SendingGateDeps,
  tenant: Tenant,
  domains: readonly string[],
): Promise<void> {
  const pause = await pauseFor(deps, tenant, domains);
  if (pause) throw new SendingPausedError(pausedMessage(deps.policy, tenant, pause));
}

/** What the 403 says: whose sending, which rate past which threshold, and how to get it lifted. */
export function pausedMessage(policy: ReputationPolicy, tenant: Tenant, pause: Standing): string {
  const whose = pause.subject.kind === 'account' ? 'this account' : `the domain ${pause.subject.domain}`;
  const mode = tenant.mode === 'live' ? 'Live' : 'Test-mode';
  const f = pause.pause;
  const rates = f
    ? [
        ...(f.breaches.includes('bounce_rate')
          ? [`its bounce rate was ${percent(f.bounceRate)} (pause threshold ${percent(policy.pause.bounceRate)})`]
          : []),
        ...(f.breaches.includes('complaint_rate')
          ? [
              `its complaint rate was ${percent(f.complaintRate)} (pause threshold ${percent(policy.pause.complaintRate)})`,
            ]
          : []),
      ].join(' and ')
    : 'its bounce or complaint rate passed the pause threshold';
  return (
    `${mode} sending from ${whose} is paused since ${pause.pausedAt}: ${rates} over the last ${policy.windowDays} ` +
    `days${f ? ` (${f.sent} sent)` : ''}, which puts the shared sending reputation at risk. Remove invalid and ` +
    'unconsenting addresses from your list (hard bounces and complaints are suppressed already), then contact ' +
    'support to have the pause lifted.'
  );
}
