// Unit tests for Discord and Slack deliveries (lambdas/domain/webhooks/chat.ts, spec §6.2.2, research/email.md §6):
// the messages are parsed as the platforms would, colours checked per tone, the bounce details located, and the
// platforms' size limits checked on huge inputs (Discord rejects a whole message with 400 past any limit).
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type SendflowEvent } from '../../lambdas/domain/events';
import { colorOf, describeEvent, discordMessage, slackMessage, toneOf } from '../../lambdas/domain/webhooks/chat';

interface DiscordEmbed {
  title?: string;
  description?: string;
  color: number;
  fields: { name: string; value: string; inline?: boolean }[];
  footer?: { text: string };
  author?: { name: string };
  timestamp?: string;
}
interface DiscordBody {
  username?: string;
  content?: string;
  embeds: DiscordEmbed[];
}
interface SlackText {
  type: string;
  text: string;
}
interface SlackBlock {
  type: string;
  text?: SlackText;
  fields?: SlackText[];
  elements?: SlackText[];
}
interface SlackBody {
  text: string;
  attachments: { color: string; blocks: SlackBlock[] }[];
}

const RED = 0xe74c3c;
const GREEN = 0x2ecc71;
const AMBER = 0xf1a40f;
const BLUE = 0x3498db;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function event(changes: Partial<SendflowEvent> = {}): SendflowEvent {
  return {
    id: 'evt_01jbounce',
    type: 'email.bounced',
    accountId: 'acct_1',
    mode: 'live',
    timestamp: '2026-01-01T12:00:00.000Z',
    emailId: 'em_01',
    to: 'bob@example.com',
    data: {
      from: 'Ann Sender <ann@example.org>',
      subject: 'Your invoice',
      bounce_type: 'Permanent',
      bounce_sub_type: 'General',
      refused_by_account_suppression_list: false,
    },
    ...changes,
  };
}

/** An event far past every limit: a 10,000-character subject and 40 more data fields with long names and values. */
function hugeEvent(fill = 'x'): SendflowEvent {
  const data: Record<string, unknown> = {
    from: 'Ann Sender <ann@example.org>',
    subject: fill.repeat(10_000),
    bounce_type: 'Permanent',
  };
  for (let i = 0; i < 40; i++) data[`field_${i}_${'n'.repeat(300)}`] = `${i}:${fill.repeat(5_000)}`;
  return event({ to: `${'r'.repeat(2_000)}@example.com`, data });
}

const discord = (e: SendflowEvent): DiscordBody => JSON.parse(discordMessage(e));
const slack = (e: SendflowEvent): SlackBody => JSON.parse(slackMessage(e));
const firstEmbed = (body: DiscordBody): DiscordEmbed => {
  const embed = body.embeds[0];
  if (!embed) throw new Error('no embed');
  return embed;
};
const slackFields = (body: SlackBody): SlackText[] =>
  body.attachments[0]?.blocks.flatMap((block) => block.fields ?? []) ?? [];
const slackMrkdwn = (body: SlackBody): string[] =>
  (body.attachments[0]?.blocks ?? []).flatMap((block) => [
    ...(block.text ? [block.text.text] : []),
    ...(block.fields ?? []).map((field) => field.text),
    ...(block.elements ?? []).map((element) => element.text),
  ]);

/** Characters Discord counts toward the 6000 limit: title, description, field names and values, footer, author. */
const embedTextLength = (embed: DiscordEmbed) =>
  (embed.title ?? '').length +
  (embed.description ?? '').length +
  embed.fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0) +
  (embed.footer?.text ?? '').length +
  (embed.author?.name ?? '').length;

