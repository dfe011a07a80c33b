// The SES configuration sets of a deployment, one per tracking combination: the base set's event destination
// has no open or click events, so SES neither adds a pixel nor rewrites links; `-open`, `-click` and
// `-open-click` add them. The send worker picks one per email by its sender domain's flags; the stack
// (lib/constructs/email-pipeline.ts) creates the same names.
import { NO_TRACKING, type Tracking } from '../../app/domains/tracking';

/** Every combination that tracks something, in the order the stack creates their sets. */
export const TRACKING_VARIANTS: readonly Tracking[] = [
  { open: true, click: false },
  { open: false, click: true },
  { open: true, click: true },
];

/** The configuration set an email with this tracking is sent with. */
export function configurationSetFor(base: string, tracking: Tracking = NO_TRACKING): string {
  const parts = [tracking.open ? 'open' : '', tracking.click ? 'click' : ''].filter(Boolean);
  return parts.length ? `${base}-${parts.join('-')}` : base;
}
