// What the tenant-isolation benches share: a webhook endpoint on loopback that answers at once (noting when each
// email's delivery arrived), fails, or never answers; and a tenant of the local runtime (scale plan, test key)
// with one webhook to such an endpoint.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import type { LocalRuntime } from '../lambdas/runtime/local/runtime';

export interface Endpoint {
  readonly url: string;
  /** Email id → when its delivery arrived (performance.now()). */
  readonly arrivals: Map<string, number>;
  /** The requests a hanging endpoint holds. */
  readonly held: ServerResponse[];
  close(): void;
}

export async function endpoint(answer: 'ok' | 'fail' | 'hang'): Promise<Endpoint> {
  const arrivals = new Map<string, number>();
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (answer === 'hang') return void held.push(res);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { email_id?: string };
      if (body.email_id) arrivals.set(body.email_id, performance.now());
      res.writeHead(answer === 'ok' ? 200 : 503).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    held,
    close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface Tenant {
  readonly headers: Record<string, string>;
  readonly webhookId: string;
  call(path: string, init?: { method?: string; body?: unknown }): Promise<Response>;
}

/** A new scale-plan account with a test key and one webhook to `url` for `events`. */
export async function tenant(runtime: LocalRuntime, url: string, events = ['email.sent']): Promise<Tenant> {
  const deps = { ...runtime.services, usagePlans: noUsagePlans };
  const account = await createAccount(deps, 'scale');
  const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test' });
  const headers = { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' };
  const call: Tenant['call'] = (path, init = {}) =>
    fetch(`${runtime.url}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  const res = await call('/webhooks', { method: 'POST', body: { url, events } });
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${await res.text()}`);
  return { headers, webhookId: ((await res.json()) as { id: string }).id, call };
}
