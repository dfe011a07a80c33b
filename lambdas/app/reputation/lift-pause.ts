// Use case: an operator lifts a reputation pause (`npm run admin -- reputation-lift`), and reads a tenant's
// standing (`npm run admin -- reputation`). A lift keeps the window's counts as they are now (the baseline): later
// judgments count only what is sent, bounced and complained after it, so the figures that caused the pause do
// not pause the tenant again on its next bounce, while a list that still bounces is paused again once it has
// sent the minimum volume anew.
import { MAX_WINDOW_DAYS, windowOf } from '../../domain/email/reputation';
import { NotFoundError } from '../../domain/errors';
import type { Clock } from '../ports';
import type { Tenant } from '../webhooks/ports';
import { ACCOUNT, type ReputationStore, type Standing, type Subject, subjectKey } from './ports';
import { JUDGMENT_MAX_ITEMS } from './track-reputation';

export interface LiftDeps {
  readonly store: Pick<ReputationStore, 'standings' | 'countsBetween' | 'lift'>;
  readonly clock: Clock;
}

/**
 * Lifts the tenant's paused subjects: all of them, or only the one named (`domain`, or the account itself with
 * `domain: null`). Returns each lifted standing; NotFoundError when nothing named is paused.
 */
export async function liftPause(
  deps: LiftDeps,
  tenant: Tenant,
  options: { readonly domain?: string | null; readonly note: string },
): Promise<Standing[]> {
  const only: Subject | undefined =
    options.domain === undefined
      ? undefined
      : options.domain === null
        ? ACCOUNT
        : { kind: 'domain', domain: options.domain.toLowerCase() };
  const paused = (await deps.store.standings(tenant)).filter(
    (s) => s.pausedAt && (!only || subjectKey(s.subject) === subjectKey(only)),
  );
  if (paused.length === 0) {
    const what = only ? (only.kind === 'account' ? 'the account itself' : `the domain ${only.domain}`) : 'it';
    throw new NotFoundError(
      `Nothing is paused for ${what} (account ${tenant.accountId}, ${tenant.mode} mode): see \`reputation\`.`,
    );
  }
  const now = deps.clock.now();
  // The longest window any stage may judge: the baseline holds whatever the stage's window is (the CLI need not know).
  const days = windowOf(now, MAX_WINDOW_DAYS);
  const counts = await deps.store.countsBetween(tenant, days[0] as string, days.at(-1) as string, JUDGMENT_MAX_ITEMS);
  const lifted: Standing[] = [];
  for (const standing of paused) {
    const daily =
      standing.subject.kind === 'account' ? counts.account : (counts.domains[standing.subject.domain] ?? {});
    const baseline = Object.fromEntries(days.flatMap((day) => (daily[day] ? [[day, daily[day]]] : [])));
    const after = await deps.store.lift(tenant, standing.subject, {
      at: new Date(now).toISOString(),
      note: options.note,
      baseline,
    });
    if (after) lifted.push(after);
  }
  return lifted;
}
