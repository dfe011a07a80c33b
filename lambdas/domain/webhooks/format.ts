// Webhook formats (spec §2.1): detected from the URL's host when omitted at creation (DESIGN §4).

export const FORMATS = ['standard', 'discord', 'slack'] as const;
export type WebhookFormat = (typeof FORMATS)[number];

const DISCORD_HOSTS = new Set(
  ['discord.com', 'discordapp.com'].flatMap((host) => [host, `ptb.${host}`, `canary.${host}`]),
);

export function detectFormat(url: string): WebhookFormat {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed) return 'standard';
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (DISCORD_HOSTS.has(host) && /^\/api(\/v\d+)?\/webhooks\//.test(parsed.pathname)) return 'discord';
  if (host === 'hooks.slack.com') return 'slack';
  return 'standard';
}
