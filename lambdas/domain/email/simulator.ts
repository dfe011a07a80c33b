// The mailbox simulator (DESIGN §6): the SES simulator addresses produce the event sequences SES would,
// plus documented extras for what SES cannot simulate. Pure: recipient → the events of its story.
import type { EventType } from '../events';

export const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

/**
 * One step of a simulated story: the event and its data, `step` units after the send. A story starts after
 * email.sent, which is the send worker's own event (the provider took the copy), not the provider's.
 */
export interface SimulatedEvent {
  readonly type: EventType;
  readonly step: number;
  readonly data: Readonly<Record<string, unknown>>;
}

const delivered = (step: number): SimulatedEvent => ({
  type: 'email.delivered',
  step,
  data: { smtp_response: '250 2.6.0 Message received' },
});
const bounced = (step: number, subType: string, refused: boolean): SimulatedEvent => ({
  type: 'email.bounced',
  step,
  data: {
    bounce_type: 'Permanent',
    bounce_sub_type: subType,
    refused_by_account_suppression_list: refused,
    diagnostic_code: refused
      ? 'Amazon SES did not send the message to this address because it is on the suppression list for your account.'
      : 'smtp; 550 5.1.1 user unknown',
  },
});

/** Mailbox → story. The first five are SES's own simulator addresses; the rest are Sendflow extras. */
export const SIMULATOR_STORIES: Readonly<Record<string, readonly SimulatedEvent[]>> = {
  success: [delivered(1)],
  bounce: [bounced(1, 'General', false)],
  complaint: [delivered(1), { type: 'email.complained', step: 2, data: { feedback_type: 'abuse' } }],
  // SES: a hard bounce as if the address were on the global suppression list.
  suppressionlist: [bounced(1, 'Suppressed', false)],
  // Accepted and delivered; the auto-reply goes to the Return-Path, not to webhooks.
  ooto: [delivered(1)],
  // Extras:
  delay: [
    { type: 'email.delivery_delayed', step: 1, data: { delay_type: 'TransientCommunicationFailure' } },
    delivered(2),
  ],
  open: [
    delivered(1),
    {
      type: 'email.opened',
      step: 2,
      data: { ip_address: '198.51.100.7', user_agent: 'Mozilla/5.0 (Sendflow simulator)' },
    },
  ],
  click: [
    delivered(1),
    {
      type: 'email.opened',
      step: 2,
      data: { ip_address: '198.51.100.7', user_agent: 'Mozilla/5.0 (Sendflow simulator)' },
    },
    { type: 'email.clicked', step: 3, data: { link: 'https://example.com/', ip_address: '198.51.100.7' } },
  ],
  // SES's account-level suppression (bounce sub-type OnAccountSuppressionList): bounced and failed.
  accountsuppressed: [
    bounced(1, 'OnAccountSuppressionList', true),
    { type: 'email.failed', step: 1, data: { reason: 'suppressed_by_provider' } },
  ],
  // SES Reject (a virus was found): taken (the send worker's email.sent, as SES's Send), then never delivered.
  reject: [{ type: 'email.failed', step: 1, data: { reason: 'Bad content' } }],
};

/** The story for one recipient: its simulator mailbox (a `+label` is ignored), else success. */
export function simulatedStory(recipient: string): readonly SimulatedEvent[] {
  const address = /<([^>]+)>/.exec(recipient)?.[1] ?? recipient;
  const [local = '', domain = ''] = address.trim().toLowerCase().split('@');
  const mailbox = local.split('+')[0] ?? '';
  const story =
    domain === SIMULATOR_DOMAIN && Object.hasOwn(SIMULATOR_STORIES, mailbox) ? SIMULATOR_STORIES[mailbox] : undefined;
  return story ?? (SIMULATOR_STORIES.success as readonly SimulatedEvent[]);
}
