// Idempotency-Key (DESIGN §6): the first request with a key runs and its response is kept 24 h; the same
// key with the same request replays that response; with another request, or while the first still runs, 409.
import { createHash } from 'node:crypto';

export interface StoredResponse {
  readonly statusCode: number;
  readonly body: string;
}

export type IdempotencyClaim =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'mismatch' };

export interface IdempotencyStore {
  /** Claims `key` for a request with `fingerprint`, or says why not. */
  begin(key: string, fingerprint: string, nowMs: number): Promise<IdempotencyClaim>;
  /** Keeps the response of a claimed key for replays. */
  complete(key: string, fingerprint: string, response: StoredResponse): Promise<void>;
  /** Frees a claimed key whose request failed, so the client can try again with it. */
  release(key: string, fingerprint: string): Promise<void>;
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim older than this is from a request that died: the key may be claimed again. */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

/** The request as the key remembers it: route and body, with object keys in a stable order. */
export function requestFingerprint(routeId: string, body: unknown): string {
  return createHash('sha256')
    .update(`${routeId}\n${stableJson(body)}`)
    .digest('hex');
}

/**
 * JSON with object keys sorted at every depth. Iterative (an explicit stack, not recursion), so no nesting can
 * overflow the call stack, whatever the body parser let through.
 */
export function stableJson(root: unknown): string {
  const out: string[] = [];
  // Each item is literal text to write, or a value still to be written; popped in order from the end.
  const stack: ({ text: string } | { value: unknown })[] = [{ value: root }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const { value } = item;
    // Pushed last to first, one at a time: spreading a wide array into push() would pass its argument limit.
    if (Array.isArray(value)) {
      stack.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i] }, ...(i ? [{ text: ',' }] : []));
      stack.push({ text: '[' });
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push({ text: '}' });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i] as [string, unknown];
        stack.push({ value: v }, { text: `${i ? ',' : ''}${JSON.stringify(k)}:` });
      }
      stack.push({ text: '{' });
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}
