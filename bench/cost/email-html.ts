// The bench's email bodies: HTML shaped like a transactional email (a receipt: a styled table of items, prose,
// tracked links), deterministic from a seed. Bodies are stored gzip-compressed, so a body that repeats one
// sentence (50× smaller compressed) would flatter the figures: this one mixes prose drawn from a vocabulary with
// what does not compress (order and item numbers, prices, the random tokens of tracked links), and compresses
// about as real email HTML does (bench:cost prints the ratio it measured).

const WORDS = (
  'the your order has been shipped and will arrive within two business days thanks for shopping with us ' +
  'we hope you enjoy it if anything looks wrong reply to this email or contact our support team any time ' +
  'track package view receipt manage account update preferences returns are free for thirty days after delivery ' +
  'keep this message for your records payment was charged to the card ending in shown below items quantity ' +
  'price subtotal shipping tax total discount applied member rewards points earned this purchase next level ' +
  'recommended for you based on recent orders new arrivals limited offer ends sunday free gift wrapping ' +
  'questions about delivery times see our help center privacy policy terms of service unsubscribe here'
).split(' ');

/** A small seeded generator (mulberry32): the same body for the same seed, on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOKEN = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** An HTML body of `kb` KB (1,024 bytes each, cut there), deterministic from `seed`. */
export function emailHtml(kb: number, seed = 1): string {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  const token = (n: number) => Array.from({ length: n }, () => pick([...TOKEN])).join('');
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(next() * 12) }, () => pick(WORDS));
    return `${words.join(' ')}.`;
  };
  const link = (text: string) =>
    `<a href="https://click.acme.test/ls/click?upn=${token(64)}" style="color:#1a73e8;text-decoration:none">${text}</a>`;
  const row = (i: number) =>
    `<tr><td style="padding:8px 12px;border-bottom:1px solid #e5e7eb"><img src="https://cdn.acme.test/p/${token(40)}.jpg" ` +
    `width="48" alt="${pick(WORDS)}"></td><td style="padding:8px 12px;border-bottom:1px solid #e5e7eb;font-size:14px;color:#111827">` +
    `${link(`${pick(WORDS)} ${pick(WORDS)}`)} SKU ${token(10)} #${Math.floor(next() * 1e8)}</td>` +
    `<td style="padding:8px 12px;border-bottom:1px solid #e5e7eb;text-align:right">${1 + (i % 4)}</td>` +
    `<td style="padding:8px 12px;border-bottom:1px solid #e5e7eb;text-align:right">$${(next() * 300).toFixed(2)}</td></tr>\n`;
  const parts = [
    '<!doctype html><html><head><meta charset="utf-8"><title>Your receipt</title></head>',
    '<body style="margin:0;padding:0;background:#f3f4f6;font-family:Helvetica,Arial,sans-serif">\n',
  ];
  let size = parts.join('').length;
  const limit = kb * 1024;
  for (let i = 0; size < limit; i++) {
    const block =
      i % 3 === 2
        ? `<p style="margin:0 0 16px;font-size:15px;line-height:22px;color:#374151">${sentence()} ${sentence()} ${link(pick(WORDS))}</p>\n`
        : `<table role="presentation" width="100%" cellpadding="0" cellspacing="0">${row(i)}${row(i + 1)}</table>\n`;
    parts.push(block);
    size += block.length;
  }
  parts.push('</body></html>');
  return parts.join('').slice(0, limit);
}
