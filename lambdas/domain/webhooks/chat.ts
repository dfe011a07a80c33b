// Discord and Slack deliveries (spec §6.2.2): a colour-coded chat message built from the event, within
// each platform's size limits. Success green, delays amber, failures red, the rest blue.
import type { SendflowEvent } from '../events';

type Tone = 'success' | 'warning' | 'failure' | 'info';

const TONES: Readonly<Record<string, Tone>> = {
  'email.delivered': 'success',
  'email.opened': 'success',
  'email.clicked': 'success',
  'contact.subscribed': 'success',
  'email.delivery_delayed': 'warning',
  'email.scheduled': 'warning',
  'email.unsubscribed': 'warning',
  'email.bounced': 'failure',
  'email.complained': 'failure',
  'email.failed': 'failure',
  'email.suppressed': 'failure',
  'webhook.failing': 'warning',
  'webhook.disabled': 'failure',
};

const COLORS: Readonly<Record<Tone, number>> = {
  success: 0x2ecc71,
  warning: 0xf1a40f,
  failure: 0xe74c3c,
  info: 0x3498db,
};

export function toneOf(event: Pick<SendflowEvent, 'type' | 'data'>): Tone {
  if (event.type === 'domain.updated') return event.data.status === 'verified' ? 'success' : 'warning';
  if (event.type === 'account.reputation_warning') return event.data.level === 'paused' ? 'failure' : 'warning';
  return TONES[event.type] ?? 'info';
}

export function colorOf(event: Pick<SendflowEvent, 'type' | 'data'>): number {
  return COLORS[toneOf(event)];
}

interface Field {
  readonly name: string;
  readonly value: string;
}

const LABELS: Readonly<Record<string, string>> = {
  from: 'From',
  subject: 'Subject',
  bounce_type: 'Bounce type',
  bounce_sub_type: 'Bounce sub-type',
  refused_by_account_suppression_list: 'Refused by account suppression list',
  smtp_response: 'SMTP response',
  reason: 'Reason',
  source: 'Source',
};

/** Title and fields of the message, shared by both platforms. */
export function describeEvent(event: SendflowEvent): { title: string; fields: Field[] } {
  const title =
    event.type === 'test'
      ? 'Test event from Sendflow'
      : `${event.type.replace(/^(\w+)\./, (_, kind: string) => `${kind[0]?.toUpperCase()}${kind.slice(1)} `).replaceAll('_', ' ')}`;
  const fields: Field[] = [];
  if (event.to) fields.push({ name: 'To', value: event.to });
  for (const [key, value] of Object.entries(event.data)) {
    if (value === null || value === undefined || typeof value === 'object') continue;
    fields.push({ name: LABELS[key] ?? key.replaceAll('_', ' '), value: String(value) });
  }
  if (event.emailId) fields.push({ name: 'Email', value: event.emailId });
  return { title, fields };
}

/** Cuts to `max` UTF-16 units (the platforms' unit) without splitting a character. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  for (const char of text) {
    if (out.length + char.length > max - 1) break;
    out += char;
  }
  return `${out}…`;
}

/** Discord limits: title 256, ≤25 fields of name 256 / value 1024, footer 2048, 6000 in all. */
export function discordMessage(event: SendflowEvent): string {
  const { title, fields } = describeEvent(event);
  const embed = {
    title: cut(title, 256),
    color: colorOf(event),
    fields: [] as { name: string; value: string; inline: boolean }[],
    footer: { text: cut(event.id, 2048) },
    timestamp: event.timestamp,
  };
  let budget = 6000 - embed.title.length - embed.footer.text.length;
  for (const field of fields.slice(0, 25)) {
    const name = cut(field.name, 256);
    const value = cut(field.value || '—', Math.min(1024, budget - name.length));
    if (value.length < 1 || budget - name.length - value.length < 0) break;
    budget -= name.length + value.length;
    embed.fields.push({ name, value, inline: value.length <= 40 });
  }
  return JSON.stringify({ username: 'Sendflow', embeds: [embed] });
}

const slackEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Slack: colour bar through a legacy attachment wrapping Block Kit; ≤10 section fields of ≤2000 chars. */
export function slackMessage(event: SendflowEvent): string {
  const { title, fields } = describeEvent(event);
  const summary = cut(`${title}${event.to ? `: ${event.to}` : ''}`, 500);
  const color = `#${colorOf(event).toString(16).padStart(6, '0')}`;
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: `*${slackEscape(cut(title, 500))}*` } }];
  if (fields.length) {
    blocks.push({
      type: 'section',
      // Cut, then escape: an entity like &amp; is never split. Escaping grows text at most 5×: 5·100 + 5·290 + 3 ≤ 2000.
      fields: fields.slice(0, 10).map((f) => ({
        type: 'mrkdwn',
        text: `*${slackEscape(cut(f.name, 100))}*\n${slackEscape(cut(f.value, 290))}`,
      })),
    });
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: cut(`${event.id} · ${event.timestamp}`, 3000) }] });
  return JSON.stringify({ text: slackEscape(summary), attachments: [{ color, blocks }] });
}
