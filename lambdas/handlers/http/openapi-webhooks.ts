// The OpenAPI document's `webhooks` section (OpenAPI 3.1): one entry per event type of the catalog, the request
// Sendflow makes to a `standard` endpoint, with the catalog's payload schema unchanged (one truth).
import { eventCatalog } from './event-catalog';

const headers = [
  ['webhook-id', 'The event id, the same on every attempt: de-duplicate on it.'],
  ['webhook-timestamp', 'Unix seconds of this attempt.'],
  ['webhook-signature', 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated.'],
  ['X-Service-Signature', 'Hex HMAC-SHA256 of the raw body, keyed with the whole `whsec_…` secret.'],
  ['X-Service-Timestamp', 'Unix seconds of this attempt.'],
] as const;

export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    eventCatalog().map(({ type, description, schema }) => [
      type,
      {
        post: {
          summary: type,
          description: `${description} Signed; see docs/webhooks.md, “Verify a delivery”.`,
          tags: ['Webhook events'],
          parameters: headers.map(([name, about]) => ({
            name,
            in: 'header',
            required: true,
            description: about,
            schema: { type: 'string' },
          })),
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: {
            '2XX': { description: 'Received. Anything else, or no answer within 10 s, is retried.' },
          },
        },
      },
    ]),
  );
}