describe('toneOf and colorOf', () => {
  it.each([
    ['email.bounced', 'failure', RED],
    ['email.failed', 'failure', RED],
    ['email.complained', 'failure', RED],
    ['email.suppressed', 'failure', RED],
    ['email.delivered', 'success', GREEN],
    ['email.delivery_delayed', 'warning', AMBER],
    ['email.sent', 'info', BLUE],
    ['test', 'info', BLUE],
  ] as const)('%s is %s', (type, tone, color) => {
    expect(toneOf({ type, data: {} })).toBe(tone);
    expect(colorOf({ type, data: {} })).toBe(color);
  });

  it('colours domain.updated by the new state: verified green, anything else amber', () => {
    expect(colorOf({ type: 'domain.updated', data: { status: 'verified' } })).toBe(GREEN);
    expect(colorOf({ type: 'domain.updated', data: { status: 'failed' } })).toBe(AMBER);
  });

  it('gives every catalog event one of the four colours', () => {
    for (const type of EVENT_TYPES) expect([RED, GREEN, AMBER, BLUE]).toContain(colorOf({ type, data: {} }));
  });
});

describe('describeEvent', () => {
  it('titles by the event type and skips nested and empty data', () => {
    const described = describeEvent(event({ data: { bounce_type: 'Transient', nested: { a: 1 }, gone: null } }));

    expect(described.title).toBe('Email bounced');
    expect(described.fields.map((field) => field.value)).toEqual(['bob@example.com', 'Transient', 'em_01']);
    expect(describeEvent(event({ type: 'test' })).title).toMatch(/test/i);
  });
});

describe('discordMessage', () => {
  it('is an embed with an integer colour: red for email.bounced, green for delivered, amber for delayed', () => {
    expect(firstEmbed(discord(event())).color).toBe(RED);
    expect(firstEmbed(discord(event())).color).toBe(15158332);
    expect(firstEmbed(discord(event({ type: 'email.delivered', data: { smtp_response: '250 OK' } }))).color).toBe(
      GREEN,
    );
    expect(firstEmbed(discord(event({ type: 'email.delivery_delayed' }))).color).toBe(AMBER);
  });

  it('shows a bounce with the recipient, the sender and the bounce type', () => {
    // Act
    const embed = firstEmbed(discord(event()));

    // Assert
    expect(embed.title).toMatch(/bounce/i);
    expect(embed.fields).toContainEqual(
      expect.objectContaining({ name: expect.stringMatching(/^(to|recipient)$/i), value: 'bob@example.com' }),
    );
    expect(embed.fields).toContainEqual(
      expect.objectContaining({ name: expect.stringMatching(/from|sender/i), value: 'Ann Sender <ann@example.org>' }),
    );
    expect(embed.fields).toContainEqual(
      expect.objectContaining({ name: expect.stringMatching(/^bounce.type$/i), value: 'Permanent' }),
    );
    expect(embed.timestamp).toBe('2026-01-01T12:00:00.000Z');
  });

  it('stays within every embed limit for a huge event', () => {
    // Act
    const body = discord(hugeEvent());

    // Assert
    expect(body.embeds.length).toBeGreaterThanOrEqual(1);
    expect(body.embeds.length).toBeLessThanOrEqual(10);
    expect((body.content ?? '').length).toBeLessThanOrEqual(2000);
    const embed = firstEmbed(body);
    expect((embed.title ?? '').length).toBeLessThanOrEqual(256);
    expect((embed.description ?? '').length).toBeLessThanOrEqual(4096);
    expect((embed.footer?.text ?? '').length).toBeLessThanOrEqual(2048);
    expect(embed.fields.length).toBeGreaterThan(0);
    expect(embed.fields.length).toBeLessThanOrEqual(25);
    for (const field of embed.fields) {
      expect(field.name.length).toBeGreaterThan(0);
      expect(field.name.length).toBeLessThanOrEqual(256);
      expect(field.value.length).toBeGreaterThan(0);
      expect(field.value.length).toBeLessThanOrEqual(1024);
    }
    expect(body.embeds.reduce((sum, each) => sum + embedTextLength(each), 0)).toBeLessThanOrEqual(6000);
  });

  it('keeps at most 25 fields when there are 40 short ones (the count limit, not the size budget)', () => {
    const data = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `v${i}`]));

    const embed = firstEmbed(discord(event({ data })));

    expect(embed.fields).toHaveLength(25);
    expect(embed.fields[0]).toMatchObject({ value: 'bob@example.com' });
  });

  it('keeps the bounce essentials first when the event is huge, and marks cut text', () => {
    const embed = firstEmbed(discord(hugeEvent()));

    expect(embed.fields.some((field) => field.value.includes('ann@example.org'))).toBe(true);
    expect(embed.fields.some((field) => field.value === 'Permanent')).toBe(true);
    const subject = embed.fields.find((field) => /subject/i.test(field.name));
    expect(subject?.value.endsWith('…')).toBe(true);
  });

  it('never cuts an emoji in half', () => {
    const body = discordMessage(hugeEvent('😀'));

    for (const field of firstEmbed(JSON.parse(body)).fields) expect(LONE_SURROGATE.test(field.value)).toBe(false);
  });
});

