// A tenant's API client for bench:attackers (the measuring process's B, the attacker process's A): its own
// connection pool, so one tenant's thousand sockets never queue another's requests on the client side.
import { Agent, fetch as undiciFetch } from 'undici';

export interface Client {
  call(path: string, init?: { method?: string; body?: unknown; signal?: AbortSignal }): Promise<Response>;
}

export function client(url: string, key: string): Client {
  const dispatcher = new Agent({ connections: null, keepAliveTimeout: 30_000 });
  return {
    call: (path, init = {}) =>
      undiciFetch(`${url}${path}`, {
        method: init.method ?? 'GET',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        dispatcher,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        ...(init.signal ? { signal: init.signal } : {}),
      }) as unknown as Promise<Response>,
  };
}
