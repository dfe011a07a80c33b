// The dashboard's shared pieces (lambdas/handlers/dashboard/components.ts, plain-words.ts,
// pages/inline-images.ts): tokens wrap only at their boundaries, times are compact, statuses are badges with a
// tone and a word, a refusal is said with the form's labels, and an inline cid: image becomes a placeholder.
import { describe, expect, it } from 'vitest';
import { compactTime, dataTable, statusBadge, tokens } from '../../lambdas/handlers/dashboard/components';
import { inlineImagePlaceholders } from '../../lambdas/handlers/dashboard/pages/inline-images';
import { plainMessage, plainProblem } from '../../lambdas/handlers/dashboard/plain-words';

describe('tokens', () => {
  it('lets a URL wrap after its scheme, dots, slashes and the colon before a port, never inside a piece', () => {
    expect(tokens('http://127.0.0.1:4102/hooks?a=b').markup).toBe(
      'http://<wbr>127.<wbr>0.<wbr>0.<wbr>1:<wbr>4102/<wbr>hooks?<wbr>a=<wbr>b',
    );
  });

  it('lets a DNS name wrap after its dots, an address after its @, and leaves other words alone', () => {
    expect(tokens('abc.dkim.amazonses.com').markup).toBe('abc.<wbr>dkim.<wbr>amazonses.<wbr>com');
    expect(tokens('ada@example.com').markup).toBe('ada@<wbr>example.<wbr>com');
    expect(tokens('Webhook 1.5 KB <b>').markup).toBe('Webhook 1.5 KB &lt;b&gt;');
    expect(tokens('a date, e.g. 2026-12-01T09:00:00Z.').markup).toBe('a date, e.g. 2026-12-01T09:00:00Z.');
  });
});

describe('compactTime', () => {
  it('says the month, day and time to the second in UTC, and the year only when it is not this one', () => {
    const now = Date.UTC(2026, 11, 7);
    expect(compactTime('2026-12-07T21:04:05.123Z', now)).toBe('Dec 7, 21:04:05 UTC');
    expect(compactTime('2025-01-31T00:00:00.000Z', now)).toBe('Jan 31 2025, 00:00:00 UTC');
  });
});

describe('statusBadge and dataTable', () => {
  it('gives a status its word and a tone', () => {
    expect(statusBadge('failed').markup).toBe('<span class="badge tone-bad status-failed">failed</span>');
    expect(statusBadge('succeeded').markup).toContain('tone-ok');
    expect(statusBadge('pending').markup).toContain('tone-warn');
    expect(statusBadge('whatever').markup).toContain('tone-neutral');
  });

  it("labels every cell with its column, for the phone's card layout", () => {
    const markup = dataTable('Things', ['Name', 'Status'], [['a', statusBadge('failed')]]).markup;
    expect(markup).toContain('<td data-label="Name">a</td>');
    expect(markup).toContain('<td data-label="Status"><span class="badge');
    expect(markup).toContain('<caption>Things</caption>');
  });
});

describe('plain words for a refusal', () => {
  it("says a field's problem with its label and unit, not its API name", () => {
    expect(plainProblem('rate_limit_per_second', '`rate_limit_per_second` must be at least 1.')).toBe(
      'Rate limit must be at least 1 per second.',
    );
    expect(plainProblem('rate_limit_per_second', '`rate_limit_per_second` must be at most 1000.')).toBe(
      'Rate limit must be at most 1000 per second.',
    );
    expect(plainProblem('events.2', '`events[2]` must be one of "email.sent", "email.delivered".')).toBe(
      'Events must be one of "email.sent", "email.delivered".',
    );
    expect(plainProblem('', 'Give html or text.')).toBe('Give html or text.');
  });

  it("says what to do in the dashboard where the API's message names an API call", () => {
    const paused = { code: 'webhook_paused', message: 'The webhook is paused; resume it (PUT active: true) first.' };
    expect(plainMessage({ ...paused, details: [] })).toBe('This webhook is paused. Resume it, then try again.');
    expect(plainMessage({ ...paused, details: [] })).not.toContain('PUT');
  });
});

describe('inlineImagePlaceholders', () => {
  it('replaces each cid: image with a data: placeholder naming its attachment, and nothing else', () => {
    const out = inlineImagePlaceholders(
      `<p><img src="cid:logo" alt="Acme"><img src='cid:unknown'><img src=cid:bare><img src="https://x.test/a.png"></p>`,
      [{ filename: 'logo.png', content_id: 'logo' }],
    );
    const sources = [...out.matchAll(/src="([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(sources).toHaveLength(4);
    expect(sources.slice(0, 3).every((s) => s.startsWith('data:image/svg+xml,'))).toBe(true);
    expect(decodeURIComponent(sources[0] ?? '')).toContain('logo.png');
    expect(decodeURIComponent(sources[1] ?? '')).toContain('unknown');
    expect(sources[3]).toBe('https://x.test/a.png');
    expect(out).not.toContain('cid:');
    expect(out).toContain('alt="Acme"');
  });
});