describe('slackMessage', () => {
  it.each([
    ['email.bounced', '#e74c3c'],
    ['email.delivered', '#2ecc71'],
    ['email.delivery_delayed', '#f1a40f'],
    ['email.sent', '#3498db'],
  ] as const)('colours the attachment of %s with the hex %s', (type, color) => {
    expect(slack(event({ type })).attachments[0]?.color).toBe(color);
  });

  it('uses the same colour as Discord for every catalog event', () => {
    for (const type of EVENT_TYPES) {
      const e = event({ type, data: {} });
      expect(slack(e).attachments[0]?.color).toBe(`#${colorOf(e).toString(16).padStart(6, '0')}`);
    }
  });

  it('shows a bounce with the recipient, the sender and the bounce type', () => {
    // Act
    const body = slack(event());

    // Assert
    const texts = slackFields(body).map((field) => field.text);
    expect(body.text).toContain('bob@example.com');
    expect(texts.some((text) => /to|recipient/i.test(text) && text.includes('bob@example.com'))).toBe(true);
    expect(texts.some((text) => /from|sender/i.test(text) && text.includes('Ann Sender &lt;ann@example.org&gt;'))).toBe(
      true,
    );
    expect(texts.some((text) => /bounce.type/i.test(text) && text.includes('Permanent'))).toBe(true);
    expect(slackFields(body).every((field) => field.type === 'mrkdwn')).toBe(true);
  });

  it('escapes &, < and > in the text and the fields, & first so entities are not double-read', () => {
    // Arrange: a recipient that would ping the channel, and a sender with an already-escaped look.
    const e = event({ to: '<!channel>&bob@example.com', data: { from: 'A &lt; B <a@example.org>' } });

    // Act
    const body = slack(e);

    // Assert
    expect(body.text).toContain('&lt;!channel&gt;&amp;bob@example.com');
    const texts = slackFields(body).map((field) => field.text);
    expect(texts.some((text) => text.includes('&lt;!channel&gt;&amp;bob@example.com'))).toBe(true);
    expect(texts.some((text) => text.includes('A &amp;lt; B &lt;a@example.org&gt;'))).toBe(true);
    for (const text of [body.text, ...slackMrkdwn(body)]) {
      expect(text).not.toMatch(/[<>]/);
      expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
    }
  });

  it('stays within the Block Kit limits for a huge event', () => {
    // Act
    const body = slack(hugeEvent());

    // Assert
    expect(body.attachments).toHaveLength(1);
    const blocks = body.attachments[0]?.blocks ?? [];
    expect(blocks.length).toBeLessThanOrEqual(50);
    for (const block of blocks) {
      if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(3000);
      if (block.fields) {
        expect(block.fields.length).toBeLessThanOrEqual(10);
        for (const field of block.fields) expect(field.text.length).toBeLessThanOrEqual(2000);
      }
      if (block.elements) expect(block.elements.length).toBeLessThanOrEqual(10);
    }
    expect(slackFields(body).length).toBeGreaterThan(0);
    expect(body.text.length).toBeLessThanOrEqual(40_000);
    expect(slackFields(body).some((field) => field.text.includes('ann@example.org'))).toBe(true);
  });

  it('does not cut an escaped entity in half', () => {
    const body = slack(event({ data: { subject: '&'.repeat(5_000) } }));

    const subject = slackFields(body).find((field) => /subject/i.test(field.text));
    expect(subject?.text).toMatch(/(&amp;)+…$/);
  });

  it('never cuts an emoji in half', () => {
    const body = slack(hugeEvent('😀'));

    for (const text of slackMrkdwn(body)) expect(LONE_SURROGATE.test(text)).toBe(false);
  });
});
