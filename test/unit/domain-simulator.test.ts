// Unit tests of the mailbox simulator's stories (lambdas/domain/email/simulator.ts): each simulator mailbox
// yields the events SES would (or the documented extras), a `+label` and a display name are ignored, case does
// not matter, and any other address — another domain, an unknown mailbox — is a plain success.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_DOMAIN, SIMULATOR_STORIES, simulatedStory } from '../../lambdas/domain/email/simulator';

const at = (mailbox: string) => `${mailbox}@${SIMULATOR_DOMAIN}`;
const steps = (recipient: string) => simulatedStory(recipient).map((e) => `${e.step}:${e.type}`);

describe('simulatedStory', () => {
  it.each([
    ['success', ['1:email.delivered']],
    ['bounce', ['1:email.bounced']],
    ['complaint', ['1:email.delivered', '2:email.complained']],
    ['suppressionlist', ['1:email.bounced']],
    ['ooto', ['1:email.delivered']],
    ['delay', ['1:email.delivery_delayed', '2:email.delivered']],
    ['open', ['1:email.delivered', '2:email.opened']],
    ['click', ['1:email.delivered', '2:email.opened', '3:email.clicked']],
    ['accountsuppressed', ['1:email.bounced', '1:email.failed']],
    ['reject', ['1:email.failed']],
  ])('%s@ tells its story', (mailbox, expected) => {
    expect(steps(at(mailbox))).toEqual(expected);
  });

  it('covers every story it defines (no mailbox left untested above)', () => {
    expect(Object.keys(SIMULATOR_STORIES).sort()).toEqual(
      [
        'accountsuppressed',
        'bounce',
        'click',
        'complaint',
        'delay',
        'ooto',
        'open',
        'reject',
        'success',
        'suppressionlist',
      ].sort(),
    );
  });

  it('bounces permanently (so the address gets suppressed), with SES’s sub-types and diagnostics', () => {
    // Act
    const general = simulatedStory(at('bounce')).find((e) => e.type === 'email.bounced');
    const listed = simulatedStory(at('suppressionlist')).find((e) => e.type === 'email.bounced');
    const account = simulatedStory(at('accountsuppressed')).find((e) => e.type === 'email.bounced');

    // Assert
    expect(general?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounce_sub_type: 'General',
      refused_by_account_suppression_list: false,
      diagnostic_code: 'smtp; 550 5.1.1 user unknown',
    });
    expect(listed?.data).toMatchObject({ bounce_type: 'Permanent', bounce_sub_type: 'Suppressed' });
    expect(account?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounce_sub_type: 'OnAccountSuppressionList',
      refused_by_account_suppression_list: true,
    });
  });

  it('gives the extra events their data: complaint feedback, delay type, failure reasons, click link', () => {
    const data = (mailbox: string, type: string) => simulatedStory(at(mailbox)).find((e) => e.type === type)?.data;
    expect(data('complaint', 'email.complained')).toEqual({ feedback_type: 'abuse' });
    expect(data('delay', 'email.delivery_delayed')).toEqual({ delay_type: 'TransientCommunicationFailure' });
    expect(data('accountsuppressed', 'email.failed')).toEqual({ reason: 'suppressed_by_provider' });
    expect(data('reject', 'email.failed')).toEqual({ reason: 'Bad content' });
    expect(data('click', 'email.clicked')).toMatchObject({ link: 'https://example.com/' });
  });

  it.each([
    ['a +label', at('bounce+1'), 'bounce'],
    ['another +label', at('bounce+customer-42'), 'bounce'],
    ['a display name', `Test User <${at('complaint')}>`, 'complaint'],
    ['a display name and a +label', `"QA" <${at('click+run7')}>`, 'click'],
    ['upper case', `DELAY@${SIMULATOR_DOMAIN.toUpperCase()}`, 'delay'],
    ['surrounding spaces', `  ${at('reject')} `, 'reject'],
  ])('ignores %s', (_name, recipient, story) => {
    expect(simulatedStory(recipient)).toEqual(SIMULATOR_STORIES[story]);
  });

  it.each([
    ['an ordinary address', 'ada@example.com'],
    ['a simulator mailbox name at another domain', 'bounce@example.com'],
    ['a subdomain of the simulator', `bounce@mail.${SIMULATOR_DOMAIN}`],
    ['an unknown simulator mailbox', at('nobody')],
    ['a mailbox that only starts like a story', at('bouncer')],
    ['no @', 'not-an-address'],
  ])('treats %s as success', (_name, recipient) => {
    expect(simulatedStory(recipient)).toEqual(SIMULATOR_STORIES.success);
  });

  it('treats constructor@ (an inherited property name) as success', () => {
    expect(simulatedStory(at('constructor'))).toEqual(SIMULATOR_STORIES.success);
  });

  it('treats __proto__@ (an inherited property name) as success', () => {
    expect(simulatedStory(at('__proto__'))).toEqual(SIMULATOR_STORIES.success);
  });

  it('tells no email.sent (the send worker does), and runs in non-decreasing steps from step 1 (after it)', () => {
    for (const [mailbox, story] of Object.entries(SIMULATOR_STORIES)) {
      expect(
        story.map((e) => e.type),
        mailbox,
      ).not.toContain('email.sent');
      expect(story[0]?.step, mailbox).toBe(1);
      const stepsInOrder = story.map((e) => e.step);
      expect(stepsInOrder, mailbox).toEqual([...stepsInOrder].sort((a, b) => a - b));
    }
  });
});
